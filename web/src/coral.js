/**
 * The reef's coral, made procedurally (docs/viewer.md, "Under water: the reef"): each obstacle
 * sphere of an undersea scene is drawn as a coral colony of one of five growth forms, branching
 * (staghorn), a sea fan, a table, a brain-coral boulder or a cluster of tube sponges, sized to
 * the part of the sphere above the seabed (y = 0) so that what the fish steer around is what is
 * seen. Shapes and colours are drawn from a small generator seeded by the seed the caller gives
 * and each obstacle's centre and radius: the same reef looks the same in every browser and
 * after every reload. No sphere primitive is used: the colonies are tubes, discs and a ridged
 * dome built vertex by vertex, coloured per vertex (tips paler, grooves darker) and lit by
 * three.js's Lambert material with the scene's water fog.
 *
 * @module coral
 */

import * as THREE from "three";

/** Growth forms, in the order a colony's generator picks from (weights in CORAL_WEIGHTS). */
export const CORAL_FORMS = ["staghorn", "fan", "table", "brain", "sponges"];
const CORAL_WEIGHTS = [3, 2, 2, 2, 2];

/**
 * Colours per growth form (sRGB): [base, tip] pairs, one drawn per colony. Reef colours: ochre
 * and purple staghorn with pale or blue tips, red and violet fans, teal and brown tables, green
 * and yellow brain coral, orange, yellow and violet sponges.
 */
export const CORAL_PALETTES = {
  staghorn: [
    [0xb08850, 0xf3e3b3],
    [0x8e5fa8, 0xe6c8f2],
    [0xc9705a, 0xffd0b8],
    [0x6f8f4a, 0x9fd6e8],
  ],
  fan: [
    [0xb8364a, 0xff8f8f],
    [0x7a3fa0, 0xd59cf0],
    [0xd9812c, 0xffd36b],
  ],
  table: [
    [0x4f8f86, 0xa8e0c8],
    [0x8a6a4a, 0xd9c08a],
    [0x5f7fb0, 0xb8d0f0],
  ],
  brain: [
    [0x7f9a45, 0x3d5a2a],
    [0xd0b050, 0x806020],
    [0xb07a5a, 0x603a2a],
  ],
  sponges: [
    [0xe0702a, 0xffb060],
    [0xd8c030, 0xfff08a],
    [0x7a4ab0, 0xc08ae8],
  ],
};

/**
 * A small deterministic generator (mulberry32) of numbers in [0, 1).
 *
 * @param {number} seed any integer
 * @returns {() => number}
 */
export function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The seed of one colony: the caller's seed and the obstacle's centre and radius, hashed.
 *
 * @param {number} seed
 * @param {{center: number[], body_radius: number}} circle
 * @returns {number}
 */
export function colonySeed(seed, circle) {
  let h = (Math.imul(seed | 0, 0x9e3779b1) ^ 0x5eed) >>> 0;
  for (const v of [...circle.center, circle.body_radius]) {
    h = Math.imul(h ^ Math.round(v * 1000), 0x85ebca77) >>> 0;
    h ^= h >>> 13;
  }
  return h >>> 0;
}

/** Geometry under construction: positions, normals, colours (linear RGB) and triangle indices. */
class Builder {
  constructor() {
    this.p = [];
    this.n = [];
    this.c = [];
    this.i = [];
  }

  get count() {
    return this.p.length / 3;
  }

  /** Add a vertex; returns its index. */
  vertex(pos, normal, colour) {
    this.p.push(pos.x, pos.y, pos.z);
    this.n.push(normal.x, normal.y, normal.z);
    this.c.push(colour.r, colour.g, colour.b);
    return this.count - 1;
  }

  tri(a, b, c) {
    this.i.push(a, b, c);
  }

  /**
   * A tapered tube from `a` (radius r0, colour c0) to `b` (r1, c1), `sides` around, capped at
   * its end when `cap`.
   */
  tube(a, b, r0, r1, sides, c0, c1, cap = true) {
    const axis = new THREE.Vector3().subVectors(b, a);
    const len = axis.length();
    if (len < 1e-9) return;
    axis.divideScalar(len);
    const ref = Math.abs(axis.y) < 0.9 ? new THREE.Vector3(0, 1, 0) : new THREE.Vector3(1, 0, 0);
    const u = new THREE.Vector3().crossVectors(axis, ref).normalize();
    const v = new THREE.Vector3().crossVectors(axis, u);
    const slope = (r0 - r1) / len;
    const first = this.count;
    for (const [end, r, colour] of [
      [a, r0, c0],
      [b, r1, c1],
    ]) {
      for (let k = 0; k < sides; k++) {
        const t = (k / sides) * 2 * Math.PI;
        const radial = u.clone().multiplyScalar(Math.cos(t)).addScaledVector(v, Math.sin(t));
        const normal = radial.clone().addScaledVector(axis, slope).normalize();
        this.vertex(end.clone().addScaledVector(radial, r), normal, colour);
      }
    }
    for (let k = 0; k < sides; k++) {
      const k1 = (k + 1) % sides;
      this.tri(first + k, first + k1, first + sides + k1);
      this.tri(first + k, first + sides + k1, first + sides + k);
    }
    if (cap && r1 > 0) {
      const tip = this.vertex(b.clone().addScaledVector(axis, r1 * 0.6), axis, c1);
      for (let k = 0; k < sides; k++) this.tri(first + sides + k, first + sides + ((k + 1) % sides), tip);
    }
  }

  /** The geometry. */
  geometry() {
    const g = new THREE.BufferGeometry();
    g.setAttribute("position", new THREE.Float32BufferAttribute(this.p, 3));
    g.setAttribute("normal", new THREE.Float32BufferAttribute(this.n, 3));
    g.setAttribute("color", new THREE.Float32BufferAttribute(this.c, 3));
    g.setIndex(this.i);
    g.computeBoundingSphere();
    return g;
  }
}

/** A direction at `tilt` radians from `dir`, turned by `spin` about it. */
function bend(dir, tilt, spin) {
  const ref = Math.abs(dir.y) < 0.9 ? new THREE.Vector3(0, 1, 0) : new THREE.Vector3(1, 0, 0);
  const u = new THREE.Vector3().crossVectors(dir, ref).normalize();
  const v = new THREE.Vector3().crossVectors(dir, u);
  return dir
    .clone()
    .multiplyScalar(Math.cos(tilt))
    .addScaledVector(u, Math.sin(tilt) * Math.cos(spin))
    .addScaledVector(v, Math.sin(tilt) * Math.sin(spin))
    .normalize();
}

/** A colour (linear) between two sRGB hex colours, with a little jitter of brightness. */
function shade(base, tip, t, jitter = 0) {
  const c = new THREE.Color(base).lerp(new THREE.Color(tip), Math.min(Math.max(t, 0), 1));
  return c.multiplyScalar(1 + jitter);
}

/**
 * Branches from `start` along `dir`, splitting into 2 or 3 at each level (staghorn; `planar`:
 * every branch in the vertical plane through `dir`, a sea fan).
 */
function branches(b, rnd, start, dir, length, radius, depth, level, colours, planar, plane) {
  const end = start.clone().addScaledVector(dir, length);
  const t0 = level / (depth + 1);
  const t1 = (level + 1) / (depth + 1);
  const r1 = radius * 0.7;
  b.tube(start, end, radius, r1, planar ? 4 : 6, shade(...colours, t0), shade(...colours, level === depth ? 1 : t1), level === depth);
  if (level === depth) return;
  const children = planar ? 2 + (rnd() < 0.5 ? 1 : 0) : 2 + (rnd() < 0.4 ? 1 : 0);
  for (let k = 0; k < children; k++) {
    let next;
    if (planar) {
      const angle = (k - (children - 1) / 2) * (0.45 + 0.25 * rnd()) + (rnd() - 0.5) * 0.2;
      next = dir.clone().applyAxisAngle(plane, angle).normalize();
    } else {
      const spin = (k / children) * 2 * Math.PI + rnd() * 1.5;
      next = bend(dir, 0.35 + 0.45 * rnd(), spin);
      next.y = Math.max(next.y, 0.15); // staghorn grows up and out, not down into the sand
      next.normalize();
    }
    branches(b, rnd, end, next, length * (0.62 + 0.2 * rnd()), r1, depth, level + 1, colours, planar, plane);
  }
}

/** Staghorn: a few stems from the base, each branching three or four times. */
function staghorn(b, rnd, base, r, colours) {
  const stems = 3 + Math.floor(rnd() * 3);
  for (let k = 0; k < stems; k++) {
    const spin = (k / stems) * 2 * Math.PI + rnd();
    const dir = bend(new THREE.Vector3(0, 1, 0), 0.2 + 0.5 * rnd(), spin);
    const start = base.clone().add(new THREE.Vector3(Math.cos(spin), 0, Math.sin(spin)).multiplyScalar(0.15 * r * rnd()));
    branches(b, rnd, start, dir, 0.45 * r, 0.09 * r, 3, 0, colours, false, null);
  }
}

/** A sea fan: one flat branching tree in a vertical plane. */
function fan(b, rnd, base, r, colours) {
  const facing = rnd() * Math.PI;
  const plane = new THREE.Vector3(Math.cos(facing), 0, Math.sin(facing)); // the fan's normal
  branches(b, rnd, base, new THREE.Vector3(0, 1, 0), 0.42 * r, 0.07 * r, 4, 0, colours, true, plane);
}

/** A table coral: a short stalk under a wide, wavy-edged plate. */
function table(b, rnd, base, r, colours) {
  const height = (0.55 + 0.3 * rnd()) * r;
  const top = base.clone().add(new THREE.Vector3(0, height, 0));
  b.tube(base, top, 0.16 * r, 0.1 * r, 7, shade(...colours, 0), shade(...colours, 0.3), false);
  const rim = 24;
  const rings = 4;
  const width = (0.8 + 0.2 * rnd()) * r;
  const waves = 3 + Math.floor(rnd() * 4);
  const phase = rnd() * 6.28;
  const centre = b.vertex(top, new THREE.Vector3(0, 1, 0), shade(...colours, 0.3));
  const rows = [];
  for (let q = 1; q <= rings; q++) {
    const row = [];
    const f = q / rings;
    for (let k = 0; k < rim; k++) {
      const t = (k / rim) * 2 * Math.PI;
      const w = width * f * (1 + 0.12 * Math.sin(waves * t + phase));
      const y = height + 0.12 * r * f * f + 0.05 * r * f * Math.sin(waves * t + phase);
      const pos = base.clone().add(new THREE.Vector3(Math.cos(t) * w, y, Math.sin(t) * w));
      row.push(b.vertex(pos, new THREE.Vector3(-0.2 * f * Math.cos(t), 1, -0.2 * f * Math.sin(t)).normalize(), shade(...colours, 0.3 + 0.7 * f)));
    }
    rows.push(row);
  }
  for (let k = 0; k < rim; k++) b.tri(centre, rows[0][(k + 1) % rim], rows[0][k]);
  for (let q = 1; q < rings; q++) {
    for (let k = 0; k < rim; k++) {
      const k1 = (k + 1) % rim;
      b.tri(rows[q - 1][k], rows[q - 1][k1], rows[q][k1]);
      b.tri(rows[q - 1][k], rows[q][k1], rows[q][k]);
    }
  }
  // the underside, darker, facing down
  const under = rows.map((row) => row.map((index) => {
    const pos = new THREE.Vector3(b.p[3 * index], b.p[3 * index + 1] - 0.04 * r, b.p[3 * index + 2]);
    return b.vertex(pos, new THREE.Vector3(0, -1, 0), shade(...colours, 0).multiplyScalar(0.6));
  }));
  const low = b.vertex(top.clone().add(new THREE.Vector3(0, -0.04 * r, 0)), new THREE.Vector3(0, -1, 0), shade(...colours, 0).multiplyScalar(0.6));
  for (let k = 0; k < rim; k++) b.tri(low, under[0][k], under[0][(k + 1) % rim]);
  for (let q = 1; q < rings; q++) {
    for (let k = 0; k < rim; k++) {
      const k1 = (k + 1) % rim;
      b.tri(under[q - 1][k], under[q][k1], under[q - 1][k1]);
      b.tri(under[q - 1][k], under[q][k], under[q][k1]);
    }
  }
}

/**
 * A brain coral: a low dome, wider than high, its surface ridged by meandering grooves
 * (coloured darker), built on a latitude-longitude grid of its own.
 */
function brain(b, rnd, base, r, colours) {
  const width = (0.85 + 0.15 * rnd()) * r;
  const height = (0.7 + 0.3 * rnd()) * r;
  const f1 = 5 + Math.floor(rnd() * 4);
  const f2 = 3 + Math.floor(rnd() * 3);
  const p1 = rnd() * 6.28;
  const lat = 14;
  const lon = 32;
  const grid = [];
  for (let i = 0; i <= lat; i++) {
    const phi = (i / lat) * (Math.PI / 2); // 0 at the base, pi/2 at the top
    const row = [];
    for (let k = 0; k < lon; k++) {
      const theta = (k / lon) * 2 * Math.PI;
      const ridge = Math.sin(f1 * phi * 2 + 2.2 * Math.sin(f2 * theta + p1) + theta * 2);
      const bump = 1 + 0.05 * ridge + 0.06 * Math.sin(3 * theta + p1) * Math.cos(phi);
      const dir = new THREE.Vector3(Math.cos(phi) * Math.cos(theta), Math.sin(phi), Math.cos(phi) * Math.sin(theta));
      const pos = base.clone().add(new THREE.Vector3(dir.x * width * bump, dir.y * height * bump - 0.05 * r, dir.z * width * bump));
      const normal = new THREE.Vector3(dir.x / width, dir.y / height, dir.z / width).normalize();
      row.push(b.vertex(pos, normal, shade(colours[0], colours[1], 0.5 - 0.5 * ridge, 0.05 * Math.sin(7 * theta))));
    }
    grid.push(row);
  }
  for (let i = 0; i < lat; i++) {
    for (let k = 0; k < lon; k++) {
      const k1 = (k + 1) % lon;
      b.tri(grid[i][k], grid[i + 1][k1], grid[i][k1]);
      b.tri(grid[i][k], grid[i + 1][k], grid[i + 1][k1]);
    }
  }
}

/** Tube sponges: a cluster of upright open tubes of different heights. */
function sponges(b, rnd, base, r, colours) {
  const count = 4 + Math.floor(rnd() * 4);
  for (let k = 0; k < count; k++) {
    const a = rnd() * 2 * Math.PI;
    const d = 0.45 * r * Math.sqrt(rnd());
    const foot = base.clone().add(new THREE.Vector3(Math.cos(a) * d, 0, Math.sin(a) * d));
    const dir = bend(new THREE.Vector3(0, 1, 0), 0.25 * rnd(), rnd() * 6.28);
    const top = foot.clone().addScaledVector(dir, (0.5 + 0.8 * rnd()) * r);
    const width = (0.1 + 0.08 * rnd()) * r;
    b.tube(foot, top, width * 0.8, width, 8, shade(...colours, 0), shade(...colours, 1), false);
    // the open mouth: a dark disc just inside the rim
    const mouth = b.vertex(top.clone().addScaledVector(dir, -0.02 * r), dir, shade(...colours, 0).multiplyScalar(0.35));
    const first = b.count - 8;
    for (let s = 0; s < 8; s++) b.tri(first + s, first + ((s + 1) % 8), mouth);
  }
}

const BUILD = { staghorn, fan, table, brain, sponges };

/**
 * The growth form and colours of one colony.
 *
 * @param {() => number} rnd its generator
 * @returns {{form: string, colours: number[]}}
 */
export function pickForm(rnd) {
  const total = CORAL_WEIGHTS.reduce((a, w) => a + w, 0);
  let x = rnd() * total;
  let form = CORAL_FORMS[CORAL_FORMS.length - 1];
  for (let k = 0; k < CORAL_FORMS.length; k++) {
    x -= CORAL_WEIGHTS[k];
    if (x < 0) {
      form = CORAL_FORMS[k];
      break;
    }
  }
  const palettes = CORAL_PALETTES[form];
  return { form, colours: palettes[Math.floor(rnd() * palettes.length)] };
}

/**
 * One geometry holding a coral colony for each obstacle sphere: on the seabed (y = 0) under the
 * sphere's centre, as wide as the sphere and as high as its top (the part above the seabed).
 *
 * @param {{center: number[], body_radius: number}[]} circles
 * @param {number} seed
 * @returns {{geometry: THREE.BufferGeometry, forms: string[]}}
 */
export function coralGeometry(circles, seed = 0) {
  const b = new Builder();
  const forms = [];
  for (const circle of circles) {
    const rnd = generator(colonySeed(seed, circle));
    const { form, colours } = pickForm(rnd);
    const [x, y, z] = circle.center;
    const r = circle.body_radius;
    const top = y + r; // the sphere's top above the seabed
    const size = Math.max(Math.min(top, 2 * r) / 1.2, 1e-3); // colonies are about 1.2 size high
    BUILD[form](b, rnd, new THREE.Vector3(x, 0, z), size, colours);
    forms.push(form);
  }
  return { geometry: b.geometry(), forms };
}

/**
 * The reef's coral as one mesh (Lambert-lit, vertex colours, in the scene's fog).
 *
 * @param {{center: number[], body_radius: number}[]} circles
 * @param {number} [seed]
 * @returns {THREE.Mesh}
 */
export function coralMesh(circles, seed = 0) {
  const { geometry, forms } = coralGeometry(circles, seed);
  const mesh = new THREE.Mesh(geometry, new THREE.MeshLambertMaterial({ vertexColors: true, side: THREE.DoubleSide }));
  mesh.name = "coral";
  mesh.userData.forms = forms;
  return mesh;
}
