import assert from "node:assert/strict";
import { test } from "node:test";

import { boxCorners, ellipsoidPoints, fitDistance, flockSample, sampleRadius } from "../src/camera.js";
import { shortcutFor, takesText } from "../src/keys.js";
import { pixelDifference } from "../src/pixels.js";
import { readFrame } from "../src/protocol.js";
import { writeFrame } from "./frames.mjs";

test("pixelDifference counts nothing on identical images and finds a changed pixel", () => {
  const w = 4;
  const h = 3;
  const a = new Uint8Array(w * h * 4).fill(200);
  const b = Uint8Array.from(a);
  assert.deepEqual(pixelDifference(a, b, w, h), { count: 0, box: null });
  const i = (0 * w + 2) * 4; // bottom row (gl rows are bottom-up), x = 2
  b[i] = 0;
  assert.deepEqual(pixelDifference(a, b, w, h), { count: 1, box: [2, 2, 2, 2] });
  b[i] = 190; // within the threshold (|dR| + |dG| + |dB| = 10)
  assert.equal(pixelDifference(a, b, w, h).count, 0);
  assert.throws(() => pixelDifference(a, b.subarray(4), w, h));
});

test("shortcuts: text fields keep their keys, other controls give them to the view", () => {
  const key = (k, target, extra = {}) => shortcutFor({ key: k, target, ...extra });
  assert.equal(key(" ", { tagName: "BUTTON" }), "pause");
  assert.equal(key(" ", { tagName: "INPUT", type: "checkbox" }), "pause");
  assert.equal(key("ArrowLeft", { tagName: "SELECT" }), "turn-left");
  assert.equal(key("ArrowRight", { tagName: "INPUT", type: "range" }), "turn-right");
  assert.equal(key(" ", { tagName: "INPUT", type: "number" }), null);
  assert.equal(key("r", { tagName: "TEXTAREA" }), null);
  assert.equal(key("c", { tagName: "DIV", isContentEditable: true }), null);
  assert.equal(key("r", { tagName: "CANVAS" }, { ctrlKey: true }), null);
  assert.equal(key("x", { tagName: "CANVAS" }), null);
  assert.ok(takesText({ tagName: "input", type: "TEXT" }));
  assert.ok(!takesText(null));
});

test("fitDistance puts every point inside the view, exactly at its edge for the farthest", () => {
  const basis = { right: [1, 0, 0], up: [0, 1, 0], back: [0, 0, 1] };
  const tanV = Math.tan((22.5 * Math.PI) / 180);
  const tanH = tanV * 1.5;
  const corners = boxCorners([0, 0, 0], [200, 100, 200], [100, 50, 100]);
  const d = fitDistance(corners, basis, tanH, tanV);
  // the near corners (z = +100) bound it: |x| = 100 -> 100 + 100 / tanH; |y| = 50 -> 100 + 50 / tanV
  assert.ok(Math.abs(d - (100 + Math.max(100 / tanH, 50 / tanV))) < 1e-9);
  for (let k = 0; k < 8; k++) {
    const [x, y, z] = corners.subarray(3 * k, 3 * k + 3);
    assert.ok(Math.abs(x) <= (d - z) * tanH + 1e-9 && Math.abs(y) <= (d - z) * tanV + 1e-9);
  }
  const e = ellipsoidPoints([520, 260, 420]);
  assert.ok(e.length / 3 >= 200);
  const r = Math.hypot(e[6], e[7] / 260 * 520, e[8] / 420 * 520); // a point on the surface: scaled to a sphere of 520
  assert.ok(Math.abs(r - 520) < 1e-6);
  assert.equal(fitDistance([], basis, tanH, tanV), 0);
  // a quantile lets stragglers go
  const flock = Float64Array.from([0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1, 0, 1000, 0, 0]);
  assert.ok(fitDistance(flock, basis, 1, 1, 0.8) < 2 && fitDistance(flock, basis, 1, 1) === 1000);
});

test("flockSample: mean and relative positions of the agents, q16 dequantized", () => {
  const positions = [[0, 0, 0], [10, 0, 0], [0, 20, 0], [10, 20, 30]];
  const headings = positions.map(() => [1, 0, 0]);
  for (const layout of [0, 1]) {
    const f = readFrame(writeFrame({ layout, dim: 3, positions, headings }));
    const { centre, points } = flockSample(f);
    assert.ok(Math.abs(centre[0] - 5) < 1e-3 && Math.abs(centre[1] - 10) < 1e-3 && Math.abs(centre[2] - 7.5) < 1e-3);
    assert.ok(Math.abs(points[9] - 5) < 1e-3 && Math.abs(points[11] - 22.5) < 1e-3);
    assert.ok(sampleRadius(points, 1) > 20);
  }
  assert.equal(flockSample(readFrame(writeFrame({ dim: 2, positions: [], headings: [] }))), null);
});

test("skyColor (the CPU mirror of the sky shader): zenith above, warm horizon, dark ground below", async () => {
  const THREE = await import("three");
  const { skyColor } = await import("../src/renderer.js");
  const { SKY, SUN_DIRECTION } = await import("../src/palette.js");
  const u = Object.fromEntries(
    Object.entries({ uZenith: "zenith", uUpper: "upper", uHorizon: "horizon", uGlow: "glow", uHaze: "haze", uGround: "ground" }).map(
      ([k, v]) => [k, { value: new THREE.Color(SKY[v]) }],
    ),
  );
  u.uSunDir = { value: new THREE.Vector3(...SUN_DIRECTION) };
  const at = (x, y, z) => skyColor(new THREE.Vector3(x, y, z), u, new THREE.Color());
  const near = (a, hex) => ["r", "g", "b"].every((c) => Math.abs(a[c] - new THREE.Color(hex)[c]) < 1e-9);
  assert.ok(near(at(0, 1, 0), SKY.zenith));
  assert.ok(near(at(0, -1, 0), SKY.ground));
  const away = at(-SUN_DIRECTION[0], 0, -SUN_DIRECTION[2]); // the horizon opposite the sun: no glow
  assert.ok(near(away, SKY.horizon));
  const toward = at(SUN_DIRECTION[0], 0, SUN_DIRECTION[2]); // toward the sun: brighter
  assert.ok(toward.r > away.r && toward.g > away.g);
});

test("agentMinPixels: 1 / sqrt(N) through 2.2 px at 10 000 agents (constant filled area), at most 9 px", async () => {
  const { agentMinPixels } = await import("../src/renderer.js");
  assert.equal(agentMinPixels(1), 9);
  assert.equal(agentMinPixels(100), 9);
  assert.ok(Math.abs(agentMinPixels(2_500) - 4.4) < 1e-12);
  assert.equal(agentMinPixels(10_000), 2.2);
  assert.ok(Math.abs(agentMinPixels(100_000) - 2.2 / Math.sqrt(10)) < 1e-12);
  assert.ok(Math.abs(agentMinPixels(40_000) ** 2 * 40_000 - 2.2 ** 2 * 10_000) < 1e-6);
});

test("engineText: what steps the simulation, in the status bar", async () => {
  const { engineText } = await import("../src/ui.js");
  assert.equal(engineText(undefined), "");
  assert.equal(engineText({ name: "cuda", threads: null, layer: null }), "(GPU)");
  assert.equal(engineText({ name: "cpu", threads: 2, layer: "tbb" }), "(2 threads, tbb)");
  assert.equal(engineText({ name: "cpu", threads: 1, layer: "tbb" }), "(1 thread)");
  assert.equal(engineText({ name: "cpu", threads: 4, layer: "none" }), "(4 threads)");
});

test("compilingText: the scene and the server's own estimate, when it sends them", async () => {
  const { compilingText } = await import("../src/ui.js");
  const msg = { kernels: 12, seconds: 75.4, current: "_knn_rows_slots" };
  assert.equal(
    compilingText({ ...msg, scene: "starlings-3d", estimate: "about a minute" }),
    "compiling kernels for starlings-3d (first start only) ... 12 compiled, 1 min 15 s (now _knn_rows_slots); about a minute in all",
  );
  assert.equal(
    compilingText({ kernels: 0, seconds: 3 }),
    "compiling kernels (first start only) ... 0 compiled, 3 s", // no estimate of the page's own
  );
});

test("flockOpacity: opaque up to 5000 birds, then 0.7 n^(-1/3), at least 0.2", async () => {
  const { flockOpacity } = await import("../src/renderer.js");
  assert.equal(flockOpacity(500), 1);
  assert.equal(flockOpacity(5_000), 1);
  assert.ok(Math.abs(flockOpacity(40_000) - 0.35) < 1e-12);
  assert.equal(flockOpacity(1e7), 0.2);
});

test("flockMinPixels: translucent flocks' birds at least 2.6 px (they overlap: shade, not speckle)", async () => {
  const { agentMinPixels, flockMinPixels } = await import("../src/renderer.js");
  assert.equal(flockMinPixels(500), agentMinPixels(500));
  assert.equal(flockMinPixels(5_000), agentMinPixels(5_000));
  assert.equal(flockMinPixels(20_000), 2.6);
  assert.equal(flockMinPixels(100_000), 2.6);
});

test("followShare: the follow camera's easing compounds with the simulated time between frames", async () => {
  const { followShare } = await import("../src/renderer.js");
  assert.ok(Math.abs(followShare(0.12, 1 / 60) - 0.12) < 1e-12); // one frame at 60 per second
  assert.ok(Math.abs(followShare(0.12, 2 / 60) - (1 - 0.88 ** 2)) < 1e-12); // two frames' worth at once
  assert.ok(followShare(0.12, 0.5) > 0.97); // a frame every half second: the camera keeps up
  assert.equal(followShare(0.12, 0), 0.12); // paused or a new flock
  assert.equal(followShare(0.12, -1 / 60), followShare(0.12, 1 / 60)); // replay going back
  assert.equal(followShare(0.12, 100), followShare(0.12, 1)); // at most a second's worth
});
