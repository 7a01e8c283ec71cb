/**
 * What the scene is made of: instanced entity layers fed straight from frames (agents,
 * predators, seek targets), obstacles built from the parameters, and the world's outline.
 *
 * @module layers
 */

import * as THREE from "three";

import { coralMesh } from "./coral.js";
import { COLORS } from "./palette.js";
import { LAYOUT_F32 } from "./protocol.js";
import { ENTITY_FRAGMENT, ENTITY_VERTEX } from "./shaders.js";

export { COLORS };

/**
 * Base shapes, pointing along +x, length about 1.6 (tip at x = 1).
 *
 * @param {"arrow"|"bird"|"diamond"|"octahedron"} kind
 * @returns {THREE.BufferGeometry}
 */
export function baseGeometry(kind) {
  const g = new THREE.BufferGeometry();
  let v;
  if (kind === "arrow") {
    // 2D arrowhead: tip, left wing, notch; tip, notch, right wing. aEdge: per corner, a channel
    // that is 0 along each outer edge of the arrow and 1 along the inner tip-notch edge, for the
    // rim drawn around highlighted entries (shaders.js)
    v = [1, 0, 0, -0.6, 0.5, 0, -0.3, 0, 0, 1, 0, 0, -0.3, 0, 0, -0.6, -0.5, 0];
    const tip = [1, 0, 1];
    const wing = [0, 1, 1];
    const notch = [1, 1, 0];
    const edges = [...tip, ...wing, ...notch, ...[1, 1, 0], ...[0, 1, 1], ...[1, 0, 1]];
    g.setAttribute("aEdge", new THREE.Float32BufferAttribute(edges, 3));
  } else if (kind === "bird") {
    // 3D bird, 2 triangles (cheap at 100 000): from the nose, a swept wing on each side ending at
    // the tail, so it reads as a bird from above and below (z = the side; the wing tips beat in
    // the shader; the slight upward dihedral keeps it visible edge-on)
    const nose = [1, 0, 0];
    const tail = [-0.6, 0.05, 0];
    v = [...nose, -0.45, 0.12, 0.95, ...tail, ...nose, ...tail, -0.45, 0.12, -0.95];
    g.setAttribute("position", new THREE.Float32BufferAttribute(v, 3));
    g.computeVertexNormals(); // non-indexed: each corner gets its face's normal (flat shading)
    return g;
  } else if (kind === "fish") {
    // 3D fish, 8 triangles: a deep body in the vertical plane (its flank faces the side), a
    // dorsal and an anal fin, a narrower body in the horizontal plane (seen from above), and a
    // forked tail that wags in the shader (uFish): the outline of a reef fish (a damselfish or
    // an anthias) rather than a dart
    const nose = [1, 0, 0];
    const top = [0.05, 0.4, 0];
    const belly = [0.05, -0.34, 0];
    const waist = [-0.55, 0, 0];
    const left = [-0.05, 0, 0.16];
    const right = [-0.05, 0, -0.16];
    v = [
      ...nose, ...top, ...waist,
      ...nose, ...waist, ...belly,
      ...top, -0.2, 0.62, 0, -0.6, 0.16, 0,
      ...belly, -0.6, -0.14, 0, -0.35, -0.5, 0,
      ...nose, ...left, ...waist,
      ...nose, ...waist, ...right,
      ...waist, -1.0, 0.36, 0, -0.86, 0, 0,
      ...waist, -0.86, 0, 0, -1.0, -0.36, 0,
    ]; // prettier-ignore
    g.setAttribute("position", new THREE.Float32BufferAttribute(v, 3));
    g.computeVertexNormals();
    return g;
  } else if (kind === "diamond") {
    v = [1, 0, 0, 0, 1, 0, -1, 0, 0, 1, 0, 0, -1, 0, 0, 0, -1, 0];
  } else {
    return new THREE.OctahedronGeometry(1, 0);
  }
  g.setAttribute("position", new THREE.Float32BufferAttribute(v, 3));
  return g;
}

/**
 * One instanced mesh whose per-instance attributes are a slice of a frame's entries, copied as
 * they came (float32, or uint16/int8 normalized for q16) into buffers that grow by doubling.
 */
export class EntityLayer {
  /**
   * @param {THREE.BufferGeometry} base shape of one entry
   * @param {{color: number, useFlags?: boolean, sizeFactor?: number, minPixels?: number, highlight?: number}} options
   *   minPixels: smallest drawn length in 3D [px]; highlight: 0..1, how much the layer stands out
   *   (less shading and haze in 3D, a dark rim in 2D), e.g. 1 for predators
   * @param {Record<string, {value: *}>} shared uniforms shared by every layer (view and sky: see
   *   ViewRenderer), by reference
   */
  constructor(base, { color, useFlags = false, sizeFactor = 1, minPixels = 2, highlight = 0 }, shared = {}) {
    this.base = base;
    this.sizeFactor = sizeFactor;
    this.material = new THREE.ShaderMaterial({
      vertexShader: ENTITY_VERTEX,
      fragmentShader: ENTITY_FRAGMENT,
      side: THREE.DoubleSide,
      uniforms: {
        ...shared,
        uQuant: { value: 0 },
        uBoxMin: { value: new THREE.Vector3() },
        uBoxExt: { value: new THREE.Vector3() },
        uDim: { value: 2 },
        uSize: { value: 1 },
        uColor: { value: new THREE.Color(color) },
        uUseFlags: { value: useFlags ? 1 : 0 },
        uSelectedColor: { value: new THREE.Color(COLORS.selected) },
        uNeighborColor: { value: new THREE.Color(COLORS.neighbor) },
        uTurningColor: { value: new THREE.Color(COLORS.turning) },
        uShade: { value: 0 },
        uOpacity: { value: 1 },
        uDensity: { value: 0 },
        uMinPixels: { value: minPixels },
        uMinPixels2D: { value: 0 },
        uStride: { value: 1 },
        uHighlight: { value: highlight },
        uRimColor: { value: new THREE.Color(COLORS.rim) },
      },
    });
    /** colours of an entry without a highlight: [2D, 3D] */
    this.colors = [color, color];
    this.capacity = 0;
    this.banked = false; // the last update gave some entry a bank
    this.layout = -1;
    this.dim = 0;
    this.geometry = null;
    this.mesh = new THREE.Mesh(new THREE.BufferGeometry(), this.material);
    this.mesh.frustumCulled = false; // instances are placed in the shader: the base shape's bounds mean nothing
    this.mesh.visible = false;
  }

  /**
   * Set the plain colour used in 2D and in 3D.
   *
   * @param {number} color2d
   * @param {number} color3d
   */
  setColors(color2d, color3d) {
    this.colors = [color2d, color3d];
    this.material.uniforms.uColor.value.set(this.dim === 3 ? color3d : color2d);
  }

  /**
   * Draw plain entries with this opacity (1: opaque); highlighted ones stay opaque. Below 1 the
   * layer is blended and does not write depth, so where birds overlap along the line of sight the
   * picture is darker: a large flock shows its density (sheets, waves) by its shade.
   *
   * @param {number} opacity 0..1
   */
  setOpacity(opacity) {
    const blended = opacity < 1;
    this.material.uniforms.uOpacity.value = opacity;
    if (this.material.transparent !== blended) {
      this.material.transparent = blended;
      this.material.depthWrite = !blended;
      this.material.needsUpdate = true;
    }
  }

  /** Replace the base shape (2D arrow <-> 3D bird). */
  setBase(base) {
    this.base.dispose();
    this.base = base;
    this.capacity = 0; // rebuild the geometry on the next update
  }

  /**
   * Show entries [start, end) of a frame.
   *
   * @param {import("./protocol.js").Frame} frame
   * @param {number} start
   * @param {number} end
   * @param {number} size body length of one entry [world units]
   * @param {Float32Array|null} [density] 3D: per entry of [start, end), its local density relative
   *   to the flock's (density.js): plain entries are shaded by it; null: not shaded
   */
  update(frame, start, end, size, density = null) {
    const count = end - start;
    this.mesh.visible = count > 0;
    if (count <= 0) return;
    const { dim, layout } = frame;
    if (count > this.capacity || layout !== this.layout || dim !== this.dim) this._allocate(count, dim, layout, frame);
    const attrs = this.geometry.attributes;
    copyInto(attrs.iPos, frame.positions.subarray(start * dim, end * dim));
    copyInto(attrs.iHead, frame.headings.subarray(start * dim, end * dim));
    copyInto(attrs.iFlag, frame.flags.subarray(start, end));
    if (density) copyInto(attrs.iDensity, density.subarray(0, count));
    // banked birds (the frame's bank section, agents only): each rolls about its heading
    const banked = frame.bank && start < frame.nAgents;
    if (banked) {
      const stop = Math.min(end, frame.nAgents);
      const radians = attrs.iBank.array;
      for (let i = start; i < stop; i++) radians[i - start] = frame.bank[i] * frame.bankStep;
      copyInto(attrs.iBank, radians.subarray(0, stop - start));
    } else if (this.banked) copyInto(attrs.iBank, new Float32Array(count)); // level again
    this.banked = Boolean(banked);
    this.geometry.instanceCount = count;
    const u = this.material.uniforms;
    u.uDensity.value = density && dim === 3 ? 1 : 0;
    u.uQuant.value = layout === LAYOUT_F32 ? 0 : 1;
    u.uBoxMin.value.fromArray(frame.bboxMin);
    u.uBoxExt.value.set(
      frame.bboxMax[0] - frame.bboxMin[0],
      frame.bboxMax[1] - frame.bboxMin[1],
      frame.bboxMax[2] - frame.bboxMin[2],
    );
    u.uDim.value = dim;
    u.uShade.value = dim === 3 ? 1 : 0;
    u.uColor.value.set(this.colors[dim === 3 ? 1 : 0]);
    u.uSize.value = size * this.sizeFactor;
  }

  /** Hide the layer (no entries of its kind). */
  hide() {
    this.mesh.visible = false;
  }

  _allocate(count, dim, layout, frame) {
    this.capacity = Math.max(64, 2 ** Math.ceil(Math.log2(count)));
    this.layout = layout;
    this.dim = dim;
    const Pos = frame.positions.constructor;
    const Head = frame.headings.constructor;
    const quantized = layout !== LAYOUT_F32;
    const g = new THREE.InstancedBufferGeometry();
    for (const [name, attribute] of Object.entries(this.base.attributes)) g.setAttribute(name, attribute);
    if (this.base.index) g.setIndex(this.base.index);
    const attr = (Type, size, normalized) => {
      const a = new THREE.InstancedBufferAttribute(new Type(this.capacity * size), size, normalized);
      a.setUsage(THREE.DynamicDrawUsage);
      return a;
    };
    g.setAttribute("iPos", attr(Pos, dim, quantized));
    g.setAttribute("iHead", attr(Head, dim, quantized && Head !== Float32Array)); // 3D q16: decoded floats
    g.setAttribute("iFlag", attr(Uint8Array, 1, false));
    g.setAttribute("iDensity", attr(Float32Array, 1, false));
    g.setAttribute("iBank", attr(Float32Array, 1, false)); // [rad], zero: level
    this.banked = false;
    if (this.geometry) this.geometry.dispose();
    this.geometry = g;
    this.mesh.geometry = g;
  }
}

/**
 * Remove every child of a group and free the GPU resources of everything under it.
 *
 * @param {THREE.Object3D} group
 */
export function disposeChildren(group) {
  for (const child of [...group.children]) {
    child.traverse((o) => {
      o.geometry?.dispose();
      o.material?.dispose();
      if (o.isInstancedMesh) o.dispose();
    });
    group.remove(child);
  }
}

/** Copy a typed array into an attribute's buffer and mark that range for upload. */
function copyInto(attribute, values) {
  attribute.array.set(values);
  attribute.clearUpdateRanges();
  attribute.addUpdateRange(0, values.length);
  attribute.needsUpdate = true;
}

/**
 * Obstacles drawn from the parameters (their positions, sizes and ends come from there: they do
 * not move): circles/spheres (vertical cylinders for planar 3D agents), segments as thick bars,
 * boxes. One instanced mesh per shape.
 */
export class ObstacleLayer {
  constructor() {
    this.group = new THREE.Group();
  }

  /**
   * Rebuild from an `obstacles` parameter block.
   *
   * @param {{circles?: object[], segments?: object[], boxes?: object[]}|undefined} obstacles
   * @param {number} dim 2 or 3
   * @param {boolean} planar 3D agents on the x-z ground (circles are vertical cylinders)
   * @param {number} minThickness smallest drawn wall thickness [world units]
   * @param {number[]|null} [palette] given under water: 3D circles are drawn as coral colonies
   *   (coral.js), else as spheres in the obstacle colour
   */
  build(obstacles, dim, planar, minThickness, palette = null) {
    this.clear();
    if (!obstacles) return;
    const circles = obstacles.circles ?? [];
    const segments = obstacles.segments ?? [];
    const boxes = obstacles.boxes ?? [];
    const three = dim === 3;
    const material = three
      ? new THREE.MeshLambertMaterial({ color: COLORS.obstacle })
      : new THREE.MeshBasicMaterial({ color: COLORS.obstacle });
    const z = (c) => (three ? c[2] : -1);
    const m = new THREE.Matrix4();
    const q = new THREE.Quaternion();
    const s = new THREE.Vector3();
    const p = new THREE.Vector3();
    if (circles.length && three && !planar && palette?.length) {
      // under water the spheres are coral colonies made procedurally (coral.js)
      this.group.add(coralMesh(circles));
    } else if (circles.length) {
      const geo = three
        ? planar
          ? new THREE.CylinderGeometry(1, 1, 1, 24)
          : new THREE.SphereGeometry(1, 20, 14)
        : new THREE.CircleGeometry(1, 40);
      const mesh = new THREE.InstancedMesh(geo, material, circles.length);
      circles.forEach((c, k) => {
        const r = Math.max(c.body_radius, minThickness / 2);
        s.set(r, planar ? Math.max(2 * r, minThickness * 4) : r, r);
        if (!three) s.z = 1;
        p.set(c.center[0], c.center[1], z(c.center));
        mesh.setMatrixAt(k, m.compose(p, q.identity(), s));
        if (three && palette?.length) mesh.setColorAt(k, new THREE.Color(palette[k % palette.length]));
      });
      if (three && palette?.length) mesh.material = new THREE.MeshLambertMaterial({ color: 0xffffff });
      this.group.add(mesh);
    }
    if (segments.length) {
      const geo = three ? new THREE.CylinderGeometry(1, 1, 1, 12) : new THREE.PlaneGeometry(1, 1);
      const mesh = new THREE.InstancedMesh(geo, material, segments.length);
      const axis = three ? new THREE.Vector3(0, 1, 0) : new THREE.Vector3(1, 0, 0);
      segments.forEach((seg, k) => {
        const a = new THREE.Vector3(seg.a[0], seg.a[1], three ? seg.a[2] : -1);
        const b = new THREE.Vector3(seg.b[0], seg.b[1], three ? seg.b[2] : -1);
        const d = b.clone().sub(a);
        const len = d.length();
        const thick = Math.max(2 * seg.body_radius, minThickness);
        q.setFromUnitVectors(axis, len > 0 ? d.clone().normalize() : axis);
        // 2D bars are capsules: drawn as rectangles extended by the radius at both ends
        if (three) s.set(thick / 2, len, thick / 2);
        else s.set(len + thick, thick, 1);
        p.copy(a).add(b).multiplyScalar(0.5);
        mesh.setMatrixAt(k, m.compose(p, q, s));
      });
      this.group.add(mesh);
    }
    if (boxes.length) {
      const geo = three ? new THREE.BoxGeometry(1, 1, 1) : new THREE.PlaneGeometry(1, 1);
      const mesh = new THREE.InstancedMesh(geo, material, boxes.length);
      boxes.forEach((b, k) => {
        const r = b.body_radius;
        const lo = b.min_corner;
        const hi = b.max_corner;
        s.set(hi[0] - lo[0] + 2 * r, hi[1] - lo[1] + 2 * r, three ? hi[2] - lo[2] + 2 * r : 1);
        s.set(Math.max(s.x, minThickness), Math.max(s.y, minThickness), Math.max(s.z, minThickness));
        p.set((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, three ? (lo[2] + hi[2]) / 2 : -1);
        mesh.setMatrixAt(k, m.compose(p, q.identity(), s));
      });
      this.group.add(mesh);
    }
  }

  /** Remove every obstacle mesh and free its GPU buffers. */
  clear() {
    disposeChildren(this.group);
  }
}

/**
 * The region's outline: a rectangle or box for box/periodic worlds (periodic dashed),
 * an ellipse or three ellipses for ellipsoids, nothing for open worlds.
 */
export class BoundsOutline {
  constructor() {
    this.group = new THREE.Group();
  }

  /**
   * @param {{kind: string, size: number[]}} bounds world.bounds
   * @param {number} dim
   */
  build(bounds, dim) {
    disposeChildren(this.group);
    const { kind, size } = bounds;
    const periodic = kind === "periodic";
    // 3D: faint white against the sky; 2D: grey on the light page
    const look = dim === 3 ? { color: COLORS.outline3d, transparent: true, opacity: 0.2 } : { color: COLORS.outline };
    const material = periodic
      ? new THREE.LineDashedMaterial({ ...look, dashSize: size[0] / 80, gapSize: size[0] / 80 })
      : new THREE.LineBasicMaterial(look);
    let line;
    if (kind === "box" || periodic) {
      if (dim === 2) {
        const [w, h] = size;
        const pts = [0, 0, -2, w, 0, -2, w, h, -2, 0, h, -2, 0, 0, -2];
        const g = new THREE.BufferGeometry().setAttribute("position", new THREE.Float32BufferAttribute(pts, 3));
        line = new THREE.Line(g, material);
      } else {
        const g = new THREE.EdgesGeometry(new THREE.BoxGeometry(size[0], size[1], size[2]));
        g.translate(size[0] / 2, size[1] / 2, size[2] / 2);
        line = new THREE.LineSegments(g, material);
      }
    } else if (kind === "ellipsoid") {
      const ring = (ax, ay, plane) => {
        const pts = [];
        for (let i = 0; i <= 96; i++) {
          const t = (i / 96) * 2 * Math.PI;
          const u = Math.cos(t) * ax;
          const v = Math.sin(t) * ay;
          if (plane === "xy") pts.push(u, v, dim === 2 ? -2 : 0);
          else if (plane === "xz") pts.push(u, 0, v);
          else pts.push(0, u, v);
        }
        const g = new THREE.BufferGeometry().setAttribute("position", new THREE.Float32BufferAttribute(pts, 3));
        return new THREE.Line(g, material.clone());
      };
      line = new THREE.Group();
      line.add(ring(size[0], size[1], "xy"));
      if (dim === 3) {
        line.add(ring(size[0], size[2], "xz"));
        line.add(ring(size[1], size[2], "yz"));
      }
      material.dispose();
    } else {
      material.dispose();
      return;
    }
    if (line.computeLineDistances) line.computeLineDistances();
    this.group.add(line);
  }
}
