/**
 * Flappy Boids' rock meshes: the binary `FLKR` messages (docs/protocol.md, "Flappy Boids") read
 * into three.js meshes, one per course chunk, dropped when the server no longer lists the chunk.
 *
 * @module rocks
 */

import * as THREE from "three";

import { SUN_DIRECTION } from "./palette.js";
import { SEA_LIGHT } from "./sea.js";
import { ROCK_FRAGMENT, ROCK_VERTEX } from "./shaders.js";

const HEADER_BYTES = 32;
/** Rock under the dusk sky: warm brown (sRGB). */
const ROCK_COLOR = 0x8a7a68;
/** Rock under water: grey stone, far greyer than the reef's sand (sRGB). */
export const SEA_ROCK_COLOR = 0x8a8378;
/** Light on the rock: a floor, sky light by how much a face looks up, and the sun on it. */
const ROCK_AMBIENT = 0.35;
const ROCK_SKY = 0.45;
const ROCK_SUN = 0.7;
const pad8 = (x) => Math.ceil(x / 8) * 8;

/**
 * Whether a binary message is a rock mesh (magic `FLKR`) rather than a frame.
 *
 * @param {ArrayBuffer} buf
 * @returns {boolean}
 */
export function isRockMessage(buf) {
  if (buf.byteLength < 4) return false;
  const m = new Uint8Array(buf, 0, 4);
  return m[0] === 0x46 && m[1] === 0x4c && m[2] === 0x4b && m[3] === 0x52; // "FLKR"
}

/**
 * Read a rock-mesh message.
 *
 * @param {ArrayBuffer} buf
 * @returns {{chunk: number, positions: Float32Array, indices: Uint32Array}}
 */
export function readRocks(buf) {
  if (!isRockMessage(buf) || buf.byteLength < HEADER_BYTES) throw new Error("not a rock-mesh message");
  const v = new DataView(buf);
  if (v.getUint16(4, true) !== 1) throw new Error("rock-mesh message of an unknown version");
  const headerSize = v.getUint16(6, true);
  const chunk = v.getInt32(8, true);
  const nv = v.getUint32(12, true);
  const nf = v.getUint32(16, true);
  const oTri = headerSize + pad8(12 * nv);
  if (buf.byteLength !== oTri + 12 * nf) throw new Error("rock-mesh message length mismatch");
  return {
    chunk,
    positions: new Float32Array(buf, headerSize, 3 * nv),
    indices: new Uint32Array(buf, oTri, 3 * nf),
  };
}

/**
 * Per-vertex rock colours (three.js's linear working space) lit by the sun (the low sun, or the
 * light from the surface under water) and the sky: a hemisphere term (lighter facing up) plus
 * diffuse light on both faces of a wall.
 *
 * @param {ArrayLike<number>} normals unit vertex normals, 3 per vertex
 * @param {number[]} [light] direction toward the light (any length)
 * @param {number} [colour] the rock's colour (sRGB hex)
 * @returns {Float32Array} linear RGB, 3 per vertex
 */
export function rockColors(normals, light = SUN_DIRECTION, colour = ROCK_COLOR) {
  const base = new THREE.Color(colour);
  const [sx, sy, sz] = light;
  const norm = Math.hypot(sx, sy, sz);
  const out = new Float32Array(normals.length);
  for (let i = 0; i < normals.length; i += 3) {
    const up = 0.5 + 0.5 * normals[i + 1];
    const sun = Math.abs(normals[i] * sx + normals[i + 1] * sy + normals[i + 2] * sz) / norm;
    const light = ROCK_AMBIENT + ROCK_SKY * up + ROCK_SUN * sun;
    out[i] = base.r * light;
    out[i + 1] = base.g * light;
    out[i + 2] = base.b * light;
  }
  return out;
}

/**
 * Whether a chunk spanning ``[minX, maxX]`` along x can be seen from a camera at ``cameraX``
 * looking along +x that draws rock up to ``range`` ahead.
 *
 * @param {number} minX
 * @param {number} maxX
 * @param {number} cameraX
 * @param {number} range
 * @returns {boolean}
 */
export function chunkInView(minX, maxX, cameraX, range) {
  return maxX > cameraX && minX < cameraX + range;
}

/** The rock meshes in the scene, by chunk index. */
export class RockLayer {
  /**
   * @param {Record<string, {value: *}>} shared the view's sky uniforms (by reference): far rock
   *   fades toward the sky behind it
   */
  constructor(shared) {
    this.group = new THREE.Group();
    /** @type {Map<number, THREE.Mesh>} */
    this.meshes = new Map();
    // lit per vertex (colours baked when a mesh arrives, see rockColors) and hazed per vertex: the
    // fragment shader only fills, which is what a software renderer can afford for walls that
    // cover much of the view (docs/benchmarks.md, "Flappy Boids"); front faces only (marching
    // cubes winds the triangles counter-clockwise seen from outside the rock), half the pixels
    // of two-sided walls
    this.fog = { uRockFogNear: { value: 1e9 }, uRockFogFar: { value: 2e9 }, uRockCut: { value: 0 } };
    this.material = new THREE.ShaderMaterial({
      vertexShader: ROCK_VERTEX,
      fragmentShader: ROCK_FRAGMENT,
      side: THREE.FrontSide,
      uniforms: { ...shared, ...this.fog },
    });
    /** rock is drawn up to this view depth [world units] (the end of the haze) */
    this.range = Infinity;
    this.sea = false;
  }

  /**
   * Light and colour the meshes that arrive from now on for the sky (a low sun, brown rock) or
   * the sea (light from above, grey stone).
   *
   * @param {boolean} sea
   */
  setSea(sea) {
    this.sea = sea;
  }

  /**
   * Draw rock up to ``range`` ahead of a camera looking along +x at ``cameraX``, fading into the
   * sky over the last ``fade`` of it; chunks wholly behind the camera or past the range are not
   * drawn (their triangles cost a software renderer even where nothing of them shows).
   *
   * @param {number} cameraX [world units]
   * @param {number} range [world units]
   * @param {number} fade [world units]
   */
  view(cameraX, range, fade) {
    this.range = range;
    this.fog.uRockFogNear.value = range - fade;
    this.fog.uRockFogFar.value = range;
    for (const mesh of this.meshes.values()) {
      const box = mesh.geometry.boundingBox;
      mesh.visible = chunkInView(box.min.x, box.max.x, cameraX, range);
    }
  }

  /**
   * Cut away the rock nearer the camera than ``depth`` (view depth [world units]; 0: none), so
   * that what lies at that depth and beyond (the target, the school) is never hidden behind a
   * wall the camera is inside of.
   *
   * @param {number} depth
   */
  cutNearerThan(depth) {
    this.fog.uRockCut.value = Math.max(0, depth);
  }

  /** Meshes drawn (in view). */
  get drawn() {
    let n = 0;
    for (const m of this.meshes.values()) n += m.visible ? 1 : 0;
    return n;
  }

  /** Triangles shown. */
  get triangles() {
    let n = 0;
    for (const m of this.meshes.values()) n += m.geometry.index ? m.geometry.index.count / 3 : 0;
    return n;
  }

  /**
   * Add (or replace) the mesh of a rock-mesh message.
   *
   * @param {ArrayBuffer} buf
   */
  add(buf) {
    const { chunk, positions, indices } = readRocks(buf);
    this.drop(chunk);
    if (indices.length === 0) return;
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute("position", new THREE.BufferAttribute(positions.slice(), 3));
    geometry.setIndex(new THREE.BufferAttribute(indices.slice(), 1));
    geometry.computeVertexNormals();
    const normals = geometry.attributes.normal.array;
    const colours = this.sea ? rockColors(normals, SEA_LIGHT, SEA_ROCK_COLOR) : rockColors(normals);
    geometry.setAttribute("aColour", new THREE.BufferAttribute(colours, 3));
    geometry.deleteAttribute("normal");
    geometry.computeBoundingSphere();
    geometry.computeBoundingBox();
    const mesh = new THREE.Mesh(geometry, this.material);
    this.meshes.set(chunk, mesh);
    this.group.add(mesh);
  }

  /** Remove one chunk's mesh. */
  drop(chunk) {
    const mesh = this.meshes.get(chunk);
    if (!mesh) return;
    this.group.remove(mesh);
    mesh.geometry.dispose();
    this.meshes.delete(chunk);
  }

  /**
   * Keep only the listed chunks.
   *
   * @param {number[]} chunks
   */
  keep(chunks) {
    const wanted = new Set(chunks);
    for (const chunk of [...this.meshes.keys()]) if (!wanted.has(chunk)) this.drop(chunk);
  }

  /** Remove every mesh. */
  clear() {
    this.keep([]);
  }

  /**
   * Pixels the rocks add to the picture: the view rendered without and with them, compared.
   *
   * @param {import("./renderer.js").ViewRenderer} view
   * @returns {{foreground: number, width: number, height: number, box: number[]|null}}
   */
  pixels(view) {
    return view.pixelsAddedBy([this.group]);
  }
}
