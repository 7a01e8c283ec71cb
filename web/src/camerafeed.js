/**
 * The camera, reported to the server for the simulation's level of detail (the `detail`
 * parameters: birds far from the camera or outside its view update their steering less often).
 * The page sends a `view` message (docs/protocol.md) when the camera has moved, at most
 * MAX_PER_S times a second, and again after each new parameter set, only while `detail.enabled`.
 *
 * @module camerafeed
 */

/** Most `view` messages a second. */
export const MAX_PER_S = 5;
/** A camera that moved less than this share of its distance to the target is not reported. */
const MOVED_SHARE = 1e-3;
/** A view direction that turned less than this is not reported [rad]. */
const TURNED_RAD = 1e-3;

/**
 * The full angle of the cone around the view direction that holds the whole picture: the
 * half-angle reaches the picture's corners [deg].
 *
 * @param {number} tanH tan(horizontal field of view / 2)
 * @param {number} tanV tan(vertical field of view / 2)
 * @returns {number}
 */
export function coneDegrees(tanH, tanV) {
  return (2 * Math.atan(Math.hypot(tanH, tanV)) * 180) / Math.PI;
}

/**
 * The `view` message of a camera: 3D, its position, unit view direction and the cone that holds
 * the picture; 2D (seen from above), the centre of the view and no cone.
 *
 * @param {{dim: number, position: number[], direction: number[]|null, tanH: number, tanV: number}} pose
 * @returns {Record<string, number|string>}
 */
export function viewMessage({ dim, position, direction, tanH, tanV }) {
  const message = { type: "view", x: position[0], y: position[1] };
  if (dim !== 3) return message;
  const length = Math.hypot(...direction);
  return {
    ...message,
    z: position[2],
    dx: direction[0] / length,
    dy: direction[1] / length,
    dz: direction[2] / length,
    fov_deg: Math.min(coneDegrees(tanH, tanV), 360),
  };
}

/**
 * Whether two `view` messages differ enough to send the new one: the camera moved by more than
 * MOVED_SHARE of `scale`, turned by more than TURNED_RAD or the cone changed.
 *
 * @param {Record<string, number>} a
 * @param {Record<string, number>} b
 * @param {number} scale the camera's distance to what it looks at [world units]
 * @returns {boolean}
 */
export function viewChanged(a, b, scale) {
  const moved = Math.hypot(a.x - b.x, a.y - b.y, (a.z ?? 0) - (b.z ?? 0));
  if (moved > MOVED_SHARE * Math.max(scale, 1e-9)) return true;
  if ((a.fov_deg ?? 0) !== (b.fov_deg ?? 0)) return true;
  if (a.dx === undefined || b.dx === undefined) return (a.dx === undefined) !== (b.dx === undefined);
  const cos = a.dx * b.dx + a.dy * b.dy + a.dz * b.dz;
  return Math.acos(Math.min(Math.max(cos, -1), 1)) > TURNED_RAD;
}

/** Decides when to send the camera: on a change, at most MAX_PER_S times a second. */
export class CameraFeed {
  /** @param {(message: object) => boolean} send */
  constructor(send) {
    this.send = send;
    /** @type {Record<string, number>|null} the last message sent (null: send the next one) */
    this.last = null;
    this.sentAt = -Infinity;
  }

  /** New parameters (another simulation, maybe another focus): report the camera again. */
  reset() {
    this.last = null;
  }

  /**
   * Called once per animation frame.
   *
   * @param {number} now [ms]
   * @param {boolean} enabled whether the simulation has a level of detail
   * @param {() => {dim: number, position: number[], direction: number[]|null, tanH: number, tanV: number, scale: number}} pose
   * @returns {boolean} whether a message was sent
   */
  tick(now, enabled, pose) {
    if (!enabled) {
      this.last = null;
      return false;
    }
    if (now - this.sentAt < 1000 / MAX_PER_S) return false;
    const p = pose();
    const message = viewMessage(p);
    if (this.last && !viewChanged(this.last, message, p.scale)) return false;
    if (!this.send(message)) return false;
    this.last = message;
    this.sentAt = now;
    return true;
  }
}
