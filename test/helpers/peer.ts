// A small wrapper around node-llama-cpp (installed in test/peer by the global setup) for parity tests:
// one shared llama.cpp instance per worker, vocab-only and full model loads, raw logits of every position.
//
// node-llama-cpp's model.tokenize(text, special) calls llama_tokenize with add_special = false and
// parse_special = special; detokenize(ids, special) renders special tokens' text only when special is true.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { mappedGgmlCpuVariant } from '../../bench/ggml-cpu-variant.js';
import { peerDir } from './peer-install.js';

// The slice of node-llama-cpp's API we use (typed here so this file does not depend on its .d.ts paths).
export interface PeerModel {
  tokenize(text: string, specialTokens?: boolean): number[];
  detokenize(tokens: readonly number[], specialTokens?: boolean): string;
  readonly tokens: { bos: number | null; eos: number | null };
  createContext(options: Record<string, unknown>): Promise<PeerContext>;
  dispose(): Promise<void>;
}
interface PeerContext {
  getSequence(): PeerSequence;
  dispose(): Promise<void>;
}
interface PeerSequence {
  clearHistory(): Promise<void>;
  controlledEvaluate(input: unknown[]): Promise<({ next?: { logits?: Map<number, number> } } | undefined)[]>;
}
interface PeerLlama {
  loadModel(options: Record<string, unknown>): Promise<PeerModel>;
  readonly systemInfo: string;
}

let llamaPromise: Promise<PeerLlama> | null = null;

// The shared llama.cpp instance: CPU only, prebuilt binary, never builds or downloads anything.
export function peerLlama(): Promise<PeerLlama> {
  llamaPromise ??= (async () => {
    const entry = createRequire(path.join(peerDir, 'package.json')).resolve('node-llama-cpp');
    const lib = await import(pathToFileURL(entry).href);
    return lib.getLlama({
      gpu: false, build: 'never', skipDownload: true, usePrebuiltBinaries: true, logLevel: lib.LlamaLogLevel.error,
    }) as Promise<PeerLlama>;
  })();
  return llamaPromise;
}

/** The llama.cpp CPU build node-llama-cpp loaded in this process, and what it was compiled with. */
export interface PeerCpuBuild {
  /** The ggml CPU variant: the best-scoring libggml-cpu-<variant>.so for this CPU (haswell, zen4, sapphirerapids …). */
  variant: string;
  /** Compiled with AMX int8 (the sapphirerapids variant): F16 and quantized matmuls then take ggml's AMX path. */
  amx: boolean;
  /** llama.cpp's feature line ("CPU : SSE3 = 1 | … | AVX512_BF16 = 1 | …"). */
  features: string;
}

export async function peerCpuBuild(): Promise<PeerCpuBuild> {
  const llama = await peerLlama();
  const features = llama.systemInfo.trim();
  return { variant: mappedGgmlCpuVariant() ?? 'unknown (no libggml-cpu-*.so in /proc/self/maps)', amx: /AMX_INT8 = 1/.test(features), features };
}

export async function peerLoadModel(modelPath: string, options: { vocabOnly?: boolean } = {}): Promise<PeerModel> {
  const llama = await peerLlama();
  return llama.loadModel({ modelPath, gpuLayers: 0, vocabOnly: options.vocabOnly === true, useMmap: true });
}

/** llama.cpp evaluates a prompt in batches of at most batchSize tokens (default: the whole prompt at once).
 * Some of its CPU kernels depend on the batch: flash attention takes a tiled all-F32 path for 64 queries or
 * more (ggml-cpu ops.cpp, GGML_FA_TILE_Q) and a per-row path with F16 queries below that; repacked Q4_K
 * weights multiply groups of 4 tokens with a gemm that rounds otherwise than the one-token gemv. A batch of
 * 1 gives every token the arithmetic tokenmill follows (docs/kernels.md). */
export interface PeerBatchOptions {
  batchSize?: number;
}

// Raw logits at every position of `tokens` (row i predicts the token after tokens[0..i]) as a
// (tokens.length × nVocab) Float32Array, through one fresh context: flash attention on, 1 thread — the
// configuration tokenmill's numerics follow.
export async function peerLogits(model: PeerModel, tokens: readonly number[], nVocab: number, options: PeerBatchOptions = {}): Promise<Float32Array> {
  const ctx = await model.createContext({
    contextSize: Math.max(256, tokens.length), batchSize: options.batchSize ?? Math.max(256, tokens.length), threads: 1, sequences: 1,
    flashAttention: true,
  });
  try {
    const seq = ctx.getSequence();
    const want = { logits: true };
    const res = await seq.controlledEvaluate(tokens.map((t) => [t, { generateNext: want }]));
    const out = new Float32Array(tokens.length * nVocab);
    tokens.forEach((_, i) => {
      const logits = res[i]?.next?.logits;
      if (!logits) throw new Error(`node-llama-cpp returned no logits at position ${i}`);
      for (const [id, v] of logits) out[i * nVocab + id] = v;
    });
    return out;
  } finally {
    await ctx.dispose();
  }
}

// Greedy continuation of `tokens` by llama.cpp: up to maxTokens new tokens, stopping after an
// end-of-generation token (which is included, as tokenmill's engine reports its stop token). Same
// context settings as peerLogits.
export async function peerGreedy(model: PeerModel, tokens: readonly number[], maxTokens: number, isEog: (t: number) => boolean, options: PeerBatchOptions = {}): Promise<number[]> {
  const size = Math.max(256, tokens.length + maxTokens);
  const ctx = await model.createContext({ contextSize: size, batchSize: options.batchSize ?? size, threads: 1, sequences: 1, flashAttention: true });
  try {
    const seq = ctx.getSequence() as PeerSequence & { evaluate(t: number[], o: Record<string, unknown>): AsyncGenerator<number> };
    const out: number[] = [];
    for await (const t of seq.evaluate([...tokens], { temperature: 0 })) {
      out.push(t);
      if (out.length >= maxTokens || isEog(t)) break;
    }
    return out;
  } finally {
    await ctx.dispose();
  }
}

// Raw logits after the whole of `tokens` (nVocab), through one fresh context set up as peerLogits'; only the
// last position's logits cross over (real vocabularies are large).
export async function peerLastLogits(model: PeerModel, tokens: readonly number[], nVocab: number, options: PeerBatchOptions = {}): Promise<Float32Array> {
  const size = Math.max(256, tokens.length);
  const ctx = await model.createContext({ contextSize: size, batchSize: options.batchSize ?? size, threads: 1, sequences: 1, flashAttention: true });
  try {
    const last = tokens.length - 1;
    const res = await ctx.getSequence().controlledEvaluate(tokens.map((t, i) => (i === last ? [t, { generateNext: { logits: true } }] : t)));
    const logits = res[last]?.next?.logits;
    if (!logits) throw new Error('node-llama-cpp returned no logits at the last position');
    const out = new Float32Array(nVocab);
    for (const [id, v] of logits) out[id] = v;
    return out;
  } finally {
    await ctx.dispose();
  }
}
