/**
 * The view's camera: where it stands and what it frames. 2D worlds use an orthographic camera
 * fitted to the world; 3D worlds a perspective camera that frames the flock. "Fit" shows the
 * whole world (an open world: the flock). "Follow" keeps the flock in the middle of the view, and
 * in 3D framed: the camera distance eases toward the distance that fits the flock, times the zoom
 * the user chose. Also the mapping between screen and world points.
 *
 * :class:`ViewCamera` is the base of the renderer's class (renderer.js), which sets up the
 * cameras, the controls and the scene these methods use.
 *
 * @module viewcamera
 */

import * as THREE from "three";

import { boxCorners, ellipsoidPoints, fitDistance } from "./camera.js";
import { frameBox, maxExtent } from "./viewsizes.js";

/** Direction from the flock's centre to a fresh 3D camera: in front, a little to the side and
 * below, looking slightly up at the flock against the sky. */
const VIEW_DIRECTION = new THREE.Vector3(0.35, -0.3, 1).normalize();

/** Under water the camera looks a little down at the school, the seabed and coral below it. */
const SEA_VIEW_DIRECTION = new THREE.Vector3(0.35, 0.4, 1).normalize();

export const FOV_DEG = 45;

/** Open worlds fit the flock's box enlarged by this factor (the flock spreads and drifts). */
const OPEN_WORLD_MARGIN = 1.6;

/** The flock fills this share of the view when framed (3D), leaving a margin. */
const FLOCK_FILL = 0.8;

/** Flocks of up to this many birds are framed whole. */
const WHOLE_FLOCK_MAX_N = 2_000;

/** Share of a larger flock's birds a framing keeps in view (stragglers may leave it). */
const FLOCK_QUANTILE = 0.97;

/** The framed 3D camera stands at least this many flock radii (95 % of the birds within one)
 * from the flock's centre: closer, the near birds are drawn huge and overflow the view. */
const MIN_DISTANCE_RADII = 3.2;

/** Per FOLLOW_FRAME_S of simulated time, the share of the way the followed camera moves toward
 * the flock. */
const FOLLOW_RATE = 0.12;

/** Per FOLLOW_FRAME_S of simulated time, the share of the way the followed 3D camera's distance
 * moves toward its goal. */
const FOLLOW_ZOOM_RATE = 0.06;

/** The simulated time the follow rates are given per [s]: one frame at 60 frames per second. */
const FOLLOW_FRAME_S = 1 / 60;


/**
 * Share of the way the followed camera moves toward its goal between two frames `dt` of
 * simulated time apart: `rate` per FOLLOW_FRAME_S, compounded, so that the camera keeps up with
 * the flock however few frames the page draws (a busy or software renderer draws a frame every
 * half second or less: per frame, the camera fell behind a flying flock until it left the view).
 * `dt` 0 or unknown (paused, a new flock): `rate`; at most a second's worth.
 *
 * @param {number} rate share per FOLLOW_FRAME_S, 0..1
 * @param {number} dt simulated time since the last frame [s] (its size: replay may go back)
 * @returns {number} 0..1
 */
export function followShare(rate, dt) {
  const steps = Math.min(Math.abs(dt), 1) / FOLLOW_FRAME_S;
  return steps > 0 && Number.isFinite(steps) ? 1 - (1 - rate) ** steps : rate;
}

/** Camera placement, framing and following, and the screen <-> world mapping of the view. */
export class ViewCamera {
  /** From the target toward a fresh 3D camera: below the flock in the sky, above the school under water. */
  _viewDirection() {
    return this.look === "sea" ? SEA_VIEW_DIRECTION : VIEW_DIRECTION;
  }

  /**
   * Turn following the flock on or off.
   *
   * @param {boolean} on
   * @param {boolean} [frameNow] on: frame the flock at once (else the camera eases toward it)
   */
  setFollow(on, frameNow = true) {
    const changed = on !== this.following;
    this.following = on;
    if (on) {
      this.followZoom = 1;
      if (frameNow && this.flock) this.frameFlock();
    }
    if (changed) this.onFollowChange(on);
  }

  /** Fit the camera to the world (an open world: to the flock); in a bounded 3D world this
   * turns Follow off, or it would pull the camera back to the flock. */
  fit() {
    this.needsFit = false;
    if (!this.fitBox) {
      if (!this.flock) {
        this.needsFit = true;
        return;
      }
      this.followZoom = 1;
      if (this.dim === 3) this.frameFlock();
      else this._fit2d(frameBox(this.frame), OPEN_WORLD_MARGIN);
      return;
    }
    if (this.dim === 2) {
      this._fit2d(this.fitBox, 1);
      return;
    }
    if (this.following) this.setFollow(false);
    const c = this.fitBox.min.map((lo, a) => (lo + this.fitBox.max[a]) / 2);
    const points =
      this.bounds?.kind === "ellipsoid" ? ellipsoidPoints(this.bounds.size) : boxCorners(this.fitBox.min, this.fitBox.max, c);
    this._place(c, fitDistance(points, this._basis(), ...this._tans()) * 1.04);
  }

  /** Put the flock in the middle of the view; 3D: at the distance that frames it (times the
   * user's zoom factor while following). */
  frameFlock() {
    if (!this.flock) return;
    this.needsFit = false;
    if (this.dim === 2) {
      const { centre } = this.flock;
      this.ortho.position.set(centre[0], centre[1], 500);
      this.controls.target.set(centre[0], centre[1], 0);
      if (!this.fitBox) this._fit2d(frameBox(this.frame), OPEN_WORLD_MARGIN);
      this.controls.update();
      this.dirty = true;
      return;
    }
    this._place(this.flock.centre, this._flockDistance() * this.followZoom);
  }

  /** Follow: ease the target (and the camera with it) toward the flock; 3D: ease the distance. */
  _follow() {
    if (!this.flock) return;
    const c = new THREE.Vector3(...this.flock.centre);
    if (this.dim === 2) c.z = 0;
    const dt = (this.frame?.time ?? 0) - (this.followTime ?? this.frame?.time ?? 0);
    this.followTime = this.frame?.time;
    const delta = c.sub(this.controls.target).multiplyScalar(followShare(FOLLOW_RATE, dt));
    this.controls.target.add(delta);
    this.camera.position.add(delta);
    if (this.dim === 3 && !this.userMoving) {
      const offset = this.camera.position.clone().sub(this.controls.target);
      const now = offset.length();
      const goal = this._flockDistance() * this.followZoom;
      if (now > 0 && goal > 0) {
        offset.multiplyScalar((now + (goal - now) * followShare(FOLLOW_ZOOM_RATE, dt)) / now);
        this.camera.position.copy(this.controls.target).add(offset);
      }
    }
    this.controls.update();
  }

  /** The camera distance that frames the flock's sample (FLOCK_FILL of the view). */
  _flockDistance() {
    // a small flock is framed whole (a few stragglers cut by the frame's edge are a flaw in a
    // picture of 500 birds); in a large one stragglers may leave the view
    const quantile = (this.frame?.nAgents ?? Infinity) <= WHOLE_FLOCK_MAX_N ? 1 : FLOCK_QUANTILE;
    const d = fitDistance(this.flock.points, this._basis(), ...this._tans(), quantile) / FLOCK_FILL;
    return Math.max(d, (this.agentSize || 1) * 20, MIN_DISTANCE_RADII * this.flock.radius);
  }

  /** The 3D camera's axes (world): right, up, back (from the target toward the camera). */
  _basis() {
    const back = this.perspective.position.clone().sub(this.controls.target);
    if (back.lengthSq() === 0) back.copy(this._viewDirection());
    back.normalize();
    const right = new THREE.Vector3(0, 1, 0).cross(back);
    if (right.lengthSq() < 1e-9) right.set(1, 0, 0);
    right.normalize();
    const up = back.clone().cross(right).normalize();
    return { right: right.toArray(), up: up.toArray(), back: back.toArray() };
  }

  /**
   * Where the camera is and where it looks, for the simulation's level of detail (camerafeed.js):
   * 3D, the perspective camera's position and view direction; 2D, the centre of the view.
   *
   * @returns {{dim: number, position: number[], direction: number[]|null, tanH: number, tanV: number, scale: number}}
   */
  cameraPose() {
    const [tanH, tanV] = this._tans();
    if (this.dim !== 3) {
      const p = this.ortho.position;
      return { dim: this.dim, position: [p.x, p.y], direction: null, tanH, tanV, scale: this.halfHeight };
    }
    const position = this.perspective.position;
    const direction = this.controls.target.clone().sub(position);
    const scale = direction.length();
    if (scale < 1e-12) this.perspective.getWorldDirection(direction);
    return { dim: 3, position: position.toArray(), direction: direction.toArray(), tanH, tanV, scale };
  }

  /** tan(horizontal fov / 2), tan(vertical fov / 2) of the perspective camera. */
  _tans() {
    const tanV = Math.tan(THREE.MathUtils.degToRad(FOV_DEG / 2));
    return [tanV * this._aspect(), tanV];
  }

  /** 3D: look at `centre` from `distance` along the current view direction. */
  _place(centre, distance) {
    const target = new THREE.Vector3(...centre);
    const back = new THREE.Vector3(...this._basis().back);
    const d = Math.max(distance, 1e-6);
    this.perspective.position.copy(target).addScaledVector(back, d);
    this.controls.target.copy(target);
    this.controls.maxDistance = d * 1000;
    this.controls.minDistance = d / 500;
    this._updateDepthRange();
    this.controls.update();
    this.dirty = true;
  }

  /** 2D: show a box (with a margin factor) in the orthographic camera. */
  _fit2d(box, margin) {
    const c = box.min.map((lo, a) => (lo + box.max[a]) / 2);
    const aspect = this._aspect();
    const hw = (box.max[0] - box.min[0]) / 2 || 1;
    const hh = (box.max[1] - box.min[1]) / 2 || 1;
    this.halfHeight = Math.max(hh, hw / aspect) * 1.06 * margin;
    this.ortho.position.set(c[0], c[1], 500);
    this.ortho.zoom = 1;
    this.ortho.near = 0.1;
    this.ortho.far = 1000;
    this._updateOrtho();
    this.controls.target.set(c[0], c[1], 0);
    this.controls.update();
    this.dirty = true;
  }

  /** Near and far planes around the current camera distance. */
  _updateDepthRange() {
    const d = this.perspective.position.distanceTo(this.controls.target);
    const extent = this.fitBox ? maxExtent(this.fitBox) : (this.flock?.radius ?? 1) * 4;
    this.perspective.near = Math.max(d / 500, 1e-6);
    this.perspective.far = d * 4 + extent * 4;
    this.perspective.updateProjectionMatrix();
  }

  /** Match the drawing buffer to the canvas's displayed size. */
  resize() {
    const w = Math.max(1, this.canvas.clientWidth);
    const h = Math.max(1, this.canvas.clientHeight);
    this.renderer.setSize(w, h, false);
    this.perspective.aspect = w / h;
    this.perspective.updateProjectionMatrix();
    this.shared.uPixelSize.value = (2 * Math.tan(THREE.MathUtils.degToRad(FOV_DEG / 2))) / h;
    this.shared.uViewPx.value = h;
    this._updateOrtho();
    this.dirty = true;
  }

  /**
   * The world point under a client (CSS pixel) position: on the z = 0 plane in 2D; in 3D on the
   * plane through `anchor` facing the camera.
   *
   * @param {number} clientX
   * @param {number} clientY
   * @param {number[]|null} anchor [x, y, z] (3D: the flock's centroid) [world units]
   * @returns {number[]|null} [x, y, z], null when the ray misses the plane
   */
  worldAt(clientX, clientY, anchor) {
    const rect = this.canvas.getBoundingClientRect();
    const ndc = new THREE.Vector2(
      ((clientX - rect.left) / rect.width) * 2 - 1,
      -((clientY - rect.top) / rect.height) * 2 + 1,
    );
    const ray = new THREE.Raycaster();
    ray.setFromCamera(ndc, this.camera);
    const plane = new THREE.Plane();
    if (this.dim === 2) {
      plane.set(new THREE.Vector3(0, 0, 1), 0);
    } else {
      const normal = new THREE.Vector3();
      this.camera.getWorldDirection(normal);
      plane.setFromNormalAndCoplanarPoint(normal, new THREE.Vector3(...(anchor ?? this.controls.target.toArray())));
    }
    const hit = ray.ray.intersectPlane(plane, new THREE.Vector3());
    return hit ? [hit.x, hit.y, this.dim === 2 ? 0 : hit.z] : null;
  }

  /**
   * The client (CSS pixel) position of a world point.
   *
   * @param {number[]} point [x, y, z] [world units]
   * @returns {{x: number, y: number}}
   */
  screenAt(point) {
    this.camera.updateMatrixWorld();
    const v = new THREE.Vector3(point[0], point[1], point[2] ?? 0).project(this.camera);
    const rect = this.canvas.getBoundingClientRect();
    return { x: rect.left + ((v.x + 1) / 2) * rect.width, y: rect.top + ((1 - v.y) / 2) * rect.height };
  }

  _aspect() {
    return Math.max(1, this.canvas.clientWidth) / Math.max(1, this.canvas.clientHeight);
  }

  _updateOrtho() {
    const aspect = this._aspect();
    this.ortho.top = this.halfHeight;
    this.ortho.bottom = -this.halfHeight;
    this.ortho.left = -this.halfHeight * aspect;
    this.ortho.right = this.halfHeight * aspect;
    this.ortho.updateProjectionMatrix();
  }
}
