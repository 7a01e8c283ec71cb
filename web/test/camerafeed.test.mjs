import assert from "node:assert/strict";
import { test } from "node:test";

import { CameraFeed, MAX_PER_S, coneDegrees, viewChanged, viewMessage } from "../src/camerafeed.js";

const pose3d = (position = [0, 0, 10], direction = [0, 0, -4]) => ({
  dim: 3,
  position,
  direction,
  tanH: 1,
  tanV: 1,
  scale: 4,
});

test("the cone reaches the picture's corners", () => {
  // tan(half-angle) = hypot(1, 1): half-angle atan(sqrt 2) = 54.7356 deg
  assert.ok(Math.abs(coneDegrees(1, 1) - 109.4712) < 1e-3);
  // a square picture of 90 deg each way, a 16:9 one of 45 deg vertically
  const tanV = Math.tan((22.5 * Math.PI) / 180);
  const half = (Math.atan(Math.hypot((tanV * 16) / 9, tanV)) * 180) / Math.PI;
  assert.ok(Math.abs(coneDegrees((tanV * 16) / 9, tanV) - 2 * half) < 1e-9);
});

test("a 3D view message has the position, a unit direction and the cone; a 2D one only the centre", () => {
  const m = viewMessage(pose3d([1, 2, 3], [0, 3, 4]));
  assert.deepEqual(
    { ...m, fov_deg: Math.round(m.fov_deg * 1e4) / 1e4 },
    { type: "view", x: 1, y: 2, z: 3, dx: 0, dy: 0.6, dz: 0.8, fov_deg: 109.4712 },
  );
  assert.deepEqual(viewMessage({ dim: 2, position: [5, 6], direction: null, tanH: 1, tanV: 1 }), {
    type: "view",
    x: 5,
    y: 6,
  });
});

test("small moves and turns are not reported, larger ones are", () => {
  const a = viewMessage(pose3d());
  assert.equal(viewChanged(a, viewMessage(pose3d([0, 0, 10.001])), 4), false); // 0.001 < 1e-3 x 4
  assert.equal(viewChanged(a, viewMessage(pose3d([0, 0, 10.01])), 4), true);
  assert.equal(viewChanged(a, viewMessage(pose3d([0, 0, 10], [0, 0.0005, -1])), 4), false); // 0.5 mrad
  assert.equal(viewChanged(a, viewMessage(pose3d([0, 0, 10], [0, 0.01, -1])), 4), true); // 10 mrad
});

test("the feed sends on a change at most MAX_PER_S times a second, again after a reset, never when off", () => {
  const sent = [];
  const feed = new CameraFeed((m) => sent.push(m) > 0);
  let pose = pose3d();
  const gap = 1000 / MAX_PER_S;
  assert.equal(feed.tick(0, false, () => pose), false);
  assert.equal(feed.tick(0, true, () => pose), true);
  assert.equal(feed.tick(gap + 1, true, () => pose), false); // unchanged
  pose = pose3d([0, 0, 12]);
  assert.equal(feed.tick(gap / 2, true, () => pose), false); // too soon
  assert.equal(feed.tick(gap + 1, true, () => pose), true);
  feed.reset();
  assert.equal(feed.tick(3 * gap, true, () => pose), true); // same camera, new parameters
  assert.equal(sent.length, 3);
  assert.deepEqual(
    sent.map((m) => m.z),
    [10, 12, 12],
  );
});

test("a message the connection could not send is sent again", () => {
  let open = false;
  const sent = [];
  const feed = new CameraFeed((m) => open && sent.push(m) > 0);
  assert.equal(feed.tick(0, true, () => pose3d()), false);
  open = true;
  assert.equal(feed.tick(1, true, () => pose3d()), true);
  assert.equal(sent.length, 1);
});
