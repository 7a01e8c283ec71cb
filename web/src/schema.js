/**
 * Helpers for the parameter JSON Schemas the server sends in `hello.schemas` (pydantic's
 * `model_json_schema()`: nested blocks are `$ref`s into `$defs`; numeric fields carry `unit`,
 * `minimum`/`maximum` or `exclusiveMinimum`/`exclusiveMaximum`, `description`) and for the
 * parameter dictionaries of `params` messages (dotted keys as in `flocksim run --set`).
 *
 * @module schema
 */

/**
 * Follow a `$ref` (`#/$defs/Name`) to its definition; other nodes are returned as they are.
 *
 * @param {object} root the model's whole schema (holds `$defs`)
 * @param {object} node a schema node
 * @returns {object}
 */
export function deref(root, node) {
  let out = node;
  for (let hops = 0; out && out.$ref && hops < 32; hops++) {
    const path = out.$ref.replace(/^#\//, "").split("/");
    const target = path.reduce((o, k) => (o ? o[k] : undefined), root);
    if (!target) throw new Error(`schema: unresolved reference ${out.$ref}`);
    // keep the field's own description/default next to the referenced block's
    const { $ref: _ref, ...own } = out;
    out = { ...target, ...own };
  }
  return out;
}

/**
 * The schema node of a dotted parameter key, or null when the model has no such field.
 *
 * @param {object} root the model's schema
 * @param {string} key dotted key, e.g. "rules.alignment.mode"
 * @returns {object|null}
 */
export function fieldSchema(root, key) {
  let node = root;
  for (const part of key.split(".")) {
    node = deref(root, node);
    if (!node || !node.properties || !(part in node.properties)) return null;
    node = node.properties[part];
  }
  return deref(root, node);
}

/**
 * What input a leaf field gets in the Expert panel.
 *
 * @param {object} node a dereferenced schema node
 * @returns {"number"|"integer"|"boolean"|"enum"|"const"|"string"|"json"|"object"}
 */
export function fieldKind(node) {
  if (node.properties) return "object";
  if (node.const !== undefined) return "const";
  if (Array.isArray(node.enum)) return "enum";
  if (node.type === "boolean") return "boolean";
  if (node.type === "integer") return "integer";
  if (node.type === "number") return "number";
  if (node.type === "string") return "string";
  return "json";
}

/**
 * Input limits of a numeric field: min/max for the HTML input (exclusive bounds become inclusive:
 * the server still rejects the bound itself), a step, and the allowed range as text.
 *
 * @param {object} node a numeric schema node
 * @returns {{min: number|undefined, max: number|undefined, step: string, range: string}}
 */
export function numericLimits(node) {
  const min = node.minimum ?? node.exclusiveMinimum;
  const max = node.maximum ?? node.exclusiveMaximum;
  const low =
    node.minimum !== undefined ? `>= ${fmt(node.minimum)}` : node.exclusiveMinimum !== undefined ? `> ${fmt(min)}` : "";
  const high =
    node.maximum !== undefined ? `<= ${fmt(node.maximum)}` : node.exclusiveMaximum !== undefined ? `< ${fmt(max)}` : "";
  const range = [low, high].filter(Boolean).join(" and ") || "any finite value";
  return { min, max, step: node.type === "integer" ? "1" : "any", range };
}

/** A number in short form (1e+06 rather than 1000000). */
function fmt(x) {
  return Math.abs(x) >= 1e5 ? x.toExponential(2).replace(/\.?0+e/, "e") : String(x);
}

/**
 * Read a dotted key from a parameter dictionary.
 *
 * @param {object} params
 * @param {string} key
 * @returns {*} undefined when absent
 */
export function getKey(params, key) {
  return key.split(".").reduce((o, k) => (o !== null && typeof o === "object" ? o[k] : undefined), params);
}

/**
 * A copy of a parameter dictionary with one dotted key set (the sections on the way created).
 *
 * @param {object} params
 * @param {string} key
 * @param {*} value
 * @returns {object}
 */
export function withKey(params, key, value) {
  const out = structuredClone(params);
  const parts = key.split(".");
  let node = out;
  for (const part of parts.slice(0, -1)) {
    if (node[part] === null || typeof node[part] !== "object") node[part] = {};
    node = node[part];
  }
  node[parts[parts.length - 1]] = structuredClone(value);
  return out;
}

/**
 * Flatten a parameter dictionary into dotted leaf keys (lists are leaves, as `set` takes them).
 *
 * @param {object} params
 * @param {string} [prefix]
 * @returns {Map<string, *>}
 */
export function flatten(params, prefix = "") {
  const out = new Map();
  for (const [k, v] of Object.entries(params)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      for (const [kk, vv] of flatten(v, key)) out.set(kk, vv);
    } else {
      out.set(key, v);
    }
  }
  return out;
}

/**
 * The `set` changes that bring `current` back to `target`: every leaf that differs, with
 * `model` first when the model changed (a model change resets the fields the new model does not
 * share, so then every leaf of the target is sent). Leaves the target does not have, and null
 * values (which `set` rejects), are left out.
 *
 * @param {object} current parameters now
 * @param {object} target parameters wanted
 * @returns {Record<string, *>} empty when nothing differs
 */
export function restoringChanges(current, target) {
  const now = flatten(current);
  const want = flatten(target);
  const modelChanged = now.get("model") !== want.get("model");
  const changes = {};
  if (modelChanged) changes.model = want.get("model");
  for (const [k, v] of want) {
    if (k === "model" || v === null || v === undefined) continue;
    if (modelChanged || !sameValue(now.get(k), v)) changes[k] = v;
  }
  return changes;
}

/**
 * Deep equality of JSON values.
 *
 * @param {*} a
 * @param {*} b
 * @returns {boolean}
 */
export function sameValue(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}
