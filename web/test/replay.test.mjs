import assert from "node:assert/strict";
import { test } from "node:test";

import { readFrame } from "../src/protocol.js";
import { REPLAY_CAPACITY, ReplayBuffer, ReplayStore, interpolateFrames } from "../src/replay.js";
import { writeFrame } from "./frames.mjs";

const frame = (x, step, extra = {}) =>
  readFrame(
    writeFrame({
      dim: 2,
      positions: [
        [x, 0],
        [x, 10],
      ],
      headings: [
        [1, 0],
        [0, 1],
      ],
      status: [0.2 + x / 100, 5, step, 2, 60],
      step,
      time: step / 60,
      ...extra,
    }),
  );

test("samples 30 frames per second out of 60 and keeps 300", () => {
  const b = new ReplayBuffer();
  let stored = 0;
  for (let k = 0; k < 60 * 20; k++) stored += b.offer(frame(k, k + 1), k / 60) ? 1 : 0;
  assert.equal(stored, 600);
  assert.equal(b.length, REPLAY_CAPACITY);
  assert.ok(Math.abs(b.duration - 299 / 30) < 1e-9);
  b.clear();
  assert.equal(b.length, 0);
  assert.equal(b.frameAt(0), null);
});

test("a frame of the same step is not stored twice", () => {
  const b = new ReplayBuffer();
  assert.ok(b.offer(frame(0, 5), 0));
  assert.ok(!b.offer(frame(0, 5), 1));
});

test("interpolates positions and headings between stored frames", () => {
  const b = new ReplayBuffer();
  b.offer(frame(0, 1), 0);
  b.offer(frame(10, 2), 1);
  const mid = b.frameAt(0.25);
  assert.ok(Math.abs(mid.positions[0] - 2.5) < 1e-6);
  assert.ok(Math.abs(mid.status[0] - 0.225) < 1e-9);
  assert.deepEqual(Array.from(b.frameAt(-5).positions), [0, 0, 0, 10]);
  assert.deepEqual(Array.from(b.frameAt(99).positions), [10, 0, 10, 10]);
  const a = frame(0, 1);
  const c = readFrame(writeFrame({ dim: 2, positions: [[0, 0], [0, 10]], headings: [[0, 1], [1, 0]], step: 2 }));
  const h = interpolateFrames(a, c, 0.5).headings;
  assert.ok(Math.abs(Math.hypot(h[0], h[1]) - 1) < 1e-6);
  assert.ok(Math.abs(h[0] - Math.SQRT1_2) < 1e-6);
});

test("unwraps periodic positions and does not blend frames with different agents", () => {
  const a = readFrame(writeFrame({ dim: 2, positions: [[9.5, 1]], headings: [[1, 0]], step: 1 }));
  const b = readFrame(writeFrame({ dim: 2, positions: [[0.5, 1]], headings: [[1, 0]], step: 2 }));
  const m = interpolateFrames(a, b, 0.5, [10, 10]);
  assert.ok(Math.abs(m.positions[0] - 0) < 1e-6 || Math.abs(m.positions[0] - 10) < 1e-6);
  const m2 = interpolateFrames(a, b, 0.25, [10, 10]);
  assert.ok(Math.abs(m2.positions[0] - 9.75) < 1e-6);
  const fewer = readFrame(writeFrame({ dim: 2, positions: [[0, 0], [1, 1]], headings: [[1, 0], [1, 0]], step: 3 }));
  assert.equal(interpolateFrames(a, fewer, 0.4), a);
  assert.equal(interpolateFrames(a, fewer, 0.6), fewer);
});

test("one buffer per mode", () => {
  const s = new ReplayStore();
  s.get(2).offer(frame(0, 1), 0);
  s.get(3).offer(frame(0, 1), 0);
  s.clear(2);
  assert.equal(s.get(2).length, 0);
  assert.equal(s.get(3).length, 1);
});

test("keeps 10 s of frames, not 300 frames, when frames come slower than 30 per second", () => {
  const b = new ReplayBuffer();
  for (let k = 0; k < 16 * 30; k++) b.offer(frame(k, k + 1), k / 16); // drawn at 16 per second for 30 s
  assert.ok(b.duration <= 10 + 1e-9, `duration ${b.duration}`);
  assert.ok(b.duration > 9.8, `duration ${b.duration}`);
});

test("a gap (pause, the other mode shown) is closed up, so the buffer still spans 10 s of flight", () => {
  const b = new ReplayBuffer();
  for (let k = 0; k < 150; k++) b.offer(frame(k, k + 1), k / 30); // 5 s
  for (let k = 0; k < 150; k++) b.offer(frame(k, 1000 + k), 100 + k / 30); // 5 s, 95 s later
  assert.equal(b.length, 300);
  assert.ok(Math.abs(b.duration - 299 / 30) < 1e-6, `duration ${b.duration}`); // the gap counts one interval
  const c = new ReplayBuffer();
  for (let k = 0; k < 30; k++) c.offer(frame(k, k + 1), k / 30);
  c.markGap(); // paused for a second
  for (let k = 0; k < 30; k++) c.offer(frame(k, 100 + k), 2 + k / 30);
  assert.ok(Math.abs(c.duration - 59 / 30) < 1e-6, `duration ${c.duration}`);
});
