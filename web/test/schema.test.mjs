import assert from "node:assert/strict";
import { test } from "node:test";

import { deref, fieldKind, fieldSchema, flatten, getKey, numericLimits, restoringChanges } from "../src/schema.js";

const schema = {
  $defs: {
    World: {
      properties: {
        dim: { enum: [2, 3], type: "integer" },
        dt: { type: "number", exclusiveMinimum: 0, maximum: 10, unit: "s" },
        bounds: { $ref: "#/$defs/Bounds", description: "Region." },
      },
    },
    Bounds: { properties: { size: { type: "array", items: { type: "number" } } } },
  },
  properties: {
    model: { const: "reynolds", type: "string" },
    seed: { type: "integer", minimum: 0, maximum: 1e6 },
    world: { $ref: "#/$defs/World" },
    flag: { type: "boolean" },
    mass: { anyOf: [{ type: "number" }, { type: "array" }] },
  },
};

test("resolves references and finds fields by dotted key", () => {
  assert.ok(deref(schema, schema.properties.world).properties.dim);
  assert.equal(fieldSchema(schema, "world.bounds").description, "Region.");
  assert.equal(fieldSchema(schema, "world.bounds.size").type, "array");
  assert.equal(fieldSchema(schema, "world.nothing"), null);
  assert.equal(fieldSchema(schema, "rules.alignment.mode"), null);
});

test("field kinds and limits", () => {
  const kinds = ["model", "seed", "flag", "mass"].map((k) => fieldKind(fieldSchema(schema, k)));
  assert.deepEqual(kinds, ["const", "integer", "boolean", "json"]);
  assert.equal(fieldKind(fieldSchema(schema, "world.dim")), "enum");
  assert.equal(fieldKind(fieldSchema(schema, "world")), "object");
  assert.deepEqual(numericLimits(fieldSchema(schema, "world.dt")), { min: 0, max: 10, step: "any", range: "> 0 and <= 10" });
  assert.equal(numericLimits(fieldSchema(schema, "seed")).range, ">= 0 and <= 1e+6");
});

test("restoring changes: only what differs, model first", () => {
  const before = { model: "reynolds", world: { dim: 2, dt: 0.1, bounds: { size: [1, 2] } }, rules: { w: 1 } };
  const after = structuredClone(before);
  assert.deepEqual(restoringChanges(after, before), {});
  after.world.dt = 0.5;
  after.world.bounds.size = [3, 4];
  assert.deepEqual(restoringChanges(after, before), { "world.dt": 0.1, "world.bounds.size": [1, 2] });
  after.model = "vicsek";
  const changes = restoringChanges(after, before);
  assert.equal(Object.keys(changes)[0], "model");
  assert.equal(changes.model, "reynolds");
  assert.equal(changes["rules.w"], 1);
  assert.equal(flatten(before).size, 5);
  assert.equal(getKey(before, "world.bounds.size")[1], 2);
  assert.equal(getKey(before, "world.nope.x"), undefined);
});
