/**
 * The page's controls wired to the application: buttons, drop-downs, tabs, keyboard shortcuts,
 * the 2D/3D switch, turns and the colour legend (docs/viewer.md).
 *
 * @module bindings
 */

import { LEVELS } from "./detail.js";
import { keepFromDropdown, shortcutFor, takesText } from "./keys.js";
import { COLORS, legendFor } from "./palette.js";
import { DEFAULT_REPLAY_SPEED, REPLAY_SPEEDS } from "./playback.js";
import { supportedContainers } from "./recorder.js";
import { AppRecording } from "./recording.js";
import { byId, el } from "./ui.js";

/** The page's controls (a base of the page's application class, main.js). */
export class AppControls extends AppRecording {

  switchMode(dim) {
    if (!this.current || this.current.dim === dim) return;
    this.send({ type: "mode", dim });
  }

  /**
   * A `params` message for Expert's restore (panels.js, ExpertRestore): a mode shown again gets
   * the restore it is owed since Expert was left.
   *
   * @param {{dim: number, params: object, parked?: number[]}} msg
   * @param {{dim: number, params: object}|null} previous
   */
  expertOnParams(msg, previous) {
    const changes = this.expertRestore.onParams(msg, previous, this.rebaseExpert);
    this.rebaseExpert = false;
    if (Object.keys(changes).length) this.send({ type: "set", changes });
  }

  /** Show Basic or Expert; leaving Expert restores the parameters it started from, in each mode. */
  showTab(name) {
    const expert = name === "expert";
    const wasExpert = !byId("expert-panel").hidden;
    if (expert === wasExpert) return;
    byId("expert-panel").hidden = !expert;
    byId("basic-panel").hidden = expert;
    byId("tab-basic").setAttribute("aria-selected", String(!expert));
    byId("tab-expert").setAttribute("aria-selected", String(expert));
    if (!this.current) {
      this.expertRestore.open = expert; // the first parameters to arrive are Expert's starting point
      return;
    }
    if (expert) {
      this.expertRestore.enter(this.current.params, this.current.dim);
    } else {
      const changes = this.expertRestore.leave(this.current.params, this.current.dim);
      if (Object.keys(changes).length) this.send({ type: "set", changes });
    }
  }

  setClean(on) {
    document.body.classList.toggle("clean", on);
    byId("clean").setAttribute("aria-pressed", String(on));
    this.view.resize();
  }

  turn(direction) {
    if (this.send({ type: "turn", direction }) && this.paused) {
      this.replayPosition = this.buffer()?.duration ?? 0; // the turn acts on the paused moment: show it
      this.refreshTimeline();
      this.requestPausedFrame();
    }
  }

  /** The colour legend (View section), in the words of the scene's agents ("bird", "fish", ...). */
  buildLegend(agent = "bird") {
    const hex = (c) => `#${c.toString(16).padStart(6, "0")}`;
    byId("legend").replaceChildren(
      ...legendFor(agent).map(([key, words]) =>
        el("li", {}, el("span", { class: "swatch", style: `background:${hex(COLORS[key])}` }), words),
      ),
    );
  }

  bindControls() {
    const on = (id, event, fn) => byId(id).addEventListener(event, fn);
    on("preset", "change", (e) => {
      this.rebaseExpert = true;
      this.send({ type: "preset", name: e.target.value });
    });
    on("reset", "click", () => this.send({ type: "reset" }));
    on("mode-2d", "click", () => this.switchMode(2));
    on("mode-3d", "click", () => this.switchMode(3));
    on("pause", "click", () => this.togglePause());
    on("turn-left", "click", () => this.turn("left"));
    on("turn-right", "click", () => this.turn("right"));
    on("fit", "click", () => this.view.fit());
    on("follow", "click", () => this.view.setFollow(!this.view.following));
    on("clean", "click", () => this.setClean(!document.body.classList.contains("clean")));
    on("clean-exit", "click", () => this.setClean(false));
    on("pointer-toggle", "click", (e) => {
      const pressed = e.currentTarget.getAttribute("aria-pressed") === "true";
      e.currentTarget.setAttribute("aria-pressed", String(!pressed));
    });
    on("tab-basic", "click", () => this.showTab("basic"));
    on("tab-expert", "click", () => this.showTab("expert"));
    on("replay-play", "click", () => this.playReplay());
    on("replay-resume", "click", () => this.send({ type: "resume" }));
    on("timeline", "input", (e) => {
      this.replaying = false;
      this.replayPosition = Number(e.target.value);
      this.replayDirty = true;
      this.refreshPauseUi();
    });
    const speed = /** @type {HTMLSelectElement} */ (byId("replay-speed"));
    speed.replaceChildren(
      ...REPLAY_SPEEDS.map((s) => el("option", { value: s, text: `${s}x`, selected: s === DEFAULT_REPLAY_SPEED })),
    );
    speed.addEventListener("change", () => {
      this.replaySpeed = Number(speed.value);
      this.refreshPauseUi();
    });
    const format = /** @type {HTMLSelectElement} */ (byId("record-format"));
    format.replaceChildren(
      el("option", { value: "auto", text: "auto", title: "MP4 where the browser can write it, else WebM" }),
      ...supportedContainers().map((c) => el("option", { value: c, text: c.toUpperCase() })),
    );
    on("record", "click", () => (this.recorder.recording ? this.recorder.stop() : this.startRecording()));
    on("make-replay-video", "click", () => this.makeReplayVideo());
    on("agent-size", "input", (e) => {
      this.view.sizeScale = 2 ** Number(e.target.value);
      byId("agent-size-value").textContent = `${Number(this.view.sizeScale.toFixed(2))}x`;
      if (this.shown) this.view.show(this.shown);
    });
    const detail = /** @type {HTMLSelectElement} */ (byId("detail"));
    detail.replaceChildren(
      el("option", { value: "auto", text: "auto", title: "Lowered by itself while renders are slow" }),
      ...LEVELS.map((level, k) => el("option", { value: String(k), text: level.label })),
    );
    detail.addEventListener("change", () => {
      this.detail.setMode(detail.value === "auto" ? "auto" : Number(detail.value), performance.now());
      this.applyDetail();
    });
    this.applyDetail();
    on("outline", "change", (e) => {
      this.view.outlineShown = e.target.checked;
      this.view.outline.group.visible = e.target.checked;
      this.view.dirty = true;
    });
    on("trails", "change", (e) => {
      this.view.trails.setEnabled(e.target.checked);
      if (this.shown) this.view.show(this.shown);
    });
    window.addEventListener("keydown", (e) => this.onKey(e));
    // a closed drop-down does not take Up/Down (the scene list would throw the flock away): the
    // key goes on to the view (Flappy Boids steers with it)
    document.addEventListener(
      "keydown",
      (e) => {
        if (keepFromDropdown(/** @type {any} */ (e))) e.preventDefault();
      },
      { capture: true },
    );
    // Space and Enter act on a focused button or checkbox when released: not when Space is ours
    window.addEventListener("keyup", (e) => {
      if (shortcutFor(e) === "pause") e.preventDefault();
    });
    // after a click on a button or a choice in a drop-down, checkbox or slider, the keys go back
    // to the view (typing fields keep the focus)
    document.addEventListener("click", (e) => {
      const t = /** @type {HTMLElement} */ (e.target);
      if (e.detail > 0 && t.closest?.("button")) this.focusView();
    });
    document.addEventListener("change", (e) => {
      const t = /** @type {HTMLElement} */ (e.target);
      if (!takesText(t) && (t.tagName === "SELECT" || t.tagName === "INPUT")) this.focusView();
    });
  }

  focusView() {
    this.canvas.focus({ preventScroll: true });
  }

  onKey(e) {
    if (this.flappy.onKeyDown(e)) return; // arrows and WASD steer while a game is shown
    const action = shortcutFor(e);
    if (action === null) return;
    e.preventDefault(); // a focused drop-down, checkbox or slider does not also take the key
    const clean = document.body.classList.contains("clean");
    switch (action) {
      case "leave-clean":
        if (clean) this.setClean(false);
        break;
      case "clean":
        this.setClean(!clean);
        break;
      case "pause":
        this.togglePause();
        break;
      case "fit":
        this.view.fit();
        break;
      case "reset":
        this.send({ type: "reset" });
        break;
      case "turn-left":
        this.turn("left");
        break;
      case "turn-right":
        this.turn("right");
        break;
      default:
        break;
    }
  }
}
