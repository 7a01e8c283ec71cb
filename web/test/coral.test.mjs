import assert from "node:assert/strict";
import { test } from "node:test";

import { CORAL_FORMS, coralGeometry } from "../src/coral.js";

/** Coral heads as the reef preset places them: centred half their radius above the seabed. */
const circles = Array.from({ length: 24 }, (_, k) => {
  const r = 5 + ((k * 7) % 9);
  return { center: [20 + 7 * k, r / 2, 30 + ((k * 53) % 140)], body_radius: r };
});

test("coral colonies are the same for the same obstacles and seed, other for another seed", () => {
  const a = coralGeometry(circles, 0);
  const b = coralGeometry(circles, 0);
  const c = coralGeometry(circles, 1);
  assert.deepEqual(a.forms, b.forms);
  assert.deepEqual([...a.geometry.attributes.position.array], [...b.geometry.attributes.position.array]);
  assert.notDeepEqual([...a.geometry.attributes.position.array], [...c.geometry.attributes.position.array]);
});

test("a reef holds several growth forms, each colony on the seabed inside its obstacle's reach", () => {
  const { geometry, forms } = coralGeometry(circles, 0);
  assert.ok(new Set(forms).size >= 4, forms.join(","));
  assert.ok(forms.every((f) => CORAL_FORMS.includes(f)));
  const p = geometry.attributes.position.array;
  // every vertex near one obstacle: within 1.4 radii across and between the sand and the top
  for (let i = 0; i < p.length; i += 3) {
    const near = circles.some((c) => {
      const r = c.body_radius;
      return Math.hypot(p[i] - c.center[0], p[i + 2] - c.center[2]) <= 1.4 * r && p[i + 1] >= -0.1 * r && p[i + 1] <= c.center[1] + 1.3 * r;
    });
    assert.ok(near, `vertex ${i / 3} at ${p[i]}, ${p[i + 1]}, ${p[i + 2]} is far from every obstacle`);
  }
  assert.ok(geometry.index.count / 3 < 2500 * circles.length); // affordable on a software renderer
});

/** Distinct vertex colours of a geometry (2 decimals). */
function colours(geometry) {
  const c = geometry.attributes.color.array;
  const out = new Set();
  for (let i = 0; i < c.length; i += 3) out.add(`${c[i].toFixed(2)},${c[i + 1].toFixed(2)},${c[i + 2].toFixed(2)}`);
  return out.size;
}

test("colonies are coloured per vertex: several colours each (base to tip, ridges), many in a reef", () => {
  for (const circle of circles.slice(0, 8)) assert.ok(colours(coralGeometry([circle], 0).geometry) >= 3);
  assert.ok(colours(coralGeometry(circles, 0).geometry) >= 50);
});
