/**
 * Framing for the 3D camera: how far back a perspective camera looking at a target along a given
 * direction must stand so that a set of points is inside its view, and the point sets to frame
 * (a box's corners, an ellipsoid's surface, a sample of the flock).
 *
 * A camera at `target + back * d` looking along `-back` sees a point p (relative to the target,
 * coordinates x, y, z on its right, up and back axes) at depth d - z, inside the view when
 * |x| <= (d - z) tan(hfov / 2) and |y| <= (d - z) tan(vfov / 2), i.e. when
 * d >= z + max(|x| / tan(hfov / 2), |y| / tan(vfov / 2)).
 *
 * @module camera
 */

import { LAYOUT_F32, Q16_STEPS } from "./protocol.js";

/**
 * @typedef {{right: number[], up: number[], back: number[]}} Basis the camera's unit axes (world)
 */

const dot = (p, i, v) => p[i] * v[0] + p[i + 1] * v[1] + p[i + 2] * v[2];

/**
 * The smallest camera distance that keeps the points in view; with `quantile` < 1 that share of
 * the points (stragglers outside the rest are let go).
 *
 * @param {ArrayLike<number>} points x, y, z relative to the target, 3 values per point
 * @param {Basis} basis
 * @param {number} tanH tan(horizontal fov / 2)
 * @param {number} tanV tan(vertical fov / 2)
 * @param {number} [quantile] in (0, 1]
 * @returns {number} [world units], 0 without points
 */
export function fitDistance(points, basis, tanH, tanV, quantile = 1) {
  const n = Math.floor(points.length / 3);
  if (n === 0) return 0;
  const needed = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const i = 3 * k;
    const x = Math.abs(dot(points, i, basis.right));
    const y = Math.abs(dot(points, i, basis.up));
    needed[k] = dot(points, i, basis.back) + Math.max(x / tanH, y / tanV);
  }
  needed.sort();
  return Math.max(needed[Math.min(n - 1, Math.max(0, Math.ceil(quantile * n) - 1))], 0);
}

/**
 * The 8 corners of a box, relative to a centre.
 *
 * @param {number[]} min [x, y, z]
 * @param {number[]} max [x, y, z]
 * @param {number[]} centre [x, y, z]
 * @returns {Float64Array} 24 values
 */
export function boxCorners(min, max, centre) {
  const out = new Float64Array(24);
  let i = 0;
  for (const x of [min[0], max[0]]) {
    for (const y of [min[1], max[1]]) {
      for (const z of [min[2], max[2]]) {
        out.set([x - centre[0], y - centre[1], z - centre[2]], i);
        i += 3;
      }
    }
  }
  return out;
}

/**
 * Points on an ellipsoid's surface (centred at the origin): 12 latitudes x 24 longitudes and the
 * poles, enough to fit a view within a fraction of a percent.
 *
 * @param {number[]} semiAxes [a, b, c]
 * @returns {Float64Array}
 */
export function ellipsoidPoints([a, b, c]) {
  const pts = [0, b, 0, 0, -b, 0];
  for (let i = 1; i < 12; i++) {
    const th = (i / 12) * Math.PI;
    for (let j = 0; j < 24; j++) {
      const ph = (j / 24) * 2 * Math.PI;
      pts.push(a * Math.sin(th) * Math.cos(ph), b * Math.cos(th), c * Math.sin(th) * Math.sin(ph));
    }
  }
  return Float64Array.from(pts);
}

/**
 * A sample of a frame's agents (every k-th, at most `max`), their mean, and their positions
 * relative to it [world units]; positions of q16 frames are dequantized.
 *
 * @param {import("./protocol.js").Frame} frame
 * @param {number} [max]
 * @returns {{centre: number[], points: Float64Array}|null} null without agents
 */
export function flockSample(frame, max = 1500) {
  const { nAgents, dim } = frame;
  if (nAgents === 0) return null;
  const stride = Math.max(1, Math.ceil(nAgents / max));
  const count = Math.ceil(nAgents / stride);
  const points = new Float64Array(count * 3);
  const scale = [0, 1, 2].map((a) => (frame.bboxMax[a] - frame.bboxMin[a]) / Q16_STEPS);
  const centre = [0, 0, 0];
  for (let k = 0, i = 0; i < nAgents; i += stride, k++) {
    for (let a = 0; a < dim; a++) {
      const q = frame.positions[i * dim + a];
      const v = frame.layout === LAYOUT_F32 ? q : frame.bboxMin[a] + q * scale[a];
      points[3 * k + a] = v;
      centre[a] += v;
    }
  }
  for (let a = 0; a < 3; a++) centre[a] /= count;
  for (let k = 0; k < count; k++) for (let a = 0; a < 3; a++) points[3 * k + a] -= centre[a];
  return { centre, points };
}

/**
 * Radius around the centre holding a share of the sampled points (relative positions).
 *
 * @param {Float64Array} points
 * @param {number} [quantile]
 * @returns {number}
 */
export function sampleRadius(points, quantile = 0.95) {
  const n = points.length / 3;
  if (n === 0) return 0;
  const r = new Float64Array(n);
  for (let k = 0; k < n; k++) r[k] = Math.hypot(points[3 * k], points[3 * k + 1], points[3 * k + 2]);
  r.sort();
  return r[Math.min(n - 1, Math.ceil(quantile * n) - 1)];
}
