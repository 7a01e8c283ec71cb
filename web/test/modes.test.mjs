import assert from "node:assert/strict";
import { test } from "node:test";

import { dimensionChanges, switchMessage } from "../src/modes.js";

const names = ["starlings-2d", "starlings-3d", "starlings-2d-reference", "starlings-3d-reference", "boids-2d"];

test("a preset with a twin in the other dimension switches by name, variants included", () => {
  const at = (preset, dim) => ({ preset, dim, params: { world: { dim, bounds: { kind: "open", size: [1, 1, 1] } } } });
  assert.deepEqual(switchMessage(at("starlings-3d", 3), names, 2), { type: "preset", name: "starlings-2d" });
  assert.deepEqual(switchMessage(at("starlings-3d-reference", 3), names, 2), {
    type: "preset",
    name: "starlings-2d-reference",
  });
  assert.equal(switchMessage(at("starlings-3d", 3), names, 3), null);
  assert.equal(switchMessage(at("boids-2d", 2), names, 3).type, "set"); // no boids-3d
});

test("the roost's centre follows the dimension", () => {
  const params = { world: { dim: 2, bounds: { kind: "open", size: [30, 20] } }, rules: { roost: { center: [3, 4] } } };
  const changes = dimensionChanges(params, 3);
  assert.deepEqual(changes["rules.roost.center"], [3, 4, 0]);
  assert.deepEqual(changes["world.bounds.size"], [30, 20, 20]);
});
