/**
 * Level of detail: how much the view draws, chosen from how long the renders take, so that a slow
 * renderer (a browser without a GPU draws with the CPU: SwiftShader, llvmpipe) keeps the page
 * answering its user, and the picture is lowered only as far as that needs.
 *
 * A render's time is measured from the page's render call to the GPU's completion of it: a
 * fence (WebGL2 fenceSync) after the render, polled once per animation frame without waiting
 * (getSyncParameter). While it is not passed, the page renders nothing more (`gpuBusy`): at most
 * one render is ever queued, so a drag or a click never waits behind a backlog of pictures the
 * (software) GPU has yet to draw, and a new frame is drawn as soon as the last one is done.
 *
 * Levels, cheapest last: full detail; 1 in 2, 4, 8 and 16 birds drawn (a fixed stride of the
 * flock's entries, the same birds every frame; highlighted ones, the selected bird and its
 * neighbours, always drawn; each drawn bird stands for the ones left out: shaders.js); then, with
 * 1 in 16 birds, 70 % of the resolution (half the pixels) and last half the resolution. A flock is
 * thinned only down to MIN_DRAWN birds drawn: a flock of a few thousand is never thinned (its cost
 * is the pixels, not the birds), the levels that would thin it more are skipped, and it is drawn
 * at no less than SMALL_FLOCK_SCALE of the resolution.
 *
 * The automatic choice aims at a usable rate, about 20 pictures a second (TARGET_MS), and starts
 * at full detail (again for each new flock):
 * - it steps down when the median of the last MIN_SAMPLES renders at a level is over
 *   SLOW_MS, by as many levels as halvings bring it to SLOW_MS (a level roughly halves the
 *   cost), thinning first and lowering the resolution only one level at a time; two renders in
 *   a row over QUICK_MS step down at once (a flock of 100 000 at full detail takes a second or
 *   more a render in SwiftShader);
 * - a step down that bought almost nothing (the median at the lower level still slow and over
 *   NO_GAIN of the one it left: a busy machine, not the picture, is slow) is taken back, and the
 *   page does not go below that level for FLOOR_HOLD_MS (twice as long each time again);
 * - it steps back up while the renders are usable (median at most SLOW_MS): at once (after
 *   STEP_UP_MS) when twice their median is still under SLOW_MS, else as a probe, PROBE_MS after
 *   the last change. A probe that turns out slow is taken back and the next one waits twice as
 *   long (up to MAX_PROBE_MS); one that holds resets the wait.
 * The first renders after a change are not measured (a new drawing buffer, shaders compiled),
 * unless they take over 3 QUICK_MS (a flock of 100 000 at full detail: 1 to 5 s a render).
 * The user can fix a level instead (the View section's "Detail", or `?detail=full` in the page's
 * address).
 *
 * @module detail
 */

/** The rate the automatic level aims at: a render [ms] (20 pictures a second). */
export const TARGET_MS = 50;
/** Renders slower than this (under 10 pictures a second) are too slow: the level steps down [ms]. */
export const SLOW_MS = 2 * TARGET_MS;
/** Two renders in a row slower than this step down at once, without waiting for MIN_SAMPLES [ms]. */
export const QUICK_MS = 3 * SLOW_MS;
/** Renders measured at a level before it is judged. */
export const MIN_SAMPLES = 4;
/** Renders whose median is judged (the newest at the level). */
export const WINDOW = 8;
/** Renders after a change that are not measured (a new drawing buffer, new shaders). */
export const SKIP_RENDERS = 2;
/** A step up while renders are fast waits this long after the last change [ms]. */
export const STEP_UP_MS = 1000;
/** A probe upward waits this long after the last change, doubled after each one that failed [ms]. */
export const PROBE_MS = 2500;
/** Longest wait between probes [ms]. */
export const MAX_PROBE_MS = 10_000;
/** A step down whose lower level's median is over this share of the level left bought nothing. */
export const NO_GAIN = 0.8;
/** How long the page stays at or above a level whose step down bought nothing [ms], doubled each
 * time it happens again with the same flock (up to MAX_FLOOR_HOLD_MS). */
export const FLOOR_HOLD_MS = 20_000;
const MAX_FLOOR_HOLD_MS = 300_000;
/** A flock is thinned down to no fewer drawn birds than this (only flocks of twice this are). */
export const MIN_DRAWN = 5000;
/** The lowest resolution a flock too small to thin is drawn at: at half the resolution 500 birds
 * in 2D covered 28 % more of the picture than at full (each shape's blurred rim is twice as wide),
 * at 70 % about 12 % more. */
export const SMALL_FLOCK_SCALE = 0.7;
/** A fence not passed after this long is given up (a lost context never passes it) [ms]. */
const MAX_RENDER_MS = 10_000;

/** @typedef {{scale: number, stride: number, label: string}} Level */

/** The levels, full detail first: resolution factor and bird stride. */
export const LEVELS = /** @type {Level[]} */ ([
  { scale: 1, stride: 1, label: "full" },
  { scale: 1, stride: 2, label: "1 in 2 birds" },
  { scale: 1, stride: 4, label: "1 in 4 birds" },
  { scale: 1, stride: 8, label: "1 in 8 birds" },
  { scale: 1, stride: 16, label: "1 in 16 birds" },
  { scale: 0.7, stride: 16, label: "1 in 16 birds, 70 % resolution" },
  { scale: 0.5, stride: 16, label: "1 in 16 birds, half resolution" },
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
  const thinnable = strideFor(2, n) > 1;
  LEVELS.forEach((level, k) => {
    const key = `${level.scale}/${strideFor(level.stride, n)}`;
    if (!thinnable && level.scale < SMALL_FLOCK_SCALE) return;
    if (key !== last) out.push(k);
    last = key;
  });
  return out;
}

/**
 * What a level draws of a flock of `n` birds, in words: "full detail", else the
 * birds drawn and the resolution ("1 in 4 birds", "half resolution", "1 in 16 birds, 70 %
 * resolution"). The status bar and the Detail menu both say this.
 *
 * @param {number} level index into LEVELS
 * @param {number} n
 * @returns {string}
 */
export function describe(level, n) {
  const { scale, stride } = LEVELS[level];
  const s = strideFor(stride, n);
  const parts = [];
  if (s > 1) parts.push(`1 in ${s} birds`);
  if (scale < 1) parts.push(scale === 0.5 ? "half resolution" : `${Math.round(scale * 100)} % resolution`);
  return parts.length ? parts.join(", ") : "full detail";
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
    /** render times at this level [ms], newest last */
    this.times = [];
    /** when the level last changed [ms, the animation frames' clock] */
    this.changedAt = -Infinity;
    /** the fence after the last render, not passed yet (null: none in flight) */
    this.fence = null;
    /** when the render behind `fence` was made [ms] */
    this.renderedAt = 0;
    /** renders since the level last changed (the first SKIP_RENDERS are not measured) */
    this.rendersAtLevel = 0;
    /** the last step down: the level left and its median [ms] (null: none to judge) */
    this.downFrom = null;
    /** the last step up was a probe not judged yet */
    this.probing = false;
    /** wait before the next probe upward [ms] */
    this.probeWait = PROBE_MS;
    /** no step below this level until `floorUntil` [ms] */
    this.floor = 0;
    this.floorUntil = -Infinity;
    this.floorHold = FLOOR_HOLD_MS;
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
   * Another flock (a scene, a refill, the other mode): in "auto" mode, the full picture first,
   * judged afresh.
   *
   * @param {number} now [ms]
   */
  restart(now) {
    if (this.mode !== "auto") return;
    this.probeWait = PROBE_MS;
    this.probing = false;
    this.downFrom = null;
    this.floorUntil = -Infinity;
    this.floorHold = FLOOR_HOLD_MS;
    this._set(0, now);
    this.times = [];
    this.rendersAtLevel = 0;
  }

  /**
   * Just rendered: put a fence behind the render's commands.
   *
   * @param {WebGL2RenderingContext} gl
   * @param {number} now [ms]
   * @param {number} n birds in the flock shown
   */
  rendered(gl, now, n) {
    if (n > 0 && this.n > 0 && (n > 1.5 * this.n || 1.5 * n < this.n)) this.restart(now); // another flock
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
    // the first renders after a change are not measured, unless they are far too slow anyway
    const measured = this.rendersAtLevel > SKIP_RENDERS || took > 3 * QUICK_MS;
    if (status === gl.SIGNALED && measured) this._measured(took, now);
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
    if (this.times.length > WINDOW) this.times.shift();
    if (this.mode !== "auto") return;
    // the levels that differ for this flock, and where the level drawn is among them
    const levels = levelsFor(this.n);
    let at = levels.length - 1;
    while (at > 0 && levels[at] > this.level) at--;
    const n = this.times.length;
    const quick = n >= 2 && Math.min(...this.times.slice(-2)) > QUICK_MS;
    if (n < MIN_SAMPLES && !quick) return;
    // the newest renders: the slowness now, not the renders before it set in
    const ms = quick ? Math.min(...this.times.slice(-2)) : median(this.times.slice(-MIN_SAMPLES));
    // no step below a level whose step down bought nothing, for a while
    const lowest = now < this.floorUntil ? this.floor : Infinity;
    if (ms > SLOW_MS) {
      const from = this.downFrom;
      if (from && from.level < this.level && ms > NO_GAIN * from.ms) {
        // lowering bought (almost) nothing: the machine is busy, not the picture slow. Back up,
        // and stay there for a while
        this.floor = from.level;
        this.floorUntil = now + this.floorHold;
        this.floorHold = Math.min(2 * this.floorHold, MAX_FLOOR_HOLD_MS);
        this._set(from.level, now);
        return;
      }
      if (this.probing) this.probeWait = Math.min(2 * this.probeWait, MAX_PROBE_MS);
      this.probing = false;
      const steps = Math.max(1, Math.ceil(Math.log2(ms / SLOW_MS)));
      let to = Math.min(at + steps, levels.length - 1);
      // thinning first, as far as the steps go; the resolution one step at a time, from a level
      // measured slow (a 100 000-bird flock's slow first render is its birds, not its pixels)
      const scale = LEVELS[this.level].scale;
      let thinnest = at;
      while (thinnest + 1 < levels.length && LEVELS[levels[thinnest + 1]].scale === scale) thinnest++;
      to = thinnest > at ? Math.min(to, thinnest) : Math.min(to, at + 1);
      while (to > at && levels[to] > lowest) to--;
      if (to > at) {
        // judged against the newest render at the level left: the slowness that made it step
        this.downFrom = { level: this.level, ms: this.times[this.times.length - 1] };
        this._set(levels[to], now);
      }
      return;
    }
    if (this.probing) {
      this.probing = false;
      this.probeWait = PROBE_MS; // the probe held
    }
    this.downFrom = null;
    if (at === 0) return;
    const since = now - this.changedAt;
    const fast = 2 * ms <= SLOW_MS;
    if ((fast && since >= STEP_UP_MS) || since >= this.probeWait) {
      this.probing = !fast;
      this._set(levels[at - 1], now);
    }
  }

  /** The median render time of the last renders at this level [ms] (NaN before any). */
  get renderMs() {
    return this.times.length ? median(this.times) : NaN;
  }

  /** What the level draws of the flock shown, in words ("full detail", "1 in 4 birds", ...). */
  get summary() {
    return describe(this.level, this.n);
  }

  /**
   * What the status bar says: nothing at full detail, else what is left out and why.
   *
   * @returns {string}
   */
  get note() {
    const summary = this.summary;
    if (summary === "full detail") return "";
    const why = this.mode === "auto" ? "slow renderer" : "chosen in View";
    return `${this.stride > 1 ? "drawing " : ""}${summary}: ${why}`;
  }

  /** The Detail menu's fixed choices, as they draw the flock shown ("70 % resolution" for a
   * flock too small to thin; the levels' own labels before any flock). */
  get fixedLabels() {
    return LEVELS.map((level, k) => (this.n > 0 ? describe(k, this.n) : level.label));
  }

  /** The Detail menu's first choice: "auto (full detail)", "auto (1 in 4 birds)", ... */
  get autoLabel() {
    return this.mode === "auto" ? `auto (${this.summary})` : "auto";
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
 * @param {Float32Array|null} [values] one value per entry of the flock (its density), picked
 *   alongside into the result's `values`
 * @returns {F & {values: Float32Array|null}} a frame-like object whose first nAgents entries are
 *   the drawn birds
 */
export function thinned(frame, stride, keep, values = null) {
  if (stride <= 1) return { ...frame, values };
  const { dim, nAgents, flags } = frame;
  const picked = [];
  for (let i = 0; i < nAgents; i++) if (i % stride === 0 || flags[i] & keep) picked.push(i);
  const m = picked.length;
  const positions = new frame.positions.constructor(m * dim);
  const headings = new frame.headings.constructor(m * dim);
  const kept = new Uint8Array(m);
  const bank = frame.bank ? new frame.bank.constructor(m) : null;
  const out = values ? new Float32Array(m) : null;
  for (let k = 0; k < m; k++) {
    const i = picked[k];
    if (bank) bank[k] = frame.bank[i];
    if (out) out[k] = values[i];
    for (let a = 0; a < dim; a++) {
      positions[k * dim + a] = frame.positions[i * dim + a];
      headings[k * dim + a] = frame.headings[i * dim + a];
    }
    kept[k] = flags[i];
  }
  return { ...frame, positions, headings, flags: kept, nAgents: m, bank, values: out };
}
