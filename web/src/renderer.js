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
 * The camera (fit, follow, framing, screen <-> world) is viewcamera.js; the pixel measures
 * viewpixels.js; agent sizes and opacities viewsizes.js; the sky's colour skycolor.js. This
 * module gives their public names too.
 *
 * @module renderer
 */

import * as THREE from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";

import { flockSample, sampleRadius } from "./camera.js";
import { relativeDensity } from "./density.js";
import { thinned } from "./detail.js";
import { BoundsOutline, COLORS, EntityLayer, ObstacleLayer, baseGeometry } from "./layers.js";
import { SKY, SUN_DIRECTION } from "./palette.js";
import { FLAG_NEIGHBOR, FLAG_PREDATOR, FLAG_SELECTED, FLAG_TARGET, extraRange } from "./protocol.js";
import { CORAL_COLORS, FISH_COLOR, FISH_SILVER, Seabed, WATER, applyLook } from "./sea.js";
import { SKY_FRAGMENT, SKY_VERTEX } from "./shaders.js";
import { skyColor } from "./skycolor.js";
import { TrailLayer } from "./trails.js";
import { FOV_DEG } from "./viewcamera.js";
import { ViewPixels } from "./viewpixels.js";
import {
  MIN_AGENT_PIXELS,
  OPAQUE_MAX_N,
  agentSize,
  flockMinPixels,
  flockOpacity,
  flockSpacing,
  frameBox,
  maxExtent,
  worldBox,
} from "./viewsizes.js";

export { skyColor } from "./skycolor.js";
export { followShare } from "./viewcamera.js";
export { agentMinPixels, agentSize, flockMinPixels, flockOpacity, flockSpacing, worldBox } from "./viewsizes.js";

/** 3D agents are drawn this much larger than 2D ones (the view is farther away). */
const SIZE_3D = 1.1;

/** 3D: agents are drawn at most this share of the flock's mean spacing long (a starling's body is
 * a few tenths of the distance to its neighbours; larger darts merge into a blanket). */
const SPACING_SHARE_3D = 1 / 4.5;

/** Agents are never drawn shorter than this many pixels of the drawing buffer (a lowered
 * resolution keeps every flock visible). */
const MIN_BUFFER_PIXELS = 2;

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

export class ViewRenderer extends ViewPixels {
  /**
   * @param {HTMLCanvasElement} canvas
   */
  constructor(canvas) {
    super();
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
      uViewPx: { value: 1 },
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
    /** the world's outline drawn (View: "World outline"); null: the look's default, hidden under water */
    this.outlineShown = null;
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
    this.outline.group.visible = this.outlineShown ?? !sea; // View: "World outline"; off under water
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
    let density = null;
    if (frame.dim === 3 && frame.nAgents > OPAQUE_MAX_N) {
      // large flocks: each bird shaded by its local density (dense sheets dark, thin regions light),
      // measured on every bird of the flock, also those the level of detail leaves out
      if (!this.density || this.density.length < frame.nAgents) this.density = new Float32Array(frame.nAgents);
      density = relativeDensity(frame.positions, frame.nAgents, frame.bboxMin, frame.bboxMax, this.density);
    }
    const drawn = thinned(frame, this.agentStride, FLAG_SELECTED | FLAG_NEIGHBOR, density);
    this.agents.update(drawn, 0, drawn.nAgents, size, drawn.values);
    // never smaller than MIN_BUFFER_PIXELS of the drawing buffer, whatever its resolution
    const bufferMin = MIN_BUFFER_PIXELS / this.renderer.getPixelRatio();
    const u = this.agents.material.uniforms;
    u.uMinPixels.value = frame.dim === 3 ? Math.max(flockMinPixels(frame.nAgents), bufferMin) : bufferMin;
    u.uMinPixels2D.value = bufferMin;
    u.uStride.value = frame.nAgents / Math.max(drawn.nAgents, 1);
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
}
