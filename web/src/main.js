/**
 * flocksim viewer page: connects to the server's `/ws`, draws its frames with three.js and wires
 * every control of the page (scene, reset, 2D/3D, clean mode, Basic/Expert panels, status bar,
 * turns, pause and replay, recording, pointer attract/repel). See docs/viewer.md.
 *
 * A test hook is exposed on `window.flocksim` (frames drawn, last status, parameters, paused,
 * replaying, last recording, and helpers to map world and screen points).
 *
 * @module main
 */

import "./style.css";

import { Connection, socketUrl } from "./connection.js";
import { switchMessage } from "./modes.js";
import { BasicPanel, ExpertPanel } from "./panels.js";
import { PointerControl } from "./pointer.js";
import { agentCentroid, meanHeading, selectedAgent, statusOf } from "./protocol.js";
import { CanvasRecorder, supportedContainers, videoDuration } from "./recorder.js";
import { ViewRenderer } from "./renderer.js";
import { ReplayStore } from "./replay.js";
import { restoringChanges } from "./schema.js";
import { ErrorBanner, StatusBar, byId, el } from "./ui.js";

/** Replay speeds offered; the default is 0.25x. */
export const REPLAY_SPEEDS = [0.1, 0.25, 0.5, 1];
const DEFAULT_REPLAY_SPEED = 0.25;
/** A recording with "force a turn" sends `turn` this long after it starts [s]. */
const FORCED_TURN_AFTER_S = 3;

/**
 * @typedef {import("./protocol.js").Frame} Frame
 */

class App {
  constructor() {
    this.canvas = /** @type {HTMLCanvasElement} */ (byId("view"));
    this.view = new ViewRenderer(this.canvas);
    this.errors = new ErrorBanner();
    this.statusBar = new StatusBar();
    this.replays = new ReplayStore();
    this.recorder = new CanvasRecorder(this.canvas);

    /** hello message (presets, schemas, limits) */
    this.hello = null;
    /** last params message */
    this.current = null;
    this.paused = false;
    /** replay: playing back the buffer (paused only) */
    this.replaying = false;
    this.replayPosition = 0; // seconds from the first stored frame
    this.replaySpeed = DEFAULT_REPLAY_SPEED;
    /** the last frame received and not yet drawn */
    this.pending = null;
    /** the frame on screen (live or replayed) */
    this.shown = null;
    /** a change was sent while paused with a frame in flight: fetch one more after it */
    this.refetchWhenPaused = false;
    this.framesDrawn = 0;
    this.framesReceived = 0;
    this.renders = []; // times of the renders in the last second [ms]
    this.fps = 0;
    this.fpsShownAt = 0;
    this.lastTick = 0;
    this.replayDirty = false; // the replay position moved: draw it
    this.pausedAt = 0; // performance.now() when paused [ms]
    this.pausedTotal = 0; // time spent paused [ms]: excluded from the replay clock
    this.expertSnapshot = null;
    this.rebaseExpert = false;
    this.lastRecording = null;
    this.makingReplayVideo = false;
    this.forcedTurnTimer = 0;
    this.connected = false;

    const panelHost = {
      set: (changes) => this.send({ type: "set", changes }),
      error: (message) => this.errors.show(message),
    };
    this.basic = new BasicPanel(byId("basic-fields"), panelHost);
    this.expert = new ExpertPanel(byId("expert-fields"), panelHost);
    this.pointer = new PointerControl(this.canvas, {
      dim: () => this.view.dim,
      toggled: () => byId("pointer-toggle").getAttribute("aria-pressed") === "true",
      worldAt: (x, y) => this.view.worldAt(x, y, this.shown ? agentCentroid(this.shown) : null),
      send: (msg) => this.send(msg),
      setCameraControls: (on) => {
        if (this.view.controls) this.view.controls.enabled = on;
      },
      showMarker: (point, mode) => this.view.setMarker(point, mode),
    });

    this.connection = new Connection(socketUrl(window.location), {
      onHello: (msg) => this.onHello(msg),
      onParams: (msg) => this.onParams(msg),
      onState: (msg) => this.onState(msg),
      onError: (message) => this.errors.show(message),
      onFrame: (frame) => this.onFrame(frame),
      onStatus: (open) => this.onConnection(open),
    });
    this.bindControls();
    this.connection.open();
    requestAnimationFrame((t) => this.tick(t));
  }

  /** Send a control message (errors are shown). */
  send(message) {
    return this.connection.send(message);
  }

  // ---- server messages -------------------------------------------------------------------

  onConnection(open) {
    this.connected = open;
    byId("connection").className = open ? "online" : "offline";
    byId("connection").title = open ? "connected" : "connection lost: reconnecting";
    if (!open) this.errors.show("connection to the flocksim server lost: reconnecting");
  }

  onHello(msg) {
    // a new connection (also after a reconnect): a new simulation, nothing to replay yet
    this.hello = msg;
    this.current = null;
    this.replays = new ReplayStore();
    this.paused = false;
    this.replaying = false;
    const select = /** @type {HTMLSelectElement} */ (byId("preset"));
    select.replaceChildren(
      el("option", { value: "", text: "(custom parameters)", disabled: true }),
      ...msg.presets.map((p) =>
        el("option", { value: p.name, title: p.description, text: `${p.name} (${p.dim}D, ${p.n})` }),
      ),
    );
    byId("overlay").hidden = true;
  }

  onParams(msg) {
    const previous = this.current;
    this.current = msg;
    const model = msg.model;
    const schema = this.hello?.schemas?.[model];
    if (!previous || previous.model !== model) {
      if (schema) {
        this.basic.build(schema, this.hello.limits?.max_agents ?? Infinity);
        this.expert.build(model, schema, Object.keys(this.hello.schemas));
      }
    }
    this.basic.update(msg.params);
    this.expert.update(msg.params);
    /** @type {HTMLSelectElement} */ (byId("preset")).value = msg.preset ?? "";
    byId("mode-2d").setAttribute("aria-pressed", String(msg.dim === 2));
    byId("mode-3d").setAttribute("aria-pressed", String(msg.dim === 3));
    byId("pointer-toggle").hidden = msg.dim !== 3;
    byId("scene-description").textContent = msg.params.description ?? "";
    if (this.rebaseExpert || !this.expertSnapshot) {
      this.expertSnapshot = structuredClone(msg.params);
      this.rebaseExpert = false;
    }
    this.view.configure(msg.params);
    if (msg.reset) {
      // a refilled flock: its mode's replay buffer starts over (the other mode's stays)
      this.replays.clear(msg.dim);
      this.stopReplay();
    }
    if (msg.paused !== this.paused) this.applyPaused(msg.paused);
    else if (this.paused) this.requestPausedFrame(); // show the change
    this.refreshPauseUi();
  }

  onState(msg) {
    this.applyPaused(msg.paused);
  }

  /**
   * Follow the server's paused flag: on pause, stop the replay clock, put the timeline at its end
   * and fetch the state the simulation stopped at; on resume, leave the replay.
   *
   * @param {boolean} paused
   */
  applyPaused(paused) {
    const wasPaused = this.paused;
    this.paused = paused;
    if (this.paused && !wasPaused) {
      this.pausedAt = performance.now();
      const buffer = this.buffer();
      this.replayPosition = buffer ? buffer.duration : 0;
      this.requestPausedFrame(); // show the state the simulation stopped at
    } else if (!this.paused && wasPaused) {
      if (this.pausedAt) this.pausedTotal += performance.now() - this.pausedAt;
      this.pausedAt = 0;
      this.stopReplay();
      if (this.makingReplayVideo) this.recorder.stop();
    }
    this.refreshPauseUi();
  }

  onFrame(frame) {
    this.framesReceived++;
    this.pending = frame;
    if (this.refetchWhenPaused && this.paused) {
      // a change was made while this frame was already on its way: ask for one showing it
      this.refetchWhenPaused = false;
      this.requestPausedFrame();
    }
  }

  // ---- drawing loop ----------------------------------------------------------------------

  /** The replay buffer of the current mode (null before the first params). */
  buffer() {
    return this.current ? this.replays.get(this.current.dim) : null;
  }

  /** Replay clock [s]: wall-clock time with the paused stretches taken out. */
  liveClock() {
    return (performance.now() - this.pausedTotal) / 1000;
  }

  tick(now) {
    const dt = this.lastTick ? Math.min((now - this.lastTick) / 1000, 0.25) : 0;
    this.lastTick = now;
    const buffer = this.buffer();
    const replayView = this.paused && buffer && buffer.length > 0;
    if (this.pending) {
      const frame = this.pending;
      this.pending = null;
      // while paused, a frame comes only in answer to a change (or was on its way): show it too
      this.showFrame(frame);
      if (!this.paused && this.current && frame.dim === this.current.dim) buffer?.offer(frame, this.liveClock());
    } else if (replayView && (this.replaying || this.replayDirty)) {
      if (this.replaying) {
        this.replayPosition += dt * this.replaySpeed;
        if (this.replayPosition >= buffer.duration) {
          this.replayPosition = buffer.duration;
          this.replaying = false;
          if (this.makingReplayVideo) this.recorder.stop();
          this.refreshPauseUi();
        }
      }
      this.replayDirty = false;
      const frame = buffer.frameAt(this.replayPosition, this.period());
      if (frame) this.showFrame(frame);
      this.refreshTimeline();
    }
    if (this.view.dirty) {
      this.view.render();
      this.renders.push(now);
    }
    while (this.renders.length && now - this.renders[0] > 1000) this.renders.shift();
    this.fps = this.renders.length;
    if (now - this.fpsShownAt >= 500) {
      this.statusBar.showFps(this.fps);
      this.fpsShownAt = now;
    }
    this.updateRecordingUi();
    // pull flow control: ask for the next frame once the last one is drawn
    if (!this.paused && !this.pending) this.connection.requestFrame();
    requestAnimationFrame((t) => this.tick(t));
  }

  /** Per-axis period of a periodic world (replay interpolation unwraps across it). */
  period() {
    const bounds = this.current?.params.world.bounds;
    return bounds && bounds.kind === "periodic" ? bounds.size : null;
  }

  /** Draw a frame and show its status values. */
  showFrame(frame) {
    this.view.show(frame);
    this.shown = frame;
    this.framesDrawn++;
    this.statusBar.showStatus(statusOf(frame), frame.time);
  }

  /** While paused, ask for one frame (after a change, so the view shows it). */
  requestPausedFrame() {
    if (this.connection.waiting) this.refetchWhenPaused = true;
    else this.connection.requestFrame();
  }

  // ---- pause and replay ------------------------------------------------------------------

  togglePause() {
    this.send({ type: this.paused ? "resume" : "pause" });
  }

  stopReplay() {
    this.replaying = false;
    this.refreshPauseUi();
  }

  playReplay() {
    const buffer = this.buffer();
    if (!this.paused || !buffer || buffer.length < 2) return;
    if (this.replayPosition >= buffer.duration - 1e-3) this.replayPosition = 0;
    this.replaying = !this.replaying;
    this.refreshPauseUi();
  }

  refreshPauseUi() {
    const buffer = this.buffer();
    const pauseButton = byId("pause");
    pauseButton.textContent = this.paused ? "Resume" : "Pause";
    pauseButton.setAttribute("aria-pressed", String(this.paused));
    byId("replay-bar").hidden = !this.paused;
    byId("replay-play").textContent = this.replaying ? "Stop" : "Play";
    byId("make-replay-video").disabled = !this.paused || !buffer || buffer.length < 2 || this.recorder.recording;
    const mode = this.paused ? (this.replaying ? `replay ${this.replaySpeed}x` : "paused") : "live";
    this.statusBar.showMode(mode);
    this.refreshTimeline();
  }

  refreshTimeline() {
    const buffer = this.buffer();
    const timeline = /** @type {HTMLInputElement} */ (byId("timeline"));
    const duration = buffer ? buffer.duration : 0;
    timeline.max = String(duration);
    timeline.value = String(this.replayPosition);
    timeline.disabled = !buffer || buffer.length < 2;
    byId("replay-time").textContent =
      `${(this.replayPosition - duration).toFixed(1)} s (${buffer ? buffer.length : 0} frames, ${duration.toFixed(1)} s)`;
  }

  // ---- recording -------------------------------------------------------------------------

  /** Start recording the canvas live (auto-stop after the seconds input; optional forced turn). */
  startRecording() {
    const seconds = Number(/** @type {HTMLInputElement} */ (byId("record-seconds")).value) || 0;
    const forceTurn = /** @type {HTMLInputElement} */ (byId("record-turn")).checked;
    this.record({ seconds });
    if (forceTurn) {
      this.forcedTurnTimer = setTimeout(() => {
        if (this.recorder.recording) this.send({ type: "turn", direction: "left" });
      }, FORCED_TURN_AFTER_S * 1000);
    }
  }

  /** Record the replay buffer from its start at the chosen speed ("make video from replay"). */
  makeReplayVideo() {
    const buffer = this.buffer();
    if (!this.paused || !buffer || buffer.length < 2 || this.recorder.recording) return;
    this.replayPosition = 0;
    this.replayDirty = true;
    this.makingReplayVideo = true;
    this.replaying = true;
    this.record({ seconds: 0 });
    this.refreshPauseUi();
  }

  /** Start the recorder and handle its result. */
  record({ seconds }) {
    let finished;
    try {
      const container = /** @type {HTMLSelectElement} */ (byId("record-format")).value;
      finished = this.recorder.start({ seconds, name: this.current?.preset ?? "flocksim", container });
    } catch (err) {
      this.errors.show(err.message);
      this.makingReplayVideo = false;
      return;
    }
    this.view.dirty = true;
    finished
      .then((rec) => this.onRecording(rec))
      .catch((err) => this.errors.show(`recording failed: ${err.message ?? err}`))
      .finally(() => {
        clearTimeout(this.forcedTurnTimer);
        this.makingReplayVideo = false;
        this.refreshPauseUi();
      });
    this.refreshPauseUi();
  }

  async onRecording(rec) {
    const link = /** @type {HTMLAnchorElement} */ (byId("recording-link"));
    if (this.lastRecording) URL.revokeObjectURL(this.lastRecording.url);
    link.href = rec.url;
    link.download = rec.filename;
    link.textContent = `Download ${rec.filename}`;
    link.hidden = false;
    const info = { ...rec, duration: NaN };
    this.lastRecording = info;
    const mb = (rec.size / 1e6).toFixed(2);
    byId("recording-info").textContent = `${rec.type}, ${mb} MB, recorded ${rec.seconds.toFixed(1)} s`;
    info.duration = await videoDuration(rec.blob);
    if (this.lastRecording === info) {
      byId("recording-info").textContent =
        `${rec.type}, ${mb} MB, ${Number.isFinite(info.duration) ? info.duration.toFixed(2) : "?"} s of video`;
    }
  }

  updateRecordingUi() {
    const button = byId("record");
    const recording = this.recorder.recording;
    button.textContent = recording ? `Stop (${this.recorder.elapsed.toFixed(1)} s)` : "Record";
    button.classList.toggle("recording", recording);
    document.body.classList.toggle("is-recording", recording);
  }

  // ---- controls --------------------------------------------------------------------------

  switchMode(dim) {
    if (!this.current || !this.hello) return;
    const message = switchMessage(
      this.current,
      this.hello.presets.map((p) => p.name),
      dim,
    );
    if (!message) return;
    this.rebaseExpert = true;
    this.send(message);
  }

  /** Show Basic or Expert; leaving Expert restores the parameters it started from. */
  showTab(name) {
    const expert = name === "expert";
    const wasExpert = !byId("expert-panel").hidden;
    if (expert === wasExpert) return;
    byId("expert-panel").hidden = !expert;
    byId("basic-panel").hidden = expert;
    byId("tab-basic").setAttribute("aria-selected", String(!expert));
    byId("tab-expert").setAttribute("aria-selected", String(expert));
    if (expert && this.current) {
      this.expertSnapshot = structuredClone(this.current.params);
    } else if (!expert && this.current && this.expertSnapshot) {
      const changes = restoringChanges(this.current.params, this.expertSnapshot);
      if (Object.keys(changes).length) this.send({ type: "set", changes });
    }
  }

  setClean(on) {
    document.body.classList.toggle("clean", on);
    byId("clean").setAttribute("aria-pressed", String(on));
    this.view.resize();
  }

  turn(direction) {
    if (this.send({ type: "turn", direction }) && this.paused) this.requestPausedFrame();
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
    on("clean", "click", () => this.setClean(!document.body.classList.contains("clean")));
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
      if (this.shown) this.view.show(this.shown);
    });
    window.addEventListener("keydown", (e) => this.onKey(e));
  }

  onKey(e) {
    const t = /** @type {HTMLElement} */ (e.target);
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) {
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const clean = document.body.classList.contains("clean");
    switch (e.key) {
      case "Escape":
        if (clean) this.setClean(false);
        break;
      case "c":
      case "C":
        this.setClean(!clean);
        break;
      case " ":
        e.preventDefault();
        this.togglePause();
        break;
      case "f":
      case "F":
        this.view.fit();
        break;
      case "r":
      case "R":
        this.send({ type: "reset" });
        break;
      case "ArrowLeft":
        this.turn("left");
        break;
      case "ArrowRight":
        this.turn("right");
        break;
      default:
        return;
    }
  }
}

/**
 * The test hook (`window.flocksim`): live views of the page's state for browser tests.
 *
 * @param {App} app
 * @returns {object}
 */
function testHook(app) {
  return {
    get connected() {
      return app.connected;
    },
    get framesDrawn() {
      return app.framesDrawn;
    },
    /** No frame is on its way or waiting to be drawn. */
    get settled() {
      return !app.connection.waiting && !app.pending && !app.refetchWhenPaused;
    },
    get framesReceived() {
      return app.framesReceived;
    },
    get fps() {
      return app.fps;
    },
    get paused() {
      return app.paused;
    },
    get replaying() {
      return app.replaying;
    },
    get replay() {
      const b = app.buffer();
      return {
        length: b ? b.length : 0,
        duration: b ? b.duration : 0,
        position: app.replayPosition,
        speed: app.replaySpeed,
        bytes: b ? b.bytes : 0,
      };
    },
    get params() {
      return app.current?.params ?? null;
    },
    get preset() {
      return app.current?.preset ?? null;
    },
    get model() {
      return app.current?.model ?? null;
    },
    get dim() {
      return app.current?.dim ?? null;
    },
    get status() {
      return app.shown ? statusOf(app.shown) : null;
    },
    get frame() {
      const f = app.shown;
      if (!f) return null;
      const { layout, dim, n, nAgents, frameIndex, step, time, bboxMin, bboxMax } = f;
      return { layout, dim, n, nAgents, frameIndex, step, time, bboxMin, bboxMax };
    },
    get errors() {
      return [...app.errors.history];
    },
    get lastRecording() {
      const r = app.lastRecording;
      return r ? { size: r.size, type: r.type, seconds: r.seconds, duration: r.duration, filename: r.filename } : null;
    },
    get recording() {
      return app.recorder.recording;
    },
    get pointer() {
      return { mode: app.pointer.mode, point: app.pointer.point };
    },
    /** Mean agent position of the frame on screen [world units]. */
    centroid: () => (app.shown ? agentCentroid(app.shown) : null),
    /** Position and unit heading of the selected agent (flag bit 0) on screen, null when none. */
    selected: () => (app.shown ? selectedAgent(app.shown) : null),
    /** Mean unit heading of the frame on screen (its length is the polarization). */
    meanHeading: () => (app.shown ? meanHeading(app.shown) : null),
    /** Client (CSS pixel) position of a world point. */
    screenAt: (point) => app.view.screenAt(point),
    /** World point under a client position (3D: on the plane through the centroid). */
    worldAt: (x, y) => app.view.worldAt(x, y, app.shown ? agentCentroid(app.shown) : null),
    /** Render and count pixels that differ from the background. */
    foregroundPixels: () => app.view.foregroundPixels(),
    /** Send a raw control message. */
    send: (message) => app.send(message),
  };
}

const app = new App();
window.flocksim = testHook(app);
