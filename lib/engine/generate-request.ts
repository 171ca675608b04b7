// The engine-level request (token ids in, tokens out) and its validation. Messages follow one shape:
// "Expected <what> for <name> but received <value>" (docs/library.md#errors).
import { InvalidArgumentError } from './errors.js';
import { Grammar } from './grammar.js';
import type { NativeRequest } from '../native/types.js';
import { clampLogitBias, I32_MAX, inRange, NUMERIC_FIELDS, rangeText, REPETITION_FIELDS, toFloat32Safe } from './request-fields.js';
import type { NumericField, NumericKey } from './request-fields.js';

/**
 * A logit bias as parallel arrays: ids[i] gets bias[i] (a repeated id keeps its last bias). A large
 * bias is cheapest this way: the addon copies both arrays in one go, where an object's keys are read
 * one by one.
 */
export interface LogitBiasArrays {
  ids: Int32Array;
  bias: Float32Array;
}

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
  stopTokenIds?: readonly number[] | Int32Array;
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
  /** `{ [tokenId]: bias }`, or the same as LogitBiasArrays. */
  logitBias?: Readonly<Record<string, number>> | LogitBiasArrays;
  allowedTokenIds?: readonly number[] | Int32Array;
  badWordsTokenIds?: readonly (readonly number[] | Int32Array)[];
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
  const shown = typeof value === 'string' ? JSON.stringify(value)
    : Array.isArray(value) ? 'an array'
    : ArrayBuffer.isView(value) ? `a ${value.constructor.name}`
    : String(value);
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

/** A table field's value checked against its range (request-fields.ts); floats made float32-safe. */
function checked(f: NumericField, v: unknown, name: string = f.key): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (!inRange(f, v)) fail(`${f.kind === 'int' ? 'an integer' : 'a number'} in ${rangeText(f)}`, name, v);
  return f.kind === 'float' ? toFloat32Safe(v) : v;
}

/**
 * A list of token ids as the addon takes it: an Int32Array passes as it is (checked, not copied: a
 * request's bad_words may carry a million ids, its allowed_token_ids a vocabulary), an array as
 * checked.
 */
function idList(name: string, v: unknown): number[] | Int32Array {
  if (v instanceof Int32Array) {
    for (let i = 0; i < v.length; i++) if (v[i]! < 0) fail('an array of token ids', name, v);
    return v;
  }
  if (!Array.isArray(v) || !v.every((x) => isInt(x) && x >= 0 && x <= I32_MAX)) fail('an array of token ids', name, v);
  return v as number[];
}

function ids(name: string, v: unknown): number[] | Int32Array | undefined {
  return v === undefined || v === null ? undefined : idList(name, v);
}

/** logitBias as the addon takes it (two typed arrays); an object's keys must be token ids. */
function logitBiasOf(v: unknown): LogitBiasArrays | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object') fail('an object of token id → bias', 'logitBias', v);
  if (v instanceof Int32Array || v instanceof Float32Array || Array.isArray(v)) fail('an object of token id → bias', 'logitBias', v);
  if ('ids' in v && 'bias' in v) {
    const { ids: tokens, bias } = v as { ids: unknown; bias: unknown };
    if (!(tokens instanceof Int32Array)) fail('an Int32Array', 'logitBias.ids', tokens);
    if (!(bias instanceof Float32Array)) fail('a Float32Array', 'logitBias.bias', bias);
    if (bias.length !== tokens.length) {
      throw new InvalidArgumentError(`Expected logitBias.ids and logitBias.bias of equal length, got ${tokens.length} and ${bias.length}`, 'invalid_argument', 400);
    }
    for (let i = 0; i < tokens.length; i++) {
      if (tokens[i]! < 0) fail('token ids', 'logitBias.ids', tokens[i]);
      if (!Number.isFinite(bias[i]!)) fail('finite numbers', 'logitBias.bias', bias[i]);
    }
    return { ids: tokens, bias };
  }
  const entries = Object.entries(v as Record<string, unknown>);
  const out = { ids: new Int32Array(entries.length), bias: new Float32Array(entries.length) };
  entries.forEach(([k, b], i) => {
    const t = Number(k);
    if (!isInt(t) || t < 0 || t > I32_MAX) fail('token ids as keys', 'logitBias', k);
    if (!isNum(b)) fail('numbers as values', 'logitBias', b);
    out.ids[i] = t;
    out.bias[i] = clampLogitBias(b);
  });
  return out;
}

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
  const logitBias = logitBiasOf(r.logitBias);
  let repetitionDetection: NativeRequest['repetitionDetection'];
  if (r.repetitionDetection !== undefined && r.repetitionDetection !== null) {
    const rd = r.repetitionDetection as Record<string, unknown>;
    if (typeof rd !== 'object') fail('an object', 'repetitionDetection', rd);
    const [maxPatternSize, minPatternSize, minCount] = REPETITION_FIELDS.map((f) => checked(f, rd[f.key], `repetitionDetection.${f.key}`) ?? f.default);
    repetitionDetection = { maxPatternSize: maxPatternSize!, minPatternSize: minPatternSize!, minCount: minCount! };
  }
  const numeric: Partial<Record<NumericKey, number>> = {};
  for (const f of NUMERIC_FIELDS) numeric[f.key] = checked(f, (r as unknown as Record<string, unknown>)[f.key]);
  const out: NativeRequest = {
    id,
    promptTokens: Int32Array.from(prompt),
    ...numeric,
    repetitionDetection,
    stop: stop ? [...stop] : undefined,
    stopTokenIds: ids('stopTokenIds', r.stopTokenIds),
    includeStopStrInOutput: r.includeStopStrInOutput,
    ignoreEos: r.ignoreEos,
    logprobs: logprobs === undefined ? undefined : logprobs !== false,
    topLogprobs: typeof logprobs === 'number' ? logprobs : undefined,
    cacheSalt: r.cacheSalt ?? undefined,
    skipSpecialTokens: r.skipSpecialTokens,
    spacesBetweenSpecialTokens: r.spacesBetweenSpecialTokens,
    logitBias,
    allowedTokenIds: ids('allowedTokenIds', r.allowedTokenIds),
    badWordsTokenIds: r.badWordsTokenIds?.map((w, i) => idList(`badWordsTokenIds[${i}]`, w)),
    xargs: r.xargs ? { ...r.xargs } : undefined,
    grammar: grammarOf(r.grammar),
    grammarAfter: grammarAfterOf(r),
    useBeamSearch: r.useBeamSearch,
  };
  for (const key of Object.keys(out) as (keyof NativeRequest)[]) if (out[key] === undefined) delete out[key];
  return out;
}

// Compile-time drift checks: every table key is a field of both request shapes, as a number.
type NumberFieldsOf<T> = { [K in keyof T]-?: number extends T[K] ? K : never }[keyof T];
const tableKeysAreGenerateFields: NumericKey extends NumberFieldsOf<GenerateRequest> ? true : never = true;
const tableKeysAreNativeFields: NumericKey extends NumberFieldsOf<NativeRequest> ? true : never = true;
void tableKeysAreGenerateFields;
void tableKeysAreNativeFields;
