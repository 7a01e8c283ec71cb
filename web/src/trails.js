/**
 * Short trails (optional, View panel): behind each agent a fading line through where it was at
 * the last few samples (every 1/15 s of simulated time, 7 samples: about half a second).
 *
 * One instanced line mesh: per agent 7 segments; the agent's current position (`iNow`, updated
 * every frame) and a ring of 7 sample slots (`iP0`..`iP6`, one slot uploaded per sample), so a
 * frame uploads N positions plus, at a sample, N more. Positions are world coordinates (q16
 * frames are dequantized once here). The history starts over when the agents change (a catch,
 * a refill), time runs backwards (replay scrubbing) or jumps by more than a second.
 *
 * @module trails
 */

import * as THREE from "three";

import { LAYOUT_F32, Q16_STEPS } from "./protocol.js";
import { TRAIL_FRAGMENT, TRAIL_VERTEX } from "./shaders.js";

/** Sample slots in the ring (the shader reads iP0..iP6). */
export const TRAIL_SLOTS = 7;
/** Simulated time between two samples [s]. */
export const TRAIL_INTERVAL = 1 / 15;

/**
 * A frame's agent positions as float32 world coordinates (3 per agent; z = 0 in 2D).
 *
 * @param {import("./protocol.js").Frame} frame
 * @param {Float32Array} out at least nAgents * 3 values
 * @returns {Float32Array} out
 */
export function worldPositions(frame, out) {
  const { nAgents, dim } = frame;
  for (let a = 0; a < 3; a++) {
    const lo = frame.bboxMin[a];
    const scale = (frame.bboxMax[a] - lo) / Q16_STEPS;
    for (let i = 0; i < nAgents; i++) {
      const q = a < dim ? frame.positions[i * dim + a] : 0;
      out[3 * i + a] = a >= dim ? 0 : frame.layout === LAYOUT_F32 ? q : lo + q * scale;
    }
  }
  return out;
}

export class TrailLayer {
  constructor() {
    this.material = new THREE.ShaderMaterial({
      vertexShader: TRAIL_VERTEX,
      fragmentShader: TRAIL_FRAGMENT,
      transparent: true,
      depthWrite: false,
      uniforms: {
        uHead: { value: 0 },
        uSamples: { value: 0 },
        uMaxJump: { value: Infinity },
        uDim: { value: 2 },
        uColor: { value: new THREE.Color(0x000000) },
        uOpacity: { value: 0.5 },
      },
    });
    this.mesh = new THREE.LineSegments(new THREE.BufferGeometry(), this.material);
    this.mesh.frustumCulled = false;
    this.mesh.visible = false;
    this.enabled = false;
    this.capacity = 0;
    this.geometry = null;
    this.count = 0;
    this.head = 0;
    this.samples = 0;
    this.lastSample = -Infinity; // simulated time of the newest sample [s]
    this.lastTime = -Infinity;
  }

  /**
   * Turn trails on or off (off frees nothing but draws nothing and skips the uploads).
   *
   * @param {boolean} on
   */
  setEnabled(on) {
    this.enabled = on;
    this.mesh.visible = on && this.count > 0;
    this.restart();
  }

  /** Forget the history (the next frames build it again). */
  restart() {
    this.samples = 0;
    this.lastSample = -Infinity;
    this.lastTime = -Infinity;
    this.material.uniforms.uSamples.value = 0;
  }

  /**
   * Follow a frame (live or replayed).
   *
   * @param {import("./protocol.js").Frame} frame
   * @param {{color: number, opacity: number, maxJump: number}} look colour and opacity of the
   *   lines; maxJump: longest segment drawn [world units]
   */
  update(frame, { color, opacity, maxJump }) {
    if (!this.enabled) return;
    const n = frame.nAgents;
    if (n !== this.count || frame.time < this.lastTime || frame.time - this.lastTime > 1) this.restart();
    if (n > this.capacity) this._allocate(n);
    this.count = n;
    this.lastTime = frame.time;
    const attrs = this.geometry.attributes;
    worldPositions(frame, attrs.iNow.array);
    mark(attrs.iNow, n);
    if (frame.time - this.lastSample >= TRAIL_INTERVAL) {
      this.head = (this.head + 1) % TRAIL_SLOTS;
      const slot = attrs[`iP${this.head}`];
      slot.array.set(attrs.iNow.array.subarray(0, 3 * n));
      mark(slot, n);
      this.samples = Math.min(this.samples + 1, TRAIL_SLOTS);
      this.lastSample = frame.time;
    }
    this.geometry.instanceCount = n;
    const u = this.material.uniforms;
    u.uHead.value = this.head;
    u.uSamples.value = this.samples;
    u.uMaxJump.value = maxJump;
    u.uDim.value = frame.dim;
    u.uColor.value.set(color);
    u.uOpacity.value = opacity;
    this.mesh.visible = n > 0;
  }

  _allocate(n) {
    this.capacity = Math.max(64, 2 ** Math.ceil(Math.log2(n)));
    const g = new THREE.InstancedBufferGeometry();
    const ages = [];
    const others = [];
    for (let k = 0; k < TRAIL_SLOTS; k++) ages.push(k, k + 1), others.push(k + 1, k);
    g.setAttribute("position", new THREE.Float32BufferAttribute(new Float32Array(ages.length * 3), 3));
    g.setAttribute("aAge", new THREE.Float32BufferAttribute(ages, 1));
    g.setAttribute("aOther", new THREE.Float32BufferAttribute(others, 1));
    for (const name of ["iNow", ...Array.from({ length: TRAIL_SLOTS }, (_, k) => `iP${k}`)]) {
      const a = new THREE.InstancedBufferAttribute(new Float32Array(this.capacity * 3), 3);
      a.setUsage(THREE.DynamicDrawUsage);
      g.setAttribute(name, a);
    }
    this.geometry?.dispose();
    this.geometry = g;
    this.mesh.geometry = g;
    this.restart();
  }
}

/** Mark the first n entries of an instanced attribute for upload. */
function mark(attribute, n) {
  attribute.clearUpdateRanges();
  attribute.addUpdateRange(0, 3 * n);
  attribute.needsUpdate = true;
}
