// Zero-mean random K-quant blocks (Q4_K, Q5_K) for synthetic models. gguf-weights.ts fills the 6-bit
// scale/min pairs with random bytes, so its dequantized blocks carry a large positive mean; here each
// sub-block's min is chosen to cancel its scale's midpoint, so values come out ≈ d·sc·(q − mid) with
// rms near `scale`, like a real quantized matrix. Layouts follow ggml's block_q4_K / block_q5_K.
import { f32ToF16Bits } from '../test/helpers/gguf-weights.js';

// Packs eight 6-bit scales and mins into ggml's 12-byte K-quant scales field (inverse of get_scale_min_k4).
function packScalesMins(sc: number[], m: number[], out: Uint8Array, at: number): void {
  for (let j = 0; j < 4; j++) {
    out[at + j] = (sc[j]! & 63) | ((sc[j + 4]! >> 4) << 6);
    out[at + j + 4] = (m[j]! & 63) | ((m[j + 4]! >> 4) << 6);
    out[at + j + 8] = (sc[j + 4]! & 0xf) | ((m[j + 4]! & 0xf) << 4);
  }
}

// Random Q4_K (bits 4) or Q5_K (bits 5) data for `n` values (a multiple of 256) with rms ≈ scale.
export function randomKQuantZeroMean(bits: 4 | 5, n: number, rng: () => number, scale: number): Uint8Array {
  if (n % 256 !== 0) throw new Error(`K-quant data needs a multiple of 256 values, got ${n}`);
  const levels = 1 << bits;                 // q in [0, levels)
  const mid = (levels - 1) / 2;             // 7.5 or 15.5
  const minRatio = levels / 2;              // dmin = d · minRatio keeps m = sc·mid/minRatio ≤ 63
  const typeSize = bits === 4 ? 144 : 176;
  const nBlocks = n / 256;
  const out = new Uint8Array(nBlocks * typeSize);
  const view = new DataView(out.buffer);
  const qStd = Math.sqrt((levels * levels - 1) / 12);
  for (let b = 0; b < nBlocks; b++) {
    const at = b * typeSize;
    const sc: number[] = [], m: number[] = [];
    for (let j = 0; j < 8; j++) {
      const s = 32 + Math.floor(rng() * 32);  // 32..63: enough resolution for m to cancel the midpoint
      sc.push(s);
      m.push(Math.min(63, Math.round((s * mid) / minRatio)));
    }
    const meanSc = sc.reduce((a, v) => a + v, 0) / 8;
    const d = (scale / (meanSc * qStd)) * (0.75 + 0.5 * rng());
    view.setUint16(at, f32ToF16Bits(d), true);
    view.setUint16(at + 2, f32ToF16Bits(d * minRatio), true);
    packScalesMins(sc, m, out, at + 4);
    // Low 4 bits (qs) and, for Q5_K, the fifth bit (qh): all uniformly random.
    const rest = bits === 4 ? 128 : 32 + 128;
    for (let k = 0; k < rest; k++) out[at + 16 + k] = Math.floor(rng() * 256);
  }
  return out;
}
