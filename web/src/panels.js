/**
 * The parameter panels: Basic (a few choices, each shown only when the current model
 * has the field) and Expert (every parameter, generated from the model's JSON Schema with its
 * unit and allowed range). Every change is sent as a `set` message; the server validates it and
 * answers with `params` (shown here) or `error` (shown in the banner).
 *
 * @module panels
 */

import {
  deref,
  fieldKind,
  fieldSchema,
  getKey,
  numericLimits,
  restoringChanges,
  sameValue,
  withKey,
} from "./schema.js";
import { el } from "./ui.js";

/**
 * @typedef {object} PanelHost
 * @property {(changes: Record<string, *>) => void} set send a `set` message
 * @property {(message: string) => void} error show a local error (bad JSON, not a number)
 */

/**
 * One editable field bound to a dotted parameter key.
 *
 * @typedef {object} FieldControl
 * @property {HTMLElement} element the input (select, checkbox, textarea...)
 * @property {(value: *) => void} setValue show a value from a params message
 */

/**
 * An input for one leaf field of a schema.
 *
 * @param {string} key dotted parameter key
 * @param {object} node dereferenced schema node
 * @param {PanelHost} host
 * @param {{id?: string, models?: string[], maxValue?: number}} [options] models: choices for the
 *   `model` field; maxValue: a tighter maximum than the schema's (agent count cap)
 * @returns {FieldControl}
 */
export function fieldControl(key, node, host, options = {}) {
  const kind = fieldKind(node);
  const common = { id: options.id, "data-key": key, title: node.description ?? key, "aria-label": key };
  const commit = (value) => host.set({ [key]: value });
  if (kind === "boolean") {
    const input = el("input", { ...common, type: "checkbox" });
    input.addEventListener("change", () => commit(input.checked));
    return { element: input, setValue: (v) => (input.checked = Boolean(v)) };
  }
  if (kind === "enum" || kind === "const") {
    const choices = kind === "const" ? (options.models ?? [node.const]) : node.enum;
    const select = el("select", common, ...choices.map((c) => el("option", { value: String(c), text: String(c) })));
    const numeric = choices.every((c) => typeof c === "number");
    select.addEventListener("change", () => commit(numeric ? Number(select.value) : select.value));
    return { element: select, setValue: (v) => (select.value = String(v)) };
  }
  if (kind === "number" || kind === "integer") {
    const { min, max, step } = numericLimits(node);
    const cap = options.maxValue !== undefined ? Math.min(options.maxValue, max ?? Infinity) : max;
    const input = el("input", { ...common, type: "number", min, max: cap, step, inputmode: "decimal" });
    input.addEventListener("change", () => {
      const text = input.value.trim();
      const value = kind === "integer" ? Number.parseInt(text, 10) : Number.parseFloat(text);
      if (text === "" || !Number.isFinite(value) || (kind === "integer" && !/^[-+]?\d+$/.test(text))) {
        host.error(`${key}: enter ${kind === "integer" ? "a whole number" : "a number"}, got '${text}'`);
        return;
      }
      commit(value);
    });
    return { element: input, setValue: (v) => (input.value = String(v)) };
  }
  if (kind === "string") {
    const input = el("input", { ...common, type: "text" });
    input.addEventListener("change", () => commit(input.value));
    return { element: input, setValue: (v) => (input.value = String(v ?? "")) };
  }
  // lists and objects (obstacles, vectors, per-agent values): JSON text
  const area = el("textarea", { ...common, rows: 2, spellcheck: "false", class: "json" });
  area.addEventListener("change", () => {
    let value;
    try {
      value = JSON.parse(area.value);
    } catch (err) {
      host.error(`${key}: not valid JSON (${err.message})`);
      return;
    }
    commit(value);
  });
  return {
    element: area,
    setValue: (v) => {
      const text = JSON.stringify(v);
      area.value = text.length > 60 && Array.isArray(v) && v.some((x) => typeof x === "object") ? jsonLines(v) : text;
      area.rows = Math.min(12, Math.max(1, area.value.split("\n").length));
    },
  };
}

/** A list of objects as JSON with one item per line. */
function jsonLines(list) {
  return `[\n${list.map((x) => `  ${JSON.stringify(x)}`).join(",\n")}\n]`;
}

/**
 * Show a value in a control, unless the user is editing it right now (`force`: also then, e.g.
 * after the server refused what was typed).
 */
function showValue(control, value, force = false) {
  if (!force && document.activeElement === control.element && control.element.tagName !== "SELECT") return;
  if (value !== undefined) control.setValue(value, force);
}

/** The Basic panel's choices: [dotted key, label, element id]. */
const BASIC_FIELDS = [
  ["neighbors.mode", "Neighbours", "basic-neighbors"],
  ["rules.alignment.mode", "Alignment", "basic-alignment"],
  ["predator.enabled", "Predator", "basic-predator"],
  ["turning.enabled", "Spontaneous turning", "basic-turning"],
  ["agents.n", "Agents", "basic-agents"],
];
/** Live weight sliders (the classic boids demo): [dotted key, label, element id]. */
const WEIGHT_FIELDS = [
  ["rules.separation.weight", "Separation", "basic-w-separation"],
  ["rules.alignment.weight", "Alignment weight", "basic-w-alignment"],
  ["rules.cohesion.weight", "Cohesion", "basic-w-cohesion"],
];
/** Largest value of a weight slider. */
const WEIGHT_SLIDER_MAX = 5;
/** Smallest time between two `set`s sent while a slider is dragged [ms]. */
const SLIDER_INTERVAL_MS = 100;

/** Basic panel: neighbour mode, alignment mode, predator, turning, agent count, rule weights. */
export class BasicPanel {
  /**
   * @param {HTMLElement} container
   * @param {PanelHost} host
   * @param {{sliderNote?: string}} [options] sliderNote: the line under each weight slider
   */
  constructor(container, host, options = {}) {
    this.container = container;
    this.host = host;
    this.sliderNote = options.sliderNote ?? `slider 0 to ${WEIGHT_SLIDER_MAX}; more in Expert`;
    /** @type {Map<string, FieldControl>} */
    this.controls = new Map();
  }

  /**
   * Rebuild for a model's schema: rows for the fields it has.
   *
   * @param {object} schema the model's JSON Schema
   * @param {number} maxAgents the server's cap on agents.n
   */
  build(schema, maxAgents) {
    this.container.replaceChildren();
    this.controls.clear();
    for (const [key, label, id] of BASIC_FIELDS) {
      const node = fieldSchema(schema, key);
      if (!node) continue;
      const control = fieldControl(key, node, this.host, { id, maxValue: key === "agents.n" ? maxAgents : undefined });
      this.controls.set(key, control);
      this.container.append(row(label, control.element, node, key === "agents.n" ? `max ${maxAgents}` : ""));
    }
    for (const [key, label, id] of WEIGHT_FIELDS) {
      const node = fieldSchema(schema, key);
      if (!node) continue;
      const control = this._slider(key, id);
      this.controls.set(key, control);
      this.container.append(row(label, control.element, node, this.sliderNote));
    }
    if (this.controls.size === 0) {
      this.container.append(el("p", { class: "note", text: "This model has none of the basic choices: see Expert." }));
    }
  }

  /**
   * Show the values of a parameter set.
   *
   * @param {object} params
   * @param {boolean} [force] also in the control being edited
   */
  update(params, force = false) {
    for (const [key, control] of this.controls) showValue(control, getKey(params, key), force);
  }

  _slider(key, id) {
    const input = el("input", { id, type: "range", min: 0, max: WEIGHT_SLIDER_MAX, step: 0.05, "data-key": key });
    const out = el("output", { for: id, class: "slider-value" });
    const wrap = el("span", { class: "slider" }, input, out);
    let last = 0;
    let timer = 0;
    const send = () => {
      clearTimeout(timer);
      timer = 0;
      last = performance.now();
      this.host.set({ [key]: Number(input.value) });
    };
    input.addEventListener("input", () => {
      out.textContent = Number(input.value).toFixed(2);
      const wait = SLIDER_INTERVAL_MS - (performance.now() - last);
      if (wait <= 0) send();
      else if (!timer) timer = setTimeout(send, wait);
    });
    input.addEventListener("change", send);
    return {
      element: wrap,
      setValue: (v, force = false) => {
        if (!force && document.activeElement === input) return;
        input.max = String(Math.max(WEIGHT_SLIDER_MAX, Number(v)));
        input.value = String(v);
        out.textContent = Number(v).toFixed(2);
      },
    };
  }
}

/** A labelled row: label, input, unit and range. */
function row(label, input, node, extra) {
  const unit = node.unit && node.unit !== "dimensionless" ? node.unit : "";
  const numeric = fieldKind(node) === "number" || fieldKind(node) === "integer";
  const range = numeric ? numericLimits(node).range : "";
  const note = [unit, extra || range].filter(Boolean).join("; ");
  return el(
    "div",
    { class: "row", title: node.description ?? "" },
    el("label", { text: label, for: input.id || undefined }),
    input,
    note ? el("span", { class: "unit", text: note }) : null,
  );
}

/**
 * Expert panel: every parameter of the current model, grouped by block (collapsible), each with
 * its unit and allowed range, generated from the JSON Schema.
 */
export class ExpertPanel {
  /**
   * @param {HTMLElement} container
   * @param {PanelHost} host
   */
  constructor(container, host) {
    this.container = container;
    this.host = host;
    /** @type {Map<string, FieldControl>} */
    this.controls = new Map();
    this.model = "";
    /** @type {Set<string>} keys of the groups the user opened (kept across rebuilds) */
    this.open = new Set(["world", "agents", "rules"]);
  }

  /**
   * Rebuild for a model.
   *
   * @param {string} model
   * @param {object} schema the model's JSON Schema
   * @param {string[]} models every model name (choices of the `model` field)
   */
  build(model, schema, models) {
    this.model = model;
    this.container.replaceChildren();
    this.controls.clear();
    const general = el("div", { class: "group general" });
    this.container.append(general);
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      const node = deref(schema, prop);
      if (fieldKind(node) === "object") this.container.append(this._group(schema, name, node, models));
      else general.append(this._leaf(name, name, node, models));
    }
  }

  /**
   * Show the values of a parameter set.
   *
   * @param {object} params
   * @param {boolean} [force] also in the control being edited
   */
  update(params, force = false) {
    for (const [key, control] of this.controls) showValue(control, getKey(params, key), force);
  }

  _group(schema, key, node, models) {
    const details = el("details", { class: "group", "data-group": key });
    if (this.open.has(key)) details.open = true;
    details.addEventListener("toggle", () => {
      if (details.open) this.open.add(key);
      else this.open.delete(key);
    });
    const doc = (node.description ?? "").split("\n")[0];
    details.append(el("summary", { title: node.description ?? "" }, el("b", { text: key.split(".").pop() }), " ", doc));
    for (const [name, prop] of Object.entries(node.properties)) {
      const child = deref(schema, prop);
      const childKey = `${key}.${name}`;
      if (fieldKind(child) === "object") details.append(this._group(schema, childKey, child, models));
      else details.append(this._leaf(childKey, name, child, models));
    }
    return details;
  }

  _leaf(key, name, node, models) {
    const control = fieldControl(key, node, this.host, { id: `expert-${key}`, models });
    this.controls.set(key, control);
    return row(name, control.element, node, "");
  }
}

/**
 * What leaving Expert restores, per mode (2D, 3D), across switches (docs/viewer.md, "Expert
 * panel"). Opening Expert keeps the shown mode's parameters (its Basic values); a mode first shown
 * while Expert is open keeps its parameters as they arrived, except that a value carried over
 * unchanged from the mode it was built from (a scene with no twin is carried to the other
 * dimension) is kept at that mode's Basic value (a model changed in Expert is not carried back). Leaving Expert restores the shown mode and owes
 * the parked mode its restore, sent when it is shown next. Another scene, a new connection or a
 * mode the server no longer keeps starts over. No DOM: the page sends what it returns.
 */
export class ExpertRestore {
  constructor() {
    /** Expert is open */
    this.open = false;
    /** @type {Map<number, object>} each mode's Basic values while Expert is open */
    this.base = new Map();
    /** @type {Map<number, object>} restores owed to parked modes (sent when shown) */
    this.owed = new Map();
  }

  /**
   * Expert opens on the mode `dim` showing `params`.
   *
   * @param {object} params
   * @param {number} dim
   */
  enter(params, dim) {
    this.open = true;
    this.base = new Map([[dim, structuredClone(params)]]);
  }

  /**
   * Expert closes on the mode `dim` showing `params`: the changes that restore it (a parked mode
   * that was shown in this Expert session is restored when it is shown again).
   *
   * @param {object} params
   * @param {number} dim
   * @returns {Record<string, *>} empty when nothing to restore
   */
  leave(params, dim) {
    this.open = false;
    for (const [d, basic] of this.base) if (d !== dim) this.owed.set(d, basic);
    const basic = this.base.get(dim);
    this.base.clear();
    return basic ? restoringChanges(params, basic) : {};
  }

  /**
   * A `params` message: keep track of the modes, and say what to restore now (an owed restore of
   * the mode just shown).
   *
   * @param {{dim: number, params: object, parked?: number[]}} msg
   * @param {{dim: number, params: object}|null} previous the last params message (null: a new
   *   connection)
   * @param {boolean} rebase another scene was chosen
   * @returns {Record<string, *>} the changes to send (empty: none)
   */
  onParams(msg, previous, rebase) {
    const dim = msg.dim;
    if (rebase || !previous) {
      this.owed.clear();
      this.base = this.open ? new Map([[dim, structuredClone(msg.params)]]) : new Map();
      return {};
    }
    const switched = previous.dim !== dim;
    let changes = {};
    if (switched && this.owed.has(dim)) {
      const basic = this.owed.get(dim);
      this.owed.delete(dim);
      changes = restoringChanges(msg.params, basic);
      if (this.open) this.base.set(dim, basic);
    }
    if (this.open && !this.base.has(dim)) {
      this.base.set(dim, switched ? this._carried(msg.params, previous) : structuredClone(msg.params));
    }
    for (const map of [this.base, this.owed]) {
      for (const d of [...map.keys()]) if (d !== dim && !(msg.parked ?? []).includes(d)) map.delete(d);
    }
    return changes;
  }

  /** Basic values of a mode built while Expert was open, from the mode it was built from. */
  _carried(params, from) {
    const basic = this.base.get(from.dim);
    if (!basic) return structuredClone(params);
    let out = structuredClone(params);
    for (const [key, value] of Object.entries(restoringChanges(from.params, basic))) {
      if (key !== "model" && sameValue(getKey(params, key), getKey(from.params, key))) out = withKey(out, key, value);
    }
    return out;
  }
}
