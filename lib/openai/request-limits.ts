// NOTE(openai/request-limits): what a schema-valid chat request may still not ask of this server,
// checked before anything is rendered, tokenized or allocated (400 naming the field, vLLM's wording
// where vLLM has one). Two kinds:
// - numeric fields whose wire range (protocol.ts, pydantic's) is wider than what the engine honours:
//   the engine's range comes from lib/engine/request-fields.ts, the same table toNativeRequest checks;
// - sizes that bound the memory and CPU one request can claim: n (beam width too) up to the engine's
//   --max-num-seqs, and counts of stop strings, bad words, logit_bias entries, allowed/stop token ids,
//   tools, documents and the size of structured-output constraints. docs/http-api.md lists them.
// The body as a whole is bounded by --max-request-bytes before it is parsed.
import { InvalidArgumentError } from '../engine/errors.js';
import { fieldOf, inRange, type NumericField, type NumericKey } from '../engine/request-fields.js';
import type { ChatRequestFields, ConversationFacts } from './chat-input.js';
import { nestingDepth } from './json-walk.js';

export interface RequestLimits {
  /** Largest n (and beam width): the engine's --max-num-seqs. */
  maxN: number;
  maxStopStrings: number;
  /** Characters of one stop string. */
  maxStopChars: number;
  maxBadWords: number;
  /** Characters of one bad word. */
  maxBadWordChars: number;
  /**
   * logit_bias entries, and allowed_token_ids / stop_token_ids ids: the vocabulary size (more can only
   * repeat or miss ids, and a million of them cost the event loop hundreds of ms to hand to the engine).
   */
  maxLogitBias: number;
  /** OpenAI's limit on functions per request. */
  maxTools: number;
  maxDocuments: number;
  /** Characters of a structured-output constraint: grammar, regex, JSON schema (as JSON), structural tag. */
  maxConstraintChars: number;
  maxChoices: number;
  /**
   * Nesting of the request's JSON (objects and arrays) and of a regex's groups: the converters that
   * walk them recurse, so a deep enough value would overflow the stack.
   */
  maxDepth: number;
  /**
   * JSON values (objects, arrays, scalars) in each free-form field (FREE_FORM_FIELDS): they take any
   * JSON, and a dictionary of 500k keys held the event loop for seconds to copy back from the parse
   * worker (measured), while real uses hold a few keys.
   */
  maxFreeFormValues: number;
}

/** Fields that take any JSON object; bounded by maxFreeFormValues. */
export const FREE_FORM_FIELDS = ['kv_transfer_params', 'chat_template_kwargs', 'vllm_xargs', 'mm_processor_kwargs'] as const;

export const DEFAULT_REQUEST_LIMITS: Omit<RequestLimits, 'maxN' | 'maxLogitBias'> = {
  maxStopStrings: 128,
  maxStopChars: 4096,
  maxBadWords: 1024,
  maxBadWordChars: 1024,
  maxTools: 128,
  maxDocuments: 1024,
  maxConstraintChars: 256 * 1024,
  maxChoices: 16384,
  maxDepth: 100,
  maxFreeFormValues: 4096,
};

/** Python's repr of a float (vLLM's messages print values that way): 65536.0, 1e+300, 1e-07. */
export function pyFloat(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  const [mantissa, expText] = v.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp >= 16 || exp < -4) return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  const fixed = String(v);
  return fixed.includes('.') ? fixed : `${fixed}.0`;
}

function rangeOf(f: NumericField): string {
  const show = (x: number): string => (f.kind === 'int' || Number.isInteger(x) && Math.abs(x) < 1e16 ? String(x) : pyFloat(x));
  return `${f.minOpen ? '(' : '['}${show(f.min)}, ${show(f.max)}]`;
}

function badRequest(message: string, param: string): never {
  throw new InvalidArgumentError(message, 'invalid_argument', 400, { param });
}

/** Wire fields whose every schema-valid value must also be inside the engine's range. */
const CHECKED: readonly (readonly [keyof ChatRequestFields, NumericKey])[] = [
  ['temperature', 'temperature'],
  ['top_p', 'topP'],
  ['min_p', 'minP'],
  ['repetition_penalty', 'repetitionPenalty'],
  ['frequency_penalty', 'frequencyPenalty'],
  ['presence_penalty', 'presencePenalty'],
  ['length_penalty', 'lengthPenalty'],
];

function tooMany(name: string, count: number, max: number, what: string): void {
  if (count > max) badRequest(`${name} has ${count} ${what}; at most ${max} are allowed.`, name);
}

function longest(strings: readonly string[]): number {
  let max = 0;
  for (const s of strings) if (s.length > max) max = s.length;
  return max;
}

/**
 * Throws a 400 for the first field this server cannot honour or that is over a limit. The conversation
 * (messages, tools, documents) is checked through its facts (chat-input.ts).
 */
export function checkRequestLimits(r: ChatRequestFields, conversation: ConversationFacts, limits: RequestLimits): void {
  const deepPart = (['messages', 'tools', 'documents'] as const).find((part) => conversation.depth[part] > limits.maxDepth);
  const deep = deepPart ?? deepestField(r, limits.maxDepth);
  if (deep !== null) badRequest(`${deep} nests more than ${limits.maxDepth} levels deep.`, deep);
  for (const [wire, key] of CHECKED) {
    const v = r[wire];
    if (v === null || v === undefined) continue;
    const f = fieldOf(key);
    if (!inRange(f, v)) badRequest(`${String(wire)} must be in ${rangeOf(f)}, got ${pyFloat(v as number)}.`, String(wire));
  }
  const maxN = Math.min(limits.maxN, fieldOf('n').max);
  if (r.n > maxN) {
    const what = r.use_beam_search ? 'the beam width n' : 'n';
    badRequest(`${what} must be at most ${maxN} (the server's --max-num-seqs), got ${r.n}.`, 'n');
  }
  tooMany('stop', r.stop.length, limits.maxStopStrings, 'strings');
  if (longest(r.stop) > limits.maxStopChars) badRequest(`stop strings may have at most ${limits.maxStopChars} characters.`, 'stop');
  const badWords = r.bad_words ?? [];
  tooMany('bad_words', badWords.length, limits.maxBadWords, 'words');
  if (longest(badWords) > limits.maxBadWordChars) badRequest(`bad_words may have at most ${limits.maxBadWordChars} characters each.`, 'bad_words');
  tooMany('logit_bias', conversation.ids.logit_bias, limits.maxLogitBias, 'entries');
  tooMany('allowed_token_ids', conversation.ids.allowed_token_ids, limits.maxLogitBias, 'ids');
  tooMany('stop_token_ids', conversation.ids.stop_token_ids, limits.maxLogitBias, 'ids');
  const big = conversation.oversized;
  if (big && big.values > limits.maxFreeFormValues) badRequest(`${big.field} holds ${big.values} JSON values; at most ${limits.maxFreeFormValues} are allowed.`, big.field);
  tooMany('tools', conversation.tools, limits.maxTools, 'tools');
  tooMany('documents', conversation.documents, limits.maxDocuments, 'documents');
  checkConstraints(r, limits);
}

/** The top-level field whose value nests deeper than `max` objects/arrays, or null. */
function deepestField(r: object, max: number): string | null {
  for (const [field, value] of Object.entries(r)) if (nestingDepth(value, max) > max) return field;
  return null;
}

/** The deepest group nesting of a regex (escapes and character classes skipped). */
function regexDepth(pattern: string): number {
  let depth = 0;
  let max = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') i++;
    else if (inClass) inClass = ch !== ']';
    else if (ch === '[') inClass = true;
    else if (ch === '(') max = Math.max(max, ++depth);
    else if (ch === ')') depth = Math.max(0, depth - 1);
  }
  return max;
}

function constraintSize(v: unknown): number {
  if (v === null || v === undefined) return 0;
  return typeof v === 'string' ? v.length : JSON.stringify(v).length;
}

function checkConstraints(r: ChatRequestFields, limits: RequestLimits): void {
  const so = r.structured_outputs;
  const sized: [string, unknown][] = [
    ['structured_outputs.json', so?.json],
    ['structured_outputs.regex', so?.regex],
    ['structured_outputs.grammar', so?.grammar],
    ['structured_outputs.structural_tag', so?.structural_tag],
    ['structured_outputs.whitespace_pattern', so?.whitespace_pattern],
    ['response_format.json_schema', r.response_format?.json_schema?.schema],
  ];
  for (const [name, v] of sized) {
    const size = constraintSize(v);
    if (size > limits.maxConstraintChars) badRequest(`${name} is ${size} characters long; at most ${limits.maxConstraintChars} are allowed.`, name);
  }
  for (const key of ['regex', 'whitespace_pattern'] as const) {
    const pattern = so?.[key];
    if (pattern != null && regexDepth(pattern) > limits.maxDepth) {
      badRequest(`structured_outputs.${key} nests groups more than ${limits.maxDepth} levels deep.`, `structured_outputs.${key}`);
    }
  }
  const choice = so?.choice;
  if (choice) {
    tooMany('structured_outputs.choice', choice.length, limits.maxChoices, 'entries');
    const total = choice.reduce((sum, c) => sum + c.length, 0);
    if (total > limits.maxConstraintChars) badRequest(`structured_outputs.choice has ${total} characters; at most ${limits.maxConstraintChars} are allowed.`, 'structured_outputs.choice');
  }
}
