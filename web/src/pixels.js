/**
 * Pixel comparison behind the test hook's `foregroundPixels()`: the view rendered with and
 * without the flock (agents, predators, seek targets, trails), compared pixel by pixel, so what
 * counts is exactly what the flock adds to the picture, whatever the background (sky gradient,
 * outline, obstacles). On a canvas without a flock it counts nothing.
 *
 * @module pixels
 */

/** Two pixels differ when their |dR| + |dG| + |dB| exceeds this (0..765). */
export const PIXEL_THRESHOLD = 24;

/**
 * Count the pixels of two RGBA images of the same size that differ, and their bounding box.
 *
 * @param {Uint8Array} a RGBA bytes, rows bottom-up as gl.readPixels returns them
 * @param {Uint8Array} b the same size
 * @param {number} width [px]
 * @param {number} height [px]
 * @param {number} [threshold]
 * @returns {{count: number, box: number[]|null}} box [x0, y0, x1, y1] in image pixels with y
 *   counted from the top (inclusive), null when nothing differs
 */
export function pixelDifference(a, b, width, height, threshold = PIXEL_THRESHOLD) {
  if (a.length !== b.length || a.length !== width * height * 4) throw new Error("pixelDifference: sizes differ");
  let count = 0;
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (let row = 0; row < height; row++) {
    for (let x = 0; x < width; x++) {
      const i = (row * width + x) * 4;
      const d = Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]);
      if (d <= threshold) continue;
      count++;
      const y = height - 1 - row;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  }
  return { count, box: count ? [x0, y0, x1, y1] : null };
}
