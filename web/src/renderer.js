/**
 * The view: a three.js scene drawn into the page's canvas. 2D worlds use an orthographic camera
 * fitted to the world (wheel zooms toward the cursor, middle button pans); 3D worlds a perspective
 * camera with OrbitControls (drag rotates, wheel or pinch zooms, right button pans).
 *
 * Agents, predators and seek targets are instanced layers fed from each frame (see layers.js);
 * obstacles and the world's outline are built from the parameters.
 *
 * @module renderer
 */

import * as THREE from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";

import { BoundsOutline, COLORS, EntityLayer, ObstacleLayer, baseGeometry } from "./layers.js";
import { FLAG_PREDATOR, FLAG_TARGET, extraRange } from "./protocol.js";

/** Direction from the flock's centre to a fresh 3D camera (slightly above, in front). */
const VIEW_DIRECTION = new THREE.Vector3(0.25, 0.45, 1).normalize();
const FOV_DEG = 45;
/** Open worlds fit the flock's box enlarged by this factor (the flock spreads and drifts). */
const OPEN_WORLD_MARGIN = 1.6;
/** 3D agents are drawn this much larger than 2D ones (the view is farther away). */
const SIZE_3D = 1.6;

/**
 * @typedef {import("./protocol.js").Frame} Frame
 * @typedef {{min: number[], max: number[]}} Box3 axis-aligned box [world units], 3 values each
 */

export class ViewRenderer {
  /**
   * @param {HTMLCanvasElement} canvas
   */
  constructor(canvas) {
    this.canvas = canvas;
    this.renderer = new THREE.WebGLRenderer({ canvas, antialias: true });
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
    this.renderer.setClearColor(COLORS.background, 1);
    this.scene = new THREE.Scene();
    this.scene.add(new THREE.AmbientLight(0xffffff, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 2.2);
    sun.position.set(0.4, 1, 0.6);
    this.scene.add(sun);

    this.agents = new EntityLayer(baseGeometry("arrow"), { color: COLORS.agent, useFlags: true });
    this.predators = new EntityLayer(baseGeometry("arrow"), { color: COLORS.predator, sizeFactor: 2.6 });
    this.targets = new EntityLayer(baseGeometry("diamond"), { color: COLORS.target, sizeFactor: 1.6 });
    this.obstacles = new ObstacleLayer();
    this.outline = new BoundsOutline();
    for (const o of [this.outline.group, this.obstacles.group, this.agents.mesh, this.targets.mesh]) this.scene.add(o);
    this.scene.add(this.predators.mesh);
    this.marker = new THREE.Mesh(
      new THREE.SphereGeometry(1, 16, 12),
      new THREE.MeshBasicMaterial({ color: COLORS.attract, transparent: true, opacity: 0.45, depthWrite: false }),
    );
    this.marker.visible = false;
    this.scene.add(this.marker);

    this.ortho = new THREE.OrthographicCamera(-1, 1, 1, -1, 0.1, 1000);
    this.perspective = new THREE.PerspectiveCamera(FOV_DEG, 1, 0.1, 1000);
    /** @type {THREE.Camera} */
    this.camera = this.ortho;
    this.controls = null;
    this.dim = 0;
    this.worldKey = "";
    /** @type {{kind: string, size: number[]}|null} */
    this.bounds = null;
    /** world rectangle or box to fit, null until known (open worlds: the first frame's box) */
    this.fitBox = null;
    this.needsFit = false;
    this.halfHeight = 1; // 2D: half the visible height at zoom 1 [world units]
    this.baseSize = 1; // agent body length [world units]
    /** User factor on the drawn agent size (View: "agent size"). */
    this.sizeScale = 1;
    this.sizeFromWorld = 1; // largest agent size the world and body radius allow [world units]
    this.sizeFromFlock = null; // a third of the flock's mean spacing, from its first frame [world units]
    this.flockKey = ""; // (agent count, world) the flock size was measured for
    this.dirty = true;
    /** @type {Frame|null} */
    this.frame = null;

    this._resize = () => this.resize();
    new ResizeObserver(this._resize).observe(canvas.parentElement ?? canvas);
    this.resize();
  }

  /**
   * Set up the view for a parameter set: camera kind, outline, obstacles, agent size. The camera
   * is refitted only when the world itself (dimension, region) changed.
   *
   * @param {object} params full parameter dictionary (a `params` message's `params`)
   */
  configure(params) {
    const world = params.world;
    const dim = world.dim;
    const planar = Boolean(params.agents?.planar);
    const key = JSON.stringify([dim, world.bounds, planar]);
    if (dim !== this.dim) this._setDimension(dim);
    this.bounds = world.bounds;
    if (key !== this.worldKey) {
      this.worldKey = key;
      this.fitBox = worldBox(world.bounds, dim);
      this.outline.build(world.bounds, dim);
      this.needsFit = true;
      if (this.fitBox) this.fit();
    }
    if (world.bounds.kind !== "open") this.sizeFromWorld = agentSize(params, this.fitBox);
    const flockKey = `${key}|${params.agents?.n}`;
    if (flockKey !== this.flockKey) {
      this.flockKey = flockKey;
      this.sizeFromFlock = null; // measured again on the next frame
    }
    const extent = this.fitBox ? maxExtent(this.fitBox) : 100;
    this.obstacles.build(params.obstacles, dim, planar, extent / 400);
    this.dirty = true;
  }

  /** The size agents are drawn at [world units]. */
  get agentSize() {
    const size = Math.min(this.sizeFromWorld, this.sizeFromFlock ?? Infinity);
    return size * this.sizeScale * (this.dim === 3 ? SIZE_3D : 1);
  }

  /**
   * Show a frame (live or replayed).
   *
   * @param {Frame} frame
   */
  show(frame) {
    if (frame.dim !== this.dim) return; // a frame from before a 2D/3D switch
    this.frame = frame;
    if (!this.fitBox || this.needsFit) {
      if (!this.fitBox) this.sizeFromWorld = Math.max(maxExtent(frameBox(frame)) / 80, 1e-6);
      this.fit();
    }
    if (this.sizeFromFlock === null && frame.nAgents > 1) {
      // 3D: the flock is seen through its depth, so large flocks need smaller agents to stay
      // readable (projected coverage ~ N^(1/3) (size / spacing)^2)
      const depth = frame.dim === 3 ? Math.max(3, frame.nAgents ** (1 / 6)) : 3;
      this.sizeFromFlock = flockSpacing(frame) / depth;
    } else if (this.bounds && this.bounds.kind === "open") {
      this._follow(frame);
    }
    const size = this.agentSize;
    this.agents.update(frame, 0, frame.nAgents, size);
    const [p0, p1] = extraRange(frame, FLAG_PREDATOR);
    this.predators.update(frame, p0, p1, size);
    const [t0, t1] = extraRange(frame, FLAG_TARGET);
    this.targets.update(frame, t0, t1, size);
    this.dirty = true;
  }

  /** Fit the camera to the world (or, for open worlds, to the flock). */
  fit() {
    this.needsFit = false;
    const box = this.bounds?.kind === "open" && this.frame ? frameBox(this.frame) : this.fitBox;
    if (!box) {
      this.needsFit = true;
      return;
    }
    const open = this.bounds?.kind === "open";
    if (open) this.fitBox = box;
    const c = box.min.map((lo, a) => (lo + box.max[a]) / 2);
    const margin = open ? OPEN_WORLD_MARGIN : 1; // an open-world flock spreads: leave room
    if (this.dim === 2) {
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
    } else {
      // radius to keep in view: an ellipsoid's largest semi-axis, else the box's half diagonal
      const half = box.max.map((hi, a) => (hi - box.min[a]) / 2);
      const r = (this.bounds?.kind === "ellipsoid" ? Math.max(...half) : Math.hypot(...half)) || 1;
      const distance = (r / Math.sin(THREE.MathUtils.degToRad(FOV_DEG / 2))) * 0.8 * margin;
      const target = new THREE.Vector3(...c);
      this.perspective.position.copy(target).addScaledVector(VIEW_DIRECTION, distance);
      this.perspective.near = distance / 200;
      this.perspective.far = distance * 20;
      this.perspective.updateProjectionMatrix();
      this.controls.target.copy(target);
      this.controls.maxDistance = distance * 10;
      this.controls.minDistance = distance / 200;
    }
    this.controls.update();
    this.dirty = true;
  }

  /** Follow the flock of an open world: move the camera's target toward the frame's box centre. */
  _follow(frame) {
    const box = frameBox(frame);
    const c = new THREE.Vector3(...box.min.map((lo, a) => (lo + box.max[a]) / 2));
    if (this.dim === 2) c.z = 0;
    const delta = c.sub(this.controls.target).multiplyScalar(0.05);
    this.controls.target.add(delta);
    this.camera.position.add(delta);
    this.controls.update();
  }

  /**
   * Show where the pointer attracts or repels (a translucent disc or ball), or hide it.
   *
   * @param {number[]|null} point [x, y, z] [world units]
   * @param {string} mode "attract" | "repel" | "off"
   */
  setMarker(point, mode) {
    this.marker.visible = point !== null;
    if (point) {
      this.marker.position.set(point[0], point[1], this.dim === 2 ? 4 : point[2]);
      const r = this.agentSize * 2.5;
      this.marker.scale.set(r, r, this.dim === 2 ? 0.01 : r);
      this.marker.material.color.set(mode === "repel" ? COLORS.repel : COLORS.attract);
    }
    this.dirty = true;
  }

  /** Draw the scene now. */
  render() {
    this.renderer.render(this.scene, this.camera);
    this.dirty = false;
  }

  /** Match the drawing buffer to the canvas's displayed size. */
  resize() {
    const w = Math.max(1, this.canvas.clientWidth);
    const h = Math.max(1, this.canvas.clientHeight);
    this.renderer.setSize(w, h, false);
    this.perspective.aspect = w / h;
    this.perspective.updateProjectionMatrix();
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
    const v = new THREE.Vector3(point[0], point[1], point[2] ?? 0).project(this.camera);
    const rect = this.canvas.getBoundingClientRect();
    return { x: rect.left + ((v.x + 1) / 2) * rect.width, y: rect.top + ((1 - v.y) / 2) * rect.height };
  }

  /**
   * Render and count the drawn pixels that differ from the background (a "not blank" check).
   *
   * @returns {{width: number, height: number, foreground: number}}
   */
  foregroundPixels() {
    this.render();
    const gl = this.renderer.getContext();
    const w = gl.drawingBufferWidth;
    const h = gl.drawingBufferHeight;
    const px = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
    const bg = new THREE.Color(COLORS.background);
    const ref = [bg.r, bg.g, bg.b].map((x) => Math.round(x * 255));
    let foreground = 0;
    for (let i = 0; i < px.length; i += 4) {
      const d = Math.abs(px[i] - ref[0]) + Math.abs(px[i + 1] - ref[1]) + Math.abs(px[i + 2] - ref[2]);
      if (d > 24) foreground++;
    }
    return { width: w, height: h, foreground };
  }

  _setDimension(dim) {
    this.dim = dim;
    this.controls?.dispose();
    this.camera = dim === 2 ? this.ortho : this.perspective;
    const controls = new OrbitControls(this.camera, this.canvas);
    if (dim === 2) {
      controls.enableRotate = false;
      controls.zoomToCursor = true;
      controls.screenSpacePanning = true;
      // left and right buttons are the pointer's (attract / repel); middle button pans
      controls.mouseButtons = { LEFT: -1, MIDDLE: THREE.MOUSE.PAN, RIGHT: -1 };
      controls.touches = { ONE: -1, TWO: THREE.TOUCH.DOLLY_PAN };
    } else {
      controls.enableDamping = false;
    }
    controls.addEventListener("change", () => {
      this.dirty = true;
    });
    this.controls = controls;
    const arrow = dim === 2 ? "arrow" : "dart";
    this.agents.setBase(baseGeometry(arrow));
    this.predators.setBase(baseGeometry(arrow));
    this.targets.setBase(baseGeometry(dim === 2 ? "diamond" : "octahedron"));
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

/**
 * The region to fit the camera to, or null for an open world (fit to the flock instead).
 *
 * @param {{kind: string, size: number[]}} bounds
 * @param {number} dim
 * @returns {Box3|null}
 */
export function worldBox(bounds, dim) {
  const size = [...bounds.size, 0, 0].slice(0, 3);
  if (dim === 2) size[2] = 0;
  if (bounds.kind === "box" || bounds.kind === "periodic") return { min: [0, 0, 0], max: size };
  if (bounds.kind === "ellipsoid") return { min: size.map((s) => -s), max: size };
  return null;
}

/** The frame's bounding box of its agents and extras. */
function frameBox(frame) {
  return { min: [...frame.bboxMin], max: [...frame.bboxMax] };
}

/** Largest side of a box [world units]. */
function maxExtent(box) {
  return Math.max(...box.max.map((hi, a) => hi - box.min[a]), 1e-9);
}

/**
 * Mean spacing of a frame's agents [world units]: the side of the share of its bounding box each
 * agent has (each side of the box counted as at least 1/50 of the largest, so a flat or thin
 * flock does not give a spacing of zero). Dense flocks (100 000 birds) get small agents.
 *
 * @param {Frame} frame
 * @returns {number}
 */
export function flockSpacing(frame) {
  const sides = [0, 1, 2].slice(0, frame.dim).map((a) => frame.bboxMax[a] - frame.bboxMin[a]);
  const floor = Math.max(...sides) / 50;
  const volume = sides.reduce((v, side) => v * Math.max(side, floor), 1);
  return (volume / frame.nAgents) ** (1 / frame.dim) || 1;
}

/**
 * Body length agents are drawn at [world units]: about three body radii, kept between 1/220 and
 * 1/90 of the world's largest side so that a flock stays readable in any world.
 *
 * @param {object} params
 * @param {Box3|null} box
 * @returns {number}
 */
export function agentSize(params, box) {
  if (!box) return 1;
  const extent = maxExtent(box);
  const r = params.agents?.radius;
  const radius = typeof r === "number" ? r : Array.isArray(r) && r.length ? r[0] : 0;
  return Math.min(extent / 90, Math.max(extent / 220, 3 * radius));
}
