// The engine-level request (token ids in, tokens out) and its validation. Messages follow one shape:
// "Expected <what> for <name> but received <value>" (docs/library.md#errors).
import { InvalidArgumentError } from './errors.js';
import { Grammar } from './grammar.js';
import type { NativeRequest } from '../native/types.js';

export interface GenerateRequest {
  promptTokens: readonly number[] | Int32Array;
  /** Choices sampled from the prompt, which is computed once and shared copy-on-write. Default 1. */
  n?: number;
  /** Output token cap; omitted = until EOS or the context is full. */
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  repetitionPenalty?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  seed?: number;
  stop?: string | readonly string[];
  stopTokenIds?: readonly number[];
  includeStopStrInOutput?: boolean;
  ignoreEos?: boolean;
  minTokens?: number;
  /** false/omitted: none; true: the chosen token's logprob; a number N: plus the top N. */
  logprobs?: boolean | number;
  /** Each prompt token's logprob plus the top N at its position (vLLM's prompt_logprobs); omitted: off. */
  promptLogprobs?: number;
  priority?: number;
  cacheSalt?: string;
  skipSpecialTokens?: boolean;
  spacesBetweenSpecialTokens?: boolean;
  logitBias?: Readonly<Record<string, number>>;
  allowedTokenIds?: readonly number[];
  badWordsTokenIds?: readonly (readonly number[])[];
  xargs?: Readonly<Record<string, unknown>>;
  /** vLLM's repetition_detection: stop with finishReason 'repetition' when the output ends in a repeated pattern. */
  repetitionDetection?: { maxPatternSize?: number; minPatternSize?: number; minCount?: number };
  /**
   * Constrains the output to a grammar compiled for the engine's model (Grammar.compile /
   * Model.compileGrammar): every sampled token keeps the text a prefix of the language, EOS is allowed
   * only where the text may end, and a complete match ends the choice (finishReason 'stop'). Logprobs
   * are those of the masked distribution.
   */
  grammar?: Grammar;
  /**
   * Applies `grammar` only once the output contains this text, e.g. '</think>': the model reasons
   * freely, then the text after the marker follows the grammar (vLLM's structured outputs with a
   * reasoning parser). Omitted: the grammar applies from the first token.
   */
  grammarAfter?: string;
  /**
   * Beam search of width n (vLLM's use_beam_search): each choice is one of the n best beams, ranked by
   * cumLogprob / (prompt + output length)^lengthPenalty, and arrives whole when the search ends. Only
   * temperature, ignoreEos, includeStopStrInOutput, skip/spaces special tokens and lengthPenalty apply.
   */
  useBeamSearch?: boolean;
  /** Beam search only: the length exponent of the score. Default 1. */
  lengthPenalty?: number;
}

function fail(what: string, name: string, value: unknown): never {
  const shown = typeof value === 'string' ? JSON.stringify(value) : Array.isArray(value) ? 'an array' : String(value);
  throw new InvalidArgumentError(`Expected ${what} for ${name} but received ${shown} of type ${typeof value}`, 'invalid_argument', 400);
}

function grammarOf(g: unknown): NativeRequest['grammar'] {
  if (g === undefined || g === null) return undefined;
  if (!(g instanceof Grammar)) fail('a Grammar (from Grammar.compile)', 'grammar', g);
  return g.handle;
}

function grammarAfterOf(r: GenerateRequest): string | undefined {
  const after: unknown = r.grammarAfter;
  if (after === undefined || after === null) return undefined;
  if (typeof after !== 'string' || after.length === 0) fail('a non-empty string', 'grammarAfter', after);
  if (r.grammar === undefined || r.grammar === null) throw new InvalidArgumentError('grammarAfter needs a grammar', 'invalid_argument', 400);
  return after;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function intIn(name: string, v: unknown, lo: number, hi: number): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isInt(v) || v < lo || v > hi) fail(`an integer in [${lo}, ${hi}]`, name, v);
  return v;
}

function numIn(name: string, v: unknown, lo: number, hi: number, loOpen = false): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isNum(v) || v > hi || (loOpen ? v <= lo : v < lo)) fail(`a number in ${loOpen ? '(' : '['}${lo}, ${hi}]`, name, v);
  return v;
}

function ids(name: string, v: unknown): number[] | undefined {
  if (v === undefined || v === null) return undefined;
  const arr = v instanceof Int32Array ? Array.from(v) : v;
  if (!Array.isArray(arr) || !arr.every((x) => isInt(x) && x >= 0 && x <= 0x7fffffff)) fail('an array of token ids', name, v);
  return arr as number[];
}

const I32 = 0x7fffffff;

/** Validates a GenerateRequest and converts it to the addon's request shape. */
export function toNativeRequest(id: number, r: GenerateRequest): NativeRequest {
  if (typeof r !== 'object' || r === null) fail('an object', 'request', r);
  const prompt = ids('promptTokens', r.promptTokens);
  if (!prompt || prompt.length === 0) fail('a non-empty array of token ids', 'promptTokens', r.promptTokens);
  const stop = r.stop === undefined || r.stop === null ? undefined : typeof r.stop === 'string' ? [r.stop] : r.stop;
  if (stop && (!Array.isArray(stop) || !stop.every((s) => typeof s === 'string' && s.length > 0))) {
    fail('a non-empty string or an array of non-empty strings', 'stop', r.stop);
  }
  const logprobs = r.logprobs;
  if (logprobs !== undefined && typeof logprobs !== 'boolean' && !(isInt(logprobs) && logprobs >= 0)) {
    fail('a boolean or a non-negative integer', 'logprobs', logprobs);
  }
  for (const key of ['includeStopStrInOutput', 'ignoreEos', 'skipSpecialTokens', 'spacesBetweenSpecialTokens', 'useBeamSearch'] as const) {
    if (r[key] !== undefined && typeof r[key] !== 'boolean') fail('a boolean', key, r[key]);
  }
  if (r.cacheSalt !== undefined && r.cacheSalt !== null && typeof r.cacheSalt !== 'string') fail('a string', 'cacheSalt', r.cacheSalt);
  let logitBias: [number, number][] | undefined;
  if (r.logitBias !== undefined && r.logitBias !== null) {
    if (typeof r.logitBias !== 'object') fail('an object of token id → bias', 'logitBias', r.logitBias);
    logitBias = Object.entries(r.logitBias).map(([k, b]) => {
      const t = Number(k);
      if (!isInt(t) || t < 0) fail('token ids as keys', 'logitBias', k);
      if (!isNum(b)) fail('numbers as values', 'logitBias', b);
      return [t, b];
    });
  }
  let repetitionDetection: NativeRequest['repetitionDetection'];
  if (r.repetitionDetection !== undefined && r.repetitionDetection !== null) {
    const rd = r.repetitionDetection;
    if (typeof rd !== 'object') fail('an object', 'repetitionDetection', rd);
    repetitionDetection = {
      maxPatternSize: intIn('repetitionDetection.maxPatternSize', rd.maxPatternSize, 0, I32) ?? 0,
      minPatternSize: intIn('repetitionDetection.minPatternSize', rd.minPatternSize, 0, I32) ?? 0,
      minCount: intIn('repetitionDetection.minCount', rd.minCount, 0, I32) ?? 0,
    };
  }
  const out: NativeRequest = {
    id,
    promptTokens: Int32Array.from(prompt),
    n: intIn('n', r.n, 1, 65536),
    promptLogprobs: intIn('promptLogprobs', r.promptLogprobs, 0, I32),
    repetitionDetection,
    maxTokens: intIn('maxTokens', r.maxTokens, 1, I32),
    temperature: numIn('temperature', r.temperature, 0, Number.MAX_VALUE),
    topP: numIn('topP', r.topP, 0, 1, true),
    topK: intIn('topK', r.topK, -1, I32),
    minP: numIn('minP', r.minP, 0, 1),
    repetitionPenalty: numIn('repetitionPenalty', r.repetitionPenalty, 0, Number.MAX_VALUE, true),
    frequencyPenalty: numIn('frequencyPenalty', r.frequencyPenalty, -2, 2),
    presencePenalty: numIn('presencePenalty', r.presencePenalty, -2, 2),
    seed: intIn('seed', r.seed, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
    stop: stop ? [...stop] : undefined,
    stopTokenIds: ids('stopTokenIds', r.stopTokenIds),
    includeStopStrInOutput: r.includeStopStrInOutput,
    ignoreEos: r.ignoreEos,
    minTokens: intIn('minTokens', r.minTokens, 0, I32),
    logprobs: logprobs === undefined ? undefined : logprobs !== false,
    topLogprobs: typeof logprobs === 'number' ? logprobs : undefined,
    priority: intIn('priority', r.priority, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
    cacheSalt: r.cacheSalt ?? undefined,
    skipSpecialTokens: r.skipSpecialTokens,
    spacesBetweenSpecialTokens: r.spacesBetweenSpecialTokens,
    logitBias,
    allowedTokenIds: ids('allowedTokenIds', r.allowedTokenIds),
    badWordsTokenIds: r.badWordsTokenIds?.map((w, i) => ids(`badWordsTokenIds[${i}]`, w) ?? []),
    xargs: r.xargs ? { ...r.xargs } : undefined,
    grammar: grammarOf(r.grammar),
    grammarAfter: grammarAfterOf(r),
    useBeamSearch: r.useBeamSearch,
    lengthPenalty: numIn('lengthPenalty', r.lengthPenalty, -Number.MAX_VALUE, Number.MAX_VALUE),
  };
  for (const key of Object.keys(out) as (keyof NativeRequest)[]) if (out[key] === undefined) delete out[key];
  return out;
}
