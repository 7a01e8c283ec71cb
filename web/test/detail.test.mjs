import assert from "node:assert/strict";
import { test } from "node:test";

import {
  DetailController,
  FAST_MS,
  FAST_RENDERS,
  LEVELS,
  MIN_DRAWN,
  SLOW_MS,
  STEP_UP_AFTER_MS,
  detailModeOf,
  levelsFor,
  strideFor,
  thinned,
} from "../src/detail.js";

/** A stand-in for a WebGL2 context's fences: `done` says whether the GPU has finished. */
function fakeGl() {
  return {
    SYNC_GPU_COMMANDS_COMPLETE: 1,
    SYNC_STATUS: 2,
    SIGNALED: 3,
    UNSIGNALED: 4,
    done: false,
    live: 0,
    fenceSync() {
      this.live++;
      return {};
    },
    deleteSync() {
      this.live--;
    },
    flush() {},
    getSyncParameter() {
      return this.done ? this.SIGNALED : this.UNSIGNALED;
    },
  };
}

/** Renders of `ms` each, one after another, the GPU busy until each is done; returns the time after. */
function renders(detail, start, count, ms, n, gl = fakeGl()) {
  let t = start;
  for (let k = 0; k < count; k++) {
    gl.done = false;
    detail.rendered(gl, t, n);
    assert.equal(detail.gpuBusy(gl, t + ms / 2), true); // queue no render behind it
    gl.done = true;
    t += ms;
    assert.equal(detail.gpuBusy(gl, t), false);
  }
  assert.equal(gl.live, 0);
  return t;
}

test("slow renders step the level down, down to what the flock allows", () => {
  const d = new DetailController();
  const changes = [];
  d.onChange = (level) => changes.push(level);
  renders(d, 0, 40, SLOW_MS * 1.2, 100_000);
  assert.equal(d.level, LEVELS.length - 1);
  assert.deepEqual(changes, [...Array(LEVELS.length - 1).keys()].map((k) => k + 1)); // one at a time
});

test("much slower renders step down by as many levels as halvings bring them to SLOW_MS", () => {
  const d = new DetailController();
  const changes = [];
  d.onChange = (level) => changes.push(level);
  renders(d, 0, 3, SLOW_MS * 8, 100_000); // the first is not measured, two slow ones decide
  assert.deepEqual(changes, [3]);
  renders(d, 0, 40, SLOW_MS * 8, 100_000);
  assert.deepEqual(changes, [3, 6, 7]);
  assert.equal(d.stride, 32); // 100 000 / 32 >= MIN_DRAWN
  assert.equal(d.note, "drawing 1 in 32 birds, 35 % resolution: slow renderer");
});

test("a small flock is drawn at a lower resolution, never thinned", () => {
  const d = new DetailController();
  const changes = [];
  d.onChange = (level) => changes.push(level);
  renders(d, 0, 3, SLOW_MS * 1.2, 150);
  assert.equal(d.note, "half resolution: slow renderer");
  renders(d, 0, 40, SLOW_MS * 3, 150);
  assert.deepEqual(changes, [1, LEVELS.length - 1]); // the levels that thin are skipped
  assert.equal(d.stride, 1);
  assert.equal(d.note, "35 % resolution: slow renderer");
  assert.deepEqual(levelsFor(150), [0, 1, LEVELS.length - 1]);
  assert.deepEqual(levelsFor(MIN_DRAWN * 4), [0, 1, 2, 3, LEVELS.length - 1]); // 1 in 4 still leaves MIN_DRAWN
  assert.equal(strideFor(32, MIN_DRAWN * 4), 4);
  assert.equal(strideFor(32, 10), 1);
});

test("fast renders step back up, not sooner than STEP_UP_AFTER_MS after a change; between the thresholds it stays", () => {
  const d = new DetailController();
  let t = renders(d, 0, 3, SLOW_MS * 2, 100_000);
  assert.equal(d.level, 1); // 2 slow renders measured (the first, at a new level, is not)
  t = renders(d, t, 10, (SLOW_MS + FAST_MS) / 2, 100_000); // neither slow nor fast
  assert.equal(d.level, 1);
  const changed = d.changedAt;
  t = renders(d, t, FAST_RENDERS + 2, FAST_MS / 3, 100_000);
  assert.ok(t - changed < STEP_UP_AFTER_MS);
  assert.equal(d.level, 1); // too soon
  renders(d, changed + STEP_UP_AFTER_MS, FAST_RENDERS + 1, FAST_MS / 3, 100_000);
  assert.equal(d.level, 0);
  assert.equal(d.note, "");
});

test("a fence never passed (a lost context) is given up after a while, unmeasured", () => {
  const d = new DetailController();
  const gl = fakeGl();
  gl.getSyncParameter = () => null; // a lost context answers null
  d.rendered(gl, 0, 100_000);
  assert.equal(d.gpuBusy(gl, 5), false);
  const stuck = fakeGl();
  d.rendered(stuck, 0, 100_000);
  assert.equal(d.gpuBusy(stuck, 5000), true);
  assert.equal(d.gpuBusy(stuck, 60_000), false);
  assert.deepEqual(d.times, []);
});

test("a fixed level stays, whatever the renders take", () => {
  const d = new DetailController(0);
  renders(d, 0, 20, SLOW_MS * 5, 100_000);
  assert.equal(d.level, 0);
  d.setMode(3, 0);
  assert.equal(d.level, 3);
  assert.equal(d.note, "drawing 1 in 4 birds, half resolution: chosen in View");
  renders(d, 0, 20, 1, 100_000);
  assert.equal(d.level, 3);
});

test("the page address chooses the mode", () => {
  assert.equal(detailModeOf(""), "auto");
  assert.equal(detailModeOf("?detail=full"), 0);
  assert.equal(detailModeOf("?preset=x&detail=2"), 2);
  assert.equal(detailModeOf("?detail=99"), "auto");
  assert.equal(detailModeOf("?detail="), "auto");
});

test("thinning keeps every stride-th bird and every highlighted one, in order", () => {
  const n = 10;
  const frame = {
    dim: 2,
    nAgents: n,
    positions: Uint16Array.from({ length: 2 * n + 2 }, (_, k) => k),
    headings: Float32Array.from({ length: 2 * n + 2 }, (_, k) => -k),
    flags: Uint8Array.from([0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 8]), // the last entry: a predator
    layout: 1,
  };
  assert.equal(thinned(frame, 1, 3), frame);
  const t = thinned(frame, 4, 3);
  assert.equal(t.nAgents, 4); // 0, 3 (selected), 4, 8 (neighbour and stride)
  assert.ok(t.positions instanceof Uint16Array);
  assert.deepEqual([...t.positions], [0, 1, 6, 7, 8, 9, 16, 17]);
  assert.deepEqual([...t.headings], [-0, -1, -6, -7, -8, -9, -16, -17]);
  assert.deepEqual([...t.flags], [0, 1, 0, 2]);
  assert.equal(t.layout, 1);
});
