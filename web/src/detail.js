/**
 * Level of detail: how much the view draws, chosen from how long the renders take, so that a slow
 * renderer (a browser without a GPU draws with the CPU: SwiftShader, llvmpipe) keeps the page
 * answering its user.
 *
 * A render's time is measured from the page's render call to the GPU's completion of it: a
 * fence (WebGL2 fenceSync) after the render, polled once per animation frame without waiting
 * (getSyncParameter). While it is not passed, the page renders nothing more (`gpuBusy`): at most
 * one render is ever queued, so a drag or a click never waits behind a backlog of pictures the
 * (software) GPU has yet to draw, and a new frame is drawn as soon as the last one is done.
 *
 * Levels, cheapest last: full detail; half resolution (a quarter of the pixels to fill); then,
 * at half resolution, 1 in 2, 4, 8, 16 and 32 birds drawn (a fixed stride of the flock's
 * entries, the same birds every frame; highlighted ones, the selected bird and its neighbours,
 * always drawn); last, a third of the resolution. A flock is thinned only down to MIN_DRAWN
 * birds: a small flock is not thinned (its cost is the pixels, not the birds), and the levels
 * that would thin it more are skipped.
 *
 * The automatic choice steps down when the last SLOW_RENDERS render times are all over SLOW_MS:
 * by as many levels as halvings bring the fastest of them to SLOW_MS (a level roughly halves the
 * cost; one at least), so a render of 1 s goes down three levels at once rather than one level
 * every few seconds. It steps back up one level when the median of the last FAST_RENDERS is under
 * FAST_MS, at least STEP_UP_AFTER_MS after the last change (the gap between the two thresholds
 * keeps it from going back and forth). The first render after a change is not measured (it may
 * allocate a new drawing buffer). The user can fix a
 * level instead (the View section's "Detail", or `?detail=full` in the page's address).
 *
 * @module detail
 */

/** A render (the render call to the GPU's completion) slower than this is slow [ms]. */
export const SLOW_MS = 120;
/** A render faster than this is fast enough to draw more [ms]. */
export const FAST_MS = 40;
/** Renders that, all slow, decide a step down. */
export const SLOW_RENDERS = 2;
/** Renders whose median decides a step up. */
export const FAST_RENDERS = 6;
/** No step up sooner than this after a change [ms]. */
export const STEP_UP_AFTER_MS = 2000;
/** A flock is thinned down to no fewer drawn birds than this. */
export const MIN_DRAWN = 2000;
/** A fence not passed after this long is given up (a lost context never passes it) [ms]. */
const MAX_RENDER_MS = 10_000;

/** @typedef {{scale: number, stride: number, label: string}} Level */

/** The levels, full detail first: resolution factor and bird stride. */
export const LEVELS = /** @type {Level[]} */ ([
  { scale: 1, stride: 1, label: "full" },
  { scale: 0.5, stride: 1, label: "half resolution" },
  { scale: 0.5, stride: 2, label: "1 in 2 birds" },
  { scale: 0.5, stride: 4, label: "1 in 4 birds" },
  { scale: 0.5, stride: 8, label: "1 in 8 birds" },
  { scale: 0.5, stride: 16, label: "1 in 16 birds" },
  { scale: 0.5, stride: 32, label: "1 in 32 birds" },
  { scale: 0.35, stride: 32, label: "1 in 32 birds, a third of the resolution" },
]);

/**
 * The stride a level's `stride` comes to for a flock of `n` birds: halved until at least
 * MIN_DRAWN birds are drawn (1: every bird).
 *
 * @param {number} stride
 * @param {number} n
 * @returns {number}
 */
export function strideFor(stride, n) {
  let s = stride;
  while (s > 1 && n / s < MIN_DRAWN) s /= 2;
  return s;
}

/**
 * The levels that differ for a flock of `n` birds, full detail first (a small flock is not
 * thinned: its levels differ only by their resolution).
 *
 * @param {number} n birds in the flock
 * @returns {number[]} indices into LEVELS
 */
export function levelsFor(n) {
  const out = [];
  let last = "";
  LEVELS.forEach((level, k) => {
    const key = `${level.scale}/${strideFor(level.stride, n)}`;
    if (key !== last) out.push(k);
    last = key;
  });
  return out;
}


/**
 * The mode a page address asks for: `?detail=auto` (the default), `?detail=full` (level 0, never
 * lowered) or `?detail=K` (level K fixed).
 *
 * @param {string} search the address's query string
 * @returns {"auto"|number}
 */
export function detailModeOf(search) {
  const asked = new URLSearchParams(search).get("detail");
  if (asked === "full") return 0;
  const k = Number(asked);
  return asked !== null && asked !== "" && Number.isInteger(k) && k >= 0 && k < LEVELS.length ? k : "auto";
}

/**
 * The median of some numbers.
 *
 * @param {number[]} values
 * @returns {number}
 */
function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export class DetailController {
  /**
   * @param {"auto"|number} [mode] "auto", or a fixed level (index into LEVELS)
   */
  constructor(mode = "auto") {
    /** "auto" or a fixed level */
    this.mode = mode;
    /** the level drawn now (index into LEVELS) */
    this.level = mode === "auto" ? 0 : mode;
    /** birds in the flock drawn last (bounds the level) */
    this.n = 0;
    /** render times [ms], newest last */
    this.times = [];
    /** when the level last changed [ms, the animation frames' clock] */
    this.changedAt = -Infinity;
    /** the fence after the last render, not passed yet (null: none in flight) */
    this.fence = null;
    /** when the render behind `fence` was made [ms] */
    this.renderedAt = 0;
    /** renders since the level last changed (the first one after a change is not measured: it
     * allocates the new drawing buffer) */
    this.rendersAtLevel = 0;
    /** called with the new level when it changes */
    this.onChange = () => {};
  }

  /** Settings of the level drawn now. */
  get current() {
    return LEVELS[this.level];
  }

  /** The stride drawn for the flock of the last frame (1 where it is too small to thin). */
  get stride() {
    return strideFor(this.current.stride, this.n);
  }

  /**
   * Choose "auto" or fix a level.
   *
   * @param {"auto"|number} mode
   * @param {number} now [ms]
   */
  setMode(mode, now) {
    this.mode = mode;
    this.times = [];
    this._set(mode === "auto" ? this.level : Math.min(Math.max(mode, 0), LEVELS.length - 1), now);
  }

  /**
   * Just rendered: put a fence behind the render's commands.
   *
   * @param {WebGL2RenderingContext} gl
   * @param {number} now [ms]
   * @param {number} n birds in the flock shown
   */
  rendered(gl, now, n) {
    this.n = n;
    if (this.fence) gl.deleteSync(this.fence);
    this.fence = typeof gl.fenceSync === "function" ? gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0) : null;
    gl.flush(); // the fence is sent now, not with the next render's commands
    this.renderedAt = now;
    this.rendersAtLevel++;
  }

  /**
   * Whether the GPU still draws the last render (no new render should be queued). When it has
   * just finished, its time is measured and the level chosen.
   *
   * @param {WebGL2RenderingContext} gl
   * @param {number} now [ms]
   * @returns {boolean}
   */
  gpuBusy(gl, now) {
    if (!this.fence) return false;
    const status = gl.getSyncParameter(this.fence, gl.SYNC_STATUS);
    const took = now - this.renderedAt;
    if (status !== gl.SIGNALED && status !== null && took < MAX_RENDER_MS) return true;
    gl.deleteSync(this.fence);
    this.fence = null;
    if (status === gl.SIGNALED && this.rendersAtLevel > 1) this._measured(took, now);
    return false;
  }

  /**
   * One render took `took` ms: choose the level (in "auto" mode).
   *
   * @param {number} took [ms]
   * @param {number} now [ms]
   */
  _measured(took, now) {
    this.times.push(took);
    if (this.times.length > FAST_RENDERS) this.times.shift();
    if (this.mode !== "auto") return;
    // the levels that differ for this flock, and where the level drawn is among them
    const levels = levelsFor(this.n);
    let at = levels.length - 1;
    while (at > 0 && levels[at] > this.level) at--;
    const last = this.times.slice(-SLOW_RENDERS);
    const fastest = Math.min(...last);
    if (last.length === SLOW_RENDERS && fastest > SLOW_MS && at < levels.length - 1) {
      const steps = Math.max(1, Math.round(Math.log2(fastest / SLOW_MS)));
      this._set(levels[Math.min(at + steps, levels.length - 1)], now);
    } else if (
      this.times.length === FAST_RENDERS &&
      median(this.times) < FAST_MS &&
      at > 0 &&
      now - this.changedAt >= STEP_UP_AFTER_MS
    ) {
      this._set(levels[at - 1], now);
    }
  }

  /** The median render time of the last renders [ms] (NaN before any). */
  get renderMs() {
    return this.times.length ? median(this.times) : NaN;
  }

  /**
   * What the status bar says: nothing at full detail, else what is left out and why.
   *
   * @returns {string}
   */
  get note() {
    if (this.level === 0) return "";
    const { scale } = this.current;
    const stride = this.stride;
    const parts = [];
    if (stride > 1) parts.push(`drawing 1 in ${stride} birds`);
    if (scale < 1) parts.push(scale === 0.5 ? "half resolution" : `${Math.round(scale * 100)} % resolution`);
    if (parts.length === 0) return "";
    const why = this.mode === "auto" ? "slow renderer" : "chosen in View";
    return `${parts.join(", ")}: ${why}`;
  }

  _set(level, now) {
    if (level === this.level) return;
    this.level = level;
    this.changedAt = now;
    this.times = [];
    this.rendersAtLevel = 0;
    this.onChange(level);
  }
}

/**
 * The birds of a frame that a stride draws: every `stride`-th entry of the flock and every
 * highlighted one (flags & `keep`), copied into new arrays; the frame itself when the stride is 1.
 *
 * @template {{positions: ArrayLike<number> & {constructor: any, subarray: Function}, headings: ArrayLike<number> & {constructor: any}, flags: Uint8Array, nAgents: number, dim: number}} F
 * @param {F} frame
 * @param {number} stride
 * @param {number} keep flag bits of entries always drawn
 * @returns {F} a frame-like object whose first nAgents entries are the drawn birds
 */
export function thinned(frame, stride, keep) {
  if (stride <= 1) return frame;
  const { dim, nAgents, flags } = frame;
  const picked = [];
  for (let i = 0; i < nAgents; i++) if (i % stride === 0 || flags[i] & keep) picked.push(i);
  const m = picked.length;
  const positions = new frame.positions.constructor(m * dim);
  const headings = new frame.headings.constructor(m * dim);
  const kept = new Uint8Array(m);
  const bank = frame.bank ? new frame.bank.constructor(m) : null;
  for (let k = 0; k < m; k++) {
    const i = picked[k];
    if (bank) bank[k] = frame.bank[i];
    for (let a = 0; a < dim; a++) {
      positions[k * dim + a] = frame.positions[i * dim + a];
      headings[k * dim + a] = frame.headings[i * dim + a];
    }
    kept[k] = flags[i];
  }
  return { ...frame, positions, headings, flags: kept, nAgents: m, bank };
}
