// NOTE(engine/memory-estimate): what an engine on a model will hold, from the GGUF header alone, and the
// memory it may use — so a model that cannot fit is refused before loading its weights into memory, with
// the numbers, instead of swapping or being killed. The estimate mirrors the native engine's allocations:
// the weights (mapped from the file, or copied at load where repacked; every byte is read per token, so they
// must stay resident), the KV
// cache the engine allocates (kvCacheMemory, whole 16-token blocks of F16 K and V for every layer), and its
// step buffers (activations for maxNumBatchedTokens rows, one logits row per sequence).
import fs from 'node:fs';
import os from 'node:os';
import type { NativeEngineOptions, NativeModelInfo } from '../native/types.js';

// The native engine's defaults (native/engine/engine.h) and block size (native/kv).
export const DEFAULT_KV_CACHE_MEMORY = 256 * 1024 * 1024;
const DEFAULT_MAX_NUM_SEQS = 64;
const DEFAULT_MAX_NUM_BATCHED_TOKENS = 512;
const KV_BLOCK_SIZE = 16;

export interface MemoryEstimate {
  /** Bytes of the weights once loaded (the model's weightBytes: the file's tensor data, repacked matrices at their size). */
  weights: number;
  /** K and V bytes one token occupies across all layers (F16). */
  kvBytesPerToken: number;
  /** Bytes of KV cache the engine allocates (whole blocks within kvCacheMemory). */
  kvCache: number;
  /** Tokens that KV cache holds, over all sequences. */
  kvTokens: number;
  /** KV bytes for maxNumSeqs sequences of maxModelLen tokens each (what a full load of long requests needs). */
  kvFullContexts: number;
  /** Step buffers: activations and logits rows. */
  buffers: number;
  /** weights + kvCache + buffers. */
  total: number;
}

export interface MemoryEstimateOptions extends Pick<NativeEngineOptions, 'kvCacheMemory' | 'maxNumSeqs' | 'maxNumBatchedTokens' | 'maxModelLen'> {}

export function estimateMemory(info: NativeModelInfo, options: MemoryEstimateOptions = {}): MemoryEstimate {
  const hp = info.hparams;
  if (!hp) throw new Error(`${info.path}: no model hyper-parameters to estimate memory from`);
  const weights = info.weightBytes;
  const kvBytesPerToken = 2 * hp.nLayer * hp.nHeadKv * hp.headDim * 2;
  const bytesPerBlock = kvBytesPerToken * KV_BLOCK_SIZE;
  const kvBudget = options.kvCacheMemory ?? DEFAULT_KV_CACHE_MEMORY;
  const kvBlocks = Math.floor(kvBudget / bytesPerBlock);
  const kvCache = kvBlocks * bytesPerBlock;
  const seqs = options.maxNumSeqs ?? DEFAULT_MAX_NUM_SEQS;
  const rows = options.maxNumBatchedTokens ?? DEFAULT_MAX_NUM_BATCHED_TOKENS;
  const ctx = options.maxModelLen ?? hp.nCtxTrain;
  const nQ = hp.nHead * hp.headDim, nKv = hp.nHeadKv * hp.headDim;
  // Per batch row: residual, normed input, projection (3 × n_embd), q and attention output, this step's K
  // and V, gate and up; plus a final-normed row per output and one logits row per sequence (F32).
  const perRow = 3 * hp.nEmbd + 2 * nQ + 2 * nKv + 2 * hp.nFf;
  const buffers = 4 * (rows * perRow + Math.max(seqs, rows) * hp.nEmbd + (seqs + 2) * info.vocabSize);
  return {
    weights,
    kvBytesPerToken,
    kvCache,
    kvTokens: kvBlocks * KV_BLOCK_SIZE,
    kvFullContexts: kvBytesPerToken * ctx * seqs,
    buffers,
    total: weights + kvCache + buffers,
  };
}

export interface MemoryLimit {
  bytes: number;
  source: string;
}

// The memory this process may use: $TOKENMILL_MEMORY_LIMIT (bytes) when set, else the cgroup's limit
// (v2 memory.max, v1 memory.limit_in_bytes) when lower than the machine's RAM, else the RAM.
export function memoryLimit(): MemoryLimit {
  const env = process.env.TOKENMILL_MEMORY_LIMIT;
  if (env !== undefined && env !== '') {
    const n = Number(env);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`TOKENMILL_MEMORY_LIMIT must be a positive number of bytes, got '${env}'`);
    return { bytes: n, source: 'TOKENMILL_MEMORY_LIMIT' };
  }
  const ram = { bytes: os.totalmem(), source: 'physical memory' };
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8').trim();
    } catch {
      continue;   // no such cgroup file here: try the next, then the RAM
    }
    const n = Number(text);
    if (Number.isFinite(n) && n > 0 && n < ram.bytes) return { bytes: n, source: `cgroup limit (${file})` };
  }
  return ram;
}

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n, u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return `${u === 0 ? v : v.toFixed(v >= 100 ? 0 : 1)} ${units[u]}`;
}

export function describeEstimate(e: MemoryEstimate): string {
  return `${formatBytes(e.total)} (weights ${formatBytes(e.weights)} + KV cache ${formatBytes(e.kvCache)} for ${e.kvTokens} tokens + buffers ${formatBytes(e.buffers)})`;
}
