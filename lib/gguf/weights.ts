// Random tensor data for synthetic GGUF models: F32/F16/BF16 values and Q8_0/Q4_0/Q4_K/Q5_K/Q6_K
// blocks with random quants and sane random scales (dequantized magnitudes around `scale`); the other
// block formats are N(0, scale) values through ggml's reference quantizers (quantize.ts).
// Block layouts follow ggml's structs; only a valid layout is promised, not a particular distribution.
import { quantizeRows } from './quantize.js';
import { tensorTypes, type TensorTypeName } from './writer.js';

// A small seeded PRNG (mulberry32); returns floats in [0, 1).
export function makeRng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

// IEEE half from a float, round to nearest even (subnormals and overflow to inf handled).
export function f32ToF16Bits(v: number): number {
  f32Scratch[0] = v;
  const x = u32Scratch[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h += 1;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h += 1;  // may carry into the exponent: still correct
  return sign | h;
}

// bfloat16 from a float, round to nearest even.
export function f32ToBf16Bits(v: number): number {
  f32Scratch[0] = v;
  const x = u32Scratch[0]!;
  if ((x & 0x7fffffff) > 0x7f800000) return ((x >>> 16) | 0x40) & 0xffff;  // NaN stays NaN
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

function gaussian(rng: () => number): number {
  const u = Math.max(rng(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng());
}

// Random data for a tensor of `type` and dims `ne` (ggml order): values ~ N(0, scale) for float types and
// the quantized formats; random quant blocks whose dequantized values have magnitudes around `scale` for
// Q8_0/Q4_0/Q4_K/Q5_K/Q6_K.
export function randomTensorData(type: TensorTypeName, ne: readonly number[], rng: () => number, scale = 0.02): Uint8Array {
  const t = tensorTypes[type];
  const n = ne.reduce((a, b) => a * b, 1);
  if ((ne[0] ?? 0) % t.blockSize !== 0) throw new Error(`ne[0]=${ne[0]} is not a multiple of ${t.blockSize} for ${type}`);
  const nBlocks = n / t.blockSize;
  const out = new Uint8Array(nBlocks * t.typeSize);
  const view = new DataView(out.buffer);
  const randByte = () => Math.floor(rng() * 256);
  const half = (at: number, v: number) => view.setUint16(at, f32ToF16Bits(v), true);
  // A positive block scale within a factor of two of `target`.
  const blockScale = (target: number) => target * (0.5 + rng());

  switch (type) {
    case 'q4_1': case 'q5_0': case 'q5_1': case 'q2_k': case 'q3_k': case 'iq4_nl': case 'iq4_xs': {
      const values = new Float32Array(n);
      for (let i = 0; i < n; i++) values[i] = gaussian(rng) * scale;
      return quantizeRows(type, values);
    }
    case 'f32':
      for (let i = 0; i < n; i++) view.setFloat32(i * 4, gaussian(rng) * scale, true);
      break;
    case 'f16':
      for (let i = 0; i < n; i++) view.setUint16(i * 2, f32ToF16Bits(gaussian(rng) * scale), true);
      break;
    case 'bf16':
      for (let i = 0; i < n; i++) view.setUint16(i * 2, f32ToBf16Bits(gaussian(rng) * scale), true);
      break;
    case 'q8_0':  // half d; int8 qs[32]; value = d * q
      for (let b = 0; b < nBlocks; b++) {
        const at = b * 34;
        half(at, blockScale(scale / 64));
        for (let k = 0; k < 32; k++) view.setInt8(at + 2 + k, Math.floor(rng() * 255) - 127);
      }
      break;
    case 'q4_0':  // half d; u8 qs[16] (two nibbles); value = d * (q - 8)
      for (let b = 0; b < nBlocks; b++) {
        const at = b * 18;
        half(at, blockScale(scale / 4));
        for (let k = 0; k < 16; k++) out[at + 2 + k] = randByte();
      }
      break;
    case 'q4_k':  // half d, dmin; u8 scales[12] (6-bit sc/m pairs); u8 qs[128]; value = d*sc*q - dmin*m
      for (let b = 0; b < nBlocks; b++) {
        const at = b * 144;
        half(at, blockScale(scale / (32 * 8)));
        half(at + 2, blockScale(scale / (32 * 8)));
        for (let k = 0; k < 12 + 128; k++) out[at + 4 + k] = randByte();
      }
      break;
    case 'q5_k':  // half d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]; q has 5 bits
      for (let b = 0; b < nBlocks; b++) {
        const at = b * 176;
        half(at, blockScale(scale / (32 * 16)));
        half(at + 2, blockScale(scale / (32 * 16)));
        for (let k = 0; k < 12 + 32 + 128; k++) out[at + 4 + k] = randByte();
      }
      break;
    case 'q6_k':  // u8 ql[128]; u8 qh[64]; int8 scales[16]; half d; value = d * sc * (q - 32)
      for (let b = 0; b < nBlocks; b++) {
        const at = b * 210;
        for (let k = 0; k < 128 + 64; k++) out[at + k] = randByte();
        for (let k = 0; k < 16; k++) view.setInt8(at + 192 + k, Math.floor(rng() * 255) - 127);
        half(at + 208, blockScale(scale / (64 * 16)));
      }
      break;
  }
  return out;
}
