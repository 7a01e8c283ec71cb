/**
 * flocksim viewer page: connects to the server's `/ws`, draws its frames with three.js and wires
 * every control (scene, reset, 2D/3D, clean view, Basic/Expert panels, status bar, turns, pause
 * and replay, recording, pointer attract/repel, follow, trails). See docs/viewer.md.
 *
 * A test hook is exposed on `window.flocksim` (frames drawn, last status, parameters, paused,
 * replaying, last recording, and helpers to map world and screen points).
 *
 * The application is one class built in parts: pause and replay (playback.js), recording
 * (recording.js), the controls' wiring (bindings.js); this module holds its connection to the
 * server and its drawing loop. The test hook is testhook.js.
 *
 * @module main
 */

import "./style.css";

import { AppControls } from "./bindings.js";
import { CameraFeed } from "./camerafeed.js";
import { Connection, socketUrl } from "./connection.js";
import { DetailController, detailModeOf } from "./detail.js";
import { FlappyPage } from "./flappy.js";
import { BasicPanel, ExpertPanel, ExpertRestore } from "./panels.js";
import { DEFAULT_REPLAY_SPEED } from "./playback.js";
import { PointerControl } from "./pointer.js";
import { agentCentroid, statusOf } from "./protocol.js";
import { CanvasRecorder } from "./recorder.js";
import { ViewRenderer } from "./renderer.js";
import { ReplayStore } from "./replay.js";
import { testHook } from "./testhook.js";
import { ErrorBanner, StatusBar, byId, compilingText, el } from "./ui.js";

export { REPLAY_SPEEDS } from "./playback.js";

/** Control messages the server answers with `params` or `error`. */
const ANSWERED = new Set(["set", "preset", "reset", "mode"]);

/**
 * @typedef {import("./protocol.js").Frame} Frame
 */

class App extends AppControls {
  constructor() {
    super();
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
    /** what leaving Expert restores, per mode */
    this.expertRestore = new ExpertRestore();
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
    // the scene this connection starts on, while its first simulation is built (a cold compile)
    if (msg.scene?.name) this.showScene({ preset: msg.scene.name, origin: msg.scene.name, modified: msg.scene.modified });
    this.buildLegend(this.sceneOf({ origin: msg.scene?.name, dim: 0 }).agent);
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
    this.expertOnParams(msg, previous);
    this.view.configure(msg.params, scene.look);
    /** @type {HTMLInputElement} */ (byId("outline")).checked = this.view.outline.group.visible;
    this.flappy.onParams(msg);
    // replay buffers: a refilled flock starts its mode's buffer over; a mode whose simulation the
    // server no longer keeps loses its buffer; a resumed mode keeps its own
    if (msg.reset) this.replays.clear(msg.dim);
    for (const dim of [2, 3]) if (dim !== msg.dim && !(msg.parked ?? []).includes(dim)) this.replays.clear(dim);
    const modeChanged = previous && previous.dim !== msg.dim;
    if (modeChanged) this.replays.markGap(); // a resumed mode goes on from where it was left
    if (msg.reset || modeChanged) {
      this.detail.restart(performance.now()); // a new flock: the full picture first
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
      if (this.detail.stride !== this.view.agentStride || this.detail.n !== this.detailShownFor) this.applyDetail();
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
    select.options[0].text = this.detail.autoLabel;
    this.detail.fixedLabels.forEach((text, k) => (select.options[k + 1].text = text));
    this.detailShownFor = this.detail.n;
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
}

/** The plural of an agent noun ("fish", "people", "enemies", "birds"). */
function pluralOf(agent) {
  return { fish: "fish", person: "people", enemy: "enemies" }[agent] ?? `${agent}s`;
}

const app = new App();
window.flocksim = testHook(app);
