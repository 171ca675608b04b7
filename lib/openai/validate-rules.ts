// NOTE(openai/validate-rules): the cross-field rules of a chat request (vLLM's model validators and
// SamplingParams checks that tokenmill reports as 422, docs/http-api.md#validation-errors-422). They run on
// the raw body with their own type guards, so they are reported together with the per-field type errors; a
// rule whose fields have the wrong type stays silent (the type error already names them).
import type { ValidationDetail } from './protocol.js';

type Body = Record<string, unknown>;
type Loc = (string | number)[];

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const valueError = (msg: string, loc: Loc = ['body']): ValidationDetail => ({ loc, msg: `Value error, ${msg}`, type: 'value_error' });

/** Greedy as vLLM decides it (temperature below _SAMPLING_EPS). */
const GREEDY_EPS = 1e-5;

function messageRules(messages: unknown): ValidationDetail[] {
  const out: ValidationDetail[] = [];
  if (!Array.isArray(messages)) return out;
  messages.forEach((m, i) => {
    if (!isObj(m) || typeof m.role !== 'string') return;
    const base: Loc = ['body', 'messages', i];
    // Roles whose OpenAI shape requires content (assistant may carry only tool_calls).
    if (['system', 'developer', 'user', 'tool'].includes(m.role) && (m.content === undefined)) {
      out.push({ loc: [...base, 'content'], msg: 'Field required', type: 'missing' });
    }
    if (m.role === 'function' && m.name === undefined) {
      out.push({ loc: [...base, 'name'], msg: 'Field required', type: 'missing' });
    }
    if (Array.isArray(m.content)) {
      m.content.forEach((part, j) => {
        if (!isObj(part) || typeof part.type !== 'string') return;
        if (part.type === 'text' && part.text === undefined) {
          out.push({ loc: [...base, 'content', j, 'text'], msg: 'Field required', type: 'missing' });
        }
      });
    }
  });
  return out;
}

export function chatRequestRules(b: Body, maxLogprobs: number): ValidationDetail[] {
  const out: ValidationDetail[] = messageRules(b.messages);
  const stream = b.stream === true;

  if (b.stream_options != null && !stream) out.push(valueError('Stream options can only be defined when `stream=True`.'));
  if (isObj(b.stream_options) && b.stream_options.continuous_usage_stats === true && b.stream_options.include_usage !== true) {
    out.push(valueError('`continuous_usage_stats` requires `include_usage` to be true.'));
  }

  const tl = b.top_logprobs;
  if (isNum(tl) && tl !== 0 && b.logprobs !== true) {
    out.push(valueError('when using `top_logprobs`, `logprobs` must be set to true.'));
  }
  const over = (n: number) => maxLogprobs !== -1 && (n === -1 || n > maxLogprobs);
  if (isNum(tl) && Number.isInteger(tl) && tl >= -1 && over(tl)) {
    out.push(valueError(`Requested sample logprobs of ${tl}, which is greater than max allowed: ${maxLogprobs}`));
  }
  const pl = b.prompt_logprobs;
  if (isNum(pl) && stream && (pl > 0 || pl === -1)) {
    out.push(valueError('`prompt_logprobs` are not available when `stream=True`.'));
  }
  if (isNum(pl) && Number.isInteger(pl) && pl >= -1 && over(pl)) {
    out.push(valueError(`Requested prompt logprobs of ${pl}, which is greater than max allowed: ${maxLogprobs}`));
  }

  const addGen = b.add_generation_prompt ?? true;
  if (b.continue_final_message === true && addGen === true) {
    out.push(valueError('Cannot set both `continue_final_message` and `add_generation_prompt` to True.'));
  }

  if (isNum(b.n) && b.n > 1 && isNum(b.temperature) && b.temperature < GREEDY_EPS && b.use_beam_search !== true) {
    out.push(valueError(`n must be 1 when using greedy sampling, got ${b.n}.`));
  }

  const rd = b.repetition_detection;
  if (isObj(rd)) {
    const maxP = isNum(rd.max_pattern_size) ? rd.max_pattern_size : 0;
    const minP = isNum(rd.min_pattern_size) ? rd.min_pattern_size : 0;
    const minC = isNum(rd.min_count) ? rd.min_count : 0;
    if (maxP > 0 && minC < 2) out.push(valueError(`repetition_detection.min_count must be at least 2 when max_pattern_size > 0, got ${minC}.`));
    if (minP > maxP) out.push(valueError(`repetition_detection.min_pattern_size (${minP}) must be less than or equal to max_pattern_size (${maxP}).`));
  }

  if (b.stop === '' || (Array.isArray(b.stop) && b.stop.includes(''))) out.push(valueError('stop cannot contain an empty string.'));
  if (Array.isArray(b.allowed_token_ids) && b.allowed_token_ids.length === 0) out.push(valueError('allowed_token_ids is not None and empty!'));
  if (Array.isArray(b.bad_words) && b.bad_words.includes('')) out.push(valueError('bad_words cannot contain an empty string.'));

  if (isObj(b.logit_bias)) {
    const bad = Object.keys(b.logit_bias).filter((k) => !/^-?\d+$/.test(k.trim()));
    if (bad.length > 0) out.push(valueError(`logit_bias contains key(s) that cannot be converted to integer token ids: ${bad.map((k) => `'${k}'`).join(', ')}.`));
  }

  if (isNum(b.min_tokens)) {
    const maxT = isNum(b.max_completion_tokens) ? b.max_completion_tokens : isNum(b.max_tokens) ? b.max_tokens : null;
    if (maxT !== null && b.min_tokens > maxT) out.push(valueError(`min_tokens must be less than or equal to max_tokens=${maxT}, got ${b.min_tokens}.`));
  }

  if (isObj(b.response_format) && b.response_format.type === 'json_schema' && b.response_format.json_schema == null) {
    out.push(valueError("When response_format type is 'json_schema', the 'json_schema' field must be provided."));
  }
  const so = b.structured_outputs;
  if (isObj(so)) {
    const kinds = ['json', 'regex', 'choice', 'grammar', 'json_object', 'structural_tag'].filter((k) => so[k] != null && so[k] !== false);
    if (kinds.length > 1) out.push(valueError(`You can only use one kind of structured outputs constraint but multiple are specified: ${kinds.join(', ')}.`));
    if (Array.isArray(so.choice) && so.choice.length === 0) out.push(valueError("Choice '[]' cannot be an empty list"));
  }

  if (typeof b.cache_salt === 'string' && b.cache_salt.length === 0) out.push(valueError("Parameter 'cache_salt' must be a non-empty string."));
  if (isObj(b.chat_template_kwargs)) {
    const bad = ['chat_template', 'tokenize'].filter((k) => k in (b.chat_template_kwargs as object));
    if (bad.length > 0) out.push(valueError(`Found unexpected chat template kwargs from request: ${bad.join(', ')}`));
  }
  return out;
}
