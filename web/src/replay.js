/**
 * Replay buffer: the last 10 s of frames, sampled at 30 per second of wall-clock time
 * as they are drawn, and interpolation between stored frames for slow-motion replay.
 *
 * Frames are kept decoded (typed-array views on the received buffers, nothing copied). Time in
 * this module is the wall-clock time at which a frame was drawn [s], so a replay at 1x shows the
 * flock exactly as fast as it was seen live.
 *
 * @module replay
 */

import { LAYOUT_F32, toFloatFrame } from "./protocol.js";

/** Frames kept: 10 s at 30 frames per second. */
export const REPLAY_CAPACITY = 300;
/** Sampling interval [s]. */
export const REPLAY_INTERVAL = 1 / 30;
/** A frame is stored when at least this fraction of the interval passed since the last one
 * (frames drawn at 60 Hz arrive every 16.7 ms, so every second one is kept despite jitter). */
const SAMPLE_SLACK = 0.8;

/**
 * @typedef {import("./protocol.js").Frame} Frame
 * @typedef {{frame: Frame, t: number}} Sample a frame and the wall-clock time it was drawn [s]
 */

/** The frames of one mode (2D or 3D), oldest first, at most `capacity`. */
export class ReplayBuffer {
  /**
   * @param {number} [capacity] frames kept
   * @param {number} [interval] sampling interval [s]
   */
  constructor(capacity = REPLAY_CAPACITY, interval = REPLAY_INTERVAL) {
    this.capacity = capacity;
    this.interval = interval;
    /** @type {Sample[]} */
    this.samples = [];
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
   * Store a frame that was just drawn if an interval has passed since the last stored one.
   *
   * @param {Frame} frame
   * @param {number} t wall-clock time [s]
   * @returns {boolean} whether it was stored
   */
  offer(frame, t) {
    const last = this.samples[this.samples.length - 1];
    if (last && t - last.t < this.interval * SAMPLE_SLACK) return false;
    if (last && frame.step === last.frame.step) return false;
    this.samples.push({ frame, t });
    if (this.samples.length > this.capacity) this.samples.shift();
    return true;
  }

  /**
   * The frame at a replay position, interpolated between the two stored frames around it:
   * positions lerped (unwrapped across periodic boundaries), headings lerped and normalized,
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

  /**
   * Clear the buffer of one mode (the flock of that mode was refilled).
   *
   * @param {number} dim
   */
  clear(dim) {
    this.get(dim).clear();
  }
}
