// The synthetic-model quantizers (lib/gguf/quantize.ts): N(0, 1) rows quantize to blocks that, read back
// through this test's own reading of ggml's layouts, stay close to the input (relative RMS error within
// what each format's bits allow; a misplaced field gives errors of order 1), and degenerate rows work.
import { describe, expect, test } from 'vitest';
import { f16BitsToF32, iq4nlValues, quantizeRows, type QuantizedTypeName } from '../../lib/gguf/quantize.js';
import { makeRng } from '../../lib/gguf/weights.js';

// Dequantizes one row of `type` from the layouts as ggml's ggml-common.h declares them.
function dequantize(type: QuantizedTypeName, q: Uint8Array, n: number): Float32Array {
  const v = new DataView(q.buffer, q.byteOffset, q.byteLength);
  const h = (at: number) => f16BitsToF32(v.getUint16(at, true));
  const out = new Float32Array(n);
  const nib = (at: number, j: number) => (j < 16 ? q[at + j]! & 15 : q[at + j - 16]! >> 4);   // 32-element nibbles
  const two = (at: number, e: number) => (q[at + 32 * (e >> 7) + (e % 32)]! >> (2 * ((e % 128) >> 5))) & 3;
  const blockBytes = { q4_1: 20, q5_0: 22, q5_1: 24, iq4_nl: 18, q2_k: 84, q3_k: 110, iq4_xs: 136 }[type];
  const block = blockBytes === 84 || blockBytes === 110 || blockBytes === 136 ? 256 : 32;
  for (let b = 0; b < n / block; b++) {
    const at = b * blockBytes;
    for (let e = 0; e < block; e++) {
      let x: number;
      switch (type) {
        case 'q4_1': x = h(at) * nib(at + 4, e) + h(at + 2); break;
        case 'q5_0': x = h(at) * ((nib(at + 6, e) | (((v.getUint32(at + 2, true) >>> e) & 1) << 4)) - 16); break;
        case 'q5_1': x = h(at) * (nib(at + 8, e) | (((v.getUint32(at + 4, true) >>> e) & 1) << 4)) + h(at + 2); break;
        case 'iq4_nl': x = h(at) * iq4nlValues[nib(at + 2, e)]!; break;
        case 'q2_k': {
          const sc = q[at + (e >> 4)]!;
          x = h(at + 80) * (sc & 15) * two(at + 16, e) - h(at + 82) * (sc >> 4);
          break;
        }
        case 'q3_k': {
          const s = e >> 4;
          const low = s < 8 ? q[at + 96 + s]! & 15 : q[at + 96 + s - 8]! >> 4;
          const sc = (low | (((q[at + 104 + (s % 4)]! >> (2 * (s >> 2))) & 3) << 4)) - 32;
          const hi = (q[at + (e % 32)]! >> (e >> 5)) & 1;
          x = h(at + 108) * sc * (two(at + 32, e) - (hi ? 0 : 4));
          break;
        }
        case 'iq4_xs': {
          const j = e >> 5;
          const ls = ((q[at + 4 + (j >> 1)]! >> (4 * (j % 2))) & 15) | (((v.getUint16(at + 2, true) >> (2 * j)) & 3) << 4);
          x = h(at) * (ls - 32) * iq4nlValues[nib(at + 8 + 16 * j, e % 32)]!;
          break;
        }
      }
      out[b * block + e] = x;
    }
  }
  return out;
}

// Relative RMS error bounds, about 1.3x what these quantizers measure on N(0, 1) rows (0.077, 0.043,
// 0.038, 0.079, 0.295, 0.151, 0.078).
const bounds: Record<QuantizedTypeName, number> = {
  q4_1: 0.1, q5_0: 0.055, q5_1: 0.05, iq4_nl: 0.1, q2_k: 0.38, q3_k: 0.2, iq4_xs: 0.1,
};

describe('synthetic-model quantizers', () => {
  for (const type of Object.keys(bounds) as QuantizedTypeName[]) {
    test(`${type}: N(0, 1) values round-trip within a relative RMS error of ${bounds[type]}`, () => {
      const rng = makeRng(17);
      const n = 2048;
      const x = new Float32Array(n);
      for (let i = 0; i < n; i++) x[i] = Math.sqrt(-2 * Math.log(Math.max(rng(), 1e-12))) * Math.cos(2 * Math.PI * rng());
      const y = dequantize(type, quantizeRows(type, x), n);
      let err = 0, ref = 0;
      for (let i = 0; i < n; i++) { err += (y[i]! - x[i]!) ** 2; ref += x[i]! ** 2; }
      const rel = Math.sqrt(err / ref);
      console.log(`${type}: relative RMS error ${rel.toFixed(4)}`);
      expect(rel).toBeLessThanOrEqual(bounds[type]);
      // An all-zero row quantizes to blocks that read back as zeros; a constant row stays near constant.
      const zeros = dequantize(type, quantizeRows(type, new Float32Array(n)), n);
      expect(zeros.every((z) => z === 0)).toBe(true);
      const ones = dequantize(type, quantizeRows(type, new Float32Array(n).fill(0.75)), n);
      expect(Math.max(...ones.map((o) => Math.abs(o - 0.75)))).toBeLessThanOrEqual(0.75 * bounds[type]);
    });
  }
  test('a row that is not a multiple of the block size is refused', () => {
    expect(() => quantizeRows('q2_k', new Float32Array(100))).toThrow(/multiple of 256/);
  });
});
