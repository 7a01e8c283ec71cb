import assert from "node:assert/strict";
import { test } from "node:test";

import {
  FLAG_PREDATOR,
  FLAG_SELECTED,
  FLAG_TARGET,
  LAYOUT_F32,
  LAYOUT_Q16,
  VERSION,
  agentCentroid,
  decodeOctahedral,
  extraRange,
  meanHeading,
  positionAt,
  readFrame,
  statusOf,
  toFloatFrame,
} from "../src/protocol.js";
import { socketUrl } from "../src/connection.js";
import { writeFrame } from "./frames.mjs";

const pad8 = (x) => Math.ceil(x / 8) * 8;

const sample = {
  dim: 3,
  nAgents: 3,
  positions: [
    [0, 0, 0],
    [10, -5, 2],
    [3, 7, -1],
    [20, 20, 20],
    [5, 5, 5],
  ],
  headings: [
    [1, 0, 0],
    [0, 1, 0],
    [0, 0.6, 0.8],
    [0, 0, 1],
    [0, 0, 0],
  ],
  flags: [FLAG_SELECTED, 2, 0, FLAG_PREDATOR, FLAG_TARGET],
  status: [0.9, 6.5, 3, 3, 61],
  step: 1234,
  time: 20.5,
  frameIndex: 77,
};

test("reads an f32 frame without copying", () => {
  const buf = writeFrame(sample);
  const f = readFrame(buf);
  assert.equal(f.layout, LAYOUT_F32);
  assert.equal(f.dim, 3);
  assert.equal(f.n, 5);
  assert.equal(f.nAgents, 3);
  assert.equal(f.step, 1234);
  assert.equal(f.frameIndex, 77);
  assert.equal(f.time, 20.5);
  assert.equal(f.positions.buffer, buf);
  assert.deepEqual(Array.from(f.positions.slice(3, 6)), [10, -5, 2]);
  assert.deepEqual(f.bboxMin, [0, -5, -1]);
  assert.deepEqual(f.bboxMax, [20, 20, 20]);
  assert.deepEqual(statusOf(f), {
    polarization: 0.9,
    mean_neighbors: 6.5,
    caught: 3,
    remaining: 3,
    steps_per_second: 61,
  });
  assert.deepEqual(extraRange(f, FLAG_PREDATOR), [3, 4]);
  assert.deepEqual(extraRange(f, FLAG_TARGET), [4, 5]);
  assert.deepEqual(extraRange(f, 16), [3, 3]);
});

test("q16 positions dequantize within half a step and headings normalize", () => {
  const f = readFrame(writeFrame({ ...sample, layout: 1 }));
  assert.equal(f.layout, LAYOUT_Q16);
  for (let i = 0; i < f.n; i++) {
    for (let a = 0; a < 3; a++) {
      const step = (f.bboxMax[a] - f.bboxMin[a]) / 65535;
      assert.ok(Math.abs(positionAt(f, i, a) - sample.positions[i][a]) <= step / 2 + 1e-12);
    }
  }
  const ff = toFloatFrame(f);
  assert.equal(ff.layout, LAYOUT_F32);
  const h = Array.from(ff.headings.slice(6, 9));
  assert.ok(Math.abs(Math.hypot(...h) - 1) < 1e-6);
  assert.ok(Math.abs(h[2] - 0.8) < 0.01);
  assert.deepEqual(Array.from(ff.headings.slice(12, 15)), [0, 0, 0]);
});

test("centroid and mean heading use the agents only", () => {
  for (const layout of [0, 1]) {
    const f = readFrame(writeFrame({ ...sample, layout }));
    const c = agentCentroid(f);
    [13 / 3, 2 / 3, 1 / 3].forEach((x, a) => assert.ok(Math.abs(c[a] - x) < 1e-3, `${layout} ${a}`));
    const m = meanHeading(f);
    [1 / 3, 1.6 / 3, 0.8 / 3].forEach((x, a) => assert.ok(Math.abs(m[a] - x) < 0.01));
  }
  assert.equal(agentCentroid(readFrame(writeFrame({ ...sample, nAgents: 0 }))), null);
});

test("2D frames and padding", () => {
  const f = readFrame(
    writeFrame({ dim: 2, positions: [[1, 2], [3, 4], [5, 6]], headings: [[1, 0], [0, 1], [0, -1]] }),
  );
  assert.equal(f.dim, 2);
  assert.deepEqual(Array.from(f.positions), [1, 2, 3, 4, 5, 6]);
  assert.equal(f.flags.byteOffset % 8, 0);
  assert.equal(f.status.byteOffset % 8, 0);
});

test("rejects bad frames", () => {
  const good = writeFrame(sample);
  assert.throws(() => readFrame(good.slice(0, 50)), /shorter than a header/);
  const badMagic = good.slice(0);
  new Uint8Array(badMagic)[0] = 0;
  assert.throws(() => readFrame(badMagic), /bad magic/);
  const badVersion = good.slice(0);
  new DataView(badVersion).setUint16(4, 1, true); // a version-1 frame: 3 bytes per q16 heading
  assert.throws(() => readFrame(badVersion), /unsupported frame version 1 \(this page reads 2\)/);
  assert.throws(() => readFrame(good.slice(0, good.byteLength - 8)), /length/);
  const badLayout = good.slice(0);
  new DataView(badLayout).setUint8(8, 7);
  assert.throws(() => readFrame(badLayout), /layout/);
});

test("3D q16 headings are two octahedral bytes, decoded to unit vectors within 0.96 degrees", () => {
  const headings = [];
  for (let i = 0; i < 2000; i++) {
    // a spiral over the whole sphere, plus the axes (octahedron vertices and the fold)
    const z = 1 - (2 * (i + 0.5)) / 2000;
    const r = Math.sqrt(1 - z * z);
    headings.push([r * Math.cos(2.39996 * i), r * Math.sin(2.39996 * i), z]);
  }
  headings.push([1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1], [0, 0, 0]);
  const positions = headings.map((_, i) => [i, 2 * i, -i]);
  const buf = writeFrame({ dim: 3, layout: 1, positions, headings, nAgents: headings.length });
  const f = readFrame(buf);
  assert.equal(buf.byteLength, 96 + pad8(6 * f.n) + pad8(2 * f.n) + pad8(f.n) + 40);
  assert.ok(f.headings instanceof Float32Array);
  let worst = 0;
  headings.forEach((h, i) => {
    const d = Array.from(f.headings.slice(3 * i, 3 * i + 3));
    if (h.every((x) => x === 0)) return assert.deepEqual(d, [0, 0, 0]);
    assert.ok(Math.abs(Math.hypot(...d) - 1) < 1e-6);
    const cross = Math.hypot(h[1] * d[2] - h[2] * d[1], h[2] * d[0] - h[0] * d[2], h[0] * d[1] - h[1] * d[0]);
    worst = Math.max(worst, (Math.atan2(cross, h[0] * d[0] + h[1] * d[1] + h[2] * d[2]) * 180) / Math.PI);
  });
  assert.ok(worst < 0.96, `worst ${worst} degrees`);
  assert.ok(worst > 0.3, "the codes are not the floats themselves");
});

test("octahedral codes decode as the protocol says", () => {
  const codes = new Int8Array([127, 0, 0, -127, 0, 0, 127, 127, -128, -128]);
  const h = Array.from(decodeOctahedral(codes)).map((x) => Math.round(x * 1e6) / 1e6);
  assert.deepEqual(h, [1, 0, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0]);
});

test("the socket URL names the frame version and keeps the page's query", () => {
  const url = socketUrl({ protocol: "http:", host: "127.0.0.1:8000", pathname: "/", search: "?preset=boids-2d&set=agents.n%3D200" });
  const parsed = new URL(url);
  assert.equal(parsed.protocol, "ws:");
  assert.equal(parsed.pathname, "/ws");
  assert.equal(parsed.searchParams.get("protocol"), String(VERSION));
  assert.equal(parsed.searchParams.get("preset"), "boids-2d");
  assert.equal(parsed.searchParams.get("set"), "agents.n=200");
  const bare = new URL(socketUrl({ protocol: "https:", host: "h", pathname: "/app/index.html", search: "" }));
  assert.equal(bare.href, "wss://h/app/ws?protocol=2");
});
