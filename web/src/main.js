/**
 * flocksim viewer page: connects to the server's `/ws`, draws its frames with three.js and wires
 * every control (scene, reset, 2D/3D, clean view, Basic/Expert panels, status bar, turns, pause
 * and replay, recording, pointer attract/repel, follow, trails). See docs/viewer.md.
 *
 * A test hook is exposed on `window.flocksim` (frames drawn, last status, parameters, paused,
 * replaying, last recording, and helpers to map world and screen points).
 *
 * @module main
 */

import "./style.css";

import { Connection, socketUrl } from "./connection.js";
import { CameraFeed } from "./camerafeed.js";
import { DetailController, LEVELS, detailModeOf } from "./detail.js";
import { FlappyPage } from "./flappy.js";
import { keepFromDropdown, shortcutFor, takesText } from "./keys.js";
import { COLORS, legendFor } from "./palette.js";
import { BasicPanel, ExpertPanel } from "./panels.js";
import { PointerControl } from "./pointer.js";
import { FLAG_TURNING, agentCentroid, meanHeading, selectedAgent, statusOf } from "./protocol.js";
import { CanvasRecorder, supportedContainers, videoDuration } from "./recorder.js";
import { ViewRenderer } from "./renderer.js";
import { ReplayStore } from "./replay.js";
import { restoringChanges } from "./schema.js";
import { ErrorBanner, StatusBar, byId, compilingText, el } from "./ui.js";

/** Replay speeds offered; the default is 0.25x. */
export const REPLAY_SPEEDS = [0.1, 0.25, 0.5, 1];
const DEFAULT_REPLAY_SPEED = 0.25;
/** A recording with "spontaneous turn" starts a turn this long after it starts [s of simulated time]. */
const FORCED_TURN_AFTER_S = 3;
/** Control messages the server answers with `params` or `error`. */
const ANSWERED = new Set(["set", "preset", "reset", "mode"]);

/**
 * @typedef {import("./protocol.js").Frame} Frame
 */

class App {
  constructor() {
    this.canvas = /** @type {HTMLCanvasElement} */ (byId("view"));
    this.view = new ViewRenderer(this.canvas);
    this.view.onFollowChange = (on) => byId("follow").setAttribute("aria-pressed", String(on));
    this.errors = new ErrorBanner();
    this.statusBar = new StatusBar();
    this.replays = new ReplayStore();
    this.recorder = new CanvasRecorder(this.canvas);
    /** level of detail: lowered by itself when renders are slow (detail.js) */
    this.detail = new DetailController(detailModeOf(window.location.search));
    /** the camera, sent to the server when the simulation has a level of detail */
    this.cameraFeed = new CameraFeed((message) => this.send(message));
    this.detail.onChange = () => this.applyDetail();

    /** hello message (presets, schemas, limits) */
    this.hello = null;
    /** last params message */
    this.current = null;
    this.paused = false;
    /** pause (true) or resume (false) asked for and not answered yet; null: none */
    this.pauseAsked = null;
    /** replay: playing back the buffer (paused only) */
    this.replaying = false;
    this.replayPosition = 0; // seconds from the first stored frame
    this.replaySpeed = DEFAULT_REPLAY_SPEED;
    /** the last frame received and not yet drawn */
    this.pending = null;
    /** the frame on screen (live or replayed) */
    this.shown = null;
    /** while paused: the newest state from the server (shown when the timeline is at its end) */
    this.pausedFrame = null;
    /** a change was sent while paused with a frame in flight: fetch one more after it */
    this.refetchWhenPaused = false;
    /** changes sent that the server has not answered yet (params or error) */
    this.unanswered = 0;
    this.framesDrawn = 0;
    this.framesReceived = 0;
    this.renders = []; // times of the renders in the last second [ms]
    this.renderCount = 0; // renders since the page loaded
    this.fps = 0;
    this.fpsShownAt = 0;
    this.lastTick = 0;
    this.replayDirty = false; // the replay position moved: draw it
    this.expertSnapshot = null;
    this.rebaseExpert = false;
    this.lastRecording = null;
    this.makingReplayVideo = false;
    /** a recording switched spontaneous turning on: switch it off again when it ends */
    this.restoreTurning = null;
    this.connected = false;
    /** the connection was lost and is not back yet */
    this.lost = false;
    /** reconnected: say so when the new simulation's parameters arrive */
    this.reconnected = false;
    /** the shipped scenes by name ({name, dim, n, modes, agent, look}) */
    this.scenes = new Map();
    this.compiling = false;

    const panelHost = {
      set: (changes) => this.send({ type: "set", changes }),
      error: (message) => {
        this.errors.show(message);
        this.refreshControls(true); // the refused value does not stay in its field
      },
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
    this.flappy = new FlappyPage(this.view, this.canvas, (msg) => this.send(msg));

    this.connection = new Connection(socketUrl(window.location), {
      onHello: (msg) => this.onHello(msg),
      onParams: (msg) => this.onParams(msg),
      onState: (msg) => this.onState(msg),
      onError: (message) => this.onError(message),
      onFrame: (frame) => this.onFrame(frame),
      onStatus: (open) => this.onConnection(open),
      onCompiling: (msg) => this.onCompiling(msg),
      onRocks: (buf) => this.flappy.onRocks(buf),
      onGame: (msg) => this.flappy.onGame(msg),
    });
    this.bindControls();
    this.buildLegend();
    this.connection.open();
    requestAnimationFrame((t) => this.tick(t));
  }

  /** Send a control message (errors are shown). */
  send(message) {
    const sent = this.connection.send(message);
    if (sent && ANSWERED.has(message.type)) this.unanswered++;
    return sent;
  }

  // ---- server messages -------------------------------------------------------------------

  onConnection(open) {
    const wasLost = this.lost;
    this.connected = open;
    byId("connection").className = open ? "online" : "offline";
    byId("connection").title = open ? "connected" : "connection lost: reconnecting";
    if (!open) {
      this.unanswered = 0;
      if (!this.lost) this.errors.show("connection to the flocksim server lost: reconnecting");
      this.lost = true;
      // nothing steps for this page now: no steps per second, and the mode says so
      this.statusBar.showDisconnected();
    } else if (wasLost) {
      this.lost = false;
      this.reconnected = true; // said once the new simulation's parameters arrive
    }
  }

  onHello(msg) {
    // a new connection (also after a reconnect): a new simulation, nothing to replay yet
    this.hello = msg;
    this.scenes = new Map(msg.presets.map((p) => [p.name, p]));
    this.current = null;
    this.replays = new ReplayStore();
    this.paused = false;
    this.pauseAsked = null;
    this.replaying = false;
    this.pausedFrame = null;
    const select = /** @type {HTMLSelectElement} */ (byId("preset"));
    select.replaceChildren(
      el("option", { value: "", text: "(custom parameters)", disabled: true }),
      ...msg.presets.map((p) =>
        el("option", { value: p.name, title: p.description, text: `${p.name} (${p.dim}D, ${p.n})` }),
      ),
    );
    if (!this.compiling) this.showOverlay(null);
  }

  /** A `compiling` message: say that the kernels compile, with progress, or stop saying it. */
  onCompiling(msg) {
    this.compiling = Boolean(msg.active);
    this.showOverlay(this.compiling ? compilingText(msg) : this.hello ? null : "Connecting to the flocksim server…");
  }

  /** Show a line over the view (null hides it). */
  showOverlay(text) {
    const overlay = byId("overlay");
    overlay.hidden = text === null;
    overlay.textContent = text ?? "";
  }

  onParams(msg) {
    const previous = this.current;
    this.current = msg;
    this.cameraFeed.reset();
    this.unanswered = Math.max(this.unanswered - 1, 0);
    const model = msg.model;
    const schema = this.hello?.schemas?.[model];
    if (!previous || previous.model !== model) {
      if (schema) {
        this.basic.build(schema, this.hello.limits?.max_agents ?? Infinity);
        this.expert.build(model, schema, Object.keys(this.hello.schemas));
      }
    }
    this.refreshControls(false);
    this.showScene(msg);
    const scene = this.sceneOf(msg);
    for (const dim of [2, 3]) {
      const button = /** @type {HTMLButtonElement} */ (byId(`mode-${dim}d`));
      button.setAttribute("aria-pressed", String(msg.dim === dim));
      const offered = scene.modes.includes(dim);
      button.disabled = !offered;
      button.title = offered
        ? `Switch to the ${dim}D variant of the scene`
        : `${msg.origin} is shown in ${scene.modes.map((d) => `${d}D`).join(" and ")} only`;
    }
    this.buildLegend(scene.agent);
    this.flappy.agents = pluralOf(scene.agent);
    if (this.reconnected) {
      this.reconnected = false;
      this.statusBar.showNotice(`reconnected: ${msg.preset ?? msg.origin ?? "the scene"} starts over`);
    }
    byId("pointer-toggle").hidden = msg.dim !== 3;
    byId("scene-description").textContent = msg.params.description ?? "";
    this.statusBar.showEngine(msg.engine);
    const turning = /** @type {HTMLInputElement} */ (byId("record-turn"));
    turning.disabled = !msg.params.turning;
    turning.title = msg.params.turning ? "" : "this model has no spontaneous turns";
    if (this.rebaseExpert || !this.expertSnapshot) {
      this.expertSnapshot = structuredClone(msg.params);
      this.rebaseExpert = false;
    }
    this.view.configure(msg.params, scene.look);
    this.flappy.onParams(msg);
    // replay buffers: a refilled flock starts its mode's buffer over; a mode whose simulation the
    // server no longer keeps loses its buffer; a resumed mode keeps its own
    if (msg.reset) this.replays.clear(msg.dim);
    for (const dim of [2, 3]) if (dim !== msg.dim && !(msg.parked ?? []).includes(dim)) this.replays.clear(dim);
    const modeChanged = previous && previous.dim !== msg.dim;
    if (modeChanged) this.replays.markGap(); // a resumed mode goes on from where it was left
    if (msg.reset || modeChanged) {
      this.stopReplay();
      this.pausedFrame = null;
      const buffer = this.buffer();
      this.replayPosition = buffer ? buffer.duration : 0;
    }
    if (msg.paused !== this.paused) this.applyPaused(msg.paused);
    else if (this.paused && (this.atLiveEnd() || msg.reset || modeChanged)) this.requestPausedFrame(); // show the change
    this.refreshPauseUi();
  }

  /**
   * How the scene a `params` message started from is shown: its modes, what its agents are
   * called and its 3D look (both modes, birds, sky for parameters that started from no scene).
   *
   * @param {{origin?: string|null, dim: number}} msg
   * @returns {{modes: number[], agent: string, look: string}}
   */
  sceneOf(msg) {
    const row = msg.origin ? this.scenes.get(msg.origin) : null;
    return {
      modes: row?.modes ?? [2, 3],
      agent: row?.agent ?? "bird",
      look: row?.look ?? "sky",
    };
  }

  /** The scene drop-down: the preset, or "NAME (modified)" when the parameters differ from it. */
  showScene(msg) {
    const select = /** @type {HTMLSelectElement} */ (byId("preset"));
    const custom = select.options[0];
    if (!custom) return;
    if (msg.preset && !msg.modified) {
      select.value = msg.preset;
    } else {
      custom.text = msg.origin ? `${msg.origin} (modified)` : "(custom parameters)";
      select.value = "";
    }
  }

  /** Every control shows what the simulation runs; `force` also rewrites the focused one. */
  refreshControls(force) {
    if (!this.current) return;
    this.basic.update(this.current.params, force);
    this.expert.update(this.current.params, force);
  }

  onError(message) {
    this.errors.show(message);
    if (this.unanswered > 0) {
      // a change was refused: put back what the simulation runs, also in the field just edited
      this.unanswered--;
      this.refreshControls(true);
      if (this.current) this.showScene(this.current);
    }
  }

  onState(msg) {
    this.applyPaused(msg.paused);
  }

  /**
   * Follow the server's paused flag: on pause, put the timeline at its end and fetch the state
   * the simulation stopped at; on resume, leave the replay.
   *
   * @param {boolean} paused
   */
  applyPaused(paused) {
    this.pauseAsked = null; // the server answered
    const wasPaused = this.paused;
    this.paused = paused;
    if (this.paused && !wasPaused) {
      this.replays.markGap(); // the flight resumes where it stopped
      const buffer = this.buffer();
      this.replayPosition = buffer ? buffer.duration : 0;
      this.pausedFrame = null;
      this.requestPausedFrame(); // show the state the simulation stopped at
    } else if (!this.paused && wasPaused) {
      this.pausedFrame = null;
      this.stopReplay();
      if (this.makingReplayVideo) this.recorder.stop();
    }
    this.refreshPauseUi();
  }

  onFrame(frame) {
    this.framesReceived++;
    if (this.paused) this.pausedFrame = frame;
    // while paused and looking back in the replay, a fresh state waits until the timeline's end
    if (!this.paused || this.atLiveEnd()) this.pending = frame;
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

  /** Whether the view shows the newest state: running, or paused with the timeline at its end. */
  atLiveEnd() {
    const buffer = this.buffer();
    return !this.paused || !buffer || buffer.length < 2 || this.replayPosition >= buffer.duration - 1e-6;
  }

  tick(now) {
    const gl = this.view.renderer.getContext();
    if (this.detail.gpuBusy(gl, now)) {
      // the GPU still draws the last render: queue nothing more (a frame received waits, and the
      // next render shows the newest camera and frame as soon as it is done)
      this.showFps(now);
      requestAnimationFrame((t) => this.tick(t));
      return;
    }
    const dt = this.lastTick ? Math.min((now - this.lastTick) / 1000, 0.25) : 0;
    this.lastTick = now;
    const buffer = this.buffer();
    const replayView = this.paused && buffer && buffer.length > 0;
    if (this.pending) {
      const frame = this.pending;
      this.pending = null;
      // while paused, a frame comes only in answer to a change (or was on its way): show it too
      this.showFrame(frame);
      if (!this.paused && this.current && frame.dim === this.current.dim) buffer?.offer(frame, now / 1000);
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
      const live = this.pausedFrame && this.replayPosition >= buffer.duration - 1e-6;
      const frame = live ? this.pausedFrame : buffer.frameAt(this.replayPosition, this.period());
      if (frame) this.showFrame(frame);
      this.refreshTimeline();
    }
    // a recording needs frames even when nothing changes (paused): the canvas stream only
    // captures what is drawn
    if (this.recorder.recording) this.view.dirty = true;
    const rendered = this.view.dirty;
    if (rendered) {
      this.view.render();
      this.renders.push(now);
      this.renderCount += 1;
    }
    if (rendered) {
      this.detail.rendered(gl, now, this.shown ? this.shown.nAgents : 0);
      if (this.detail.stride !== this.view.agentStride) this.applyDetail();
    }
    this.showFps(now);
    if (this.connected && this.current) {
      this.cameraFeed.tick(now, Boolean(this.current.params.detail?.enabled), () => this.view.cameraPose());
    }
    this.updateRecordingUi();
    // pull flow control: ask for the next frame once the last one is drawn
    if (!this.paused && !this.pending && this.pauseAsked !== true) this.connection.requestFrame();
    requestAnimationFrame((t) => this.tick(t));
  }

  /** Renders in the last second, shown in the status bar every half second. */
  showFps(now) {
    while (this.renders.length && now - this.renders[0] > 1000) this.renders.shift();
    this.fps = this.renders.length;
    if (now - this.fpsShownAt >= 500) {
      this.statusBar.showFps(this.fps);
      this.fpsShownAt = now;
    }
  }

  /** Draw at the level of detail chosen (from the frame on screen) and say so in the status bar. */
  applyDetail() {
    const { scale } = this.detail.current;
    this.view.setDetail(scale, this.detail.stride);
    if (this.shown) this.view.show(this.shown);
    this.statusBar.showDetail(this.detail.note);
    const select = /** @type {HTMLSelectElement} */ (byId("detail"));
    select.value = String(this.detail.mode);
    select.options[0].text = this.detail.mode === "auto" ? `auto (${this.detail.current.label})` : "auto";
  }

  /** Per-axis period of a periodic world (replay interpolation unwraps across it). */
  period() {
    const bounds = this.current?.params.world.bounds;
    return bounds && bounds.kind === "periodic" ? bounds.size : null;
  }

  /** Draw a frame and show its status values (no steps per second while paused: nothing steps). */
  showFrame(frame) {
    this.view.show(frame);
    this.flappy.afterShow();
    this.shown = frame;
    this.framesDrawn++;
    const status = statusOf(frame);
    if (this.paused) status.steps_per_second = 0;
    this.statusBar.showStatus(status, frame.time);
  }

  /** While paused, ask for one frame (after a change, so the view shows it). */
  requestPausedFrame() {
    if (this.connection.waiting) this.refetchWhenPaused = true;
    else this.connection.requestFrame();
  }

  // ---- pause and replay ------------------------------------------------------------------

  /**
   * Ask the server to pause or resume. The button and the status bar say so at once ("pausing…"),
   * and no more live frames are asked for meanwhile: the server answers after the step it is
   * running, which takes a second or more with 100 000 birds on a busy machine.
   */
  togglePause() {
    const pause = !(this.pauseAsked ?? this.paused);
    if (this.send({ type: pause ? "pause" : "resume" })) {
      this.pauseAsked = pause;
      this.refreshPauseUi();
    }
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
    const shownPaused = this.pauseAsked ?? this.paused; // asked for, before the server answers
    pauseButton.textContent = shownPaused ? "Resume" : "Pause";
    pauseButton.setAttribute("aria-pressed", String(this.paused));
    byId("replay-bar").hidden = !this.paused;
    byId("replay-play").textContent = this.replaying ? "Stop" : "Play";
    byId("make-replay-video").disabled = !this.paused || !buffer || buffer.length < 2 || this.recorder.recording;
    let mode = this.paused ? (this.replaying ? `replay ${this.replaySpeed}x` : "paused") : "live";
    if (this.pauseAsked !== null && this.pauseAsked !== this.paused) mode = this.pauseAsked ? "pausing…" : "resuming…";
    this.statusBar.showMode(mode);
    this.refreshTimeline();
  }

  refreshTimeline() {
    const buffer = this.buffer();
    const timeline = /** @type {HTMLInputElement} */ (byId("timeline"));
    const duration = buffer ? buffer.duration : 0;
    this.replayPosition = Math.min(Math.max(this.replayPosition, 0), duration);
    timeline.max = String(duration);
    timeline.value = String(this.replayPosition);
    timeline.disabled = !buffer || buffer.length < 2;
    const behind = Math.abs(this.replayPosition - duration) < 0.05 ? 0 : this.replayPosition - duration;
    byId("replay-time").textContent =
      `${behind.toFixed(1)} s (${buffer ? buffer.length : 0} frames, ${duration.toFixed(1)} s)`;
  }

  // ---- recording -------------------------------------------------------------------------

  /** Start recording the canvas live (auto-stop after the seconds input; optional spontaneous turn). */
  startRecording() {
    const seconds = Number(/** @type {HTMLInputElement} */ (byId("record-seconds")).value) || 0;
    const turnBox = /** @type {HTMLInputElement} */ (byId("record-turn"));
    if (!this.record({ seconds })) return;
    const turning = this.current?.params.turning;
    if (turnBox.checked && !turnBox.disabled && turning) {
      // spontaneous turning on for the recording (back off at its end), the first turn 3 s in
      if (!turning.enabled) {
        this.send({ type: "set", changes: { "turning.enabled": true } });
        this.restoreTurning = { origin: this.current.origin, dim: this.current.dim };
      }
      this.send({ type: "wave", delay: FORCED_TURN_AFTER_S });
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

  /**
   * Start the recorder and handle its result.
   *
   * @returns {boolean} whether it started
   */
  record({ seconds }) {
    let finished;
    try {
      const container = /** @type {HTMLSelectElement} */ (byId("record-format")).value;
      finished = this.recorder.start({ seconds, name: this.current?.preset ?? "flocksim", container });
    } catch (err) {
      this.errors.show(err.message);
      this.makingReplayVideo = false;
      return false;
    }
    this.view.dirty = true;
    finished
      .then((rec) => this.onRecording(rec))
      .catch((err) => this.errors.show(`recording failed: ${err.message ?? err}`))
      .finally(() => {
        this.endForcedTurning();
        this.makingReplayVideo = false;
        this.refreshPauseUi();
      });
    this.refreshPauseUi();
    return true;
  }

  /** Switch spontaneous turning off again if a recording switched it on (same scene and mode). */
  endForcedTurning() {
    const was = this.restoreTurning;
    this.restoreTurning = null;
    const cur = this.current;
    if (was && cur && cur.origin === was.origin && cur.dim === was.dim && cur.params.turning?.enabled) {
      this.send({ type: "set", changes: { "turning.enabled": false } });
    }
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
    button.textContent = recording ? `Stop ${this.recorder.elapsed.toFixed(1)} s` : "Record";
    button.classList.toggle("recording", recording);
    document.body.classList.toggle("is-recording", recording);
  }

  // ---- controls --------------------------------------------------------------------------

  switchMode(dim) {
    if (!this.current || this.current.dim === dim) return;
    this.rebaseExpert = true;
    this.send({ type: "mode", dim });
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

/** The plural of an agent noun ("fish", "people", "enemies", "birds"). */
function pluralOf(agent) {
  return { fish: "fish", person: "people", enemy: "enemies" }[agent] ?? `${agent}s`;
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
    /** Renders since the page loaded. */
    get renderCount() {
      return app.renderCount;
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
    get following() {
      return app.view.following;
    },
    /** Level of detail: mode ("auto" or a fixed level), level, resolution factor, bird stride,
     * birds drawn, the status bar's note and the median render time [ms]. */
    get detail() {
      const d = app.detail;
      const drawn = app.view.agents.geometry?.instanceCount ?? 0;
      return { mode: d.mode, level: d.level, scale: d.current.scale, stride: d.stride, drawn, note: d.note, renderMs: d.renderMs };
    },
    get compiling() {
      return app.compiling;
    },
    /** The view's canvas element. */
    canvas: app.canvas,
    /** Mean agent position of the frame on screen [world units]. */
    centroid: () => (app.shown ? agentCentroid(app.shown) : null),
    /** Position and unit heading of the selected agent (flag bit 0) on screen, null when none. */
    selected: () => (app.shown ? selectedAgent(app.shown) : null),
    /** Agents in a spontaneous turn (flag bit 2) in the frame on screen. */
    turningCount: () => (app.shown ? app.shown.flags.subarray(0, app.shown.nAgents).filter((f) => f & FLAG_TURNING).length : 0),
    /** Mean unit heading of the frame on screen (its length is the polarization). */
    meanHeading: () => (app.shown ? meanHeading(app.shown) : null),
    /** Client (CSS pixel) position of a world point. */
    screenAt: (point) => app.view.screenAt(point),
    /** World point under a client position (3D: on the plane through the centroid). */
    worldAt: (x, y) => app.view.worldAt(x, y, app.shown ? agentCentroid(app.shown) : null),
    /** What the flock adds to the picture: pixels that differ from the view without it, and their box. */
    foregroundPixels: () => app.view.foregroundPixels(),
    /** Flappy Boids: the last `game` message (score, distance, alive, target, chunks), null without a game. */
    get game() {
      return app.flappy.active ? app.flappy.status : null;
    },
    /** Flappy Boids: rock meshes on the page, those in view (drawn), and their triangles. */
    get rocks() {
      const rocks = app.flappy.rocks;
      return { meshes: rocks.meshes.size, drawn: rocks.drawn, triangles: rocks.triangles };
    },
    /** Pixels the rock meshes add to the picture (the view drawn without and with them). */
    rockPixels: () => app.flappy.rocks.pixels(app.view),
    /** Mean wall time [ms] of one render without and with the rock meshes (``renders`` pairs). */
    rockDrawCost: (renders = 10) => app.view.drawCost([app.flappy.rocks.group], renders),
    /** Send a raw control message. */
    send: (message) => app.send(message),
    /** The camera as the level of detail sees it (camerafeed.js): dim, position, direction, tanH, tanV. */
    cameraPose: () => app.view.cameraPose(),
  };
}

const app = new App();
window.flocksim = testHook(app);
