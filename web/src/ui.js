/**
 * Small DOM pieces shared by the page: an element builder, the error banner and the status bar.
 *
 * @module ui
 */

/**
 * Create an element.
 *
 * @param {string} tag
 * @param {Record<string, *>} [attrs] attributes; `class`, `text`, `dataset`, and `on*` handlers
 *   are special
 * @param {...(Node|string|null|undefined)} children
 * @returns {HTMLElement}
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k.startsWith("on") && typeof v === "function") node.addEventListener(k.slice(2), v);
    else if (v === true) node.setAttribute(k, "");
    else node.setAttribute(k, String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

/**
 * Fetch an element by id, failing loudly when the page lacks it.
 *
 * @param {string} id
 * @returns {HTMLElement}
 */
export function byId(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error(`page element #${id} is missing`);
  return node;
}

/**
 * The line shown while the server compiles its kernels (a `compiling` message): the scene they
 * are for and the server's own estimate ("about 50 s", the words of its log line, from the
 * figures measured for each preset), when the server sends them. The page has no estimate of its
 * own: its fixed "usually 1 to 3 minutes" contradicted the server's line ("about 30 s").
 *
 * @param {{kernels: number, seconds: number, current?: string, scene?: string, estimate?: string}} msg
 * @returns {string}
 */
export function compilingText(msg) {
  const s = Math.max(0, Math.round(Number(msg.seconds) || 0));
  const time = s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
  const now = msg.current ? ` (now ${msg.current})` : "";
  const scene = msg.scene ? ` for ${msg.scene}` : "";
  const estimate = msg.estimate ? `; ${msg.estimate} in all` : "";
  return `compiling kernels${scene} (first start only) ... ${msg.kernels} compiled, ${time}${now}${estimate}`;
}

/** How long the status bar shows a notice ("reconnected: ...") in place of the mode [ms]. */
const NOTICE_MS = 6000;

/** How long an error stays on screen [ms]. */
const ERROR_SHOW_MS = 8000;

/** The banner (`#error`) that shows error replies and local failures. */
export class ErrorBanner {
  constructor() {
    this.node = byId("error");
    this.text = byId("error-text");
    this.timer = 0;
    /** @type {string[]} every message shown, oldest first */
    this.history = [];
    byId("error-close").addEventListener("click", () => this.hide());
  }

  /**
   * Show a message (replaces the one on screen).
   *
   * @param {string} message
   */
  show(message) {
    this.history.push(message);
    this.text.textContent = message;
    this.node.hidden = false;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.hide(), ERROR_SHOW_MS);
  }

  hide() {
    clearTimeout(this.timer);
    this.node.hidden = true;
  }
}

/**
 * A status value for display: fixed decimals, "-" for NaN.
 *
 * @param {number} x
 * @param {number} digits
 * @returns {string}
 */
export function formatValue(x, digits) {
  return Number.isFinite(x) ? x.toFixed(digits) : "-";
}

/**
 * Short text for the engine of a `params` message: "(GPU)", "(2 threads, tbb)", "(1 thread)".
 *
 * @param {{name: string, threads: number|null, layer: string|null}|undefined} engine
 * @returns {string}
 */
export function engineText(engine) {
  if (!engine) return "";
  if (engine.name === "cuda") return "(GPU)";
  const threads = `${engine.threads} thread${engine.threads === 1 ? "" : "s"}`;
  return engine.layer && engine.layer !== "none" && engine.threads !== 1 ? `(${threads}, ${engine.layer})` : `(${threads})`;
}

/** The status bar: ids status-polarization, -neighbors, -caught, -remaining, -sps, -fps, -time, -mode. */
export class StatusBar {
  constructor() {
    this.fields = {
      polarization: byId("status-polarization"),
      mean_neighbors: byId("status-neighbors"),
      caught: byId("status-caught"),
      remaining: byId("status-remaining"),
      steps_per_second: byId("status-sps"),
      fps: byId("status-fps"),
      time: byId("status-time"),
      mode: byId("status-mode"),
    };
    /** the connection is lost (values are not live) */
    this.offline = false;
    /** @type {string|null} a notice shown in place of the mode */
    this.notice = null;
    this.noticeTimer = 0;
    this.mode = "live";
  }

  /**
   * Show a frame's status values.
   *
   * @param {{polarization: number, mean_neighbors: number, caught: number, remaining: number,
   *   steps_per_second: number}} status
   * @param {number} time simulated time of the frame [s]
   */
  showStatus(status, time) {
    if (this.offline) return; // a frame still drawn after the loss is not live
    const f = this.fields;
    f.polarization.textContent = formatValue(status.polarization, 3);
    f.mean_neighbors.textContent = formatValue(status.mean_neighbors, 2);
    f.caught.textContent = formatValue(status.caught, 0);
    f.remaining.textContent = formatValue(status.remaining, 0);
    f.steps_per_second.textContent = formatValue(status.steps_per_second, 0);
    f.time.textContent = formatValue(time, 1);
  }

  /**
   * Show what steps the simulation, e.g. "2 threads, tbb" or "GPU".
   *
   * @param {{name: string, threads: number|null, layer: string|null}|undefined} engine
   */
  showEngine(engine) {
    byId("status-engine").textContent = engineText(engine);
  }

  /** @param {number} fps rendered frames per second, measured here */
  /** @param {string} text the level of detail's note ("drawing 1 in 4 birds: slow renderer"); "" hides it */
  showDetail(text) {
    const node = byId("status-detail");
    node.textContent = text;
    node.hidden = text === "";
  }

  showFps(fps) {
    this.fields.fps.textContent = formatValue(fps, 0);
  }

  /** @param {string} text "live", "paused", "replay 0.25x", ... */
  showMode(text) {
    this.mode = text;
    if (!this.offline) this.fields.mode.textContent = this.notice ?? text;
  }

  /** The connection is lost: no steps per second, the mode says so, the values are greyed. */
  showDisconnected() {
    this.offline = true;
    this.fields.steps_per_second.textContent = "-";
    this.fields.mode.textContent = "disconnected: reconnecting";
    this.fields.mode.closest("footer")?.classList.add("offline");
  }

  /**
   * Back online: show `text` in place of the mode for a few seconds.
   *
   * @param {string} text
   */
  showNotice(text) {
    this.offline = false;
    this.fields.mode.closest("footer")?.classList.remove("offline");
    this.notice = text;
    this.fields.mode.textContent = text;
    clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => {
      this.notice = null;
      this.fields.mode.textContent = this.mode ?? "live";
    }, NOTICE_MS);
  }
}
