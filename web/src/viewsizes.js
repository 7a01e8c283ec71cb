/**
 * How large and how opaque the view draws agents: the drawn length from the world, the body
 * radius and the flock's spacing, the smallest length on screen, the opacity of large flocks; and
 * the boxes the camera fits (renderer.js, viewcamera.js).
 *
 * @module viewsizes
 */

/**
 * @typedef {import("./protocol.js").Frame} Frame
 * @typedef {{min: number[], max: number[]}} Box3 axis-aligned box [world units], 3 values each
 */

/** Flocks of more than this many agents are drawn translucent (density shading, see flockOpacity). */
export const OPAQUE_MAX_N = 5_000;

/** Smallest drawn length of an agent in 3D [CSS px] in a flock of up to MIN_PIXELS_FULL_N birds
 * (highlights have their own, larger minimums: see shaders.js). */
export const MIN_AGENT_PIXELS = 2.2;

/** Above this many agents the smallest drawn length shrinks as 1 / sqrt(N), so the pixels that
 * minimum-size birds fill stay those of this many: a large flock is a visible cloud by its
 * numbers, and a software renderer fills no more pixels for it (measured in docs/benchmarks.md). */
const MIN_PIXELS_FULL_N = 10_000;

/**
 * Smallest drawn length of an agent in 3D [CSS px] for a flock of `n` agents.
 *
 * @param {number} n
 * @returns {number}
 */
export function agentMinPixels(n) {
  return Math.min(MIN_AGENT_PIXELS * Math.sqrt(MIN_PIXELS_FULL_N / Math.max(n, 1)), SMALL_FLOCK_PIXELS);
}

/** Smallest drawn length of an agent in a small flock [CSS px]: from MIN_AGENT_PIXELS at
 * MIN_PIXELS_FULL_N agents it grows as 1 / sqrt(N) up to this, so that a school of 100 sparse fish
 * is a hundred readable shapes rather than specks (the pixels they fill stay those of a few
 * thousand birds at the smallest size). */
const SMALL_FLOCK_PIXELS = 9;

/**
 * Opacity of plain 3D agents in a flock of `n`: opaque up to OPAQUE_MAX_N, then 0.7 times
 * (OPAQUE_MAX_N / n)^(1/3) (about the birds one line of sight crosses), at least 0.2: a lone bird
 * is a faint dot, and where birds overlap along the line of sight (a sheet seen edge-on, a dense
 * wave) the shade builds up to near black. Each bird's own opacity is this times the square of
 * its local density, at least 0.06 (shaders.js, density.js).
 *
 * @param {number} n
 * @returns {number} 0.2..1
 */
export function flockOpacity(n) {
  return n <= OPAQUE_MAX_N ? 1 : Math.max(0.2, 0.7 * (OPAQUE_MAX_N / n) ** (1 / 3));
}

/** Smallest drawn length of a bird in a translucent flock (over OPAQUE_MAX_N) [CSS px]: birds
 * large enough to overlap, so that the shade is the number of birds along the line of sight
 * (the density) rather than a speckle of sub-pixel darts. */
const DENSITY_MIN_PIXELS = 2.6;

/**
 * Smallest drawn length of a 3D agent [CSS px] in a flock of `n`: agentMinPixels, and in a
 * translucent flock at least DENSITY_MIN_PIXELS.
 *
 * @param {number} n
 * @returns {number}
 */
export function flockMinPixels(n) {
  return n > OPAQUE_MAX_N ? Math.max(agentMinPixels(n), DENSITY_MIN_PIXELS) : agentMinPixels(n);
}

/**
 * The region to fit the camera to, or null for an open world (fit to the flock instead).
 *
 * @param {{kind: string, size: number[]}} bounds
 * @param {number} dim
 * @returns {Box3|null}
 */
export function worldBox(bounds, dim) {
  const size = [...bounds.size, 0, 0].slice(0, 3);
  if (dim === 2) size[2] = 0;
  if (bounds.kind === "box" || bounds.kind === "periodic") return { min: [0, 0, 0], max: size };
  if (bounds.kind === "ellipsoid") return { min: size.map((s) => -s), max: size };
  return null;
}

/** The frame's bounding box of its agents and extras. */
export function frameBox(frame) {
  return { min: [...frame.bboxMin], max: [...frame.bboxMax] };
}

/** Largest side of a box [world units]. */
export function maxExtent(box) {
  return Math.max(...box.max.map((hi, a) => hi - box.min[a]), 1e-9);
}

/**
 * Mean spacing of a frame's agents [world units]: the side of the share of its bounding box each
 * agent has (each side of the box counted as at least 1/50 of the largest, so a flat or thin
 * flock does not give a spacing of zero). Dense flocks (100 000 birds) get small agents.
 *
 * @param {Frame} frame
 * @returns {number}
 */
export function flockSpacing(frame) {
  const sides = [0, 1, 2].slice(0, frame.dim).map((a) => frame.bboxMax[a] - frame.bboxMin[a]);
  const floor = Math.max(...sides) / 50;
  const volume = sides.reduce((v, side) => v * Math.max(side, floor), 1);
  return (volume / frame.nAgents) ** (1 / frame.dim) || 1;
}

/**
 * Body length agents are drawn at [world units]: about three body radii, kept between 1/220 and
 * 1/90 of the world's largest side so that a flock stays readable in any world.
 *
 * @param {object} params
 * @param {Box3|null} box
 * @returns {number}
 */
export function agentSize(params, box) {
  if (!box) return 1;
  const extent = maxExtent(box);
  const r = params.agents?.radius;
  const radius = typeof r === "number" ? r : Array.isArray(r) && r.length ? r[0] : 0;
  return Math.min(extent / 90, Math.max(extent / 220, 3 * radius));
}
