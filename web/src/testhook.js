/**
 * The page's test hook, `window.flocksim`: frames drawn, last status, parameters, paused,
 * replaying, last recording, and helpers to map world and screen points (tests/test_viewer*.py).
 *
 * @module testhook
 */

import { FLAG_TURNING, agentCentroid, meanHeading, readFrame, selectedAgent, statusOf } from "./protocol.js";

/**
 * The test hook (`window.flocksim`): live views of the page's state for browser tests.
 *
 * @param {App} app
 * @returns {object}
 */
export function testHook(app) {
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
     * birds drawn, the status bar's note, the Detail menu's text, the median render time [ms] and
     * the renders since the level changed. */
    get detail() {
      const d = app.detail;
      const drawn = app.view.agents.geometry?.instanceCount ?? 0;
      const select = /** @type {HTMLSelectElement} */ (document.getElementById("detail"));
      const menu = select?.selectedOptions[0]?.text ?? "";
      const { mode, level, stride, note, renderMs, rendersAtLevel } = d;
      return { mode, level, scale: d.current.scale, stride, drawn, note, menu, renderMs, rendersAtLevel };
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
    /**
     * Draw a frame the test made (its bytes, e.g. from Python's encode_frame), framed as a first
     * frame is (the camera keeps its direction), and return what its entries add to the picture
     * (foregroundPixels). Pause first, or the next live frame replaces it.
     */
    drawFrame: (bytes) => {
      const frame = readFrame(Uint8Array.from(bytes).buffer);
      app.view.needsFit = true;
      app.view.show(frame);
      return app.view.foregroundPixels();
    },
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
