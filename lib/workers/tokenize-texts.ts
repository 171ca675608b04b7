// NOTE(workers/tokenize-texts): tokenization of request text (the rendered prompt, bad_words forms)
// without holding the event loop. Short texts tokenize inline: up to INLINE_TOKENIZE_CHARS in all,
// which measured ≤ 0.7 ms on stories260K's tokenizer on a busy 2-core EPYC (16 KB took 2.7 ms, a
// 3.36 MB prompt 490 ms), less than a libuv round trip would cost in latency. Longer ones go to libuv's
// threads through the tokenize gate, so one client cannot take every thread with huge prompts.
import { tokenizeGate } from './offload.js';
import type { WorkOptions } from './offload.js';

export const INLINE_TOKENIZE_CHARS = 4096;

export interface TokenizeFlags {
  addSpecial: boolean;
  parseSpecial: boolean;
}

/** What tokenizeTexts needs of a model (a test double may lack the off-thread path). */
export interface TextTokenizer {
  tokenize(text: string, options: TokenizeFlags): number[];
  tokenizeMany?(texts: readonly string[], options: TokenizeFlags): Promise<Int32Array[]>;
}

/** One id list per text. */
export async function tokenizeTexts(model: TextTokenizer, texts: readonly string[], options: TokenizeFlags, work: WorkOptions = {}): Promise<(number[] | Int32Array)[]> {
  const chars = texts.reduce((n, t) => n + t.length, 0);
  if (chars <= INLINE_TOKENIZE_CHARS || !model.tokenizeMany) return texts.map((t) => model.tokenize(t, options));
  const release = await tokenizeGate().acquire(work.client ?? '', work.signal);
  try {
    return await model.tokenizeMany(texts, options);
  } finally {
    release();
  }
}
