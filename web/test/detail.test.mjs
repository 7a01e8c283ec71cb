import assert from "node:assert/strict";
import { test } from "node:test";

import {
  DetailController,
  FLOOR_HOLD_MS,
  LEVELS,
  MAX_PROBE_MS,
  MIN_DRAWN,
  PROBE_MS,
  SLOW_MS,
  SMALL_FLOCK_SCALE,
  describe,
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

/** A renderer whose render costs `cost(level, stride)` ms: renders one after another from `start`
 * for `seconds`; returns the time after and the levels drawn, one per render. */
function run(detail, start, seconds, cost, n) {
  const gl = fakeGl();
  let t = start;
  const levels = [];
  while (t < start + seconds * 1000) {
    const ms = cost(LEVELS[detail.level].scale, detail.stride);
    levels.push(detail.level);
    renders(detail, t, 1, ms, n, gl);
    t += ms;
  }
  return { t, levels };
}

/** A render's cost on a renderer `full` ms at full detail: by the share of pixels and birds drawn. */
const scaled = (full, floor = 0) => (scale, stride) => floor + (full * scale * scale) / stride;

test("a renderer too slow for the full picture steps down as far as it needs and no further", () => {
  const d = new DetailController();
  const changes = [];
  d.onChange = (level) => changes.push(level);
  run(d, 0, 30, scaled(400), 100_000); // 400 ms at full, 100 at 1 in 4
  assert.equal(d.level, 2);
  assert.equal(d.stride, 4);
  assert.equal(LEVELS[d.level].scale, 1); // thinned birds, not a lower resolution
  // probes up to 1 in 2 (200 ms) fail and come back; each waits twice as long as the last
  assert.equal(changes[0], 2);
  assert.ok(changes.every((level, k) => level === (k % 2 ? 1 : 2)), changes.join(" "));
  const probes = changes.filter((level) => level === 1).length;
  assert.ok(probes >= 2 && probes <= 4, changes.join(" "));
});

test("a render of a second at 100 000 birds steps down at once, by the halvings it needs", () => {
  const d = new DetailController();
  const changes = [];
  d.onChange = (level) => changes.push(level);
  renders(d, 0, 2, 1000, 100_000); // far too slow: measured from the first, two decide
  assert.deepEqual(changes, [4]);
  const e = new DetailController();
  renders(e, 0, 2, 9000, 100_000); // however slow, the resolution is not lowered at once
  assert.equal(e.level, 4);
  assert.equal(d.stride, 16);
  assert.equal(d.note, "drawing 1 in 16 birds: slow renderer");
  assert.equal(d.autoLabel, "auto (1 in 16 birds)");
});

test("a flock of a few thousand is never thinned: only its resolution is lowered, to 70 % at most", () => {
  for (const n of [150, 500, 2 * MIN_DRAWN - 1]) {
    const d = new DetailController();
    run(d, 0, 20, scaled(300), n); // 300 ms at full, 147 at 70 %
    assert.equal(d.stride, 1);
    assert.equal(LEVELS[d.level].scale, SMALL_FLOCK_SCALE);
    assert.equal(d.note, "70 % resolution: slow renderer");
    assert.equal(d.autoLabel, "auto (70 % resolution)");
  }
  assert.deepEqual(levelsFor(500), [0, 5]);
  assert.deepEqual(levelsFor(MIN_DRAWN * 4), [0, 1, 2, 5, 6]); // 1 in 4 still leaves MIN_DRAWN
  assert.equal(strideFor(16, MIN_DRAWN * 4), 4);
  assert.equal(strideFor(16, 10), 1);
  assert.ok(LEVELS.every((level) => level.scale >= 0.5)); // never a third of the resolution
  assert.equal(describe(0, 100_000), "full detail");
  assert.equal(describe(5, 500), "70 % resolution");
  assert.equal(describe(6, 100_000), "1 in 16 birds, half resolution");
});

test("usable renders keep the full picture", () => {
  const d = new DetailController();
  const { levels } = run(d, 0, 30, scaled(0, SLOW_MS * 0.9), 500); // 90 ms whatever is drawn
  assert.ok(levels.every((level) => level === 0), levels.join(" "));
});

test("a step down that buys nothing (a busy machine) is taken back, and held back for a while", () => {
  const d = new DetailController();
  const changes = [];
  d.onChange = (level) => changes.push(level);
  const { t, levels } = run(d, 0, 15, scaled(0, 2.5 * SLOW_MS), 100_000); // as slow at any level
  assert.equal(changes.length, 2, changes.join(" ")); // down, then back up
  assert.equal(changes[1], 0);
  assert.ok(levels.slice(-20).every((level) => level === 0));
  assert.ok(t < FLOOR_HOLD_MS);
});

test("once the slowness is gone, the level comes back up within seconds; a failed probe waits longer", () => {
  const d = new DetailController();
  let { t } = run(d, 0, 20, scaled(800), 500); // slow: 70 % resolution, 392 ms
  assert.equal(d.level, 5);
  ({ t } = run(d, t, 3 * PROBE_MS / 1000 + 2, scaled(0, 0.6 * SLOW_MS), 500)); // 60 ms whatever is drawn
  assert.equal(d.level, 0);
  // slow only at full detail: a probe up fails, and the next waits twice as long
  const slowAtFull = (scale, stride) => (scale === 1 && stride === 1 ? 3 * SLOW_MS : 0.6 * SLOW_MS);
  const e = new DetailController();
  const { levels } = run(e, 0, 60, slowAtFull, 500);
  const probes = levels.filter((level, k) => level === 0 && levels[k - 1] !== 0).length;
  assert.ok(probes >= 3 && probes <= 1 + 60 / (MAX_PROBE_MS / 1000) + 3, probes);
  assert.ok(levels.filter((level) => level === 0).length < levels.length / 4);
});

test("another flock starts at full detail again", () => {
  const d = new DetailController();
  renders(d, 0, 2, 1000, 100_000);
  assert.equal(d.level, 4);
  renders(d, 4000, 1, 50, 500); // another scene
  assert.equal(d.level, 0);
  run(d, 5000, 10, scaled(400), 500);
  assert.equal(d.level, 5);
  d.restart(20_000); // a refill, a preset of the same size, the other mode
  assert.equal(d.level, 0);
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
  d.setMode(5, 0);
  assert.equal(d.level, 5);
  assert.equal(d.note, "drawing 1 in 16 birds, 70 % resolution: chosen in View");
  assert.equal(d.autoLabel, "auto");
  assert.equal(d.fixedLabels[5], "1 in 16 birds, 70 % resolution");
  d.n = 500; // the menu's fixed choices say what they draw of the flock shown, as the note does
  assert.equal(d.fixedLabels[5], "70 % resolution");
  assert.equal(d.note, "70 % resolution: chosen in View");
  assert.equal(d.fixedLabels[0], "full detail");
  renders(d, 0, 20, 1, 100_000);
  assert.equal(d.level, 5);
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
  assert.equal(thinned(frame, 1, 3).positions, frame.positions);
  const density = Float32Array.from({ length: n }, (_, k) => k / 10);
  const t = thinned(frame, 4, 3);
  assert.equal(t.nAgents, 4); // 0, 3 (selected), 4, 8 (neighbour and stride)
  assert.ok(t.positions instanceof Uint16Array);
  assert.deepEqual([...t.positions], [0, 1, 6, 7, 8, 9, 16, 17]);
  assert.deepEqual([...t.headings], [-0, -1, -6, -7, -8, -9, -16, -17]);
  assert.deepEqual([...t.flags], [0, 1, 0, 2]);
  assert.equal(t.layout, 1);
  assert.deepEqual([...thinned(frame, 4, 3, density).values], [0, 0.3, 0.4, 0.8].map(Math.fround));
});
