/**
 * The viewer's wire format, browser side (docs/protocol.md, version 2).
 *
 * A binary frame is little-endian: a header (96 bytes in version 2), then positions, headings,
 * one flag byte per entry and float64 status values, each section on an 8-byte boundary, so
 * every section but the 3D q16 headings is a typed-array view on the frame's ArrayBuffer (no
 * copy); those are two octahedral bytes per entry on the wire, decoded here to unit vectors.
 * Frames of birds that bank (3D banked flight) end with a bank section, flagged in the header's
 * `sections` field (offset 20): its range (float64 [rad]), then a 4-bit code per agent, unpacked
 * here to one int8 code per agent (bank = code x bankStep; a byte a bird in the replay buffer).
 *
 * @module protocol
 */

/** Protocol version this reader understands (and names in the socket query: `protocol=2`). */
export const VERSION = 2;
/** Smallest header (version 2); a writer may grow it in multiples of 8 bytes. */
export const MIN_HEADER_SIZE = 96;
/** Layout ids of the header's `layout` byte. */
export const LAYOUT_F32 = 0;
export const LAYOUT_Q16 = 1;
/** Quantization steps per axis of the q16 layout (uint16 0..65535). */
export const Q16_STEPS = 65535;
/** q16 headings: int8 = round(127 x value); in 2D the components, in 3D the octahedral coordinates. */
export const HEADING_SCALE = 127;
/** Bytes per heading in the q16 layout (2D and 3D). */
export const Q16_HEADING_BYTES = 2;
/** Both octahedral codes equal to this: an entry without a heading (zero vector). */
export const OCTAHEDRAL_NONE = -128;

/** The header's `sections` bit of the bank section (after the status values). */
export const SECTION_BANK = 1;
/** The `sections` bits this reader knows; a frame with another one is refused (its length is unknown). */
export const SECTIONS_KNOWN = SECTION_BANK;
/** Bank codes per side: code = round(bank / range x 7) in -7..7, 4-bit two's complement, two a byte. */
export const BANK_LEVELS = 7;

/** Flag bits, one byte per entry. */
export const FLAG_SELECTED = 1;
export const FLAG_NEIGHBOR = 2;
export const FLAG_TURNING = 4;
export const FLAG_PREDATOR = 8;
export const FLAG_OBSTACLE = 16;
export const FLAG_TARGET = 32;

/** Status values in frame order (later versions may append more; readers use the ones they know). */
export const STATUS_FIELDS = ["polarization", "mean_neighbors", "caught", "remaining", "steps_per_second"];

/**
 * A decoded frame: header fields plus typed-array views on the frame's buffer.
 *
 * @typedef {object} Frame
 * @property {number} layout LAYOUT_F32 or LAYOUT_Q16
 * @property {number} dim 2 or 3 (values per position and per heading)
 * @property {number} n entries (agents + extras) = flag bytes
 * @property {number} nAgents the first nAgents entries are agents
 * @property {number} frameIndex the server's frame counter on this connection
 * @property {number} step simulation steps done
 * @property {number} time simulated time [s]
 * @property {number[]} bboxMin per-axis minimum of all positions [world units] (3 values; z = 0 in 2D)
 * @property {number[]} bboxMax per-axis maximum of all positions [world units]
 * @property {Float32Array|Uint16Array} positions n x dim, entry-major
 * @property {Float32Array|Int8Array} headings n x dim: unit vectors (f32 layout; q16 in 3D, decoded
 *   from the octahedral bytes) or components x 127 (q16 in 2D, normalize after reading)
 * @property {Uint8Array} flags n flag bytes
 * @property {Float64Array} status status values, STATUS_FIELDS order
 * @property {Int8Array|Float32Array|null} bank nAgents bank codes: the bank [rad] is code x bankStep
 *   (positive: rolled toward the side heading x up); fractional in an interpolated replay frame;
 *   null when the frame has no bank section (level birds)
 * @property {number} bankStep radians per code (the section's range / 7), 0 without one
 */

const pad8 = (x) => Math.ceil(x / 8) * 8;

/**
 * Decode one binary frame without copying its sections.
 *
 * @param {ArrayBuffer} buf the WebSocket message (binaryType "arraybuffer")
 * @returns {Frame}
 * @throws {Error} on a wrong magic or version, a bad header, or a length that does not match
 */
export function readFrame(buf) {
  if (buf.byteLength < MIN_HEADER_SIZE) throw new Error(`frame of ${buf.byteLength} bytes is shorter than a header`);
  const v = new DataView(buf);
  const magic = String.fromCharCode(...new Uint8Array(buf, 0, 4));
  if (magic !== "FLKF") throw new Error("not a flocksim frame (bad magic)");
  const version = v.getUint16(4, true);
  if (version !== VERSION) throw new Error(`unsupported frame version ${version} (this page reads ${VERSION})`);
  const headerSize = v.getUint16(6, true);
  if (headerSize < MIN_HEADER_SIZE || headerSize % 8 !== 0) throw new Error(`bad header size ${headerSize}`);
  const layout = v.getUint8(8);
  const dim = v.getUint8(9);
  if (layout !== LAYOUT_F32 && layout !== LAYOUT_Q16) throw new Error(`unknown layout ${layout}`);
  if (dim !== 2 && dim !== 3) throw new Error(`bad dim ${dim}`);
  const nStatus = v.getUint16(10, true);
  const n = v.getUint32(12, true);
  const nAgents = v.getUint32(16, true);
  if (nAgents > n) throw new Error(`n_agents ${nAgents} > N ${n}`);
  const sections = v.getUint32(20, true);
  if (sections & ~SECTIONS_KNOWN) throw new Error(`unknown sections bits ${sections} (this page knows ${SECTIONS_KNOWN})`);
  const frameIndex = Number(v.getBigUint64(24, true));
  const step = Number(v.getBigUint64(32, true));
  const time = v.getFloat64(40, true);
  const bboxMin = [0, 1, 2].map((a) => v.getFloat64(48 + 8 * a, true));
  const bboxMax = [0, 1, 2].map((a) => v.getFloat64(72 + 8 * a, true));
  const [P, H] = layout === LAYOUT_F32 ? [4, 4 * dim] : [2, Q16_HEADING_BYTES];
  const oPos = headerSize;
  const oHead = oPos + pad8(n * dim * P);
  const oFlags = oHead + pad8(n * H);
  const oStatus = oFlags + pad8(n);
  const oBank = oStatus + 8 * nStatus;
  const expected = sections & SECTION_BANK ? oBank + 8 + pad8((nAgents + 1) >> 1) : oBank;
  if (buf.byteLength !== expected) throw new Error(`frame length ${buf.byteLength} != ${expected}`);
  const positions =
    layout === LAYOUT_F32 ? new Float32Array(buf, oPos, n * dim) : new Uint16Array(buf, oPos, n * dim);
  let headings;
  if (layout === LAYOUT_F32) headings = new Float32Array(buf, oHead, n * dim);
  else if (dim === 2) headings = new Int8Array(buf, oHead, n * 2);
  else headings = decodeOctahedral(new Int8Array(buf, oHead, n * 2));
  const flags = new Uint8Array(buf, oFlags, n);
  const status = new Float64Array(buf, oStatus, nStatus);
  let bank = null;
  let bankStep = 0;
  if (sections & SECTION_BANK) {
    const range = v.getFloat64(oBank, true);
    if (!(range > 0 && range <= Math.PI)) throw new Error(`bad bank range ${range}`);
    bank = unpackBankCodes(new Uint8Array(buf, oBank + 8, (nAgents + 1) >> 1), nAgents);
    bankStep = range / BANK_LEVELS;
  }
  return { layout, dim, n, nAgents, frameIndex, step, time, bboxMin, bboxMax, positions, headings, flags, status, bank, bankStep };
}

/**
 * The codes of a bank section: 4 bits each, two's complement, agent 2k in the low half of byte k
 * and 2k + 1 in the high half.
 *
 * @param {Uint8Array} packed
 * @param {number} n agents
 * @returns {Int8Array} n codes (-8..7; -8 is never written)
 */
export function unpackBankCodes(packed, n) {
  const out = new Int8Array(n);
  for (let i = 0; i < n; i++) {
    const nibble = (packed[i >> 1] >> ((i & 1) << 2)) & 15;
    out[i] = nibble >= 8 ? nibble - 16 : nibble;
  }
  return out;
}

/**
 * Bank angle of agent i [rad] (0 for a frame without a bank section).
 *
 * @param {Frame} frame
 * @param {number} i agent index (< nAgents)
 * @returns {number}
 */
export function bankAt(frame, i) {
  return frame.bank ? frame.bank[i] * frame.bankStep : 0;
}

/**
 * Unit vectors of octahedral codes (docs/protocol.md): u = cu / 127, v = cv / 127,
 * z = 1 - |u| - |v|, t = max(-z, 0), x = u - t sign(u), y = v - t sign(v) (sign(0) = +1), then
 * normalized; the pair (-128, -128) gives a zero vector.
 *
 * @param {Int8Array} codes 2 per entry
 * @returns {Float32Array} 3 per entry
 */
export function decodeOctahedral(codes) {
  const n = codes.length >> 1;
  const out = new Float32Array(3 * n);
  for (let i = 0; i < n; i++) {
    const cu = codes[2 * i];
    const cv = codes[2 * i + 1];
    if (cu === OCTAHEDRAL_NONE && cv === OCTAHEDRAL_NONE) continue;
    const u = cu / HEADING_SCALE;
    const v = cv / HEADING_SCALE;
    const z = 1 - Math.abs(u) - Math.abs(v);
    const t = Math.max(-z, 0);
    const x = u >= 0 ? u - t : u + t;
    const y = v >= 0 ? v - t : v + t;
    const inv = 1 / Math.hypot(x, y, z);
    out[3 * i] = x * inv;
    out[3 * i + 1] = y * inv;
    out[3 * i + 2] = z * inv;
  }
  return out;
}

/**
 * The status values of a frame as a named object (missing ones are NaN).
 *
 * @param {Frame} frame
 * @returns {{polarization: number, mean_neighbors: number, caught: number, remaining: number,
 *   steps_per_second: number}}
 */
export function statusOf(frame) {
  const out = {};
  STATUS_FIELDS.forEach((name, i) => {
    out[name] = i < frame.status.length ? frame.status[i] : NaN;
  });
  return out;
}

/**
 * World position of entry i on axis a [world units], dequantizing q16 in float64.
 *
 * @param {Frame} frame
 * @param {number} i entry index
 * @param {number} a axis (0 .. dim-1)
 * @returns {number}
 */
export function positionAt(frame, i, a) {
  const q = frame.positions[i * frame.dim + a];
  if (frame.layout === LAYOUT_F32) return q;
  return frame.bboxMin[a] + (q * (frame.bboxMax[a] - frame.bboxMin[a])) / Q16_STEPS;
}

/**
 * A float32 copy of a frame (positions in world units, unit headings), used where values are
 * computed on the CPU (replay interpolation). An f32 frame keeps its own arrays (no copy).
 *
 * @param {Frame} frame
 * @returns {Frame} a frame with layout LAYOUT_F32
 */
export function toFloatFrame(frame) {
  if (frame.layout === LAYOUT_F32) return frame;
  const { n, dim } = frame;
  const positions = new Float32Array(n * dim);
  const headings = new Float32Array(n * dim);
  for (let a = 0; a < dim; a++) {
    const lo = frame.bboxMin[a];
    const scale = (frame.bboxMax[a] - lo) / Q16_STEPS;
    for (let i = a; i < n * dim; i += dim) positions[i] = lo + frame.positions[i] * scale;
  }
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let a = 0; a < dim; a++) s += frame.headings[i * dim + a] ** 2;
    const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
    for (let a = 0; a < dim; a++) headings[i * dim + a] = frame.headings[i * dim + a] * inv;
  }
  return { ...frame, layout: LAYOUT_F32, positions, headings };
}

/**
 * Mean position of the agents (entries [0, nAgents)) [world units]; null when there are none.
 *
 * @param {Frame} frame
 * @returns {number[]|null} [x, y, z] (z = 0 in 2D)
 */
export function agentCentroid(frame) {
  const { nAgents, dim } = frame;
  if (nAgents === 0) return null;
  const sum = [0, 0, 0];
  for (let i = 0; i < nAgents; i++) for (let a = 0; a < dim; a++) sum[a] += frame.positions[i * dim + a];
  return sum.map((s, a) => {
    if (a >= dim) return 0;
    const mean = s / nAgents;
    if (frame.layout === LAYOUT_F32) return mean;
    return frame.bboxMin[a] + (mean * (frame.bboxMax[a] - frame.bboxMin[a])) / Q16_STEPS;
  });
}

/**
 * Mean unit heading of the agents (not normalized: its length is the polarization); null when
 * there are none.
 *
 * @param {Frame} frame
 * @returns {number[]|null} [x, y, z]
 */
export function meanHeading(frame) {
  const { nAgents, dim } = frame;
  if (nAgents === 0) return null;
  const sum = [0, 0, 0];
  for (let i = 0; i < nAgents; i++) {
    let s = 0;
    for (let a = 0; a < dim; a++) s += frame.headings[i * dim + a] ** 2;
    if (s === 0) continue;
    const inv = 1 / Math.sqrt(s);
    for (let a = 0; a < dim; a++) sum[a] += frame.headings[i * dim + a] * inv;
  }
  return sum.map((s) => s / nAgents);
}

/**
 * Index range of the entries carrying a flag bit among the extras (entries >= nAgents): extras come
 * grouped (predators, obstacles, targets), so each kind is one contiguous range.
 *
 * @param {Frame} frame
 * @param {number} bit one of FLAG_PREDATOR, FLAG_OBSTACLE, FLAG_TARGET
 * @returns {[number, number]} [start, end) entry indices (empty when none)
 */
export function extraRange(frame, bit) {
  let start = -1;
  let end = -1;
  for (let i = frame.nAgents; i < frame.n; i++) {
    if (frame.flags[i] & bit) {
      if (start < 0) start = i;
      end = i + 1;
    }
  }
  return start < 0 ? [frame.nAgents, frame.nAgents] : [start, end];
}

/**
 * The selected agent (flag bit 0): its entry index, position [world units] and unit heading.
 *
 * @param {Frame} frame
 * @returns {{index: number, position: number[], heading: number[]}|null} null when none is flagged
 */
export function selectedAgent(frame) {
  const { dim } = frame;
  for (let i = 0; i < frame.nAgents; i++) {
    if (!(frame.flags[i] & FLAG_SELECTED)) continue;
    const position = [0, 0, 0];
    const heading = [0, 0, 0];
    for (let a = 0; a < dim; a++) {
      position[a] = positionAt(frame, i, a);
      heading[a] = frame.headings[i * dim + a];
    }
    const len = Math.hypot(...heading);
    return { index: i, position, heading: len > 0 ? heading.map((h) => h / len) : heading };
  }
  return null;
}
