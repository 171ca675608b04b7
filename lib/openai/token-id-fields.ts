// NOTE(openai/token-id-fields): a request's token-id fields (logit_bias, allowed_token_ids,
// stop_token_ids) as typed arrays. Each may hold as many entries as the model's vocabulary (262 144
// for Gemma 3): as objects and arrays they are structured-cloned from the parse worker to the event
// loop (a dictionary of 500k keys took 2.7-3.4 s) and converted to the addon's shape element by
// element; as typed arrays their buffers are transferred and the addon copies them in one go
// (docs/http-api.md#work-off-the-event-loop). Ids stay float64 until the vocabulary check, so an id past
// the int32 range is named in the 400 exactly as the request gave it.
import { InvalidArgumentError } from '../engine/errors.js';
import { clampLogitBias } from '../engine/request-fields.js';

/**
 * logit_bias as parallel arrays: each key's token id in the object's own key order (a repeated id,
 * e.g. "5" and " 5", keeps the later bias, as the engine applies them) and its bias clamped to
 * [-100, 100] (vLLM), as float32 like the engine's.
 */
export interface PackedLogitBias {
  ids: Float64Array;
  bias: Float32Array;
}

/** The validated logit_bias object (keys are integer strings, possibly padded with whitespace). */
export function packLogitBias(record: Readonly<Record<string, number>>): PackedLogitBias {
  const keys = Object.keys(record);
  const ids = new Float64Array(keys.length);
  const bias = new Float32Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    ids[i] = Number.parseInt(key.trim(), 10);
    bias[i] = clampLogitBias(record[key]!);
  }
  return { ids, bias };
}

/** A validated list of non-negative integer ids. */
export function idArray(ids: readonly number[]): Float64Array {
  return Float64Array.from(ids);
}

/** The buffers to transfer with a request holding these fields. */
export function tokenIdBuffers(r: { logit_bias?: PackedLogitBias | null; allowed_token_ids?: Float64Array | null; stop_token_ids: Float64Array }): ArrayBuffer[] {
  const arrays = [r.logit_bias?.ids, r.logit_bias?.bias, r.allowed_token_ids, r.stop_token_ids];
  return arrays.filter((a): a is Float64Array | Float32Array => a != null && a.length > 0).map((a) => a.buffer as ArrayBuffer);
}

function badRequest(message: string, param: string): never {
  throw new InvalidArgumentError(message, 'invalid_argument', 400, { param });
}

/**
 * The ids as the engine takes them, after vLLM's vocabulary check: every id outside [0, vocabSize) is
 * named, in the request's order, in the 400.
 */
export function inVocab(name: string, ids: Float64Array, vocabSize: number): Int32Array {
  let bad: number[] | null = null;
  for (let i = 0; i < ids.length; i++) {
    const t = ids[i]!;
    if (t < 0 || t >= vocabSize) (bad ??= []).push(t);
  }
  if (bad) badRequest(`token_id(s) [${bad.join(', ')}] in ${name} contain out-of-vocab token ids. Vocabulary size: ${vocabSize}`, name);
  return new Int32Array(ids);
}

/** allowed_token_ids as the engine takes them (vLLM's check names no id). */
export function allowedInVocab(ids: Float64Array, vocabSize: number): Int32Array {
  for (let i = 0; i < ids.length; i++) if (ids[i]! >= vocabSize) badRequest('allowed_token_ids contains out-of-vocab token id!', 'allowed_token_ids');
  return new Int32Array(ids);
}
