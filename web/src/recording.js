/**
 * The page's recordings: the canvas recorded live (optionally with a spontaneous turn forced a few
 * seconds in) or from the replay buffer, and the link to the video made (recorder.js records).
 *
 * @module recording
 */

import { AppPlayback } from "./playback.js";
import { videoDuration } from "./recorder.js";
import { byId } from "./ui.js";

/** A recording with "spontaneous turn" starts a turn this long after it starts [s of simulated time]. */
const FORCED_TURN_AFTER_S = 3;

/** Recording the view (a base of the page's application class, main.js). */
export class AppRecording extends AppPlayback {

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
}
