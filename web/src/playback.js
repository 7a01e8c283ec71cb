/**
 * The page's pause and replay: the server's paused flag followed, the replay buffer of the mode
 * shown played back at a chosen speed, the timeline and the pause button (docs/viewer.md).
 *
 * :class:`AppPlayback` is the base of the page's application class (main.js), whose constructor
 * sets up the state these methods use.
 *
 * @module playback
 */

import { byId } from "./ui.js";

/** Replay speeds offered; the default is 0.25x. */
export const REPLAY_SPEEDS = [0.1, 0.25, 0.5, 1];
export const DEFAULT_REPLAY_SPEED = 0.25;

/** Pause, replay and the timeline of the page (main.js). */
export class AppPlayback {
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


  /** The replay buffer of the current mode (null before the first params). */
  buffer() {
    return this.current ? this.replays.get(this.current.dim) : null;
  }

  /** Whether the view shows the newest state: running, or paused with the timeline at its end. */
  atLiveEnd() {
    const buffer = this.buffer();
    return !this.paused || !buffer || buffer.length < 2 || this.replayPosition >= buffer.duration - 1e-6;
  }

  /** Per-axis period of a periodic world (replay interpolation unwraps across it). */
  period() {
    const bounds = this.current?.params.world.bounds;
    return bounds && bounds.kind === "periodic" ? bounds.size : null;
  }

  /** While paused, ask for one frame (after a change, so the view shows it). */
  requestPausedFrame() {
    if (this.connection.waiting) this.refetchWhenPaused = true;
    else this.connection.requestFrame();
  }


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
}
