// NOTE(openai/validate): turns a parsed JSON body into either a typed request or the FastAPI 422
// `detail[]` with *every* violation (docs/http-api.md#validation-errors-422): zod issues are mapped 1:1 onto
// pydantic v2 error types and messages (markers from py-types.ts), then the cross-field rules (pydantic model
// validators: loc ["body"], "Value error, …") are checked on the raw body and appended. Unknown top-level
// fields are not errors; they are returned so the caller can debug-log them.
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { TokenmillError } from '../engine/errors.js';
import { ChatCompletionRequestSchema, KNOWN_REQUEST_FIELDS, TrajectoryLogRequestSchema } from './protocol.js';
import type { ChatCompletionRequest, TrajectoryLogRequest, ValidationDetail } from './protocol.js';
import { chatRequestRules } from './validate-rules.js';

export type Loc = (string | number)[];

/** 422 with the `detail` array (docs/http-api.md#validation-errors-422); has `status` like any TokenmillError. */
export class RequestValidationError extends TokenmillError {
  constructor(readonly detail: ValidationDetail[]) {
    super(detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '), 'invalid_request', 422);
  }
}

export type Validated<T> =
  | { ok: true; value: T; ignoredFields: string[] }
  | { ok: false; detail: ValidationDetail[]; ignoredFields: string[] };

/** Parses a request body; a syntax error is pydantic's json_invalid at ["body", <char offset>]. */
export function parseJsonBody(text: string): { ok: true; value: unknown } | { ok: false; detail: ValidationDetail[] } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    const m = /position (\d+)/.exec(String((e as Error).message));
    const offset = m ? Number(m[1]) : text.length;
    return { ok: false, detail: [{ loc: ['body', offset], msg: 'JSON decode error', type: 'json_invalid' }] };
  }
}

function formatBound(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  if (v === 2 ** 63) return '9223372036854775807';
  if (v === -(2 ** 63)) return '-9223372036854775808';
  return String(v);
}

function pyRepr(v: unknown): string {
  return typeof v === 'string' ? `'${v}'` : JSON.stringify(v);
}

function literalMessage(values: readonly unknown[]): string {
  const parts = values.map(pyRepr);
  if (parts.length <= 1) return `Input should be ${parts[0] ?? ''}`;
  return `Input should be ${parts.slice(0, -1).join(', ')} or ${parts[parts.length - 1]}`;
}

const TYPE_MESSAGES: Record<string, string> = {
  string_type: 'Input should be a valid string',
  int_type: 'Input should be a valid integer',
  int_from_float: 'Input should be a valid integer, got a number with a fractional part',
  float_type: 'Input should be a valid number',
  finite_number: 'Input should be a finite number',
  bool_type: 'Input should be a valid boolean',
  list_type: 'Input should be a valid list',
  dict_type: 'Input should be a valid dictionary',
  datetime_from_date_parsing: 'Input should be a valid datetime',
};

/** True when `path` names a key that is absent from its (object) parent in `root`. */
function isMissing(root: unknown, path: readonly PropertyKey[]): boolean {
  let cur: unknown = root;
  for (let i = 0; i < path.length; i++) {
    if (cur === null || typeof cur !== 'object') return false;
    const key = path[i] as string | number;
    if (i === path.length - 1) return Array.isArray(cur) ? false : !(key in (cur as object));
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return false;
}

function toLoc(prefix: Loc, path: readonly PropertyKey[]): Loc {
  return [...prefix, ...path.map((p) => (typeof p === 'number' ? p : String(p)))];
}

/** Maps zod issues to pydantic-style details. `root` is the value `path`s are relative to. */
export function issuesToDetail(issues: readonly z.core.$ZodIssue[], root: unknown, prefix: Loc): ValidationDetail[] {
  const out: ValidationDetail[] = [];
  for (const iss of issues) {
    const loc = toLoc(prefix, iss.path);
    const marker = iss.message.startsWith('py:') ? iss.message.slice(3) : null;
    if (iss.code === 'invalid_union' && marker?.startsWith('union:')) {
      if (isMissing(root, iss.path)) { out.push({ loc, msg: 'Field required', type: 'missing' }); continue; }
      const tags = marker.slice('union:'.length).split('|');
      let sub: unknown = root;
      for (const p of iss.path) sub = (sub as Record<PropertyKey, unknown>)?.[p];
      iss.errors.forEach((branch, i) => out.push(...issuesToDetail(branch, sub, [...loc, tags[i] ?? String(i)])));
      continue;
    }
    if (iss.code === 'invalid_type' && isMissing(root, iss.path)) {
      out.push({ loc, msg: 'Field required', type: 'missing' });
      continue;
    }
    if (iss.code === 'invalid_type' && iss.path.length === 0 && prefix.length === 1) {
      out.push({ loc, msg: 'Input should be a valid dictionary or object to extract fields from', type: 'model_attributes_type' });
      continue;
    }
    if (iss.code === 'too_big') {
      const type = iss.inclusive ? 'less_than_equal' : 'less_than';
      const word = iss.inclusive ? 'less than or equal to' : 'less than';
      out.push({ loc, msg: `Input should be ${word} ${formatBound(iss.maximum)}`, type });
      continue;
    }
    if (iss.code === 'too_small') {
      const type = iss.inclusive ? 'greater_than_equal' : 'greater_than';
      const word = iss.inclusive ? 'greater than or equal to' : 'greater than';
      out.push({ loc, msg: `Input should be ${word} ${formatBound(iss.minimum)}`, type });
      continue;
    }
    if (marker?.startsWith('literal_error:')) {
      out.push({ loc, msg: literalMessage(JSON.parse(marker.slice('literal_error:'.length)) as unknown[]), type: 'literal_error' });
      continue;
    }
    if (marker?.startsWith('value_error:')) {
      out.push({ loc, msg: marker.slice('value_error:'.length), type: 'value_error' });
      continue;
    }
    if (marker && TYPE_MESSAGES[marker]) {
      out.push({ loc, msg: TYPE_MESSAGES[marker]!, type: marker });
      continue;
    }
    // A zod check without a pydantic twin (should not happen with py-types); keep it visible.
    out.push({ loc, msg: `Value error, ${iss.message}`, type: 'value_error' });
  }
  return out;
}

export interface ValidateOptions {
  /** --max-logprobs (default 20; -1 = no limit). */
  maxLogprobs?: number;
}

/** A validated request with the seed's defaults applied and `stop` normalised to a list. */
// (A key-remapping Omit: the plain Omit of a loose object's type, which has an index signature, loses
// every known key.)
export type OmitKnown<T, K extends PropertyKey> = { [P in keyof T as P extends K ? never : P]: T[P] };
export type ChatRequest = OmitKnown<ChatCompletionRequest, 'stop'> & {
  stop: string[];
  n: number;
  logprobs: boolean;
  top_logprobs: number;
  frequency_penalty: number;
  presence_penalty: number;
  stream: boolean;
  include_reasoning: boolean;
  parallel_tool_calls: boolean;
  use_beam_search: boolean;
  length_penalty: number;
  stop_token_ids: number[];
  include_stop_str_in_output: boolean;
  ignore_eos: boolean;
  min_tokens: number;
  skip_special_tokens: boolean;
  spaces_between_special_tokens: boolean;
  echo: boolean;
  add_generation_prompt: boolean;
  continue_final_message: boolean;
  add_special_tokens: boolean;
  priority: number;
  request_id: string;
};

export function applyChatDefaults(r: ChatCompletionRequest): ChatRequest {
  return {
    ...r,
    stop: r.stop == null ? [] : typeof r.stop === 'string' ? [r.stop] : r.stop,
    n: r.n ?? 1,
    logprobs: r.logprobs ?? false,
    top_logprobs: r.top_logprobs ?? 0,
    frequency_penalty: r.frequency_penalty ?? 0,
    presence_penalty: r.presence_penalty ?? 0,
    stream: r.stream ?? false,
    include_reasoning: r.include_reasoning ?? true,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    use_beam_search: r.use_beam_search ?? false,
    length_penalty: r.length_penalty ?? 1,
    stop_token_ids: r.stop_token_ids ?? [],
    include_stop_str_in_output: r.include_stop_str_in_output ?? false,
    ignore_eos: r.ignore_eos ?? false,
    min_tokens: r.min_tokens ?? 0,
    skip_special_tokens: r.skip_special_tokens ?? true,
    spaces_between_special_tokens: r.spaces_between_special_tokens ?? true,
    echo: r.echo ?? false,
    add_generation_prompt: r.add_generation_prompt ?? true,
    continue_final_message: r.continue_final_message ?? false,
    add_special_tokens: r.add_special_tokens ?? false,
    priority: r.priority ?? 0,
    request_id: r.request_id ?? randomUUID().replace(/-/g, ''),
  };
}

function unknownTopLevel(body: unknown, known: ReadonlySet<string>): string[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [];
  return Object.keys(body).filter((k) => !known.has(k));
}

/** Validates a chat-completion body (already JSON-parsed). Never throws. */
export function validateChatRequest(body: unknown, opts: ValidateOptions = {}): Validated<ChatRequest> {
  const ignoredFields = unknownTopLevel(body, KNOWN_REQUEST_FIELDS);
  const parsed = ChatCompletionRequestSchema.safeParse(body);
  const detail = parsed.success ? [] : issuesToDetail(parsed.error.issues, body, ['body']);
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    detail.push(...chatRequestRules(body as Record<string, unknown>, opts.maxLogprobs ?? 20));
  }
  if (detail.length > 0 || !parsed.success) return { ok: false, detail, ignoredFields };
  return { ok: true, value: applyChatDefaults(parsed.data), ignoredFields };
}

/** Validates a trajectory-log body, filling ART's defaults. Extra fields are kept. */
export function validateTrajectoryLog(body: unknown): Validated<TrajectoryLogRequest> {
  const parsed = TrajectoryLogRequestSchema.safeParse(body);
  const ignoredFields = unknownTopLevel(body, new Set(['split', 'trajectory_groups', 'model_id']));
  if (!parsed.success) return { ok: false, detail: issuesToDetail(parsed.error.issues, body, ['body']), ignoredFields };
  return { ok: true, value: parsed.data, ignoredFields };
}

export type BodyKind = 'chat' | 'trajectory-log';
export type ValidatedBody = Validated<ChatRequest> | Validated<TrajectoryLogRequest>;

/**
 * A request body's text, parsed and validated as `kind` (json_invalid when it does not parse). Pure and
 * synchronous: the server runs it inline for small bodies and on a worker for large ones.
 */
export function validateBodyText(kind: BodyKind, text: string, opts: ValidateOptions = {}): ValidatedBody {
  const parsed = parseJsonBody(text);
  if (!parsed.ok) return { ok: false, detail: parsed.detail, ignoredFields: [] };
  return kind === 'chat' ? validateChatRequest(parsed.value, opts) : validateTrajectoryLog(parsed.value);
}

/** Convenience for library callers: the validated request, or a thrown RequestValidationError. */
export function parseChatRequest(body: unknown, opts?: ValidateOptions): ChatRequest {
  const r = validateChatRequest(body, opts);
  if (!r.ok) throw new RequestValidationError(r.detail);
  return r.value;
}
