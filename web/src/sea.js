/**
 * The undersea world of the fish scenes (reef, Flappy Boids, Couzin's school): the sky shader's
 * uniforms set to water (bright toward the surface, deep blue-green toward the horizon and below:
 * the same gradient is the depth fog that fish, coral and rock fade into), light from above, a
 * sandy seabed at y = 0 that fades into the water (not in Flappy Boids, whose seabed is rock
 * meshed by the server: rocks.js), and the reef fish's colour; the obstacle spheres are drawn as
 * coral colonies (coral.js). The birds' scenes
 * keep the dusk sky (palette.js).
 *
 * @module sea
 */

import * as THREE from "three";

import { SKY, SUN_DIRECTION } from "./palette.js";
import { ROCK_FRAGMENT, ROCK_VERTEX } from "./shaders.js";

/** Water colours in the sky shader's slots (sRGB): surface light above, deep water at and below the horizon. */
export const WATER = {
  zenith: 0x7fd3dc,
  upper: 0x2a8fa6,
  horizon: 0x135b73,
  glow: 0x000000,
  haze: 0x0f4c62,
  ground: 0x0b3444,
};

/** Light from above (the surface), slightly slanted. */
export const SEA_LIGHT = [0.2, 1, 0.15];

/**
 * Fish over the reef's seabed: the orange of a school of anthias (a reef fish that schools above
 * coral), darker than the sand and warmer than the water, shaded bright where lit from above.
 */
export const FISH_COLOR = 0xe8642c;
/** Fish in open water or among rock: silver (they stand out against the deep water and the rock). */
export const FISH_SILVER = 0xa9c2cc;

/** Coral heads (sRGB), one per obstacle in turn. */
export const CORAL_COLORS = [0xe07a5f, 0xf2a65a, 0xc9577f, 0xe9c46a, 0xb56576, 0xf4845f, 0x9c6644];

/** Seabed sand and its darker ripples (sRGB). */
const SAND = 0xc8b48a;
const SAND_DARK = 0x8f7f5e;
/** Seabed grid cells per side. */
const SEABED_CELLS = 96;

/**
 * Set the shared sky uniforms (and the light direction) to a look.
 *
 * @param {Record<string, {value: *}>} shared the view's shared uniforms
 * @param {"sky"|"sea"} look
 */
export function applyLook(shared, look) {
  const colours = look === "sea" ? WATER : SKY;
  shared.uZenith.value.set(colours.zenith);
  shared.uUpper.value.set(colours.upper);
  shared.uHorizon.value.set(colours.horizon);
  shared.uGlow.value.set(colours.glow);
  shared.uHaze.value.set(colours.haze);
  shared.uGround.value.set(colours.ground);
  shared.uSunDir.value.set(...(look === "sea" ? SEA_LIGHT : SUN_DIRECTION)).normalize();
}

/**
 * Sand colour at a seabed point: ripples across x with a slow wander, and patches (linear RGB).
 *
 * @param {number} x [world units]
 * @param {number} z [world units]
 * @param {number} scale ripple wavelength [world units]
 * @param {THREE.Color} out
 * @returns {THREE.Color}
 */
export function sandColor(x, z, scale, out) {
  const ripple = 0.5 + 0.5 * Math.sin((x + 0.35 * scale * Math.sin(z / (2.7 * scale))) * ((2 * Math.PI) / scale));
  const patch = 0.5 + 0.5 * Math.sin(x / (7.3 * scale) + 1.3) * Math.sin(z / (5.9 * scale) + 0.4);
  const dark = 0.45 * ripple + 0.35 * patch;
  return out.set(SAND).lerp(new THREE.Color(SAND_DARK), Math.min(dark, 1));
}

/** The seabed: a flat grid at y = 0 with sand colours baked per vertex, fading into the water. */
export class Seabed {
  /**
   * @param {Record<string, {value: *}>} shared the view's shared uniforms (by reference)
   */
  constructor(shared) {
    this.fog = { uRockFogNear: { value: 1e9 }, uRockFogFar: { value: 2e9 } };
    this.material = new THREE.ShaderMaterial({
      vertexShader: ROCK_VERTEX,
      fragmentShader: ROCK_FRAGMENT,
      side: THREE.DoubleSide,
      uniforms: { ...shared, ...this.fog },
    });
    this.mesh = new THREE.Mesh(new THREE.BufferGeometry(), this.material);
    this.mesh.visible = false;
    this.mesh.frustumCulled = false;
    this.key = "";
  }

  /**
   * Lay the seabed under a region: [x0, x1] x [z0, z1] at y = 0 (no-op when unchanged).
   *
   * @param {number} x0
   * @param {number} x1
   * @param {number} z0
   * @param {number} z1
   */
  build(x0, x1, z0, z1) {
    const key = [x0, x1, z0, z1].join(",");
    if (key === this.key) return;
    this.key = key;
    const n = SEABED_CELLS;
    const positions = new Float32Array((n + 1) * (n + 1) * 3);
    const colours = new Float32Array(positions.length);
    const scale = Math.max(x1 - x0, z1 - z0) / 60;
    const c = new THREE.Color();
    let i = 0;
    for (let a = 0; a <= n; a++) {
      for (let b = 0; b <= n; b++) {
        const x = x0 + ((x1 - x0) * a) / n;
        const z = z0 + ((z1 - z0) * b) / n;
        positions.set([x, 0, z], i);
        sandColor(x, z, scale, c);
        colours.set([c.r, c.g, c.b], i);
        i += 3;
      }
    }
    const index = [];
    for (let a = 0; a < n; a++) {
      for (let b = 0; b < n; b++) {
        const k = a * (n + 1) + b;
        index.push(k, k + 1, k + n + 1, k + 1, k + n + 2, k + n + 1);
      }
    }
    const g = new THREE.BufferGeometry();
    g.setAttribute("position", new THREE.Float32BufferAttribute(positions, 3));
    g.setAttribute("aColour", new THREE.Float32BufferAttribute(colours, 3));
    g.setIndex(index);
    this.mesh.geometry.dispose();
    this.mesh.geometry = g;
  }

  /**
   * The seabed fades into the water from view depth `near` to `far` [world units].
   *
   * @param {number} near
   * @param {number} far
   */
  setFog(near, far) {
    this.fog.uRockFogNear.value = near;
    this.fog.uRockFogFar.value = Math.max(far, near + 1e-6);
  }
}
