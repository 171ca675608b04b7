// NOTE(openai/to-engine): a validated chat request → the engine's GenerateRequest, plus the prompt-side
// checks vLLM makes between tokenizing and sampling (docs/http-api.md#request-fields,
// #context-length-and-truncation). Everything here is a pure function of the request, a tokenizer view and
// max_model_len, so it is unit-tested without the addon. Errors are 400 InvalidArgumentErrors worded like
// vLLM's (the schema-level 422s happened before, in validate.ts). Invariant: the engine never sees an id
// outside the vocabulary, a prompt that leaves no room for one output token, or a field it would have to
// interpret in OpenAI terms.
import { InvalidArgumentError } from '../engine/errors.js';
import type { GenerateRequest } from '../engine/generate-request.js';
import { I32_MAX, SAFE_INT } from '../engine/request-fields.js';
import { toGrammar } from '../structured/index.js';
import { structuredError } from '../structured/error.js';
import { CONVERSION_TIME_MS, workPool } from '../workers/offload.js';
import type { WorkOptions } from '../workers/offload.js';
import { WorkLimitError, WorkTaskError } from '../workers/work-pool.js';
import type { ChatRequestFields } from './chat-input.js';
import { allowedInVocab, inVocab } from './token-id-fields.js';

/** What the mapping needs from a model. */
export interface TokenizerView {
  vocabSize: number;
  tokenize(text: string, options: { addSpecial: boolean; parseSpecial: boolean }): number[] | Int32Array;
}

function badRequest(message: string, param: string | null = null): never {
  throw new InvalidArgumentError(message, 'invalid_argument', 400, { param });
}

/**
 * The grammar text constraining the output (structured_outputs / response_format, vLLM's rules via
 * lib/structured), or undefined for free text. Throws 400s naming the offending field.
 */
export function structuredGrammar(r: ChatRequestFields): string | undefined {
  try {
    return toGrammar({ structured_outputs: r.structured_outputs, response_format: r.response_format });
  } catch (e) {
    // The converters recurse over the constraint; JSON given as a string (structured_outputs.json,
    // structural_tag) escapes the request's nesting limit, so its depth ends here.
    if (e instanceof RangeError) badRequest('The structured outputs constraint nests too deeply to convert.', 'structured_outputs');
    throw e;
  }
}

/** Whether the constraint needs converting (a JSON schema, a regex, a choice list): work a request sizes. */
function needsConversion(r: ChatRequestFields): boolean {
  const so = r.structured_outputs;
  return (so != null && (so.json != null || so.regex != null || so.choice != null)) || r.response_format?.type === 'json_schema';
}

/**
 * structuredGrammar off the event loop: a schema or regex converts on a work-pool worker (a 1 KB schema
 * can take minutes: allOf/$ref expansion is exponential), killed at CONVERSION_TIME_MS. No constraint,
 * json_object and a verbatim grammar stay inline (fixed cost). Rejects with the same 400s.
 */
export async function structuredGrammarOffThread(r: ChatRequestFields, work: WorkOptions = {}): Promise<string | undefined> {
  if (!needsConversion(r)) return structuredGrammar(r);
  const input = { structured_outputs: r.structured_outputs, response_format: r.response_format };
  try {
    return (await workPool().run('structured-grammar', input, { client: work.client ?? '', timeMs: CONVERSION_TIME_MS, signal: work.signal })) as string | undefined;
  } catch (error) {
    if (error instanceof WorkLimitError) {
      throw structuredError(`structured output conversion ${error.message}`, r.response_format?.type === 'json_schema' ? 'response_format' : 'structured_outputs');
    }
    if (error instanceof WorkTaskError && typeof error.fields.status === 'number' && typeof error.fields.code === 'string') {
      const { code, status, param } = error.fields;
      throw new InvalidArgumentError(error.message, code, status, { param: typeof param === 'string' ? param : null });
    }
    throw error;
  }
}

/** The requested output cap: max_completion_tokens wins over max_tokens; 0 = not given. */
export function requestedMaxTokens(r: ChatRequestFields): { value: number; field: 'max_completion_tokens' | 'max_tokens' } {
  if (r.max_completion_tokens != null) return { value: r.max_completion_tokens, field: 'max_completion_tokens' };
  return { value: r.max_tokens ?? 0, field: 'max_tokens' };
}

/**
 * Applies truncate_prompt_tokens and the context-length checks
 * (docs/http-api.md#context-length-and-truncation) to the tokenized prompt. Returns the prompt the engine
 * gets (possibly its last K tokens).
 */
export function fitPrompt(prompt: ArrayLike<number>, r: ChatRequestFields, maxModelLen: number): number[] {
  const { value: maxOut, field } = requestedMaxTokens(r);
  if (maxOut > maxModelLen) badRequest(`${field}=${maxOut} cannot be greater than max_model_len=${maxModelLen}.`, field);
  const maxInput = maxModelLen - maxOut;
  // The kept tokens are prompt[start..]; only they are copied (a refused prompt may be ~10^6 ids).
  let start = 0;
  const k = r.truncate_prompt_tokens;
  if (k != null) {
    const keep = k === -1 ? maxInput : k;
    if (keep > maxInput) {
      badRequest(`truncate_prompt_tokens=${keep} cannot be greater than max_model_len - max_tokens = ${maxInput}. Please request a smaller truncation size.`, 'truncate_prompt_tokens');
    }
    if (prompt.length > keep) start = prompt.length - keep;
  }
  const n = prompt.length - start;
  if (n === 0) badRequest('The decoder prompt cannot be empty', 'messages');
  if (n > maxInput) {
    badRequest(
      `You passed ${n} input tokens and requested ${maxOut} output tokens. However, the model's context length is only ${maxModelLen} tokens, resulting in a maximum input length of ${maxInput} tokens. Please reduce the length of the input prompt.`,
      'input_tokens',
    );
  }
  if (n >= maxModelLen) {
    badRequest(
      `The decoder prompt (length ${n}) plus the number of requested output tokens (at least 1) is longer than the maximum model length of ${maxModelLen}. Make sure that \`max_model_len\` is no smaller than the number of text tokens plus at least one output token.`,
      'input_tokens',
    );
  }
  return Array.prototype.slice.call(prompt, start) as number[];
}

/** How bad_words are tokenized: no BOS/EOS, special-token text taken literally. */
export const BAD_WORDS_TOKENIZE = { addSpecial: false, parseSpecial: false } as const;

/** The texts bad_words tokenizes: per word (leading whitespace stripped) the bare form, then with one leading space. */
export function badWordForms(words: readonly string[]): string[] {
  return words.flatMap((word) => [word.trimStart(), ' ' + word.trimStart()]);
}

/**
 * bad_words → banned token sequences, vLLM's rule: each word (leading whitespace stripped) is
 * tokenized as is and with one leading space; the spaced form is kept only when it yields a different
 * first token with the same number of tokens (a distinct word-start token, not a split).
 */
export function badWordsTokenIds(words: readonly string[], tok: TokenizerView): (number[] | Int32Array)[] {
  const out: (number[] | Int32Array)[] = [];
  const forms = badWordForms(words);
  for (let i = 0; i < forms.length; i += 2) {
    const bare = tok.tokenize(forms[i]!, BAD_WORDS_TOKENIZE);
    if (bare.length > 0) out.push(bare);
    const spaced = tok.tokenize(forms[i + 1]!, BAD_WORDS_TOKENIZE);
    if (spaced.length > 0 && bare.length > 0 && spaced[0] !== bare[0] && spaced.length === bare.length) out.push(spaced);
  }
  return out;
}

/**
 * A TokenizerView answering from texts tokenized beforehand (off the event loop, tokenizeTexts): the
 * request's bad_words forms, handed on as the Int32Arrays they came as (a maximal bad_words list is
 * over a million ids: copying them to arrays held the event loop for tens of ms). Asking for any other
 * text is a bug of the caller.
 */
export function pretokenizedView(vocabSize: number, texts: readonly string[], ids: readonly (number[] | Int32Array)[]): TokenizerView {
  const byText = new Map(texts.map((t, i) => [t, ids[i]!]));
  return {
    vocabSize,
    tokenize: (text) => {
      const got = byText.get(text);
      if (!got) throw new Error(`pretokenizedView: ${JSON.stringify(text.slice(0, 40))} was not tokenized beforehand`);
      return got;
    },
  };
}

/** vLLM: 0 < t < 0.01 is raised to 0.01 (below that the softmax overflows). */
const MIN_NONZERO_TEMPERATURE = 0.01;

/** Every sampling/decoding field of the request in engine terms (no promptTokens, no seed: see requestSeed). */
export function samplingFields(r: ChatRequestFields, tok: TokenizerView): Omit<GenerateRequest, 'promptTokens' | 'seed'> {
  const vocab = tok.vocabSize;
  const out: Omit<GenerateRequest, 'promptTokens' | 'seed'> = {};
  const { value: maxOut } = requestedMaxTokens(r);
  if (maxOut > 0) out.maxTokens = maxOut; // omitted: until EOS or the context is full
  let temperature = r.temperature ?? 1.0; // vLLM's built-in default; we read no generation_config
  if (temperature > 0 && temperature < MIN_NONZERO_TEMPERATURE) temperature = MIN_NONZERO_TEMPERATURE;
  out.temperature = temperature;
  if (r.top_p != null) out.topP = r.top_p;
  // Values past what any vocabulary or context can reach mean the same as the largest the engine takes.
  if (r.top_k != null) out.topK = Math.min(r.top_k, vocab);
  if (r.min_p != null) out.minP = r.min_p;
  if (r.repetition_penalty != null) out.repetitionPenalty = r.repetition_penalty;
  if (r.frequency_penalty !== 0) out.frequencyPenalty = r.frequency_penalty;
  if (r.presence_penalty !== 0) out.presencePenalty = r.presence_penalty;
  if (r.logit_bias != null) out.logitBias = { ids: inVocab('logit_bias', r.logit_bias.ids, vocab), bias: r.logit_bias.bias };
  if (r.allowed_token_ids != null) out.allowedTokenIds = allowedInVocab(r.allowed_token_ids, vocab);
  if (r.bad_words && r.bad_words.length > 0) out.badWordsTokenIds = badWordsTokenIds(r.bad_words, tok);
  if (r.stop.length > 0) out.stop = r.stop;
  if (r.stop_token_ids.length > 0) out.stopTokenIds = inVocab('stop_token_ids', r.stop_token_ids, vocab);
  if (r.include_stop_str_in_output) out.includeStopStrInOutput = true;
  if (r.ignore_eos) out.ignoreEos = true;
  if (r.min_tokens > 0) out.minTokens = Math.min(r.min_tokens, I32_MAX);
  if (r.logprobs) out.logprobs = r.top_logprobs === -1 ? vocab : r.top_logprobs;
  if (r.priority !== 0) out.priority = Math.max(-SAFE_INT, Math.min(SAFE_INT, r.priority));
  if (r.cache_salt != null) out.cacheSalt = r.cache_salt;
  out.skipSpecialTokens = r.skip_special_tokens;
  out.spacesBetweenSpecialTokens = r.spaces_between_special_tokens;
  if (r.vllm_xargs != null && Object.keys(r.vllm_xargs).length > 0) out.xargs = r.vllm_xargs;
  const rd = r.repetition_detection;
  if (rd != null && (rd.max_pattern_size ?? 0) > 0) {
    const fit = (v: number | undefined): number => Math.min(v ?? 0, I32_MAX);
    out.repetitionDetection = { maxPatternSize: fit(rd.max_pattern_size), minPatternSize: fit(rd.min_pattern_size), minCount: fit(rd.min_count) };
  }
  if (r.n > 1) out.n = r.n;
  if (r.use_beam_search) {
    // n is the beam width; the engine ignores the sampling-only fields above, as vLLM does
    out.useBeamSearch = true;
    out.lengthPenalty = r.length_penalty;
  }
  if (r.prompt_logprobs != null) out.promptLogprobs = r.prompt_logprobs === -1 ? vocab : r.prompt_logprobs;
  return out;
}

/**
 * The seed of the request's choices: the engine derives each choice's stream from (seed, index), so one
 * seed covers all n. -1 is vLLM's "no seed". The wire allows int64; seeds beyond 2^53 (which JSON
 * numbers do not even carry exactly) fold into the engine's range, deterministically.
 */
export function requestSeed(seed: number | null | undefined): number | undefined {
  if (seed == null || seed === -1) return undefined;
  return Math.abs(seed) > SAFE_INT ? seed % 2 ** 53 : seed;
}
