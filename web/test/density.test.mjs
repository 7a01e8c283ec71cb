import assert from "node:assert/strict";
import { test } from "node:test";

import { relativeDensity } from "../src/density.js";

test("relativeDensity: a dense sheet reads above 1, a thin region below, float32 and q16 alike", () => {
  // 3000 birds in a slab 10 wide, 1000 spread over the 90 beside it, in a 100 x 10 x 100 box
  const n = 4000;
  const f32 = new Float32Array(3 * n);
  let seed = 7;
  const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  for (let i = 0; i < n; i++) {
    f32[3 * i] = i < 3000 ? 10 * rand() : 10 + 90 * rand();
    f32[3 * i + 1] = 10 * rand();
    f32[3 * i + 2] = 100 * rand();
  }
  const lo = [0, 0, 0];
  const hi = [100, 10, 100];
  const dense = relativeDensity(f32, n, lo, hi, new Float32Array(n), 10);
  const mean = (a, b) => dense.slice(a, b).reduce((s, x) => s + x, 0) / (b - a);
  assert.ok(mean(0, 3000) > 1, mean(0, 3000));
  assert.ok(mean(3000, n) < 0.1, mean(3000, n));
  assert.ok(mean(0, 3000) > 20 * mean(3000, n));
  const q16 = Uint16Array.from(f32, (x, k) => Math.round((x / hi[k % 3]) * 65535));
  const fromQ16 = relativeDensity(q16, n, lo, hi, new Float32Array(n), 10);
  let same = 0;
  for (let i = 0; i < n; i++) same += Math.abs(fromQ16[i] - dense[i]) < 0.05 ? 1 : 0;
  assert.ok(same > 0.97 * n, same);
});

test("relativeDensity: a flock of uniform density reads about 1", () => {
  const n = 20_000;
  const p = new Float32Array(3 * n);
  let seed = 11;
  for (let i = 0; i < 3 * n; i++) p[i] = ((seed = (seed * 16807) % 2147483647) / 2147483647) * 50;
  const out = relativeDensity(p, n, [0, 0, 0], [50, 50, 50], new Float32Array(n), 4);
  for (const x of out) assert.ok(Math.abs(x - 1) < 0.2, x);
});
