// Synthetic llama-family GGUF models (llama, qwen2, qwen3, gemma2, gemma3, phi3) with random weights of one weight type, for
// parity tests against llama.cpp and for benchmarks. The tensor names, shapes and metadata keys are the
// ones llama.cpp's loader expects, so the same file loads in tokenmill and in node-llama-cpp. phi3 writes its
// fused tensors: attn_qkv (Q, K, V rows in that order) and ffn_up holding the gate rows then the up rows.
//
// NOTE(synth-model): activations stay sane by construction — norm weights are 1 ± 0.1, projection
// matrices have entries of scale 1/sqrt(n_in) (so a matmul keeps the magnitude of its input), token
// embeddings have scale 1 (2/sqrt(n_embd) when tied, since they are then also the output projection) and
// biases 0.1. Quantized types use gguf-weights.ts's random blocks at the same target scale (dequantized
// values within ~1.3× of it), except Q4_K/Q5_K, whose blocks come from synth-weights.ts so that they are
// zero-mean, and Q4_1/Q5_0/Q5_1/IQ4_NL/Q2_K/Q3_K/IQ4_XS, which quantize N(0, scale) values with ggml's
// reference quantizers (lib/gguf/quantize.ts). 1-D tensors (norms, biases) are always F32, as llama.cpp's converters write them.
//
// Usage:
//   const info = await writeSynthModel('/tmp/m.gguf', { arch: 'qwen2', type: 'Q8_0', nEmbd: 256, nLayer: 2,
//     nHead: 4, nHeadKv: 2, nFf: 512, nCtx: 512, seed: 1 });
//   info.nVocab, info.bytes
import { stat } from 'node:fs/promises';
import { GGUFWriter, gv, makeRng, randomTensorData, tensorTypes, type TensorTypeName } from '../test/helpers/gguf-writer.js';
import { copyTokenizerMetadata } from '../test/helpers/gguf-reader.js';
import { writeBuiltinVocab, type BuiltinVocab } from './synth-vocab.js';
import { randomKQuantZeroMean } from './synth-weights.js';

export type SynthArch = 'llama' | 'qwen2' | 'qwen3' | 'gemma2' | 'gemma3' | 'phi3';
export type SynthType = 'F32' | 'F16' | 'BF16' | 'Q8_0' | 'Q4_0' | 'Q4_1' | 'Q5_0' | 'Q5_1' | 'IQ4_NL' | 'Q2_K' |
  'Q3_K' | 'Q4_K' | 'Q5_K' | 'Q6_K' | 'IQ4_XS';
// The later additions come last, so each model's seed (from its index here) stays what it was.
export const synthTypes: readonly SynthType[] = [
  'F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_K', 'Q5_K', 'Q6_K', 'Q4_1', 'Q5_0', 'Q5_1', 'IQ4_NL', 'Q2_K', 'Q3_K', 'IQ4_XS',
];
// The llama-block architectures every weight type is tested and benchmarked on; the gemma ones have their own tests.
export const synthArchs: readonly SynthArch[] = ['llama', 'qwen2', 'qwen3'];

export interface SynthModelOptions {
  arch: SynthArch;
  type: SynthType;
  nEmbd: number;
  nLayer: number;
  nHead: number;
  nHeadKv: number;
  nFf: number;
  nCtx: number;
  /** Head dimension; default nEmbd / nHead (written as attention.key_length/value_length when it differs). */
  headDim?: number;
  /**
   * Path of a GGUF (e.g. ../shared/models/vocab/ggml-vocab-qwen2.gguf) whose tokenizer.ggml.* metadata is
   * copied, or a built-in vocabulary: 'spm' (default, ~450 tokens) or 'bpe' (~450 tokens, GPT-2 byte-level).
   */
  vocab?: string | BuiltinVocab;
  /** With a vocab path: also copy tokenizer.chat_template. Default false. */
  chatTemplate?: boolean;
  /** No output.weight: the output projection reuses token_embd. Default false. */
  tiedOutput?: boolean;
  /** Default 10000 for llama and phi3, 1e6 for the others. */
  ropeFreqBase?: number;
  /** Default 1e-5 for llama and phi3, 1e-6 for the others. */
  rmsEps?: number;
  /** gemma2/gemma3: attention.sliding_window (default 4096 for gemma2, 512 for gemma3). */
  slidingWindow?: number;
  seed: number;
}

export interface SynthModelInfo {
  path: string;
  nVocab: number;
  headDim: number;
  bytes: number;
  tensorCount: number;
}

// llama_ftype values written as general.file_type (Q3_K/Q4_K/Q5_K as their _M "mostly" variants).
const fileTypes: Record<SynthType, number> = {
  F32: 0, F16: 1, Q4_0: 2, Q4_1: 3, Q8_0: 7, Q5_0: 8, Q5_1: 9, Q2_K: 10, Q3_K: 12, Q4_K: 15, Q5_K: 17, Q6_K: 18,
  IQ4_NL: 25, IQ4_XS: 30, BF16: 32,
};

const tensorTypeOf = (t: SynthType) => t.toLowerCase() as TensorTypeName;

// Writes a synthetic model to `path`. Throws when a dimension does not fit the weight type's block size
// (e.g. nEmbd, nFf and nHead*headDim must be multiples of 256 for the K-quants and IQ4_XS, of 32 for the
// 32-element block formats).
export async function writeSynthModel(path: string, o: SynthModelOptions): Promise<SynthModelInfo> {
  const w = buildSynthModel(o);
  await w.writer.writeFile(path);
  return { path, nVocab: w.nVocab, headDim: w.headDim, bytes: (await stat(path)).size, tensorCount: w.writer.tensors.length };
}

// The writer of a synthetic model, not yet written anywhere (for callers that want bytes).
export function buildSynthModel(o: SynthModelOptions): { writer: GGUFWriter; nVocab: number; headDim: number } {
  for (const k of ['nEmbd', 'nLayer', 'nHead', 'nHeadKv', 'nFf', 'nCtx'] as const) {
    if (!Number.isInteger(o[k]) || o[k] <= 0) throw new Error(`synth model: ${k} must be a positive integer, got ${o[k]}`);
  }
  if (o.nHead % o.nHeadKv !== 0) throw new Error(`synth model: nHead ${o.nHead} is not a multiple of nHeadKv ${o.nHeadKv}`);
  const headDim = o.headDim ?? o.nEmbd / o.nHead;
  if (!Number.isInteger(headDim) || headDim % 2 !== 0) throw new Error(`synth model: head dim ${headDim} must be an even integer`);
  const wtype = tensorTypeOf(o.type);
  const block = tensorTypes[wtype].blockSize;
  const nQ = o.nHead * headDim, nKv = o.nHeadKv * headDim;
  for (const [name, n] of [['nEmbd', o.nEmbd], ['nFf', o.nFf], ['nHead*headDim', nQ]] as const) {
    if (n % block !== 0) throw new Error(`synth model: ${name} = ${n} is not a multiple of ${block}, the ${o.type} block size`);
  }
  const arch = o.arch;
  // qwen and gemma share the 1e6 rope base and 1e-6 norm epsilon defaults; phi3 has llama's
  const qwen = arch !== 'llama' && arch !== 'phi3';
  const gemma = arch === 'gemma2' || arch === 'gemma3';
  const rng = makeRng(o.seed);
  const w = new GGUFWriter();

  w.set('general.architecture', gv.string(arch));
  w.set('general.name', gv.string(`synth-${arch}-${o.type}-${o.nEmbd}x${o.nLayer}`));
  w.set('general.file_type', gv.u32(fileTypes[o.type]));
  w.set(`${arch}.context_length`, gv.u32(o.nCtx));
  w.set(`${arch}.embedding_length`, gv.u32(o.nEmbd));
  w.set(`${arch}.block_count`, gv.u32(o.nLayer));
  w.set(`${arch}.feed_forward_length`, gv.u32(o.nFf));
  w.set(`${arch}.attention.head_count`, gv.u32(o.nHead));
  w.set(`${arch}.attention.head_count_kv`, gv.u32(o.nHeadKv));
  if (headDim !== o.nEmbd / o.nHead) {
    w.set(`${arch}.attention.key_length`, gv.u32(headDim));
    w.set(`${arch}.attention.value_length`, gv.u32(headDim));
  }
  w.set(`${arch}.attention.layer_norm_rms_epsilon`, gv.f32(o.rmsEps ?? (qwen ? 1e-6 : 1e-5)));
  w.set(`${arch}.rope.freq_base`, gv.f32(o.ropeFreqBase ?? (qwen ? 1e6 : 10000)));
  if (arch === 'llama' || arch === 'phi3') w.set(`${arch}.rope.dimension_count`, gv.u32(headDim));
  if (gemma) w.set(`${arch}.attention.sliding_window`, gv.u32(o.slidingWindow ?? (arch === 'gemma2' ? 4096 : 512)));

  const vocab = o.vocab ?? 'spm';
  let nVocab: number;
  if (vocab === 'spm' || vocab === 'bpe') {
    nVocab = writeBuiltinVocab(w, vocab);
  } else {
    copyTokenizerMetadata(vocab, w, o.chatTemplate ? ['tokenizer.ggml.', 'tokenizer.chat_template'] : ['tokenizer.ggml.']);
    const tokens = w.metadata.get('tokenizer.ggml.tokens');
    if (!tokens || tokens.type !== 'array') throw new Error(`synth model: ${vocab} has no tokenizer.ggml.tokens`);
    nVocab = tokens.elems.length;
  }

  // A weight matrix of the model's type: ne = [n_in, n_out], entries of scale 1/sqrt(n_in).
  const matrixData = (nIn: number, nOut: number, scale = 1 / Math.sqrt(nIn)) => wtype === 'q4_k' || wtype === 'q5_k'
    ? randomKQuantZeroMean(wtype === 'q4_k' ? 4 : 5, nIn * nOut, rng, scale)
    : randomTensorData(wtype, [nIn, nOut], rng, scale);
  const matrix = (name: string, nIn: number, nOut: number, scale?: number) => w.addTensor(name, wtype, [nIn, nOut], matrixData(nIn, nOut, scale));
  // Matrices of the same n_in stacked (rows of the first, then of the next), as phi3's fused tensors are.
  const fused = (name: string, nIn: number, nOuts: number[]) => {
    const parts = nOuts.map((n) => matrixData(nIn, n));
    const data = new Uint8Array(parts.reduce((s, d) => s + d.length, 0));
    let at = 0;
    for (const d of parts) { data.set(d, at); at += d.length; }
    w.addTensor(name, wtype, [nIn, nOuts.reduce((a, b) => a + b, 0)], data);
  };
  // A 1-D F32 vector: mean + N(0, spread).
  const vector = (name: string, n: number, mean: number, spread: number) => {
    const data = new Float32Array(randomTensorData('f32', [n], rng, spread).buffer);
    for (let i = 0; i < n; i++) data[i] = data[i]! + mean;
    w.addTensor(name, 'f32', [n], new Uint8Array(data.buffer));
  };

  // Output scale 2/sqrt(n) spreads the logits over a few units, like a trained model's.
  const outScale = 2 / Math.sqrt(o.nEmbd);
  matrix('token_embd.weight', o.nEmbd, nVocab, o.tiedOutput ? outScale : 1);
  for (let il = 0; il < o.nLayer; il++) {
    const p = `blk.${il}.`;
    vector(p + 'attn_norm.weight', o.nEmbd, 1, 0.1);
    if (arch === 'phi3') {
      fused(p + 'attn_qkv.weight', o.nEmbd, [nQ, nKv, nKv]);
    } else {
      matrix(p + 'attn_q.weight', o.nEmbd, nQ);
      matrix(p + 'attn_k.weight', o.nEmbd, nKv);
      matrix(p + 'attn_v.weight', o.nEmbd, nKv);
    }
    if (arch === 'qwen2') {
      vector(p + 'attn_q.bias', nQ, 0, 0.1);
      vector(p + 'attn_k.bias', nKv, 0, 0.1);
      vector(p + 'attn_v.bias', nKv, 0, 0.1);
    }
    if (arch === 'qwen3' || arch === 'gemma3') {
      vector(p + 'attn_q_norm.weight', headDim, 1, 0.1);
      vector(p + 'attn_k_norm.weight', headDim, 1, 0.1);
    }
    matrix(p + 'attn_output.weight', nQ, o.nEmbd);
    if (gemma) vector(p + 'post_attention_norm.weight', o.nEmbd, 1, 0.1);
    vector(p + 'ffn_norm.weight', o.nEmbd, 1, 0.1);
    if (arch === 'phi3') {
      fused(p + 'ffn_up.weight', o.nEmbd, [o.nFf, o.nFf]);
    } else {
      matrix(p + 'ffn_gate.weight', o.nEmbd, o.nFf);
      matrix(p + 'ffn_up.weight', o.nEmbd, o.nFf);
    }
    matrix(p + 'ffn_down.weight', o.nFf, o.nEmbd);
    if (gemma) vector(p + 'post_ffw_norm.weight', o.nEmbd, 1, 0.1);
  }
  vector('output_norm.weight', o.nEmbd, 1, 0.1);
  if (!o.tiedOutput) matrix('output.weight', o.nEmbd, nVocab, outScale);
  return { writer: w, nVocab, headDim };
}
