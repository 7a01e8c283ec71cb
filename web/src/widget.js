/**
 * flocksim's notebook widget: the front end of `flocksim.widget(...)` (anywidget; see
 * docs/notebook.md). It draws with the viewer's renderer (renderer.js) from the viewer's binary
 * frames (protocol.js, docs/protocol.md) and builds the viewer's Basic panel (panels.js) from the
 * model's JSON Schema: one renderer, two hosts.
 *
 * The Python side (src/flocksim/notebook/) holds the simulation or the recorded run. Synced model
 * state: `frame` (the newest binary frame, sent as a buffer), `params` (parameter dictionary),
 * `schema` (the model's JSON Schema; empty for a replay), `max_agents` (the Basic panel's cap), `source` ("live" | "replay"),
 * `playing`, `index` and `n_frames` (replay: the frame shown, how many there are), `error` (the
 * last refused change). Custom messages to Python: `{type: "next"}` (pull flow control: at most
 * one frame in flight, asked for only after the last one is drawn, while playing),
 * `{type: "step"}` and `{type: "set", changes}`.
 *
 * Each widget's root element carries a test hook, `element.flocksim` (frames drawn, the frame
 * on screen, `foregroundPixels()`), for the browser tests.
 *
 * @module widget
 */

import "./widget.css";

import { BasicPanel } from "./panels.js";
import { readFrame, statusOf } from "./protocol.js";
import { ViewRenderer } from "./renderer.js";
import { el, formatValue } from "./ui.js";

/**
 * The bytes of a synced `frame` value as an ArrayBuffer of their own (the widget machinery hands
 * buffers over as a DataView, possibly on a larger buffer); null when there is no frame yet.
 *
 * @param {DataView|ArrayBuffer|ArrayBufferView|null|undefined} value
 * @returns {ArrayBuffer|null}
 */
export function frameBytes(value) {
  if (!value) return null;
  if (value instanceof ArrayBuffer) return value.byteLength ? value : null;
  if (ArrayBuffer.isView(value)) {
    if (value.byteLength === 0) return null;
    return value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength);
  }
  return null;
}

/** One view of a widget model in one output cell. */
class WidgetView {
  /**
   * @param {object} model the anywidget model (get, set, save_changes, send, on, off)
   * @param {HTMLElement} root the output cell's element
   */
  constructor(model, root) {
    this.model = model;
    this.root = root;
    this.framesDrawn = 0;
    this.waiting = false; // a `next` is in flight
    this.pending = null; // a frame received and not drawn yet
    this.shown = null;
    this.schemaKey = "";
    this.alive = true;

    this.canvas = el("canvas", { class: "fs-view", tabindex: 0, "aria-label": "simulation view" });
    this.play = el("button", { type: "button", class: "fs-play", onclick: () => this.togglePlay() });
    this.step = el("button", {
      type: "button",
      class: "fs-step",
      text: "Step",
      title: "Advance one step (a replay: one recorded frame)",
      onclick: () => this.stepOnce(),
    });
    this.scrubber = el("input", {
      type: "range",
      class: "fs-scrubber",
      min: 0,
      max: 0,
      step: 1,
      value: 0,
      "aria-label": "recorded frame",
    });
    this.scrubber.addEventListener("input", () => this.seek(Number(this.scrubber.value)));
    this.status = el("span", { class: "fs-status" });
    this.errorLine = el("div", { class: "fs-error", role: "alert", hidden: true });
    this.fields = el("div", { class: "fs-basic" });
    const host = {
      set: (changes) => this.model.send({ type: "set", changes }),
      error: (message) => this.showError(message),
    };
    this.basic = new BasicPanel(this.fields, host, { sliderNote: "slider 0 to 5; larger values from Python" });
    this.node = el(
      "div",
      { class: "flocksim-widget" },
      el("div", { class: "fs-toolbar" }, this.play, this.step, this.scrubber, this.status),
      el("div", { class: "fs-body" }, el("div", { class: "fs-stage" }, this.canvas), this.fields),
      this.errorLine,
    );
    root.append(this.node);
    this.view = new ViewRenderer(this.canvas);

    this.handlers = {
      "change:params": () => this.onParams(),
      "change:schema": () => this.onParams(),
      "change:frame": () => this.onFrame(),
      "change:playing": () => {
        this.waiting = false; // a `next` left unanswered (the end of a replay) does not block Play
        this.refreshControls();
      },
      "change:index": () => this.refreshControls(),
      "change:n_frames": () => this.refreshControls(),
      "change:error": () => this.showError(this.model.get("error")),
    };
    for (const [event, fn] of Object.entries(this.handlers)) model.on(event, fn);
    this.onParams();
    this.onFrame();
    this.refreshControls();
    this.node.flocksim = this.testHook();
    requestAnimationFrame((t) => this.tick(t));
  }

  get replay() {
    return this.model.get("source") === "replay";
  }

  onParams() {
    const params = this.model.get("params");
    if (!params || !params.world) return;
    this.view.configure(params);
    const schema = this.model.get("schema");
    const key = schema && Object.keys(schema).length ? `${params.model}|${schema.title ?? ""}` : "";
    if (key !== this.schemaKey) {
      this.schemaKey = key;
      if (key) this.basic.build(schema, this.model.get("max_agents") || Infinity);
      else this.fields.replaceChildren();
    }
    if (key) this.basic.update(params, true);
    if (this.shown) this.view.show(this.shown);
  }

  onFrame() {
    const bytes = frameBytes(this.model.get("frame"));
    this.waiting = false;
    if (!bytes) return;
    try {
      this.pending = readFrame(bytes);
    } catch (err) {
      this.showError(`bad frame: ${err.message}`);
    }
  }

  togglePlay() {
    this.model.set("playing", !this.model.get("playing"));
    this.model.save_changes();
    this.refreshControls();
  }

  stepOnce() {
    if (this.model.get("playing")) return;
    this.model.send({ type: "step" });
  }

  seek(index) {
    this.model.set("index", index);
    this.model.save_changes();
  }

  refreshControls() {
    const playing = Boolean(this.model.get("playing"));
    this.play.textContent = playing ? "Pause" : "Play";
    this.play.setAttribute("aria-pressed", String(playing));
    this.step.disabled = playing;
    this.scrubber.hidden = !this.replay;
    if (this.replay) {
      this.scrubber.max = String(Math.max(0, (this.model.get("n_frames") ?? 1) - 1));
      if (document.activeElement !== this.scrubber) this.scrubber.value = String(this.model.get("index") ?? 0);
    }
  }

  showError(message) {
    this.errorLine.textContent = message ?? "";
    this.errorLine.hidden = !message;
    if (message && this.shown) this.basic.update(this.model.get("params"), true); // the refused value goes
  }

  showStatus(frame) {
    const s = statusOf(frame);
    const where = this.replay ? `frame ${this.model.get("index") + 1} / ${this.model.get("n_frames")}, ` : "";
    this.status.textContent =
      `${where}t = ${formatValue(frame.time, 2)} s, step ${frame.step}, ${frame.nAgents} agents, ` +
      `polarization ${formatValue(s.polarization, 3)}`;
  }

  tick() {
    if (!this.alive) return;
    if (this.pending) {
      const frame = this.pending;
      this.pending = null;
      this.view.show(frame);
      this.shown = frame;
      this.framesDrawn++;
      this.showStatus(frame);
    }
    if (this.view.dirty) this.view.render();
    // pull flow control: the next frame is asked for once the last one is drawn
    if (this.model.get("playing") && !this.waiting && !this.pending) {
      this.waiting = true;
      this.model.send({ type: "next" });
    }
    requestAnimationFrame((t) => this.tick(t));
  }

  testHook() {
    const self = this;
    return {
      get framesDrawn() {
        return self.framesDrawn;
      },
      get frame() {
        const f = self.shown;
        if (!f) return null;
        const { layout, dim, n, nAgents, frameIndex, step, time } = f;
        return { layout, dim, n, nAgents, frameIndex, step, time };
      },
      foregroundPixels: () => self.view.foregroundPixels(),
    };
  }

  dispose() {
    this.alive = false;
    for (const [event, fn] of Object.entries(this.handlers)) this.model.off(event, fn);
    this.view.controls?.dispose();
    this.view.renderer.dispose();
    this.view.renderer.forceContextLoss();
    this.node.remove();
  }
}

/** anywidget's entry point: draw a view of `model` into `el`; the returned function cleans up. */
function render({ model, el: root }) {
  const view = new WidgetView(model, root);
  return () => view.dispose();
}

export default { render };
