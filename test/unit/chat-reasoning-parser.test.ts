import { describe, expect, it } from 'vitest';
import {
  detectReasoningParser, extractReasoning, promptOpensReasoning, ReasoningStreamParser, startsInReasoning, promptEndsReasoning,
} from '../../lib/chat/reasoning-parser.js';
import { renderChatTemplate } from '../../lib/chat/template.js';
import { readTemplate, USER1 } from './chat-fixtures.js';

function stream(text: string, size: number, inside: boolean) {
  const p = new ReasoningStreamParser(inside);
  let reasoning = '';
  let content = '';
  for (let i = 0; i < text.length; i += size) { const d = p.push(text.slice(i, i + size)); reasoning += d.reasoning; content += d.content; }
  const d = p.finish();
  return { reasoning: reasoning + d.reasoning, content: content + d.content };
}

describe('chat reasoning parser', () => {
  const cases: [string, boolean, string | null, string | null][] = [
    ['<think>\nplan it\n</think>\n\nThe answer.', false, '\nplan it\n', '\n\nThe answer.'],
    ['plan it</think>Answer', true, 'plan it', 'Answer'],
    ['<think>plan</think>Answer', true, 'plan', 'Answer'],
    ['No thinking here.', false, null, 'No thinking here.'],
    ['still thinking when cut', true, 'still thinking when cut', null],
    ['<think>unclosed', false, 'unclosed', null],
    ['<think></think>', false, '', null],
  ];
  it.each(cases)('non-stream %j (prefilled %s)', (text, inside, reasoning, content) => {
    expect(extractReasoning(text, inside)).toEqual({ reasoning, content });
  });
  it.each(cases)('stream at every chunk size agrees: %j', (text, inside, reasoning, content) => {
    for (const size of [1, 2, 3, 5, 100]) {
      const r = stream(text, size, inside);
      expect(r.reasoning).toBe(reasoning ?? '');
      expect(r.content).toBe(content ?? '');
      expect(r.reasoning + r.content).not.toMatch(/<\/?think>/);
    }
  });

  it('prompt prefill detection and auto-detection from templates', () => {
    expect(promptOpensReasoning('<｜Assistant｜><think>\n')).toBe(true);
    expect(promptOpensReasoning('<think>\n\n</think>\n\n')).toBe(false);
    expect(promptOpensReasoning('<|im_start|>assistant\n')).toBe(false);
    expect(startsInReasoning('deepseek_r1', 'x')).toBe(true);
    expect(startsInReasoning('qwen3', '<|im_start|>assistant\n<think>\n')).toBe(true);
    expect(detectReasoningParser('{{ messages }}')).toBeNull();
    expect(detectReasoningParser(readTemplate('Qwen-Qwen2.5-7B-Instruct.jinja'))).toBeNull();
    for (const f of ['Qwen-Qwen3-0.6B.jinja', 'Qwen-QwQ-32B.jinja', 'llama.cpp-2025-09/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja']) {
      expect(detectReasoningParser(readTemplate(f))).toBe('qwen3');
    }
    // R1 and QwQ prefill <think>, Qwen3 does not: the rendered prompt decides.
    const r1 = renderChatTemplate({ template: readTemplate('llama.cpp-2025-09/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja'), messages: [USER1] });
    expect(startsInReasoning('qwen3', r1)).toBe(true);
    const qwq = renderChatTemplate({ template: readTemplate('llama.cpp-2025-09/Qwen-QwQ-32B.jinja'), messages: [USER1] });
    expect(startsInReasoning('qwen3', qwq)).toBe(true);
    const q3 = renderChatTemplate({ template: readTemplate('Qwen-Qwen3-0.6B.jinja'), messages: [USER1] });
    expect(startsInReasoning('qwen3', q3)).toBe(false);
  });
});

describe('promptEndsReasoning (vLLM is_reasoning_end on the prompt)', () => {
  it('the later of the last <think> and the last </think> decides', () => {
    expect(promptEndsReasoning('<|im_start|>assistant\n')).toBe(false);
    expect(promptEndsReasoning('<|im_start|>assistant\n<think>\n')).toBe(false);
    expect(promptEndsReasoning('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(true);
    expect(promptEndsReasoning('<think>a</think>b<|im_start|>assistant\n<think>\n')).toBe(false);
  });
});
