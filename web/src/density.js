/**
 * Local density of a large 3D flock, estimated in the page on a coarse grid: each bird gets the
 * smoothed count of birds around its grid cell, relative to the count a bird sees on average
 * (1: as dense as the flock's typical bird, 0.3: a thin region or an edge, 2: a dense sheet). The
 * view darkens dense birds and pales sparse ones with it (shaders.js), so the sheets and waves of
 * a murmuration read as they do against the sky in footage.
 *
 * The grid's cells hold about CELL_BIRDS birds each for a flock that filled its bounding box
 * (smaller cells where a flock is thin), and the counts are smoothed over the 27 cells around
 * each (weights 1-2-1 along each axis: about 19 cells' worth of birds), so a flock of uniform
 * density reads about 1 across its inside (the counting noise of a few birds per cell would
 * otherwise draw clumps that are not there) and a real sheet or wave, several cells across,
 * stands out.
 *
 * Cheap next to drawing: three passes over the positions as sent (float32 or q16) and three over
 * the grid (at most MAX_CELLS^3 cells), no sorting; 7 to 17 ms for 100 000 birds in node on a
 * loaded 2-vCPU machine, the smoothing at most 2 of them (SwiftShader takes about a second to
 * draw them).
 *
 * @module density
 */

/** Grid counts, smoothing scratch and each entry's cell, reused from frame to frame. */
const scratch = {
  counts: new Float32Array(0),
  occupied: new Float32Array(0),
  tmp: new Float32Array(0),
  index: new Uint32Array(0),
};

/** Birds per cell of a flock that filled its bounding box (before smoothing). */
export const CELL_BIRDS = 4;
/** Fewest and most cells along the bounding box's longest side (cells are cubes). */
export const MIN_CELLS = 8;
export const MAX_CELLS = 64;

/**
 * Cells along the longest side of a box of extents `ext` holding `n` birds: cubes of about
 * CELL_BIRDS birds at the box's mean density, MIN_CELLS..MAX_CELLS along the longest side.
 *
 * @param {number[]} ext the box's extents [world units]
 * @param {number} n birds
 * @returns {number}
 */
export function gridCells(ext, n) {
  const longest = Math.max(...ext, 1e-9);
  // thin sides count as one cell's thickness at most: a flat layer gets finer cells
  let cell = longest / MIN_CELLS;
  for (let k = 0; k < 8; k++) {
    const volume = ext.reduce((v, e) => v * Math.max(e, cell), 1);
    cell = Math.cbrt((volume * CELL_BIRDS) / Math.max(n, 1));
  }
  return Math.max(MIN_CELLS, Math.min(MAX_CELLS, Math.round(longest / cell)));
}

/**
 * Smooth `a` (dims nx, ny, nz, x fastest) in place with weights 1/4, 1/2, 1/4 along `axis`
 * (zero beyond the edges), through `tmp`.
 *
 * @param {Float32Array} a
 * @param {Float32Array} tmp
 * @param {number[]} dims
 * @param {number} axis 0, 1 or 2
 */
function smoothAxis(a, tmp, dims, axis) {
  const [nx, ny, nz] = dims;
  const stride = axis === 0 ? 1 : axis === 1 ? nx : nx * ny;
  const len = dims[axis];
  const total = nx * ny * nz;
  for (let c = 0; c < total; c++) {
    const i = axis === 0 ? c % nx : axis === 1 ? Math.floor(c / nx) % ny : Math.floor(c / (nx * ny));
    const lo = i > 0 ? a[c - stride] : 0;
    const hi = i < len - 1 ? a[c + stride] : 0;
    tmp[c] = 0.5 * a[c] + 0.25 * (lo + hi);
  }
  a.set(tmp.subarray(0, total));
}

/**
 * Relative local density of each of the first `n` entries.
 *
 * @param {Float32Array|Uint16Array} positions 3 values per entry: world coordinates (float32) or
 *   q16 (uint16, 0..65535 across the box)
 * @param {number} n entries
 * @param {number[]} bboxMin frame's bounding box [world units]
 * @param {number[]} bboxMax
 * @param {Float32Array} out n values: the smoothed count around the entry's cell over the mean
 *   of that count over all entries
 * @param {number} [cells] cells along the box's longest side (default: gridCells)
 * @param {boolean} [smooth] smooth the counts over neighbouring cells (default true)
 * @returns {Float32Array} out
 */
export function relativeDensity(positions, n, bboxMin, bboxMax, out, cells = 0, smooth = true) {
  if (n <= 0) return out;
  const quantized = !(positions instanceof Float32Array || positions instanceof Float64Array);
  const ext = [0, 1, 2].map((k) => Math.max(bboxMax[k] - bboxMin[k], 0));
  const along = cells > 0 ? cells : gridCells(ext, n);
  const cell = Math.max(Math.max(...ext) / along, 1e-9);
  const dims = ext.map((e) => Math.max(1, Math.min(along, Math.ceil(e / cell))));
  // grid coordinate per unit of the stored value
  const scale = ext.map((e) => (quantized ? e / 65535 : 1) / cell);
  const offset = quantized ? [0, 0, 0] : bboxMin.map((m) => -m / cell);
  const cellCount = dims[0] * dims[1] * dims[2];
  if (scratch.counts.length < cellCount) {
    scratch.counts = new Float32Array(cellCount);
    scratch.occupied = new Float32Array(cellCount);
    scratch.tmp = new Float32Array(cellCount);
  }
  if (scratch.index.length < n) scratch.index = new Uint32Array(n);
  const counts = scratch.counts;
  const index = scratch.index;
  counts.fill(0, 0, cellCount);
  const [sx, sy, sz] = scale;
  const [ox, oy, oz] = offset;
  const [nx, ny, nz] = dims;
  for (let i = 0; i < n; i++) {
    const x = Math.min(nx - 1, Math.max(0, Math.floor(positions[3 * i] * sx + ox)));
    const y = Math.min(ny - 1, Math.max(0, Math.floor(positions[3 * i + 1] * sy + oy)));
    const z = Math.min(nz - 1, Math.max(0, Math.floor(positions[3 * i + 2] * sz + oz)));
    const c = (z * ny + y) * nx + x;
    index[i] = c;
    counts[c]++;
  }
  if (smooth) {
    // the smoothed count over the smoothed share of occupied cells: empty cells beyond the
    // flock's edge do not thin its border birds (a flock of even density keeps a sharp edge, as
    // in footage), while a cell of a thin region, with few birds, still reads thin
    const occupied = scratch.occupied;
    for (let c = 0; c < cellCount; c++) occupied[c] = counts[c] > 0 ? 1 : 0;
    for (let axis = 0; axis < 3; axis++) {
      if (dims[axis] > 1) {
        smoothAxis(counts, scratch.tmp, dims, axis);
        smoothAxis(occupied, scratch.tmp, dims, axis);
      }
    }
    for (let c = 0; c < cellCount; c++) if (occupied[c] > 0) counts[c] /= occupied[c];
  }
  // the mean (smoothed) count a bird sees: a flock of uniform density reads 1 inside, whatever
  // its shape
  let seen = 0;
  for (let i = 0; i < n; i++) seen += counts[index[i]];
  const mean = Math.max(seen / n, 1e-9);
  for (let i = 0; i < n; i++) out[i] = counts[index[i]] / mean;
  return out;
}
