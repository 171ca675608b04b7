// Small statistics and formatting helpers for the benchmark report.
import { makeRng } from '../lib/gguf/weights.js';

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A measured quantity: every repetition plus its median. */
export interface Series {
  values: number[];
  median: number;
  min: number;
  max: number;
}

export function series(values: number[]): Series {
  return { values, median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

export function fmt(x: number | undefined, digits = 1): string {
  if (x === undefined || !Number.isFinite(x)) return '-';
  return x.toFixed(digits);
}

/** Seconds elapsed since `t0` (a process.hrtime.bigint() value). */
export function secondsSince(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** Deterministic PRNG for prompts and logit-bias entries (the GGUF writer's mulberry32). */
export const rng = makeRng;

/**
 * A prompt of `n` token ids: BOS (when the vocabulary has one) then random ids drawn away from the
 * special tokens at the bottom of the vocabulary. Each (seed) gives a different prompt, so no prefix
 * cache on either side can reuse an earlier repetition's work.
 */
export function randomPrompt(n: number, vocabSize: number, bos: number | null, seed: number): number[] {
  const r = rng(seed);
  const out: number[] = [];
  if (bos !== null) out.push(bos);
  // Byte tokens sit at the bottom of SPM vocabularies, added/control tokens at the top of BPE ones.
  const lo = Math.min(259, vocabSize >> 2), hi = Math.floor(vocabSize * 0.95);
  while (out.length < n) out.push(lo + Math.floor(r() * (hi - lo)));
  return out;
}
