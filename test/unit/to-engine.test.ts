// The chat request → engine request mapping, without the addon: sampling fields, vocab checks,
// bad_words tokenization, truncation and the context-length messages, interim per-choice seeds.
import { describe, expect, test } from 'vitest';
import { InvalidArgumentError } from '../../lib/engine/errors.js';
import {
  badWordsTokenIds, fitPrompt, requestSeed, requestedMaxTokens, samplingFields, structuredGrammar,
  type TokenizerView,
} from '../../lib/openai/to-engine.js';
import { toChatInput } from '../../lib/openai/chat-input.js';
import type { ChatRequestFields } from '../../lib/openai/chat-input.js';
import { parseChatRequest } from '../../lib/openai/validate.js';
import type { ChatRequest } from '../../lib/openai/validate.js';

const base = { messages: [{ role: 'user', content: 'hi' }] };
const fields = (r: ChatRequest): ChatRequestFields => toChatInput(r, false).request;
const chat = (extra: Record<string, unknown> = {}): ChatRequestFields => fields(parseChatRequest({ ...base, ...extra }));

// A toy tokenizer: one token per character (id = char code), a leading space merges into the
// next character as id 1000 + code (a distinct "word start" token, like SPM's ▁x).
const tok: TokenizerView = {
  vocabSize: 2000,
  tokenize(text) {
    const out: number[] = [];
    for (let i = 0; i < text.length; i++) {
      if (text[i] === ' ' && i + 1 < text.length) { out.push(1000 + text.charCodeAt(i + 1)); i++; } else out.push(text.charCodeAt(i));
    }
    return out;
  },
};

function error400(f: () => unknown): InvalidArgumentError {
  try { f(); } catch (e) { expect(e).toBeInstanceOf(InvalidArgumentError); expect((e as InvalidArgumentError).status).toBe(400); return e as InvalidArgumentError; }
  throw new Error('expected a 400');
}

describe('samplingFields', () => {
  test('defaults: temperature 1, special-token options, nothing else', () => {
    expect(samplingFields(chat(), tok)).toEqual({ temperature: 1, skipSpecialTokens: true, spacesBetweenSpecialTokens: true });
  });

  test('use_beam_search: n is the width, length_penalty passes, temperature 0 stays 0', () => {
    expect(samplingFields(chat({ use_beam_search: true, n: 12, length_penalty: -0.5, temperature: 0 }), tok))
      .toMatchObject({ useBeamSearch: true, n: 12, lengthPenalty: -0.5, temperature: 0 });
    expect(samplingFields(chat({ use_beam_search: true }), tok)).toMatchObject({ useBeamSearch: true, lengthPenalty: 1 });
    expect(samplingFields(chat({ length_penalty: 2 }), tok).useBeamSearch).toBeUndefined();
  });

  test('every field maps to its engine name', () => {
    const f = samplingFields(chat({
      max_completion_tokens: 7, max_tokens: 99, temperature: 0.5, top_p: 0.9, top_k: 40, min_p: 0.05,
      repetition_penalty: 1.1, frequency_penalty: 0.5, presence_penalty: -0.5, logit_bias: { ' 5': 300, '6': -1 },
      allowed_token_ids: [1, 2], bad_words: ['ab'], stop: 'x', stop_token_ids: [3], include_stop_str_in_output: true,
      ignore_eos: true, min_tokens: 2, logprobs: true, top_logprobs: 4, priority: 2, cache_salt: 's',
      skip_special_tokens: false, spaces_between_special_tokens: false, vllm_xargs: { k: 1 },
    }), tok);
    expect(f).toEqual({
      maxTokens: 7, temperature: 0.5, topP: 0.9, topK: 40, minP: 0.05, repetitionPenalty: 1.1,
      frequencyPenalty: 0.5, presencePenalty: -0.5, logitBias: { ids: Int32Array.of(6, 5), bias: Float32Array.of(-1, 100) },
      allowedTokenIds: Int32Array.of(1, 2), badWordsTokenIds: [[97, 98], [1097, 98]], stop: ['x'], stopTokenIds: Int32Array.of(3),
      includeStopStrInOutput: true,
      ignoreEos: true, minTokens: 2, logprobs: 4, priority: 2, cacheSalt: 's', skipSpecialTokens: false,
      spacesBetweenSpecialTokens: false, xargs: { k: 1 },
    });
  });

  test('max_tokens is used when max_completion_tokens is absent; tiny temperatures are raised to 0.01', () => {
    expect(samplingFields(chat({ max_tokens: 9, temperature: 0.001 }), tok)).toMatchObject({ maxTokens: 9, temperature: 0.01 });
    expect(samplingFields(chat({ temperature: 0 }), tok).temperature).toBe(0);
    expect(samplingFields(chat({ logprobs: true }), tok).logprobs).toBe(0);
    expect(samplingFields(fields(parseChatRequest({ ...base, logprobs: true, top_logprobs: -1 }, { maxLogprobs: -1 })), tok).logprobs).toBe(2000);
  });

  test('out-of-vocab ids are 400s with vLLM wording', () => {
    expect(error400(() => samplingFields(chat({ logit_bias: { '2000': 1 } }), tok)).message)
      .toBe('token_id(s) [2000] in logit_bias contain out-of-vocab token ids. Vocabulary size: 2000');
    expect(error400(() => samplingFields(chat({ stop_token_ids: [1, 5000] }), tok)).message)
      .toBe('token_id(s) [5000] in stop_token_ids contain out-of-vocab token ids. Vocabulary size: 2000');
    expect(error400(() => samplingFields(chat({ allowed_token_ids: [2000] }), tok)).message).toBe('allowed_token_ids contains out-of-vocab token id!');
    // every bad id named as the request gave it (past int32 too), repeats included, in the object's key order
    expect(error400(() => samplingFields(chat({ logit_bias: { ' 3000': 1, '1': 1, '99999999999': 1, '3000': 2 } }), tok)).message)
      .toBe('token_id(s) [3000, 3000, 99999999999] in logit_bias contain out-of-vocab token ids. Vocabulary size: 2000');
    expect(error400(() => samplingFields(chat({ stop_token_ids: [2 ** 40, 7, 2 ** 31] }), tok)).message)
      .toBe('token_id(s) [1099511627776, 2147483648] in stop_token_ids contain out-of-vocab token ids. Vocabulary size: 2000');
  });
});

describe('badWordsTokenIds', () => {
  test('bare and spaced forms; the spaced one only when it starts with a different token of the same length', () => {
    expect(badWordsTokenIds(['  hi'], tok)).toEqual([[104, 105], [1104, 105]]);
    const splitting: TokenizerView = { vocabSize: 10, tokenize: (t) => (t.startsWith(' ') ? [1, 2, 3] : [2, 3]) };
    expect(badWordsTokenIds(['x'], splitting)).toEqual([[2, 3]]);
    const same: TokenizerView = { vocabSize: 10, tokenize: () => [4] };
    expect(badWordsTokenIds(['x'], same)).toEqual([[4]]);
  });
});

describe('fitPrompt', () => {
  const p = [1, 2, 3, 4, 5, 6, 7, 8];
  test('passes a prompt that fits; omitted max tokens leaves room for at least one token', () => {
    expect(fitPrompt(p, chat({ max_completion_tokens: 2 }), 10)).toEqual(p);
    expect(fitPrompt(p, chat(), 9)).toEqual(p);
    expect(error400(() => fitPrompt(p, chat(), 8)).message).toBe(
      'The decoder prompt (length 8) plus the number of requested output tokens (at least 1) is longer than the maximum model length of 8. Make sure that `max_model_len` is no smaller than the number of text tokens plus at least one output token.');
  });

  test('context overflow and oversized max tokens use vLLM messages', () => {
    const e = error400(() => fitPrompt(p, chat({ max_completion_tokens: 4 }), 10));
    expect(e.message).toBe("You passed 8 input tokens and requested 4 output tokens. However, the model's context length is only 10 tokens, resulting in a maximum input length of 6 tokens. Please reduce the length of the input prompt.");
    expect(e.param).toBe('input_tokens');
    expect(error400(() => fitPrompt(p, chat({ max_completion_tokens: 11 }), 10)).message).toBe('max_completion_tokens=11 cannot be greater than max_model_len=10.');
  });

  test('truncate_prompt_tokens keeps the last K; -1 keeps what fits; too large is a 400', () => {
    expect(fitPrompt(p, chat({ truncate_prompt_tokens: 3 }), 100)).toEqual([6, 7, 8]);
    expect(fitPrompt(p, chat({ truncate_prompt_tokens: -1, max_completion_tokens: 5 }), 10)).toEqual([4, 5, 6, 7, 8]);
    expect(fitPrompt(p, chat({ truncate_prompt_tokens: 20 }), 100)).toEqual(p);
    expect(error400(() => fitPrompt(p, chat({ truncate_prompt_tokens: 6, max_completion_tokens: 5 }), 10)).message)
      .toBe('truncate_prompt_tokens=6 cannot be greater than max_model_len - max_tokens = 5. Please request a smaller truncation size.');
    expect(error400(() => fitPrompt([], chat(), 10)).message).toBe('The decoder prompt cannot be empty');
  });

  test('requestedMaxTokens prefers max_completion_tokens', () => {
    expect(requestedMaxTokens(chat({ max_tokens: 3, max_completion_tokens: 4 }))).toEqual({ value: 4, field: 'max_completion_tokens' });
    expect(requestedMaxTokens(chat({ max_tokens: 3 }))).toEqual({ value: 3, field: 'max_tokens' });
    expect(requestedMaxTokens(chat())).toEqual({ value: 0, field: 'max_tokens' });
  });
});

describe('structuredGrammar and requestSeed', () => {
  test('structured outputs and response_format become grammar text; free text has none', () => {
    expect(structuredGrammar(chat({ use_beam_search: true, n: 12 }))).toBeUndefined();
    expect(structuredGrammar(chat({ response_format: { type: 'text' }, repetition_detection: { max_pattern_size: 2, min_count: 2 } }))).toBeUndefined();
    expect(structuredGrammar(chat({ response_format: { type: 'json_object' } }))).toMatch(/^root ::= object$/m);
    expect(structuredGrammar(chat({ structured_outputs: { choice: ['yes', 'no'] } }))).toBe('root ::= "yes" | "no"\n');
    expect(structuredGrammar(chat({ structured_outputs: { grammar: 'root ::= "a"' } }))).toMatch(/^root ::= "a"\n?$/);
    const tag = error400(() => structuredGrammar(chat({ response_format: { type: 'structural_tag' } })));
    expect(tag.message).toBe("response_format type 'structural_tag' is not supported.");
    expect(tag.param).toBe('response_format');
  });

  test('one seed for the request (the engine derives each choice stream); -1 and null mean none', () => {
    expect(requestSeed(10)).toBe(10);
    expect(requestSeed(undefined)).toBeUndefined();
    expect(requestSeed(-1)).toBeUndefined();
    expect(requestSeed(null)).toBeUndefined();
  });

  test('n and repetition_detection reach the engine request', () => {
    const tok = { vocabSize: 512, tokenize: () => [] as number[] };
    const f = samplingFields(chat({ n: 3, temperature: 1, repetition_detection: { max_pattern_size: 4, min_pattern_size: 1, min_count: 3 } }), tok);
    expect(f.n).toBe(3);
    expect(f.repetitionDetection).toEqual({ maxPatternSize: 4, minPatternSize: 1, minCount: 3 });
  });
});
