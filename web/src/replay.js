/**
 * Replay buffer: the last 10 s of frames, sampled at up to 30 per second of wall-clock time as
 * they are drawn, and interpolation between stored frames for slow-motion replay.
 *
 * Frames are kept decoded (typed-array views on the received buffers, nothing copied). Time in
 * this module is the wall-clock time at which a frame was drawn [s], so a replay at 1x shows the
 * flock exactly as fast as it was seen live. The buffer spans at most 10 s (and holds at most 300
 * frames): when frames are drawn more slowly than 30 per second it holds fewer frames, never more
 * time. A gap between two frames (the simulation paused, the other mode shown: `markGap`; or more
 * than `MAX_GAP` without a frame drawn) is closed up to one sampling interval, so the buffer spans
 * 10 s of flight.
 *
 * @module replay
 */

import { LAYOUT_F32, toFloatFrame } from "./protocol.js";

/** Most frames kept: 10 s at 30 frames per second. */
export const REPLAY_CAPACITY = 300;
/** Longest time kept [s]. */
export const REPLAY_SECONDS = 10;
/** Sampling interval [s]. */
export const REPLAY_INTERVAL = 1 / 30;
/** A longer time between two drawn frames counts as a gap (the page was hidden), closed up [s]. */
export const MAX_GAP = 2;
/** A frame is stored when at least this fraction of the interval passed since the last one
 * (frames drawn at 60 Hz arrive every 16.7 ms, so every second one is kept despite jitter). */
const SAMPLE_SLACK = 0.8;

/**
 * @typedef {import("./protocol.js").Frame} Frame
 * @typedef {{frame: Frame, t: number, drawn: number}} Sample a frame, its time on the replay clock
 *   (wall-clock time with gaps closed up) and the wall-clock time it was drawn [s]
 */

/** The frames of one mode (2D or 3D), oldest first, at most `capacity`. */
export class ReplayBuffer {
  /**
   * @param {number} [capacity] most frames kept
   * @param {number} [interval] sampling interval [s]
   * @param {number} [seconds] longest time kept [s]
   */
  constructor(capacity = REPLAY_CAPACITY, interval = REPLAY_INTERVAL, seconds = REPLAY_SECONDS) {
    this.capacity = capacity;
    this.interval = interval;
    this.seconds = seconds;
    /** @type {Sample[]} */
    this.samples = [];
    this.gap = false;
  }

  /** The next frame follows a gap (paused, the other mode shown): it comes one interval after the last. */
  markGap() {
    this.gap = true;
  }

  /** Frames stored. */
  get length() {
    return this.samples.length;
  }

  /** Time from the first to the last stored frame [s]. */
  get duration() {
    const s = this.samples;
    return s.length < 2 ? 0 : s[s.length - 1].t - s[0].t;
  }

  /** Bytes held by the stored frames (their received buffers). */
  get bytes() {
    return this.samples.reduce((sum, s) => sum + s.frame.positions.buffer.byteLength, 0);
  }

  /** Forget every frame (reset, agent-count change). */
  clear() {
    this.samples.length = 0;
  }

  /**
   * Store a frame that was just drawn if an interval has passed since the last stored one; drop
   * the frames that then lie more than `seconds` back.
   *
   * @param {Frame} frame
   * @param {number} drawn wall-clock time it was drawn [s]
   * @returns {boolean} whether it was stored
   */
  offer(frame, drawn) {
    const s = this.samples;
    const last = s[s.length - 1];
    if (last && drawn - last.drawn < this.interval * SAMPLE_SLACK) return false;
    if (last && frame.step === last.frame.step) return false;
    const gap = last ? drawn - last.drawn : 0;
    const t = last ? last.t + (this.gap || gap > MAX_GAP ? this.interval : gap) : drawn;
    this.gap = false;
    s.push({ frame, t, drawn });
    while (s.length > this.capacity || t - s[0].t > this.seconds + 1e-9) s.shift();
    return true;
  }

  /**
   * The frame at a replay position, interpolated between the two stored frames around it:
   * positions lerped (unwrapped across periodic boundaries), headings lerped and normalized, banks lerped,
   * status values from the nearer frame (polarization and mean neighbours lerped). Two frames
   * with different entries (a bird was caught in between) are not blended: the nearer one is
   * shown.
   *
   * @param {number} position seconds from the first stored frame, clamped to [0, duration]
   * @param {(number|null)[]|null} [period] per-axis period of a periodic world [world units]
   * @returns {Frame|null} null when the buffer is empty
   */
  frameAt(position, period = null) {
    const s = this.samples;
    if (s.length === 0) return null;
    const t = s[0].t + Math.min(Math.max(position, 0), this.duration);
    let hi = s.findIndex((x) => x.t >= t);
    if (hi <= 0) return hi === 0 ? s[0].frame : s[s.length - 1].frame;
    const a = s[hi - 1];
    const b = s[hi];
    const f = b.t > a.t ? (t - a.t) / (b.t - a.t) : 1;
    return interpolateFrames(a.frame, b.frame, f, period);
  }
}

/**
 * Blend two frames at fraction f (0 = a, 1 = b).
 *
 * @param {Frame} a
 * @param {Frame} b
 * @param {number} f in [0, 1]
 * @param {(number|null)[]|null} [period] per-axis period [world units] (null: not periodic)
 * @returns {Frame} a float32 frame (or a or b itself when they cannot be blended)
 */
export function interpolateFrames(a, b, f, period = null) {
  const nearer = f < 0.5 ? a : b;
  if (a.n !== b.n || a.nAgents !== b.nAgents || a.dim !== b.dim || f <= 0 || f >= 1) return nearer;
  const fa = toFloatFrame(a);
  const fb = toFloatFrame(b);
  const { n, dim } = a;
  const positions = new Float32Array(n * dim);
  const headings = new Float32Array(n * dim);
  for (let ax = 0; ax < dim; ax++) {
    const p = period ? period[ax] : null;
    for (let i = ax; i < n * dim; i += dim) {
      const pa = fa.positions[i];
      let pb = fb.positions[i];
      if (p) {
        if (pb - pa > p / 2) pb -= p;
        else if (pa - pb > p / 2) pb += p;
      }
      let x = pa + (pb - pa) * f;
      if (p) x = ((x % p) + p) % p;
      positions[i] = x;
    }
  }
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let ax = 0; ax < dim; ax++) {
      const k = i * dim + ax;
      const h = fa.headings[k] + (fb.headings[k] - fa.headings[k]) * f;
      headings[k] = h;
      s += h * h;
    }
    if (s > 0) {
      const inv = 1 / Math.sqrt(s);
      for (let ax = 0; ax < dim; ax++) headings[i * dim + ax] *= inv;
    }
  }
  let bank = nearer.bank ?? null;
  if (a.bank && b.bank && a.bankStep === b.bankStep) {
    bank = new Float32Array(a.nAgents);
    for (let i = 0; i < a.nAgents; i++) bank[i] = a.bank[i] + (b.bank[i] - a.bank[i]) * f;
  }
  const status = Float64Array.from(nearer.status);
  for (const k of [0, 1]) if (k < status.length) status[k] = a.status[k] + (b.status[k] - a.status[k]) * f;
  const bboxMin = [0, 1, 2].map((k) => Math.min(a.bboxMin[k], b.bboxMin[k]));
  const bboxMax = [0, 1, 2].map((k) => Math.max(a.bboxMax[k], b.bboxMax[k]));
  return {
    ...nearer,
    layout: LAYOUT_F32,
    time: a.time + (b.time - a.time) * f,
    bboxMin,
    bboxMax,
    positions,
    headings,
    status,
    bank,
  };
}

/**
 * One replay buffer per mode (2D, 3D): switching mode keeps the other mode's frames.
 */
export class ReplayStore {
  constructor() {
    /** @type {Map<number, ReplayBuffer>} */
    this.buffers = new Map();
  }

  /**
   * The buffer of a mode (created on first use).
   *
   * @param {number} dim 2 or 3
   * @returns {ReplayBuffer}
   */
  get(dim) {
    if (!this.buffers.has(dim)) this.buffers.set(dim, new ReplayBuffer());
    return /** @type {ReplayBuffer} */ (this.buffers.get(dim));
  }

  /** A gap in every mode's buffer (paused, or a mode switch). */
  markGap() {
    for (const b of this.buffers.values()) b.markGap();
  }

  /**
   * Clear the buffer of one mode (the flock of that mode was refilled).
   *
   * @param {number} dim
   */
  clear(dim) {
    this.get(dim).clear();
  }
}
