// A test-only frame writer (docs/protocol.md, version 2), the mirror of protocol.readFrame.
const pad8 = (x) => Math.ceil(x / 8) * 8;

/**
 * Octahedral int8 codes of a 3D unit vector (docs/protocol.md); [-128, -128] for zero.
 *
 * @param {number[]} h
 * @returns {number[]}
 */
export function octahedralCodes(h) {
  const l1 = Math.abs(h[0]) + Math.abs(h[1]) + Math.abs(h[2]);
  if (!(l1 > 0)) return [-128, -128];
  let u = h[0] / l1;
  let v = h[1] / l1;
  if (h[2] < 0) [u, v] = [(1 - Math.abs(v)) * (u >= 0 ? 1 : -1), (1 - Math.abs(u)) * (v >= 0 ? 1 : -1)];
  return [Math.round(u * 127), Math.round(v * 127)];
}

/**
 * Encode a frame.
 *
 * @param {{layout?: number, dim: number, nAgents?: number, positions: number[][], headings: number[][],
 *   flags?: number[], status?: number[], step?: number, time?: number, frameIndex?: number,
 *   bank?: number[], bankRange?: number, sections?: number}} f bank: per agent [rad], sent as a
 *   bank section over bankRange (default 60 degrees): round(bank / range x 7), clipped to +-7
 * @returns {ArrayBuffer}
 */
export function writeFrame(f) {
  const layout = f.layout ?? 0;
  const { dim } = f;
  const n = f.positions.length;
  const nAgents = f.nAgents ?? n;
  const status = f.status ?? [0.5, 7, 0, nAgents, 60];
  const [P, H] = layout === 0 ? [4, 4 * dim] : [2, 2];
  const oPos = 96;
  const oHead = oPos + pad8(n * dim * P);
  const oFlags = oHead + pad8(n * H);
  const oStatus = oFlags + pad8(n);
  const oBank = oStatus + 8 * status.length;
  const buf = new ArrayBuffer(f.bank ? oBank + 8 + pad8((nAgents + 1) >> 1) : oBank);
  const v = new DataView(buf);
  "FLKF".split("").forEach((c, i) => v.setUint8(i, c.charCodeAt(0)));
  v.setUint16(4, f.version ?? 2, true);
  v.setUint16(6, 96, true);
  v.setUint8(8, layout);
  v.setUint8(9, dim);
  v.setUint16(10, status.length, true);
  v.setUint32(12, n, true);
  v.setUint32(16, nAgents, true);
  v.setUint32(20, f.sections ?? (f.bank ? 1 : 0), true);
  v.setBigUint64(24, BigInt(f.frameIndex ?? 0), true);
  v.setBigUint64(32, BigInt(f.step ?? 0), true);
  v.setFloat64(40, f.time ?? 0, true);
  const lo = [0, 1, 2].map((a) => (a < dim && n ? Math.min(...f.positions.map((p) => p[a])) : 0));
  const hi = [0, 1, 2].map((a) => (a < dim && n ? Math.max(...f.positions.map((p) => p[a])) : 0));
  lo.forEach((x, a) => v.setFloat64(48 + 8 * a, x, true));
  hi.forEach((x, a) => v.setFloat64(72 + 8 * a, x, true));
  f.positions.forEach((p, i) => {
    for (let a = 0; a < dim; a++) {
      if (layout === 0) v.setFloat32(oPos + 4 * (i * dim + a), p[a], true);
      else {
        const ext = hi[a] - lo[a];
        v.setUint16(oPos + 2 * (i * dim + a), ext > 0 ? Math.round(((p[a] - lo[a]) * 65535) / ext) : 0, true);
      }
    }
  });
  f.headings.forEach((h, i) => {
    if (layout === 0) h.slice(0, dim).forEach((x, a) => v.setFloat32(oHead + 4 * (i * dim + a), x, true));
    else if (dim === 2) h.slice(0, 2).forEach((x, a) => v.setInt8(oHead + 2 * i + a, Math.round(x * 127)));
    else octahedralCodes(h).forEach((c, a) => v.setInt8(oHead + 2 * i + a, c));
  });
  (f.flags ?? []).forEach((b, i) => v.setUint8(oFlags + i, b));
  status.forEach((s, k) => v.setFloat64(oStatus + 8 * k, s, true));
  if (f.bank) {
    const range = f.bankRange ?? Math.PI / 3;
    v.setFloat64(oBank, range, true);
    f.bank.forEach((b, i) => {
      const code = Math.max(-7, Math.min(7, Math.round((b / range) * 7)));
      const at = oBank + 8 + (i >> 1);
      v.setUint8(at, v.getUint8(at) | ((code & 15) << ((i & 1) << 2)));
    });
  }
  return buf;
}
