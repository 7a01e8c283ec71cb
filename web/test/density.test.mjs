import assert from "node:assert/strict";
import { test } from "node:test";

import { gridCells, MAX_CELLS, MIN_CELLS, relativeDensity } from "../src/density.js";

/** A repeatable uniform random number generator in [0, 1). */
function generator(seed) {
  return () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
}

test("relativeDensity: a dense sheet reads above 1, a thin region below, float32 and q16 alike", () => {
  // 3000 birds in a slab 10 wide, 1000 spread over the 90 beside it, in a 100 x 10 x 100 box
  const n = 4000;
  const f32 = new Float32Array(3 * n);
  const rand = generator(7);
  for (let i = 0; i < n; i++) {
    f32[3 * i] = i < 3000 ? 10 * rand() : 10 + 90 * rand();
    f32[3 * i + 1] = 10 * rand();
    f32[3 * i + 2] = 100 * rand();
  }
  const lo = [0, 0, 0];
  const hi = [100, 10, 100];
  for (const smooth of [false, true]) {
    const dense = relativeDensity(f32, n, lo, hi, new Float32Array(n), 10, smooth);
    const mean = (a, b) => dense.slice(a, b).reduce((s, x) => s + x, 0) / (b - a);
    assert.ok(mean(0, 3000) > 1, mean(0, 3000));
    assert.ok(mean(3000, n) < 0.3, mean(3000, n));
    assert.ok(mean(0, 3000) > 5 * mean(3000, n));
    const q16 = Uint16Array.from(f32, (x, k) => Math.round((x / hi[k % 3]) * 65535));
    const fromQ16 = relativeDensity(q16, n, lo, hi, new Float32Array(n), 10, smooth);
    let same = 0;
    for (let i = 0; i < n; i++) same += Math.abs(fromQ16[i] - dense[i]) < 0.05 ? 1 : 0;
    assert.ok(same > 0.97 * n, same);
  }
});

test("relativeDensity: a uniform flock reads about 1 inside; smoothing removes the counting noise", () => {
  // 20 000 birds uniform in a cube: with the default grid (cells of ~4 birds) the raw counts
  // scatter by about half their mean, the smoothed ones by under a fifth
  const n = 20_000;
  const p = new Float32Array(3 * n);
  const rand = generator(11);
  for (let i = 0; i < 3 * n; i++) p[i] = rand() * 50;
  const spread = (smooth) => {
    const out = relativeDensity(p, n, [0, 0, 0], [50, 50, 50], new Float32Array(n), 0, smooth);
    const inside = [];
    for (let i = 0; i < n; i++) {
      const x = [p[3 * i], p[3 * i + 1], p[3 * i + 2]];
      if (x.every((v) => v > 10 && v < 40)) inside.push(out[i]);
    }
    const m = inside.reduce((s, v) => s + v, 0) / inside.length;
    const sd = Math.sqrt(inside.reduce((s, v) => s + (v - m) ** 2, 0) / inside.length);
    return { m, sd };
  };
  // the birds at the flock's border read as dense as those inside: a sharp edge (with the counts
  // smoothed over the empty cells beyond it they read 0.74 of the inside's)
  const all = relativeDensity(p, n, [0, 0, 0], [50, 50, 50], new Float32Array(n));
  const mean = (keep) => {
    const v = [...all].filter((_, i) => keep([p[3 * i], p[3 * i + 1], p[3 * i + 2]]));
    return v.reduce((s, x) => s + x, 0) / v.length;
  };
  const ratio = mean((x) => x.some((v) => v < 3 || v > 47)) / mean((x) => x.every((v) => v > 10 && v < 40));
  assert.ok(ratio > 0.9, ratio);
  const raw = spread(false);
  const smooth = spread(true);
  assert.ok(raw.sd > 0.35, JSON.stringify(raw));
  assert.ok(smooth.sd < 0.2, JSON.stringify(smooth));
  assert.ok(Math.abs(smooth.m - 1) < 0.15, JSON.stringify(smooth));
});

test("gridCells: cells of about 4 birds, finer for a flat layer, within the bounds", () => {
  assert.equal(gridCells([100, 100, 100], 4000), 10); // 1000 cells of 4 birds
  assert.ok(gridCells([100, 100, 1], 4000) > gridCells([100, 100, 100], 4000));
  assert.equal(gridCells([100, 100, 100], 10), MIN_CELLS);
  assert.equal(gridCells([100, 100, 100], 1e8), MAX_CELLS);
});
