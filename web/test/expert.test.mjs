import assert from "node:assert/strict";
import { test } from "node:test";

import { ExpertRestore } from "../src/panels.js";

/** A params message of one mode. */
function msg(dim, sep, extra = {}, parked = []) {
  return { dim, parked, params: { model: "reynolds", world: { dim }, rules: { separation: { weight: sep } }, ...extra } };
}

test("leaving Expert after a 2D/3D round trip restores the Basic values", () => {
  const r = new ExpertRestore();
  const basic3 = msg(3, 1.0, { detail: { enabled: false } });
  assert.deepEqual(r.onParams(basic3, null, false), {});
  r.enter(basic3.params, 3);
  const expert3 = msg(3, 2.5, { detail: { enabled: true } });
  assert.deepEqual(r.onParams(expert3, basic3, false), {});
  const twin2 = msg(2, 1.5, { detail: { enabled: false } }, [3]); // a twin preset: its own values
  assert.deepEqual(r.onParams(twin2, expert3, false), {});
  const back3 = msg(3, 2.5, { detail: { enabled: true } }, [2]);
  assert.deepEqual(r.onParams(back3, twin2, false), {});
  // before, a switch made the 3D values seen on return the new starting point: nothing was restored
  assert.deepEqual(r.leave(back3.params, 3), { "rules.separation.weight": 1.0, "detail.enabled": false });
});

test("a mode carried while Expert is open keeps its Basic values, and a parked mode is restored when shown", () => {
  const r = new ExpertRestore();
  const basic2 = msg(2, 1.0);
  r.onParams(basic2, null, false);
  r.enter(basic2.params, 2);
  const expert2 = msg(2, 2.5);
  r.onParams(expert2, basic2, false);
  const carried3 = msg(3, 2.5, {}, [2]); // no twin: the Expert value carried verbatim
  r.onParams(carried3, expert2, false);
  const changed3 = msg(3, 4.0, {}, [2]);
  r.onParams(changed3, carried3, false);
  // leave in 3D: 3D back to the 2D Basic value it was carried from; 2D owed its own restore
  assert.deepEqual(r.leave(changed3.params, 3), { "rules.separation.weight": 1.0 });
  const after3 = msg(3, 1.0, {}, [2]);
  r.onParams(after3, changed3, false);
  assert.deepEqual(r.onParams(msg(2, 2.5, {}, [3]), after3, false), { "rules.separation.weight": 1.0 });
  assert.deepEqual(r.onParams(msg(2, 1.0, {}, [3]), msg(2, 2.5), false), {}); // owed once
});

test("another scene, a new connection or a dropped mode start over", () => {
  const r = new ExpertRestore();
  const a = msg(3, 1.0);
  r.onParams(a, null, false);
  r.enter(a.params, 3);
  const b = msg(3, 2.0);
  r.onParams(b, a, false);
  const scene = msg(3, 0.5);
  r.onParams(scene, b, true); // another scene: its values are the starting point
  assert.deepEqual(r.leave(msg(3, 0.7).params, 3), { "rules.separation.weight": 0.5 });
  r.enter(a.params, 3);
  const two = msg(2, 3.0, {}, []); // the server kept no 3D mode (over the agent cap)
  r.onParams(two, a, false);
  assert.deepEqual(r.leave(two.params, 2), {});
  assert.equal(r.owed.size, 0);
});

test("Expert opened before the first parameters starts from them", () => {
  const r = new ExpertRestore();
  r.open = true; // what the page does when Expert is clicked while the first simulation is built
  const first = msg(3, 1.0);
  r.onParams(first, null, false);
  const changed = msg(3, 2.0);
  r.onParams(changed, first, false);
  assert.deepEqual(r.leave(changed.params, 3), { "rules.separation.weight": 1.0 });
});
