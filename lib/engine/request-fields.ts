// NOTE(engine/request-fields): the one table of a request's numeric fields as the engine sees them —
// kind, the range the engine honours, its default and the native member the addon fills. It drives
// toNativeRequest's checks (generate-request.ts) and the chat layer's 400s (openai/request-limits.ts);
// test/unit/request-fields-drift.test.ts fails when native/types.ts, native/addon/js-convert.cpp,
// native/sample/sampling-params.h or native/engine/engine.h stop agreeing with it, and
// test/e2e/server-field-ranges.test.ts sends every range edge through the real server.
//
// Why the float ranges are what they are: the engine computes in float32. A double that rounds to 0
// or overflows to infinity there would change meaning (top_p 1e-300 → 0, repetition_penalty 1e300 →
// inf), so every float is either kept inside a range whose float32 arithmetic stays finite, or — where
// rounding a tiny value up does not change the outcome — moved to the nearest positive float32.

export type FieldKind = 'int' | 'float';

export interface NumericField {
  /** GenerateRequest / NativeRequest key. */
  readonly key: string;
  /** The C++ member js-convert.cpp fills (sampling_params, engine_request or repetition_params). */
  readonly native: string;
  readonly kind: FieldKind;
  readonly min: number;
  readonly max: number;
  /** min itself is excluded. */
  readonly minOpen?: boolean;
  /** The C++ default when the key is absent. */
  readonly default: number;
}

export const I32_MAX = 0x7fffffff;
/** Smallest positive normal float32: below it a float field would round to 0 (or a denormal). */
export const F32_MIN_NORMAL = 1.1754943508222875e-38;
/**
 * Largest factor a float field may scale logits by and stay finite in float32 for any logit a model
 * produces (|logit| < 1e8 → |logit × 1e30| < 1e38 < FLT_MAX).
 */
export const F32_SCALE_LIMIT = 1e30;
/** Seeds, priorities and ids cross as doubles: integers beyond 2^53 are not exact. */
export const SAFE_INT = Number.MAX_SAFE_INTEGER;

/** Engine-wide settings' C++ defaults the JS side needs (native/engine/engine.h engine_params). */
export const ENGINE_DEFAULTS = { maxNumSeqs: 64, maxLogprobs: 20 } as const;

export const NUMERIC_FIELDS = [
  { key: 'n', native: 'n', kind: 'int', min: 1, max: 1 << 16, default: 1 },
  { key: 'maxTokens', native: 'max_tokens', kind: 'int', min: 1, max: I32_MAX, default: -1 },
  { key: 'temperature', native: 'temperature', kind: 'float', min: 0, max: 2, default: 1 },
  { key: 'topP', native: 'top_p', kind: 'float', min: 0, minOpen: true, max: 1, default: 1 },
  { key: 'topK', native: 'top_k', kind: 'int', min: -1, max: I32_MAX, default: 0 },
  { key: 'minP', native: 'min_p', kind: 'float', min: 0, max: 1, default: 0 },
  { key: 'repetitionPenalty', native: 'repetition_penalty', kind: 'float', min: 1e-30, max: F32_SCALE_LIMIT, default: 1 },
  { key: 'frequencyPenalty', native: 'frequency_penalty', kind: 'float', min: -2, max: 2, default: 0 },
  { key: 'presencePenalty', native: 'presence_penalty', kind: 'float', min: -2, max: 2, default: 0 },
  { key: 'lengthPenalty', native: 'length_penalty', kind: 'float', min: -F32_SCALE_LIMIT, max: F32_SCALE_LIMIT, default: 1 },
  { key: 'minTokens', native: 'min_tokens', kind: 'int', min: 0, max: I32_MAX, default: 0 },
  { key: 'promptLogprobs', native: 'prompt_logprobs', kind: 'int', min: 0, max: I32_MAX, default: -1 },
  { key: 'seed', native: 'seed', kind: 'int', min: -SAFE_INT, max: SAFE_INT, default: 0 },
  { key: 'priority', native: 'priority', kind: 'int', min: -SAFE_INT, max: SAFE_INT, default: 0 },
] as const satisfies readonly NumericField[];

/** repetitionDetection's members (native repetition_params). */
export const REPETITION_FIELDS = [
  { key: 'maxPatternSize', native: 'max_pattern_size', kind: 'int', min: 0, max: I32_MAX, default: 0 },
  { key: 'minPatternSize', native: 'min_pattern_size', kind: 'int', min: 0, max: I32_MAX, default: 0 },
  { key: 'minCount', native: 'min_count', kind: 'int', min: 0, max: I32_MAX, default: 0 },
] as const satisfies readonly NumericField[];

export type NumericKey = (typeof NUMERIC_FIELDS)[number]['key'];

export const fieldOf = (key: NumericKey): NumericField => NUMERIC_FIELDS.find((f) => f.key === key)!;

/** True when `v` is a value of the field's kind inside its range. */
export function inRange(f: NumericField, v: unknown): v is number {
  if (typeof v !== 'number' || !Number.isFinite(v)) return false;
  if (f.kind === 'int' && !Number.isSafeInteger(v)) return false;
  return v <= f.max && (f.minOpen ? v > f.min : v >= f.min);
}

/** The range as text: `[0, 2]`, `(0, 1]`. */
export function rangeText(f: NumericField): string {
  return `${f.minOpen ? '(' : '['}${f.min}, ${f.max}]`;
}

/**
 * A float the engine receives as float32: a non-zero value too small for a float32 normal moves to
 * the smallest one of its sign (top_p 1e-300 keeps only the most likely token either way; min_p 1e-300
 * prunes nothing either way), so it never rounds to 0.
 */
export function toFloat32Safe(v: number): number {
  return v !== 0 && Math.abs(v) < F32_MIN_NORMAL ? Math.sign(v) * F32_MIN_NORMAL : v;
}

/**
 * A logit bias in the engine's range [-100, 100] (vLLM's clamp; native/sample/logit-bias.cpp applies the
 * same): clamped before it becomes float32, so a huge bias cannot overflow to infinity on the way.
 */
export function clampLogitBias(bias: number): number {
  return Math.min(100, Math.max(-100, bias));
}
