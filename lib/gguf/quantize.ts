// Reference quantizers for the block formats without a hand-made random generator in weights.ts: F32
// rows -> Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, IQ4_NL or IQ4_XS blocks, following ggml's quantize_row_*_ref
// (ggml-quants.c) step for step, so synthetic models carry realistic, zero-mean quantized weights.
// Arithmetic runs in doubles where ggml uses floats, so a borderline rounding may pick a neighbouring
// level; the layouts are exactly ggml's (tokenmill's native/quant headers document each one).
import { f32ToF16Bits } from './weights.js';

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

// The float value of IEEE half bits.
export function f16BitsToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant ? NaN : sign * Infinity;
  u32Scratch[0] = ((h & 0x8000) << 16) | ((exp + 112) << 23) | (mant << 13);
  return f32Scratch[0]!;
}

// Round to nearest, ties to even (ggml's nearest_int).
function nearestInt(v: number): number {
  const f = Math.floor(v);
  const d = v - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, v));

// ggml's kvalues_iq4nl: the 16 non-linear levels of IQ4_NL and IQ4_XS.
export const iq4nlValues = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113] as const;

const GROUP_MAX_EPS = 1e-15;

export type QuantizedTypeName = 'q4_1' | 'q5_0' | 'q5_1' | 'q2_k' | 'q3_k' | 'iq4_nl' | 'iq4_xs';

const geometry: Record<QuantizedTypeName, { block: number; bytes: number }> = {
  q4_1: { block: 32, bytes: 20 }, q5_0: { block: 32, bytes: 22 }, q5_1: { block: 32, bytes: 24 },
  q2_k: { block: 256, bytes: 84 }, q3_k: { block: 256, bytes: 110 },
  iq4_nl: { block: 32, bytes: 18 }, iq4_xs: { block: 256, bytes: 136 },
};

// Quantizes x (a multiple of the type's block size) into consecutive blocks of `type`.
export function quantizeRows(type: QuantizedTypeName, x: Float32Array): Uint8Array {
  const g = geometry[type];
  if (x.length % g.block !== 0) throw new Error(`${type}: ${x.length} values are not a multiple of ${g.block}`);
  const out = new Uint8Array((x.length / g.block) * g.bytes);
  const view = new DataView(out.buffer);
  for (let b = 0; b < x.length / g.block; b++) {
    const xb = x.subarray(b * g.block, (b + 1) * g.block);
    const at = b * g.bytes;
    switch (type) {
      case 'q4_1': blockQ4_1(xb, out, view, at); break;
      case 'q5_0': blockQ5_0(xb, out, view, at); break;
      case 'q5_1': blockQ5_1(xb, out, view, at); break;
      case 'q2_k': blockQ2_K(xb, out, view, at); break;
      case 'q3_k': blockQ3_K(xb, out, view, at); break;
      case 'iq4_nl': blockIQ4(xb, out, view, at, 32, -1); break;
      case 'iq4_xs': blockIQ4(xb, out, view, at, 256, 7); break;
    }
  }
  return out;
}

function minMax(x: Float32Array): [number, number] {
  let min = Infinity, max = -Infinity;
  for (const v of x) { if (v < min) min = v; if (v > max) max = v; }
  return [min, max];
}

// The element of largest magnitude (its sign kept).
function signedAbsMax(x: Float32Array): number {
  let amax = 0, max = 0;
  for (const v of x) if (Math.abs(v) > amax) { amax = Math.abs(v); max = v; }
  return max;
}

// Q4_1: d = (max - min) / 15, m = min; nibble = min(15, trunc((x - min) / d + 0.5)).
function blockQ4_1(x: Float32Array, out: Uint8Array, view: DataView, at: number): void {
  const [min, max] = minMax(x);
  const d = (max - min) / 15;
  const id = d ? 1 / d : 0;
  view.setUint16(at, f32ToF16Bits(d), true);
  view.setUint16(at + 2, f32ToF16Bits(min), true);
  for (let j = 0; j < 16; j++) {
    const q0 = Math.min(15, Math.trunc((x[j]! - min) * id + 0.5));
    const q1 = Math.min(15, Math.trunc((x[j + 16]! - min) * id + 0.5));
    out[at + 4 + j] = q0 | (q1 << 4);
  }
}

// The 5-bit values q (0..31) of a Q5_0/Q5_1 block: low nibbles at qsAt, fifth bits in the uint32 at qhAt.
function packQ5(q: number[], out: Uint8Array, view: DataView, qhAt: number, qsAt: number): void {
  let qh = 0;
  for (let j = 0; j < 16; j++) {
    out[qsAt + j] = (q[j]! & 0x0f) | ((q[j + 16]! & 0x0f) << 4);
    qh |= ((q[j]! >> 4) & 1) << j;
    qh |= ((q[j + 16]! >> 4) & 1) << (j + 16);
  }
  view.setUint32(qhAt, qh >>> 0, true);
}

// Q5_0: d = max / -16 (max the signed absolute maximum); q = min(31, trunc(x / d + 16.5)).
function blockQ5_0(x: Float32Array, out: Uint8Array, view: DataView, at: number): void {
  const d = signedAbsMax(x) / -16;
  const id = d ? 1 / d : 0;
  view.setUint16(at, f32ToF16Bits(d), true);
  packQ5(Array.from(x, (v) => Math.min(31, Math.trunc(v * id + 16.5))), out, view, at + 2, at + 6);
}

// Q5_1: d = (max - min) / 31, m = min; q = trunc((x - min) / d + 0.5).
function blockQ5_1(x: Float32Array, out: Uint8Array, view: DataView, at: number): void {
  const [min, max] = minMax(x);
  const d = (max - min) / 31;
  const id = d ? 1 / d : 0;
  view.setUint16(at, f32ToF16Bits(d), true);
  view.setUint16(at + 2, f32ToF16Bits(min), true);
  packQ5(Array.from(x, (v) => Math.trunc((v - min) * id + 0.5)), out, view, at + 4, at + 8);
}

// ggml's make_qkx2_quants: levels 0..nmax with a scale and a (non-positive) offset chosen by a grid
// search minimising the weighted error. Writes L; returns [scale, -offset].
function makeQkx2Quants(x: Float32Array, weights: number[], nmax: number, L: Uint8Array, rmin: number, rdelta: number,
  nstep: number, useMad: boolean): [number, number] {
  const n = x.length;
  let min = x[0]!, max = x[0]!, sumW = weights[0]!, sumX = sumW * x[0]!;
  for (let i = 1; i < n; i++) {
    min = Math.min(min, x[i]!);
    max = Math.max(max, x[i]!);
    sumW += weights[i]!;
    sumX += weights[i]! * x[i]!;
  }
  if (min > 0) min = 0;
  if (max === min) { L.fill(0); return [0, -min]; }
  let iscale = nmax / (max - min);
  let scale = 1 / iscale;
  const err = (diff: number) => (useMad ? Math.abs(diff) : diff * diff);
  let bestError = 0;
  for (let i = 0; i < n; i++) {
    L[i] = clamp(nearestInt(iscale * (x[i]! - min)), 0, nmax);
    bestError += weights[i]! * err(scale * L[i]! + min - x[i]!);
  }
  const Laux = new Uint8Array(n);
  for (let is = 0; is <= nstep; is++) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    let sumL = 0, sumL2 = 0, sumXL = 0;
    for (let i = 0; i < n; i++) {
      const l = clamp(nearestInt(iscale * (x[i]! - min)), 0, nmax);
      Laux[i] = l;
      sumL += weights[i]! * l;
      sumL2 += weights[i]! * l * l;
      sumXL += weights[i]! * l * x[i]!;
    }
    const D = sumW * sumL2 - sumL * sumL;
    if (D > 0) {
      let thisScale = (sumW * sumXL - sumX * sumL) / D;
      let thisMin = (sumL2 * sumX - sumL * sumXL) / D;
      if (thisMin > 0) { thisMin = 0; thisScale = sumXL / sumL2; }
      let curError = 0;
      for (let i = 0; i < n; i++) curError += weights[i]! * err(thisScale * Laux[i]! + thisMin - x[i]!);
      if (curError < bestError) {
        L.set(Laux);
        bestError = curError;
        scale = thisScale;
        min = thisMin;
      }
    }
  }
  return [scale, -min];
}

// Packs 256 2-bit values: element 128h + 32k + l goes to bits 2k..2k+1 of qs[32h + l].
function pack2Bit(L: ArrayLike<number>, out: Uint8Array, qsAt: number): void {
  for (let h = 0; h < 2; h++) {
    for (let l = 0; l < 32; l++) {
      const e = 128 * h + l;
      out[qsAt + 32 * h + l] = (L[e]! & 3) | ((L[e + 32]! & 3) << 2) | ((L[e + 64]! & 3) << 4) | ((L[e + 96]! & 3) << 6);
    }
  }
}

// Q2_K (quantize_row_q2_K_ref): per 16-element sub-block a scale and a min from make_qkx2_quants, each
// quantized to 4 bits against the super-block's largest; the levels are then recomputed with them.
function blockQ2_K(x: Float32Array, out: Uint8Array, view: DataView, at: number): void {
  const L = new Uint8Array(256);
  const scales: number[] = [], mins: number[] = [];
  let maxScale = 0, maxMin = 0;
  for (let j = 0; j < 16; j++) {
    const xs = x.subarray(16 * j, 16 * j + 16);
    const [scale, min] = makeQkx2Quants(xs, Array.from(xs, Math.abs), 3, L.subarray(16 * j, 16 * j + 16), -0.5, 0.1, 15, true);
    scales.push(scale);
    mins.push(min);
    maxScale = Math.max(maxScale, scale);
    maxMin = Math.max(maxMin, min);
  }
  const sc = new Uint8Array(16);
  let dBits = f32ToF16Bits(0), dminBits = f32ToF16Bits(0);
  if (maxScale > 0) {
    const iscale = 15 / maxScale;
    for (let j = 0; j < 16; j++) sc[j] = nearestInt(iscale * scales[j]!);
    dBits = f32ToF16Bits(maxScale / 15);
  }
  if (maxMin > 0) {
    const iscale = 15 / maxMin;
    for (let j = 0; j < 16; j++) sc[j] = sc[j]! | (nearestInt(iscale * mins[j]!) << 4);
    dminBits = f32ToF16Bits(maxMin / 15);
  }
  const d = f16BitsToF32(dBits), dmin = f16BitsToF32(dminBits);
  for (let j = 0; j < 16; j++) {
    const dl = d * (sc[j]! & 0xf);
    if (!dl) continue;
    const dm = dmin * (sc[j]! >> 4);
    for (let i = 0; i < 16; i++) L[16 * j + i] = clamp(nearestInt((x[16 * j + i]! + dm) / dl), 0, 3);
  }
  out.set(sc, at);
  pack2Bit(L, out, at + 16);
  view.setUint16(at + 80, dBits, true);
  view.setUint16(at + 82, dminBits, true);
}

// ggml's make_q3_quants with do_rmse: symmetric levels -nmax..nmax-1, refined by coordinate descent on
// the x²-weighted error. Writes L (shifted to 0..2nmax-1); returns the scale.
function makeQ3Quants(x: Float32Array, nmax: number, L: Int8Array): number {
  const n = x.length;
  const max = signedAbsMax(x);
  if (Math.abs(max) < GROUP_MAX_EPS) { L.fill(0); return 0; }
  const iscale = -nmax / max;
  let sumlx = 0, suml2 = 0;
  for (let i = 0; i < n; i++) {
    const l = clamp(nearestInt(iscale * x[i]!), -nmax, nmax - 1);
    L[i] = l;
    const w = x[i]! * x[i]!;
    sumlx += w * x[i]! * l;
    suml2 += w * l * l;
  }
  for (let itry = 0; itry < 5; itry++) {
    let changed = 0;
    for (let i = 0; i < n; i++) {
      const w = x[i]! * x[i]!;
      let slx = sumlx - w * x[i]! * L[i]!;
      if (slx > 0) {
        let sl2 = suml2 - w * L[i]! * L[i]!;
        const newL = clamp(nearestInt((x[i]! * sl2) / slx), -nmax, nmax - 1);
        if (newL !== L[i]) {
          slx += w * x[i]! * newL;
          sl2 += w * newL * newL;
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = newL; sumlx = slx; suml2 = sl2;
            changed++;
          }
        }
      }
    }
    if (!changed) break;
  }
  for (let i = 0; i < n; i++) L[i] = L[i]! + nmax;
  return suml2 > 0 ? sumlx / suml2 : 0;
}

// Q3_K (quantize_row_q3_K_ref): per 16-element sub-block a signed scale from make_q3_quants, quantized to
// 6 bits against the largest; levels recomputed with the stored scales; high bits into hmask.
function blockQ3_K(x: Float32Array, out: Uint8Array, view: DataView, at: number): void {
  const L = new Int8Array(256);
  const scales: number[] = [];
  let maxScale = 0, amax = 0;
  for (let j = 0; j < 16; j++) {
    scales.push(makeQ3Quants(x.subarray(16 * j, 16 * j + 16), 4, L.subarray(16 * j, 16 * j + 16)));
    if (Math.abs(scales[j]!) > amax) { amax = Math.abs(scales[j]!); maxScale = scales[j]!; }
  }
  const packed = new Uint8Array(12);
  let dBits = f32ToF16Bits(0);
  if (maxScale) {
    const iscale = -32 / maxScale;
    for (let j = 0; j < 16; j++) {
      // (int8_t) of nearest_int, then clamped: the scales stay within -32..31 of each other here.
      const l = clamp(nearestInt(iscale * scales[j]!), -32, 31) + 32;
      if (j < 8) packed[j] = l & 0xf;
      else packed[j - 8] = packed[j - 8]! | ((l & 0xf) << 4);
      packed[8 + (j % 4)] = packed[8 + (j % 4)]! | ((l >> 4) << (2 * Math.floor(j / 4)));
    }
    dBits = f32ToF16Bits(1 / iscale);
  }
  const d = f16BitsToF32(dBits);
  for (let j = 0; j < 16; j++) {
    const low = j < 8 ? packed[j]! & 0xf : packed[j - 8]! >> 4;
    const sc = (low | (((packed[8 + (j % 4)]! >> (2 * Math.floor(j / 4))) & 3) << 4)) - 32;
    const dl = d * sc;
    if (!dl) continue;
    for (let i = 0; i < 16; i++) L[16 * j + i] = clamp(nearestInt(x[16 * j + i]! / dl), -4, 3) + 4;
  }
  // High bit of element e into bit e / 32 of hmask[e % 32]; the low two bits stay in L.
  for (let e = 0; e < 256; e++) {
    if (L[e]! > 3) {
      out[at + (e % 32)] = out[at + (e % 32)]! | (1 << Math.floor(e / 32));
      L[e] = L[e]! - 4;
    }
  }
  pack2Bit(L, out, at + 32);
  out.set(packed, at + 96);
  view.setUint16(at + 108, dBits, true);
}

// The index of the IQ4_NL level nearest to v (ggml's best_index_int8).
function bestIndex(v: number): number {
  const vals = iq4nlValues;
  if (v <= vals[0]) return 0;
  if (v >= vals[15]) return 15;
  let ml = 0, mu = 15;
  while (mu - ml > 1) {
    const mav = (ml + mu) >> 1;
    if (v < vals[mav]!) mu = mav; else ml = mav;
  }
  return v - vals[mu - 1]! < vals[mu]! - v ? mu - 1 : mu;
}

// IQ4_NL (superBlock 32, ntry -1: quantize_row_iq4_nl_ref) and IQ4_XS (superBlock 256, ntry 7:
// quantize_row_iq4_xs_ref), ggml's quantize_row_iq4_nl_impl without importance weights: per 32-element
// block the scale minimising the x²-weighted error over a few trial scales; for IQ4_XS those scales are
// then quantized to 6 bits against the super-block's largest and the levels re-picked.
function blockIQ4(x: Float32Array, out: Uint8Array, view: DataView, at: number, superBlock: 32 | 256, ntry: number): void {
  const vals = iq4nlValues;
  const nBlocks = superBlock / 32;
  const L = new Uint8Array(superBlock);
  const scales = new Array<number>(nBlocks).fill(0);
  let maxScale = 0, amaxScale = 0;
  for (let ib = 0; ib < nBlocks; ib++) {
    const xb = x.subarray(32 * ib, 32 * ib + 32);
    const max = signedAbsMax(xb);
    if (Math.abs(max) < GROUP_MAX_EPS) continue;
    let d = ntry > 0 ? -max / vals[0] : max / vals[0];
    let id = 1 / d;
    let sumqx = 0, sumq2 = 0;
    for (let j = 0; j < 32; j++) {
      const l = bestIndex(id * xb[j]!);
      L[32 * ib + j] = l;
      const q = vals[l]!, w = xb[j]! * xb[j]!;
      sumqx += w * q * xb[j]!;
      sumq2 += w * q * q;
    }
    d = sumq2 > 0 ? sumqx / sumq2 : 0;
    let best = d * sumqx;
    for (let itry = -ntry; itry <= ntry; itry++) {
      id = (itry + vals[0]) / max;
      sumqx = sumq2 = 0;
      for (let j = 0; j < 32; j++) {
        const q = vals[bestIndex(id * xb[j]!)]!, w = xb[j]! * xb[j]!;
        sumqx += w * q * xb[j]!;
        sumq2 += w * q * q;
      }
      if (sumq2 > 0 && sumqx * sumqx > best * sumq2) { d = sumqx / sumq2; best = d * sumqx; }
    }
    scales[ib] = d;
    if (Math.abs(d) > amaxScale) { amaxScale = Math.abs(d); maxScale = d; }
  }
  let qsAt: number;
  if (nBlocks > 1) {
    const d = -maxScale / 32;
    const dBits = f32ToF16Bits(d);
    view.setUint16(at, dBits, true);
    const id = d ? 1 / d : 0;
    let scalesH = 0;
    for (let ib = 0; ib < nBlocks; ib++) {
      const l = clamp(nearestInt(id * scales[ib]!), -32, 31);
      // ggml re-picks the levels with the unrounded d (float), then stores d as F16.
      const dl = d * l;
      const idl = dl ? 1 / dl : 0;
      for (let j = 0; j < 32; j++) L[32 * ib + j] = bestIndex(idl * x[32 * ib + j]!);
      const u = l + 32;
      out[at + 4 + (ib >> 1)] = out[at + 4 + (ib >> 1)]! | ((u & 0xf) << (4 * (ib % 2)));
      scalesH |= (u >> 4) << (2 * ib);
    }
    view.setUint16(at + 2, scalesH, true);
    qsAt = at + 8;
  } else {
    view.setUint16(at, f32ToF16Bits(scales[0]!), true);
    qsAt = at + 2;
  }
  for (let i = 0; i < superBlock / 32; i++) {
    for (let j = 0; j < 16; j++) out[qsAt + 16 * i + j] = L[32 * i + j]! | (L[32 * i + 16 + j]! << 4);
  }
}
