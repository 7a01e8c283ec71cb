import assert from "node:assert/strict";
import { test } from "node:test";

import { keepFromDropdown } from "../src/keys.js";
import { legendFor } from "../src/palette.js";

test("a closed drop-down does not take Up/Down/PageUp/PageDown/Home/End; Alt+Down still opens it", () => {
  const select = { tagName: "SELECT" };
  for (const key of ["ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End"]) {
    assert.equal(keepFromDropdown({ key, target: select }), true, key);
  }
  assert.equal(keepFromDropdown({ key: "ArrowDown", altKey: true, target: select }), false);
  assert.equal(keepFromDropdown({ key: "Enter", target: select }), false);
  assert.equal(keepFromDropdown({ key: "ArrowDown", target: { tagName: "INPUT" } }), false);
  assert.equal(keepFromDropdown({ key: "ArrowDown", target: { tagName: "CANVAS" } }), false);
});

test("the legend is in the words of the scene's agents", () => {
  assert.equal(legendFor()[0][1], "selected bird (id 0)");
  assert.equal(legendFor("fish")[0][1], "selected fish (id 0)");
  assert.equal(legendFor("person")[0][1], "selected person (id 0)");
  assert.ok(legendFor("enemy").every(([, words]) => !words.includes("bird")));
});
