// Which pairs of code paths sum in the same order: tokenmill's kernel level (kernelLevel(), capped by
// TOKENMILL_ISA) × the llama.cpp CPU build node-llama-cpp loaded (inject('peerCpuBuild')) × the weight type
// of a matmul. Where both round and sum alike they agree to the last bit between rare flips; elsewhere every
// result carries the type's rounding noise. The synthetic logit parity (test/parity/logits.test.ts) picks its
// bounds per type from this, and the real-model chat parity (test/real/chat-parity.ts) picks between exact
// token equality and its near-tie rule from the types of the model's tensors. docs/kernels.md ("Tests and
// tolerances", "The AMX path") has the measurements behind these lists.
import type { PeerCpuBuild } from './peer.js';

// Which llama.cpp CPU builds compute what each tokenmill level computes, in the same order (measured), for
// every type but the level's TOKENMILL_BLOCK_STEP_TYPES. The avx512+amx level runs the avx512 kernels, its
// tiles computing the same bits as the avx512 level's block-step kernels.
const SAME_ORDER_BUILDS: Record<string, readonly string[]> = {
  avx512: ['zen4', 'sapphirerapids'],
  'avx512+amx': ['zen4', 'sapphirerapids'],
  avx2: ['haswell'],
};

// The types each level computes with tokenmill's own block step (an exact int32 dot per 32-block, then
// acc = fma(d_w·d_x, float(c_b), acc) in block order, and for Q4_1 and Q5_1 acc = fma(m_w, s_x, acc) after it;
// Q6_K one exact sum per super-block, then acc = fma(float(isum), d_x·d_w, acc): docs/kernels.md, "Matrix products"): against every llama.cpp build a different order (ggml's x86 builds sum
// 8 float lanes per block; its AMX backend applies the scales per block as we do, and on a Xeon the synthetic
// Q8_0 and Q4_0 logits agreed within 1.4e-6 at every position, but equal bits are not shown). A level not
// listed has none: avx2 and the baseline keep llama.cpp's order.
const BLOCK_STEP_TYPES: readonly string[] = ['Q8_0', 'Q4_0', 'IQ4_NL', 'Q5_0', 'Q4_1', 'Q5_1', 'Q6_K'];
const TOKENMILL_BLOCK_STEP_TYPES: Record<string, readonly string[]> = {
  avx512: BLOCK_STEP_TYPES,
  'avx512+amx': BLOCK_STEP_TYPES,
};

// The matmuls ggml-cpu/amx takes over in node-llama-cpp's sapphirerapids build (AMX_INT8): F16, Q4_0, Q4_1,
// Q8_0, Q4_K, Q5_K, Q6_K and IQ4_XS weights whose output rows are a multiple of 32 and input row a multiple of
// the type's block. F16 multiplies unrounded F32 activations (ggml's usual path and ours round them to F16);
// the quantized types apply and sum the block scales in another order.
const GGML_AMX_TYPES: readonly string[] = ['F16', 'Q8_0', 'Q4_0', 'Q4_1', 'Q4_K', 'Q5_K', 'Q6_K', 'IQ4_XS'];

// The types llama.cpp's AVX-512 builds sum in another order: ggml-cpu/repack.cpp repacks Q2_K weights for
// its 8x8 kernel when the CPU has AVX-512 (q2_K_8x8_q8_K). Measured against zen4: Q2_K differs by ~1e-6 at
// every position between flips (ggml's plain AVX2 order, which our kernel follows, gives 0 for Q3_K and
// IQ4_XS).
const GGML_AVX512_REPACKED_TYPES: readonly string[] = ['Q2_K'];

/** The llama.cpp build's facts the pairing depends on. */
export type PeerBuild = Pick<PeerCpuBuild, 'variant' | 'amx'>;

export interface Pairing {
  /** Both sides compute this type's matmuls with the same arithmetic in the same order. */
  sameOrder: boolean;
  /** Which code path decided it, for test names and logs: 'same order', 'different (ggml-cpu/amx)' … */
  path: string;
}

/** How tokenmill at `level` and llama.cpp's `peer` build compute matmuls of weight `type` (ggml's name, any
 * case: 'Q8_0', 'q4_k', 'F32'). */
export function numericsPairing(level: string, peer: PeerBuild, type: string): Pairing {
  const t = type.toUpperCase();
  const different = (why: string): Pairing => ({ sameOrder: false, path: `different${why ? ` (${why})` : ''}` });
  if (peer.amx && GGML_AMX_TYPES.includes(t)) return different('ggml-cpu/amx');
  if (TOKENMILL_BLOCK_STEP_TYPES[level]?.includes(t)) return different('tokenmill block step');
  if (SAME_ORDER_BUILDS.avx512!.includes(peer.variant) && GGML_AVX512_REPACKED_TYPES.includes(t)) return different('ggml-cpu/repack');
  if (SAME_ORDER_BUILDS[level]?.includes(peer.variant)) return { sameOrder: true, path: 'same order' };
  return different('');
}
