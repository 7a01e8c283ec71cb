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
  bankAt,
  unpackBankCodes,
  decodeOctahedral,
  extraRange,
  meanHeading,
  positionAt,
  readFrame,
  statusOf,
  toFloatFrame,
} from "../src/protocol.js";
import { thinned } from "../src/detail.js";
import { interpolateFrames } from "../src/replay.js";
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

test("a bank section: its range, then 4-bit codes, read within half a code", () => {
  const deg = Math.PI / 180;
  // over 60 degrees: 60 -> code 7; 0 -> 0
  const bank = [60 * deg, -25 * deg, 0];
  for (const layout of [0, 1]) {
    const buf = writeFrame({ ...sample, layout, bank });
    const plain = writeFrame({ ...sample, layout });
    assert.equal(buf.byteLength, plain.byteLength + 16); // the range, then 3 agents in 2 bytes padded to 8
    const f = readFrame(buf);
    assert.ok(f.bank instanceof Int8Array);
    assert.equal(f.bank.length, f.nAgents); // agents only: the predator and target have none
    assert.equal(f.bankStep, Math.PI / 3 / 7);
    // -25 degrees: -2.92 -> code -3 -> -25.71 degrees
    assert.deepEqual(Array.from(f.bank), [7, -3, 0]);
    assert.deepEqual([0, 1, 2].map((i) => Math.round((bankAt(f, i) / deg) * 1e4) / 1e4), [60, -25.7143, 0]);
    bank.forEach((b, i) => assert.ok(Math.abs(bankAt(f, i) - b) <= (60 * deg) / 14 + 1e-6, `agent ${i}`));
    assert.deepEqual(Array.from(f.flags), sample.flags); // the other sections are where they were
    assert.deepEqual(Array.from(f.status), sample.status);
    assert.equal(readFrame(plain).bank, null);
    assert.equal(bankAt(readFrame(plain), 0), 0);
  }
  // the nibbles: low half first, two's complement
  assert.deepEqual(Array.from(unpackBankCodes(new Uint8Array([0xc7, 0x09]), 3)), [7, -4, -7]);
  // a reader must know every sections bit (it cannot tell the length otherwise), and the length
  assert.throws(() => readFrame(writeFrame({ ...sample, bank, sections: 3 })), /unknown sections/);
  assert.throws(() => readFrame(writeFrame({ ...sample, sections: 1 })), /frame length/);
  assert.throws(() => readFrame(writeFrame({ ...sample, bank, bankRange: 0 })), /bank range/);
});

test("thinned and replayed frames keep their birds' banks", () => {
  const deg = Math.PI / 180;
  const many = {
    dim: 3,
    positions: Array.from({ length: 6 }, (_, i) => [i, 0, 0]),
    headings: Array.from({ length: 6 }, () => [1, 0, 0]),
    flags: [0, 0, 0, FLAG_SELECTED, 0, 0],
    bank: [0, 10, 20, 30, 40, 50].map((d) => (d * 60 * deg) / 50),
  };
  const f = readFrame(writeFrame(many));
  // 0, 12, 24, 36, 48, 60 degrees -> codes 0, 1.4 -> 1, 2.8 -> 3, 4.2 -> 4, 5.6 -> 6, 7 (x 60 / 7 degrees)
  assert.deepEqual(Array.from(f.bank), [0, 1, 3, 4, 6, 7]);
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((i) => Math.round(bankAt(f, i) / deg)), [0, 9, 26, 34, 51, 60]);
  const t = thinned(f, 4, FLAG_SELECTED); // rows 0, 3 (selected) and 4
  assert.deepEqual(Array.from(t.bank), [0, 4, 6]);
  assert.equal(t.bankStep, f.bankStep);
  assert.equal(thinned(f, 1, FLAG_SELECTED).bank, f.bank);
  const g = readFrame(writeFrame({ ...many, bank: many.bank.map((b) => -b) }));
  const mid = interpolateFrames(f, g, 0.5);
  assert.deepEqual(Array.from(mid.bank), [0, 0, 0, 0, 0, 0]);
  const quarter = interpolateFrames(f, g, 0.25);
  Array.from(quarter.bank).forEach((b, i) => assert.ok(Math.abs(b - f.bank[i] / 2) < 1e-6));
  assert.ok(Math.abs(bankAt(quarter, 5) - bankAt(f, 5) / 2) < 1e-6);
});
