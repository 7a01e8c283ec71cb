/**
 * The view: a three.js scene drawn into the page's canvas. 2D worlds use an orthographic camera
 * fitted to the world (wheel zooms toward the cursor, middle button pans) on a light page; 3D
 * worlds a perspective camera with OrbitControls (drag rotates, wheel or pinch zooms, right button
 * pans) under a dusk sky, seen from slightly below the flock as one sees a murmuration.
 *
 * Agents, predators and seek targets are instanced layers fed from each frame (see layers.js);
 * obstacles and the world's outline are built from the parameters; optional trails (trails.js).
 *
 * Camera: "Fit" shows the whole world (an open world: the flock). "Follow" keeps the flock in the
 * middle of the view, and in 3D framed: the camera distance eases toward the distance that fits
 * the flock, times the zoom the user chose (wheel or pinch while following sets that factor).
 * Follow is on by default in 3D and in open worlds, off in bounded 2D worlds (the whole box
 * is the picture); Fit in a bounded 3D world turns it off.
 *
 * @module renderer
 */

import * as THREE from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";

import { boxCorners, ellipsoidPoints, fitDistance, flockSample, sampleRadius } from "./camera.js";
import { relativeDensity } from "./density.js";
import { thinned } from "./detail.js";
import { BoundsOutline, COLORS, EntityLayer, ObstacleLayer, baseGeometry } from "./layers.js";
import { SKY, SUN_DIRECTION } from "./palette.js";
import { pixelDifference } from "./pixels.js";
import { FLAG_NEIGHBOR, FLAG_PREDATOR, FLAG_SELECTED, FLAG_TARGET, extraRange } from "./protocol.js";
import { CORAL_COLORS, FISH_COLOR, FISH_SILVER, Seabed, WATER, applyLook } from "./sea.js";
import { SKY_FRAGMENT, SKY_VERTEX } from "./shaders.js";
import { TrailLayer } from "./trails.js";

/** Direction from the flock's centre to a fresh 3D camera: in front, a little to the side and
 * below, looking slightly up at the flock against the sky. */
const VIEW_DIRECTION = new THREE.Vector3(0.35, -0.3, 1).normalize();
/** Under water the camera looks a little down at the school, the seabed and coral below it. */
const SEA_VIEW_DIRECTION = new THREE.Vector3(0.35, 0.4, 1).normalize();
const FOV_DEG = 45;
/** Open worlds fit the flock's box enlarged by this factor (the flock spreads and drifts). */
const OPEN_WORLD_MARGIN = 1.6;
/** 3D agents are drawn this much larger than 2D ones (the view is farther away). */
const SIZE_3D = 1.1;
/** The flock fills this share of the view when framed (3D), leaving a margin. */
const FLOCK_FILL = 0.8;
/** Flocks of up to this many birds are framed whole. */
const WHOLE_FLOCK_MAX_N = 2_000;
/** Share of a larger flock's birds a framing keeps in view (stragglers may leave it). */
const FLOCK_QUANTILE = 0.97;
/** The framed 3D camera stands at least this many flock radii (95 % of the birds within one)
 * from the flock's centre: closer, the near birds are drawn huge and overflow the view. */
const MIN_DISTANCE_RADII = 3.2;
/** 3D: agents are drawn at most this share of the flock's mean spacing long (a starling's body is
 * a few tenths of the distance to its neighbours; larger darts merge into a blanket). */
const SPACING_SHARE_3D = 1 / 4.5;
/** Flocks of more than this many agents are drawn translucent (density shading, see flockOpacity). */
const OPAQUE_MAX_N = 5_000;
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
/** Smallest drawn length of an agent in 3D [CSS px] in a flock of up to MIN_PIXELS_FULL_N birds
 * (highlights have their own, larger minimums: see shaders.js). */
const MIN_AGENT_PIXELS = 2.2;
/** Above this many agents the smallest drawn length shrinks as 1 / sqrt(N), so the pixels that
 * minimum-size birds fill stay those of this many: a large flock is a visible cloud by its
 * numbers, and a software renderer fills no more pixels for it (measured in docs/benchmarks.md). */
const MIN_PIXELS_FULL_N = 10_000;

/**
 * Smallest drawn length of an agent in 3D [CSS px] for a flock of `n` agents.
 *
 * @param {number} n
 * @returns {number}
 */
export function agentMinPixels(n) {
  return Math.min(MIN_AGENT_PIXELS * Math.sqrt(MIN_PIXELS_FULL_N / Math.max(n, 1)), SMALL_FLOCK_PIXELS);
}
/** Smallest drawn length of an agent in a small flock [CSS px]: from MIN_AGENT_PIXELS at
 * MIN_PIXELS_FULL_N agents it grows as 1 / sqrt(N) up to this, so that a school of 100 sparse fish
 * is a hundred readable shapes rather than specks (the pixels they fill stay those of a few
 * thousand birds at the smallest size). */
const SMALL_FLOCK_PIXELS = 9;
/**
 * Opacity of plain 3D agents in a flock of `n`: opaque up to OPAQUE_MAX_N, then 0.7 times
 * (OPAQUE_MAX_N / n)^(1/3) (about the birds one line of sight crosses), at least 0.2: a lone bird
 * is a faint dot, and where birds overlap along the line of sight (a sheet seen edge-on, a dense
 * wave) the shade builds up to near black. Each bird's own opacity is this times the square of
 * its local density, at least 0.06 (shaders.js, density.js).
 *
 * @param {number} n
 * @returns {number} 0.2..1
 */
export function flockOpacity(n) {
  return n <= OPAQUE_MAX_N ? 1 : Math.max(0.2, 0.7 * (OPAQUE_MAX_N / n) ** (1 / 3));
}

/** Smallest drawn length of a bird in a translucent flock (over OPAQUE_MAX_N) [CSS px]: birds
 * large enough to overlap, so that the shade is the number of birds along the line of sight
 * (the density) rather than a speckle of sub-pixel darts. */
const DENSITY_MIN_PIXELS = 2.6;

/**
 * Smallest drawn length of a 3D agent [CSS px] in a flock of `n`: agentMinPixels, and in a
 * translucent flock at least DENSITY_MIN_PIXELS.
 *
 * @param {number} n
 * @returns {number}
 */
export function flockMinPixels(n) {
  return n > OPAQUE_MAX_N ? Math.max(agentMinPixels(n), DENSITY_MIN_PIXELS) : agentMinPixels(n);
}

/** Wing beats per second of simulated time (3D birds). */
const FLAP_HZ = 7;
/** The sky's place in the draw order: after every opaque layer (their render orders are small). */
const SKY_RENDER_ORDER = 1e6;
/** Aerial perspective: haze of a bird at the far side of the flock. */
const HAZE_MAX = 0.6;
/** Under water: haze of a fish at the far side of the school (water is thicker than air). */
const HAZE_MAX_SEA = 0.75;
/** Under water the seabed reaches this many times the world's largest side beyond it (into the fog). */
const SEABED_REACH = 1.5;

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
    /** level of detail (detail.js): drawing-buffer resolution factor and the flock's stride */
    this.resolutionScale = 1;
    this.agentStride = 1;
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
    this.renderer.setClearColor(COLORS.background, 1);
    this.scene = new THREE.Scene();
    this.hemisphere = new THREE.HemisphereLight(0xdfe8f5, 0x4a4238, 1.7);
    this.scene.add(this.hemisphere);
    const sun = new THREE.DirectionalLight(0xffe2c4, 2.0);
    sun.position.set(...SUN_DIRECTION);
    this.sun = sun;
    this.scene.add(sun);
    /** the 3D world around the agents: "sky" (birds at dusk) or "sea" (fish under water) */
    this.look = "sky";

    /** uniforms every entity layer and the sky share (by reference) */
    const color = (hex) => ({ value: new THREE.Color(hex) });
    this.shared = {
      uZenith: color(SKY.zenith),
      uUpper: color(SKY.upper),
      uHorizon: color(SKY.horizon),
      uGlow: color(SKY.glow),
      uHaze: color(SKY.haze),
      uGround: color(SKY.ground),
      uSunDir: { value: new THREE.Vector3(...SUN_DIRECTION) },
      uPixelSize: { value: 0.001 },
      uFlap: { value: 0 },
      uFish: { value: 0 },
      uFogNear: { value: 0 },
      uFogFar: { value: 1 },
      uFogMax: { value: HAZE_MAX },
      uXray: { value: 0 },
      uHazeColor: color(SKY.horizon),
      uClipKind: { value: 0 },
      uClip: { value: new THREE.Vector4() },
    };
    this.sky = new THREE.Mesh(
      new THREE.PlaneGeometry(2, 2, 32, 24), // screen-covering grid, coloured per vertex
      new THREE.ShaderMaterial({
        vertexShader: SKY_VERTEX,
        fragmentShader: SKY_FRAGMENT,
        depthWrite: false,
        uniforms: { ...this.shared, uInvViewProj: { value: new THREE.Matrix4() } },
      }),
    );
    this.sky.frustumCulled = false;
    // drawn after everything opaque, at the far plane behind a depth test: only the pixels left
    // uncovered are filled (a software renderer pays per pixel, and rock can cover most of the view)
    this.sky.renderOrder = SKY_RENDER_ORDER;
    this.sky.visible = false;
    this.scene.add(this.sky);

    const shared = this.shared;
    this.agents = new EntityLayer(baseGeometry("arrow"), { color: COLORS.agent, useFlags: true, minPixels: MIN_AGENT_PIXELS }, shared);
    this.agents.setColors(COLORS.agent, COLORS.agent3d);
    const predator = { color: COLORS.predator, sizeFactor: 2.6, minPixels: 10, highlight: 1 };
    this.predators = new EntityLayer(baseGeometry("arrow"), predator, shared);
    this.targets = new EntityLayer(baseGeometry("diamond"), { color: COLORS.target, sizeFactor: 1.6, minPixels: 9 }, shared);
    this.trails = new TrailLayer();
    this.obstacles = new ObstacleLayer();
    this.outline = new BoundsOutline();
    for (const o of [this.outline.group, this.obstacles.group, this.trails.mesh, this.agents.mesh, this.targets.mesh]) {
      this.scene.add(o);
    }
    this.scene.add(this.predators.mesh);
    this.seabed = new Seabed(shared);
    this.scene.add(this.seabed.mesh);
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
    /** world rectangle or box to fit, null for an open world */
    this.fitBox = null;
    this.needsFit = false;
    this.halfHeight = 1; // 2D: half the visible height at zoom 1 [world units]
    this.sizeScale = 1; // user factor on the drawn agent size (View: "agent size")
    this.sizeFromWorld = 1; // largest agent size the world and body radius allow [world units]
    this.sizeFromFlock = null; // a third of the flock's mean spacing, from its first frame [world units]
    this.flockKey = ""; // (agent count, world) the flock size was measured for
    this.following = false;
    this.followZoom = 1; // 3D: camera distance / the distance that frames the flock
    this.userMoving = false; // the user is dragging or zooming the view
    /** @type {{centre: number[], points: Float64Array, radius: number}|null} */
    this.flock = null;
    /** called when Follow turns on or off (the page's button) */
    this.onFollowChange = () => {};
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
   * @param {"sky"|"sea"} [look] the 3D world around the agents (sea.js)
   */
  configure(params, look = "sky") {
    const world = params.world;
    const dim = world.dim;
    const planar = Boolean(params.agents?.planar);
    const key = JSON.stringify([dim, world.bounds, planar]);
    const lookChanged = look !== this.look;
    this.look = look;
    if (dim !== this.dim) this._setDimension(dim);
    else if (lookChanged) {
      this._setShapes();
      if (dim === 3) {
        const d = this.perspective.position.distanceTo(this.controls.target) || 1;
        this.perspective.position.copy(this.controls.target).addScaledVector(this._viewDirection(), d);
        this.controls.update();
      }
    }
    this.bounds = world.bounds;
    if (key !== this.worldKey) {
      this.worldKey = key;
      this.fitBox = worldBox(world.bounds, dim);
      this.outline.build(world.bounds, dim);
      this._setClip(world.bounds, dim);
      this.trails.restart();
      this.needsFit = true;
      this.setFollow(dim === 3 || world.bounds.kind === "open", false);
      if (this.fitBox && !this.following) this.fit();
    }
    if (world.bounds.kind !== "open") this.sizeFromWorld = agentSize(params, this.fitBox);
    const flockKey = `${key}|${params.agents?.n}`;
    if (flockKey !== this.flockKey) {
      this.flockKey = flockKey;
      this.sizeFromFlock = null; // measured again on the next frame
    }
    const extent = this.fitBox ? maxExtent(this.fitBox) : 100;
    const sea = this.sea;
    this.obstacles.build(params.obstacles, dim, planar, extent / 400, sea ? CORAL_COLORS : null);
    const floor = sea && this.fitBox !== null && !params.game?.enabled;
    this._applyLook(floor);
    if (floor) {
      const reach = extent * SEABED_REACH;
      this.seabed.build(this.fitBox.min[0] - reach, this.fitBox.max[0] + reach, this.fitBox.min[2] - reach, this.fitBox.max[2] + reach);
    }
    this.dirty = true;
  }

  /** From the target toward a fresh 3D camera: below the flock in the sky, above the school under water. */
  _viewDirection() {
    return this.look === "sea" ? SEA_VIEW_DIRECTION : VIEW_DIRECTION;
  }

  /** Whether the view shows the undersea world (a 3D scene of fish). */
  get sea() {
    return this.look === "sea" && this.dim === 3;
  }

  /**
   * Water or sky: the shared colours, the lights, the fog on coral, the seabed, the agents' colour.
   *
   * @param {boolean} floor under water over the sand seabed (dark fish against the sand; else
   *   silver). Not in Flappy Boids: its seabed is rock, meshed by the server with the walls.
   */
  _applyLook(floor) {
    const sea = this.sea;
    applyLook(this.shared, sea ? "sea" : "sky");
    this.shared.uFogMax.value = sea ? HAZE_MAX_SEA : HAZE_MAX;
    this.shared.uFish.value = sea ? 1 : 0;
    this.sun.position.copy(this.shared.uSunDir.value);
    this.sun.color.set(sea ? 0xe8fbff : 0xffe2c4);
    this.hemisphere.color.set(sea ? 0xbfe9f0 : 0xdfe8f5);
    this.hemisphere.groundColor.set(sea ? 0x1d4a52 : 0x4a4238);
    this.scene.fog = sea ? new THREE.Fog(WATER.horizon, 1, 2) : null;
    this.seabed.mesh.visible = floor;
    this.agents.setColors(COLORS.agent, sea ? (floor ? FISH_COLOR : FISH_SILVER) : COLORS.agent3d);
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
    const sample = flockSample(frame);
    this.flock = sample ? { ...sample, radius: sampleRadius(sample.points) } : null;
    if (this.needsFit) {
      if (!this.fitBox) this.sizeFromWorld = Math.max(maxExtent(frameBox(frame)) / 80, 1e-6);
      if (this.following && this.flock) this.frameFlock();
      else this.fit();
    } else if (this.following) {
      this._follow();
    }
    if (this.sizeFromFlock === null && frame.nAgents > 1) {
      // 3D: the flock is seen through its depth, so large flocks need smaller agents to stay
      // readable (projected coverage ~ N^(1/3) (size / spacing)^2)
      const depth = frame.dim === 3 ? Math.max(1 / SPACING_SHARE_3D, frame.nAgents ** (1 / 6)) : 3;
      this.sizeFromFlock = flockSpacing(frame) / depth;
    }
    const size = this.agentSize;
    const drawn = thinned(frame, this.agentStride, FLAG_SELECTED | FLAG_NEIGHBOR);
    let density = null;
    if (frame.dim === 3 && frame.nAgents > OPAQUE_MAX_N) {
      // large flocks: each bird shaded by its local density (dense sheets dark, thin regions light),
      // measured on the birds drawn (a stride of the flock samples it evenly)
      if (!this.density || this.density.length < drawn.nAgents) this.density = new Float32Array(drawn.nAgents);
      density = relativeDensity(drawn.positions, drawn.nAgents, frame.bboxMin, frame.bboxMax, this.density);
    }
    this.agents.update(drawn, 0, drawn.nAgents, size, density);
    const minPixels = frame.dim === 3 ? flockMinPixels(frame.nAgents) : agentMinPixels(frame.nAgents);
    this.agents.material.uniforms.uMinPixels.value = minPixels;
    this.agents.setOpacity(frame.dim === 3 ? flockOpacity(frame.nAgents) : 1);
    const [p0, p1] = extraRange(frame, FLAG_PREDATOR);
    this.predators.update(frame, p0, p1, size);
    const [t0, t1] = extraRange(frame, FLAG_TARGET);
    this.targets.update(frame, t0, t1, size);
    const period = this.bounds?.kind === "periodic" ? Math.min(...this.bounds.size) / 2 : Infinity;
    this.trails.update(frame, {
      color: this.dim === 3 ? COLORS.agent3d : COLORS.agent,
      opacity: this.dim === 3 ? 0.35 : 0.45,
      maxJump: period,
    });
    this.shared.uFlap.value = 2 * Math.PI * FLAP_HZ * frame.time;
    this.dirty = true;
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
      let r = this.agentSize * 2.5;
      if (this.dim === 3) {
        const depth = this.perspective.position.distanceTo(this.marker.position);
        r = Math.max(r, 12 * depth * this.shared.uPixelSize.value);
      }
      this.marker.scale.set(r, r, this.dim === 2 ? 0.01 : r);
      this.marker.material.color.set(mode === "repel" ? COLORS.repel : COLORS.attract);
    }
    this.dirty = true;
  }

  /** Draw the scene now. */
  render() {
    if (this.dim === 3) {
      this._updateDepthRange();
      this.perspective.updateMatrixWorld();
      this.sky.material.uniforms.uInvViewProj.value.multiplyMatrices(
        this.perspective.matrixWorld,
        this.perspective.projectionMatrixInverse,
      );
      if (this.flock) {
        const d = this.perspective.position.distanceTo(new THREE.Vector3(...this.flock.centre));
        const r = Math.max(this.flock.radius, 1e-6);
        this.shared.uFogNear.value = d - r;
        this.shared.uFogFar.value = d + 1.5 * r;
        this.shared.uXray.value = 2.5 * r;
        const toFlock = new THREE.Vector3(...this.flock.centre).sub(this.perspective.position);
        skyColor(toFlock, this.shared, this.shared.uHazeColor.value);
        if (this.sea && this.scene.fog) {
          // water: coral and the seabed fade into it beyond the school's far side
          const extent = this.fitBox ? maxExtent(this.fitBox) : 4 * r;
          const far = d + Math.max(2.5 * r, 0.6 * extent, 0.8 * d);
          this.scene.fog.near = Math.max(d - r, 0);
          this.scene.fog.far = far;
          this.seabed.setFog(Math.max(d - r, 0), far);
        }
      }
    }
    this.renderer.render(this.scene, this.camera);
    this.dirty = false;
  }

  /**
   * Level of detail: draw at `scale` times the display's resolution and every `stride`-th bird
   * (from the next frame shown).
   *
   * @param {number} scale 0..1 resolution factor
   * @param {number} stride 1 draws every bird
   */
  setDetail(scale, stride) {
    this.agentStride = stride;
    if (scale !== this.resolutionScale) {
      this.resolutionScale = scale;
      this.renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2) * scale);
      this.resize();
    }
    this.dirty = true;
  }

  /** Match the drawing buffer to the canvas's displayed size. */
  resize() {
    const w = Math.max(1, this.canvas.clientWidth);
    const h = Math.max(1, this.canvas.clientHeight);
    this.renderer.setSize(w, h, false);
    this.perspective.aspect = w / h;
    this.perspective.updateProjectionMatrix();
    this.shared.uPixelSize.value = (2 * Math.tan(THREE.MathUtils.degToRad(FOV_DEG / 2))) / h;
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

  /**
   * What the flock adds to the picture: the scene rendered without the flock (agents,
   * predators, seek targets, trails) and with it, compared pixel by pixel (pixels.js). Nothing
   * when no agent is drawn, whatever the background.
   *
   * @returns {{width: number, height: number, foreground: number, box: number[]|null}} box: the
   *   differing pixels' bounds [left, top, right, bottom] in client (CSS pixel) coordinates
   */
  foregroundPixels() {
    return this.pixelsAddedBy([this.agents.mesh, this.predators.mesh, this.targets.mesh, this.trails.mesh]);
  }

  /**
   * What some objects of the scene add to the picture: the scene rendered without them and with
   * them (as they are shown), compared pixel by pixel.
   *
   * @param {THREE.Object3D[]} objects
   * @returns {{width: number, height: number, foreground: number, box: number[]|null}} box: the
   *   differing pixels' bounds [left, top, right, bottom] in client (CSS pixel) coordinates
   */
  pixelsAddedBy(objects) {
    const shown = objects.map((m) => m.visible);
    const gl = this.renderer.getContext();
    const w = gl.drawingBufferWidth;
    const h = gl.drawingBufferHeight;
    const read = () => {
      this.render();
      const px = new Uint8Array(w * h * 4);
      gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
      return px;
    };
    for (const m of objects) m.visible = false;
    const without = read();
    objects.forEach((m, k) => (m.visible = shown[k]));
    const withThem = read();
    const { count, box } = pixelDifference(without, withThem, w, h);
    const rect = this.canvas.getBoundingClientRect();
    const sx = rect.width / w;
    const sy = rect.height / h;
    const client = box && [rect.left + box[0] * sx, rect.top + box[1] * sy, rect.left + (box[2] + 1) * sx, rect.top + (box[3] + 1) * sy];
    return { width: w, height: h, foreground: count, box: client };
  }

  /**
   * The cost of drawing some objects: ``renders`` pairs of renders drawn to completion (a
   * one-pixel read waits for each), without and with the objects, alternately.
   *
   * @param {THREE.Object3D[]} objects
   * @param {number} renders pairs of renders timed (one untimed pair before)
   * @returns {{without_ms: number, with_ms: number}} mean wall time of one render [ms]
   */
  drawCost(objects, renders) {
    const shown = objects.map((m) => m.visible);
    const gl = this.renderer.getContext();
    const px = new Uint8Array(4);
    const time = (visible) => {
      objects.forEach((m, k) => (m.visible = visible && shown[k]));
      const t0 = performance.now();
      this.render();
      gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px);
      return performance.now() - t0;
    };
    let without = 0;
    let withThem = 0;
    for (let i = -1; i < renders; i++) {
      const a = time(false);
      const b = time(true);
      if (i >= 0) {
        without += a;
        withThem += b;
      }
    }
    objects.forEach((m, k) => (m.visible = shown[k]));
    return { without_ms: without / Math.max(renders, 1), with_ms: withThem / Math.max(renders, 1) };
  }

  _setClip(bounds, dim) {
    const u = this.shared;
    u.uClipKind.value = 0;
    if (dim !== 2) return;
    if (bounds.kind === "box" || bounds.kind === "periodic") {
      u.uClipKind.value = 1;
      u.uClip.value.set(0, 0, bounds.size[0], bounds.size[1]);
    } else if (bounds.kind === "ellipsoid") {
      u.uClipKind.value = 2;
      u.uClip.value.set(0, 0, bounds.size[0], bounds.size[1]);
    }
  }

  _setDimension(dim) {
    this.dim = dim;
    this.controls?.dispose();
    this.camera = dim === 2 ? this.ortho : this.perspective;
    if (dim === 3) {
      // a fresh 3D view looks from the default direction
      this.perspective.position.copy(this._viewDirection());
    }
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
      controls.target.set(0, 0, 0);
    }
    controls.addEventListener("change", () => {
      this.dirty = true;
    });
    controls.addEventListener("start", () => {
      this.userMoving = true;
    });
    controls.addEventListener("end", () => {
      this.userMoving = false;
      // while following, a zoom by the user sets the factor the framing distance is multiplied by
      if (this.following && this.dim === 3 && this.flock) {
        const now = this.perspective.position.distanceTo(this.controls.target);
        this.followZoom = Math.min(Math.max(now / this._flockDistance(), 0.02), 50);
      }
    });
    this.controls = controls;
    this._setShapes();
    this.targets.setBase(baseGeometry(dim === 2 ? "diamond" : "octahedron"));
    this.sky.visible = dim === 3;
    this.trails.restart();
  }

  /** Agents' and predators' shapes: arrows in 2D, birds in the sky, fish under water. */
  _setShapes() {
    const shape = this.dim === 2 ? "arrow" : this.look === "sea" ? "fish" : "bird";
    this.agents.setBase(baseGeometry(shape));
    this.predators.setBase(baseGeometry(shape));
    this.dirty = true;
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

const smoothstep = (a, b, x) => {
  const t = Math.min(Math.max((x - a) / (b - a), 0), 1);
  return t * t * (3 - 2 * t);
};

/**
 * The sky's colour in a world direction: the mirror of `skyColour` in shaders.js (SKY_GLSL), on
 * the CPU, for the haze that tints distant birds (the sky toward the flock).
 *
 * @param {THREE.Vector3} direction
 * @param {Record<string, {value: *}>} u the sky uniforms (linear colours, sun direction)
 * @param {THREE.Color} out
 * @returns {THREE.Color} out
 */
export function skyColor(direction, u, out) {
  const d = direction.clone().normalize();
  const e = d.y;
  if (e < 0) {
    const haze = u.uHorizon.value.clone().lerp(u.uHaze.value, smoothstep(0, 0.015, -e));
    return out.copy(haze.lerp(u.uGround.value, smoothstep(0.01, 0.2, -e)));
  }
  out.copy(u.uHorizon.value).lerp(u.uUpper.value, smoothstep(0, 0.35, e));
  out.lerp(u.uZenith.value, smoothstep(0.3, 1, e));
  const sun = Math.max(d.dot(u.uSunDir.value.clone().normalize()), 0);
  const glow = (0.55 * sun ** 6 + 0.25 * sun ** 64) * (1 - smoothstep(0, 0.5, e));
  return out.add(u.uGlow.value.clone().multiplyScalar(glow));
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
