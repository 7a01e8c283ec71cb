/**
 * Pointer attract / repel (docs/viewer.md): holding the left button attracts the flock to the
 * point under the pointer, the right button repels it. In 2D the point lies on the z = 0 plane;
 * in 3D on the plane through the flock's centroid facing the camera, and because a plain drag
 * rotates the 3D view, the pointer acts only while Shift is held or the "pointer" toggle is on.
 *
 * Messages: `{"type": "pointer", "mode": "attract"|"repel", "x", "y", "z"}` on press and while
 * moving (at most 30 per second, plus a refresh every 200 ms while held so the 3D plane follows
 * the flock), `{"type": "pointer", "mode": "off"}` on release, cancel, or leaving the canvas.
 *
 * @module pointer
 */

/** Smallest time between two pointer messages [ms] (30 per second). */
export const POINTER_INTERVAL_MS = 1000 / 30;
/** While held still, the point is sent again this often [ms]. */
const REFRESH_MS = 200;

/**
 * @typedef {object} PointerHost
 * @property {() => number} dim 2 or 3
 * @property {() => boolean} toggled the "pointer" toggle (3D: plain drags act as the pointer)
 * @property {(clientX: number, clientY: number) => number[]|null} worldAt world point under a client position
 * @property {(message: object) => boolean} send
 * @property {(enabled: boolean) => void} setCameraControls enable/disable the camera's mouse controls
 * @property {(point: number[]|null, mode: string) => void} showMarker where the pointer acts (null: nowhere)
 */

export class PointerControl {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {PointerHost} host
   */
  constructor(canvas, host) {
    this.canvas = canvas;
    this.host = host;
    /** "attract" | "repel" | null */
    this.mode = null;
    this.pointerId = -1;
    this.client = { x: 0, y: 0 };
    this.lastSent = 0;
    this.pending = 0;
    this.refresh = 0;
    /** @type {number[]|null} last point sent [world units] */
    this.point = null;
    // capture phase on the parent: runs before the camera controls' listener on the canvas
    const parent = canvas.parentElement ?? canvas;
    parent.addEventListener("pointerdown", (e) => this._down(e), { capture: true });
    window.addEventListener("pointermove", (e) => this._move(e));
    window.addEventListener("pointerup", (e) => this._up(e));
    window.addEventListener("pointercancel", (e) => this._up(e));
    canvas.addEventListener("pointerleave", (e) => this._up(e));
    canvas.addEventListener("contextmenu", (e) => e.preventDefault());
    window.addEventListener("blur", () => this.release());
  }

  /** Whether attract or repel is in effect. */
  get active() {
    return this.mode !== null;
  }

  _down(e) {
    if (e.target !== this.canvas || this.active) return;
    if (e.button !== 0 && e.button !== 2) return;
    const is3d = this.host.dim() === 3;
    if (is3d && !e.shiftKey && !this.host.toggled()) return; // a plain drag rotates the 3D view
    e.preventDefault();
    e.stopPropagation();
    this.host.setCameraControls(false);
    this.mode = e.button === 0 ? "attract" : "repel";
    this.pointerId = e.pointerId;
    this.client = { x: e.clientX, y: e.clientY };
    this._send();
    this.refresh = setInterval(() => {
      if (performance.now() - this.lastSent >= REFRESH_MS) this._send();
    }, REFRESH_MS);
  }

  _move(e) {
    if (!this.active || e.pointerId !== this.pointerId) return;
    this.client = { x: e.clientX, y: e.clientY };
    const wait = POINTER_INTERVAL_MS - (performance.now() - this.lastSent);
    if (wait <= 0) this._send();
    else if (!this.pending) this.pending = setTimeout(() => this._send(), wait);
  }

  _up(e) {
    if (!this.active || (e.pointerId !== undefined && e.pointerId !== this.pointerId)) return;
    this.release();
  }

  /** Stop attracting / repelling (sends `off`). */
  release() {
    if (!this.active) return;
    clearTimeout(this.pending);
    clearInterval(this.refresh);
    this.pending = 0;
    this.mode = null;
    this.point = null;
    this.host.send({ type: "pointer", mode: "off" });
    this.host.showMarker(null, "off");
    this.host.setCameraControls(true);
  }

  _send() {
    clearTimeout(this.pending);
    this.pending = 0;
    if (!this.active) return;
    const p = this.host.worldAt(this.client.x, this.client.y);
    if (!p || !p.every(Number.isFinite)) return;
    this.lastSent = performance.now();
    this.point = p;
    const [x, y, z] = p;
    const msg = this.host.dim() === 3 ? { type: "pointer", mode: this.mode, x, y, z } : { type: "pointer", mode: this.mode, x, y };
    this.host.send(msg);
    this.host.showMarker(p, this.mode);
  }
}
