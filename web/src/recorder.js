/**
 * Recording the canvas to a video file with MediaRecorder on `canvas.captureStream()`:
 * MP4 (H.264, avc1) where the browser can write it, else WebM (VP9, then VP8).
 *
 * @module recorder
 */

/** Container/codec choices, best first. */
export const MIME_CANDIDATES = [
  "video/mp4;codecs=avc1",
  "video/mp4",
  "video/webm;codecs=vp9",
  "video/webm;codecs=vp8",
  "video/webm",
];

/** Frames per second requested from the canvas stream. */
export const CAPTURE_FPS = 30;
/** MediaRecorder hands over a chunk this often [ms]. */
export const TIMESLICE_MS = 100;


/**
 * The first container/codec MediaRecorder supports here.
 *
 * @param {"auto"|"mp4"|"webm"} [container] "auto": MP4 where supported, else WebM
 * @returns {string} a MIME type, "" when none is supported (the browser picks)
 */
export function pickMimeType(container = "auto") {
  if (typeof MediaRecorder === "undefined") return "";
  const wanted = container === "auto" ? MIME_CANDIDATES : MIME_CANDIDATES.filter((t) => t.includes(container));
  return wanted.find((t) => MediaRecorder.isTypeSupported(t)) ?? "";
}

/**
 * Containers this browser can record.
 *
 * @returns {string[]} a subset of ["mp4", "webm"]
 */
export function supportedContainers() {
  return ["mp4", "webm"].filter((c) => pickMimeType(/** @type {"mp4"|"webm"} */ (c)) !== "");
}

/**
 * A finished recording.
 *
 * @typedef {object} Recording
 * @property {Blob} blob
 * @property {string} type MIME type of the blob
 * @property {number} size bytes
 * @property {number} seconds wall-clock time recorded [s]
 * @property {string} url object URL of the blob (for the download link)
 * @property {string} filename suggested file name
 */

export class CanvasRecorder {
  /**
   * @param {HTMLCanvasElement} canvas
   */
  constructor(canvas) {
    this.canvas = canvas;
    /** @type {MediaRecorder|null} */
    this.recorder = null;
    this.chunks = [];
    this.startedAt = 0;
    this.stopTimer = 0;
    /** how far the video's clock lags behind start() [ms] (Infinity until a chunk says) */
    this.lagMs = Infinity;
    /** @type {Promise<Recording>|null} */
    this.finished = null;
  }

  /** Whether a recording is running. */
  get recording() {
    return this.recorder !== null && this.recorder.state !== "inactive";
  }

  /** Seconds since the recording started (0 when idle). */
  get elapsed() {
    return this.recording ? (performance.now() - this.startedAt) / 1000 : 0;
  }

  /**
   * Start recording.
   *
   * @param {{seconds?: number, name?: string, container?: "auto"|"mp4"|"webm"}} [options]
   *   seconds: stop by itself after this long (0 or absent: until stop()); name: file name stem;
   *   container: file format ("auto": MP4 where supported, else WebM)
   * @returns {Promise<Recording>} resolves when the recording stops
   */
  start({ seconds = 0, name = "flocksim", container = "auto" } = {}) {
    if (this.recording) throw new Error("already recording");
    if (typeof MediaRecorder === "undefined" || !this.canvas.captureStream) {
      throw new Error("this browser cannot record a canvas (no MediaRecorder)");
    }
    const mimeType = pickMimeType(container);
    if (container !== "auto" && !mimeType) throw new Error(`this browser cannot record ${container} video`);
    const stream = this.canvas.captureStream(CAPTURE_FPS);
    const recorder = new MediaRecorder(stream, mimeType ? { mimeType, videoBitsPerSecond: 8_000_000 } : {});
    this.recorder = recorder;
    this.chunks = [];
    // A timed recording stops when the video holds its length. The video's clock starts with its
    // first frame, 0.2 to 0.5 s after start() (more under load): a wall-clock timer of the
    // asked length gave 2.63 s of video for 3 s. Each chunk's timecode is that clock; its
    // arrival minus its timecode is the clock's lag behind start() (plus the chunk's delivery
    // delay, hence the smallest seen), and the stop waits for it.
    let firstTimecode = null;
    recorder.ondataavailable = (e) => {
      if (e.data && e.data.size > 0) this.chunks.push(e.data);
      if (!(seconds > 0) || !Number.isFinite(e.timecode)) return;
      firstTimecode ??= e.timecode;
      const now = performance.now();
      const lag = now - this.startedAt - (e.timecode - firstTimecode);
      if (lag >= this.lagMs) return;
      this.lagMs = lag;
      clearTimeout(this.stopTimer);
      // (a chunk is handed over at the next timeslice tick: half a tick is the mean wait)
      const end = this.startedAt + lag - TIMESLICE_MS / 2 + seconds * 1000 + 1000 / CAPTURE_FPS;
      this.stopTimer = setTimeout(() => this.stop(), Math.max(end - now, 0));
    };
    this.finished = new Promise((resolve, reject) => {
      recorder.onerror = (e) => reject(e.error ?? new Error("recording failed"));
      recorder.onstop = () => {
        clearTimeout(this.stopTimer);
        for (const track of stream.getTracks()) track.stop();
        const type = (recorder.mimeType || mimeType || "video/webm").split(";")[0];
        const blob = new Blob(this.chunks, { type });
        const ext = type.includes("mp4") ? "mp4" : "webm";
        const stamp = new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19);
        resolve({
          blob,
          type: blob.type,
          size: blob.size,
          seconds: (performance.now() - this.startedAt) / 1000,
          url: URL.createObjectURL(blob),
          filename: `${name}-${stamp}.${ext}`,
        });
        this.recorder = null;
      };
    });
    this.startedAt = performance.now();
    this.lagMs = Infinity;
    recorder.start(TIMESLICE_MS); // small chunks: a crash loses little, the video's clock is read often
    // where the browser gives no chunk timecodes, the wall clock alone decides
    if (seconds > 0) this.stopTimer = setTimeout(() => this.stop(), seconds * 1000);
    return this.finished;
  }

  /** Stop recording (the promise from start() then resolves). */
  stop() {
    clearTimeout(this.stopTimer);
    if (this.recording) this.recorder.stop();
  }
}

/**
 * Playing time of a recorded video [s], read by loading it in a <video> element. MediaRecorder's
 * WebM files carry no duration in their header, so the element reports Infinity until it is
 * seeked past the end; this seeks there and reads the real duration.
 *
 * @param {Blob} blob
 * @param {number} [timeoutMs]
 * @returns {Promise<number>} NaN when the browser cannot read it in time
 */
export function videoDuration(blob, timeoutMs = 10000) {
  return new Promise((resolve) => {
    const video = document.createElement("video");
    const url = URL.createObjectURL(blob);
    let done = false;
    const finish = (value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      video.removeAttribute("src");
      video.load();
      URL.revokeObjectURL(url);
      resolve(value);
    };
    const timer = setTimeout(() => finish(NaN), timeoutMs);
    video.preload = "metadata";
    video.muted = true;
    video.onloadedmetadata = () => {
      if (Number.isFinite(video.duration)) {
        finish(video.duration);
        return;
      }
      video.ontimeupdate = () => {
        if (Number.isFinite(video.duration)) finish(video.duration);
      };
      video.currentTime = 1e7; // past the end: the browser scans the file and learns its length
    };
    video.ondurationchange = () => {
      if (Number.isFinite(video.duration) && video.duration > 0 && video.ontimeupdate) finish(video.duration);
    };
    video.onerror = () => finish(NaN);
    video.src = url;
  });
}
