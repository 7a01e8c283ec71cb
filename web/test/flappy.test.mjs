import assert from "node:assert/strict";
import { test } from "node:test";

import { chaseCamera, chaseDepth, hudItems, keySteering, pointerSteering, viewDepth } from "../src/flappy.js";
import { SEA_ROCK_COLOR, chunkInView, isRockMessage, readRocks, rockColors } from "../src/rocks.js";
import { SEA_LIGHT } from "../src/sea.js";

/** A rock-mesh message (docs/protocol.md, "Flappy Boids"), as flocksim.game.wire writes it. */
function writeRocks(chunk, positions, indices) {
  const nv = positions.length / 3;
  const oTri = 32 + Math.ceil((12 * nv) / 8) * 8;
  const buf = new ArrayBuffer(oTri + 4 * indices.length);
  const v = new DataView(buf);
  "FLKR".split("").forEach((c, i) => v.setUint8(i, c.charCodeAt(0)));
  v.setUint16(4, 1, true);
  v.setUint16(6, 32, true);
  v.setInt32(8, chunk, true);
  v.setUint32(12, nv, true);
  v.setUint32(16, indices.length / 3, true);
  new Float32Array(buf, 32, positions.length).set(positions);
  new Uint32Array(buf, oTri, indices.length).set(indices);
  return buf;
}

test("keys steer up, down, left, right; opposite keys cancel", () => {
  assert.deepEqual(keySteering(["ArrowUp"]), [1, 0]);
  assert.deepEqual(keySteering(["s"]), [-1, 0]);
  assert.deepEqual(keySteering(["a", "ArrowUp"]), [1, -1]);
  assert.deepEqual(keySteering(["d", "ArrowRight"]), [0, 1]); // clamped, not doubled
  assert.deepEqual(keySteering(["ArrowLeft", "ArrowRight"]), [0, 0]);
  assert.deepEqual(keySteering(["x"]), [0, 0]);
});

test("the pointer steers toward itself, at full rate beyond the full distance", () => {
  assert.deepEqual(pointerSteering(50, 0, 100), [-0, 0.5]); // right of the target: +z
  assert.deepEqual(pointerSteering(0, -100, 100), [1, 0]); // above it: +y
  const [y, z] = pointerSteering(300, 400, 100);
  assert.ok(Math.abs(Math.hypot(y, z) - 1) < 1e-12 && y < 0 && z > 0);
});

test("rock messages are told from frames and read", () => {
  const buf = writeRocks(7, [0, 0, 0, 1, 0, 0, 0, 1, 0], [0, 1, 2]);
  assert.ok(isRockMessage(buf));
  const { chunk, positions, indices } = readRocks(buf);
  assert.equal(chunk, 7);
  assert.deepEqual([...positions], [0, 0, 0, 1, 0, 0, 0, 1, 0]);
  assert.deepEqual([...indices], [0, 1, 2]);
  const frame = new ArrayBuffer(96);
  new Uint8Array(frame).set([0x46, 0x4c, 0x4b, 0x46]); // FLKF
  assert.ok(!isRockMessage(frame));
  assert.throws(() => readRocks(buf.slice(0, buf.byteLength - 4)), /length/);
});

test("rockColors: faces looking up or at the sun are lighter than faces looking down, away", () => {
  const [up, down, toSun] = [
    [0, 1, 0],
    [0, -1, 0],
    [0.55, 0.18, -0.82],
  ].map((n) => rockColors(n));
  assert.ok(up[0] > down[0] && up[1] > down[1] && up[2] > down[2]);
  assert.ok(toSun[0] > rockColors([0.82, 0, 0.55])[0]); // the sun's direction against one across it
  assert.equal(rockColors(new Float32Array(6)).length, 6);
  assert.ok([...rockColors([0, -1, 0])].every((c) => c > 0)); // never black
});

test("rockColors under water: light from above, the seabed lighter than a wall, grey stone", () => {
  const [floor, wall] = [
    [0, 1, 0],
    [1, 0, 0],
  ].map((n) => rockColors(n, SEA_LIGHT, SEA_ROCK_COLOR));
  assert.ok(floor[0] > 1.5 * wall[0], `${floor} ${wall}`);
  const [r, g, b] = floor;
  assert.ok(r >= g && g >= b && (r - b) / r < 0.35, `${floor}`); // (linear RGB) far greyer than the reef's sand
});

test("chunkInView: a chunk is drawn when part of it lies between the camera and the range ahead", () => {
  assert.equal(chunkInView(50, 110, 38, 152), true); // the wall ahead
  assert.equal(chunkInView(170, 230, 38, 152), true); // partly inside the range
  assert.equal(chunkInView(190, 250, 38, 152), false); // wholly past the range
  assert.equal(chunkInView(-10, 38, 38, 152), false); // wholly behind the camera
  assert.equal(chunkInView(-10, 40, 38, 152), true); // the camera inside it
});

test("the best score is kept per browser: only a higher score replaces it; blocked storage is no error", async () => {
  const { BEST_KEY, keepBest, readBest } = await import("../src/flappy.js");
  const data = new Map();
  const storage = { getItem: (k) => data.get(k) ?? null, setItem: (k, v) => data.set(k, String(v)) };
  assert.equal(readBest(storage), 0);
  assert.equal(keepBest(storage, 120), true);
  assert.equal(data.get(BEST_KEY), "120");
  assert.equal(keepBest(storage, 80), false);
  assert.equal(readBest(storage), 120);
  assert.equal(keepBest(storage, 300.7), true);
  assert.equal(readBest(storage), 300);
  const blocked = {
    getItem: () => {
      throw new Error("blocked");
    },
    setItem: () => {
      throw new Error("blocked");
    },
  };
  assert.equal(readBest(blocked), 0);
  assert.equal(keepBest(blocked, 10), true);
  assert.equal(readBest(null), 0);
});

test("the chase camera sees the target at its view depth: 32 behind, 9 above, looking 24 ahead of it", () => {
  // the view direction (56, -9, 0) / |.|, the target at (32, -9, 0) from the camera: (32*56 + 81) / 56.72
  assert.ok(Math.abs(chaseDepth() - (32 * 56 + 81) / Math.hypot(56, 9)) < 1e-9);
  assert.ok(chaseDepth() > 32 && chaseDepth() < 33.3);
});

test("the chase camera is the server's when the game message has one, and the cut follows its depth", () => {
  const target = [100, 20, 30];
  assert.deepEqual(chaseCamera({ target }), [68, 29, 30]); // no camera sent: 32 behind, 9 above
  assert.deepEqual(chaseCamera({ target, camera: [60, 40, 30] }), [60, 40, 30]);
  // looking along +x from 40 behind: the target's view depth is 40
  assert.ok(Math.abs(viewDepth([60, 20, 30], [124, 20, 30], target) - 40) < 1e-9);
});

test("the HUD is items that wrap, the hint only while the scripted pilot flies", () => {
  const msg = { score: 12345, distance: 678.9, alive: 140, lost: 10 };
  assert.deepEqual(hudItems(msg, 99, "fish", false), ["score 12345", "best 99", "distance 678", "fish 140 (lost 10)"]);
  assert.equal(hudItems(msg, 99, "fish", true).length, 5);
});
