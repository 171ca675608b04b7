// Real templates from ../shared/templates: every one renders a conversation with a system message, a
// tool definition, an assistant tool call and a tool result; six are compared with hand-written
// expectations (each written from reading its template, see the comments).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderChatTemplate } from '../../lib/chat/template.js';
import type { RenderChatOptions } from '../../lib/chat/template.js';
import type { ChatMessage } from '../../lib/openai/protocol.js';
import { ANSWER, CALL, readTemplate, RESULT, SYSTEM, TEMPLATES, TOOL_CONVERSATION, USER1, USER2, WEATHER_TOOL } from './chat-fixtures.js';

const TOOL_JSON = '{"type": "function", "function": {"name": "get_weather", "description": "Get the weather for a city", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}, "required": ["city"]}}}';
const PARAMS_JSON = '{"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}, "required": ["city"]}';
const FIXED_NOW = () => new Date(2025, 5, 7, 12, 0, 0);

/** Per-template adjustments, each justified by what the template reads. */
const ADJUST: Record<string, { note: string; opts: Partial<RenderChatOptions>; messages?: ChatMessage[] }> = {
  // Gemma 2 raises for a system message and for any role order but user/assistant alternation (so no
  // tool turns; checked below): tested with the plain turns of the conversation.
  'google-gemma-2-2b-it.jinja': { note: 'no system role, no tool role', opts: {}, messages: [USER1, ANSWER, USER2] },
  // Firefunction v2 concatenates the template variables `functions` and `datetime` (its HF caller passes them).
  'fireworks-ai-llama-3-firefunction-v2.jinja': { note: 'needs functions/datetime', opts: { chatTemplateKwargs: { functions: JSON.stringify([WEATHER_TOOL.function]), datetime: '2025-06-07' } } },
};

const files = [
  ...readdirSync(TEMPLATES).filter((f) => f.endsWith('.jinja')).map((f) => [f, f] as const),
  ...readdirSync(join(TEMPLATES, 'llama.cpp-2025-09')).filter((f) => f.endsWith('.jinja')).map((f) => [`llama.cpp-2025-09/${f}`, f] as const),
];

describe('chat template: every shared template renders the tool conversation', () => {
  it('finds the shared templates', () => { expect(files.length).toBeGreaterThanOrEqual(79); });
  it.each(files)('%s', (path, base) => {
    const src = readTemplate(path);
    const adj = ADJUST[base];
    const messages = adj?.messages ?? TOOL_CONVERSATION;
    const out = renderChatTemplate({ template: src, messages, tools: [WEATHER_TOOL], bosToken: '<s>', eosToken: '</s>', now: FIXED_NOW, ...adj?.opts });
    for (const m of messages) if (m.role !== 'assistant') expect(out).toContain(m.content);
    // A template that reads the tools list must put the tool into the prompt.
    if (/\btools\b/.test(src)) expect(out).toContain('get_weather');
    // A template that reads add_generation_prompt renders differently without it.
    if (/add_generation_prompt/.test(src)) {
      const closed = renderChatTemplate({ template: src, messages, tools: [WEATHER_TOOL], bosToken: '<s>', eosToken: '</s>', now: FIXED_NOW, ...adj?.opts, addGenerationPrompt: false });
      expect(out).not.toBe(closed);
    }
  });
  it('gemma 2 raises for the system role, as the template says', () => {
    const tpl = readTemplate('google-gemma-2-2b-it.jinja');
    expect(() => renderChatTemplate({ template: tpl, messages: [SYSTEM, USER1] })).toThrow(/System role not supported/);
    expect(() => renderChatTemplate({ template: tpl, messages: [USER1, CALL, RESULT] })).toThrow(/roles must alternate/);
  });
});

const conv = [SYSTEM, USER1, CALL, RESULT];

describe('chat template: hand-checked renders', () => {
  it('Qwen2.5: tools in the system turn, <tool_call> JSON, tool result as a user turn', () => {
    const out = renderChatTemplate({ template: readTemplate('Qwen-Qwen2.5-7B-Instruct.jinja'), messages: conv, tools: [WEATHER_TOOL] });
    expect(out).toBe(
      '<|im_start|>system\nYou are helpful.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n'
      + 'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' + TOOL_JSON + '\n</tools>\n\n'
      + 'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n'
      + '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
      + '<|im_start|>user\nWeather in Paris?<|im_end|>\n'
      + '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lyon"}}\n</tool_call><|im_end|>\n'
      + '<|im_start|>user\n<tool_response>\n22C\n</tool_response><|im_end|>\n'
      + '<|im_start|>assistant\n');
  });

  it('Qwen3: same framing, no newline before the first <tool_call>; enable_thinking=false closes an empty think', () => {
    const tpl = readTemplate('Qwen-Qwen3-0.6B.jinja');
    const expected =
      '<|im_start|>system\nYou are helpful.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n'
      + 'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' + TOOL_JSON + '\n</tools>\n\n'
      + 'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n'
      + '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
      + '<|im_start|>user\nWeather in Paris?<|im_end|>\n'
      + '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lyon"}}\n</tool_call><|im_end|>\n'
      + '<|im_start|>user\n<tool_response>\n22C\n</tool_response><|im_end|>\n'
      + '<|im_start|>assistant\n';
    expect(renderChatTemplate({ template: tpl, messages: conv, tools: [WEATHER_TOOL] })).toBe(expected);
    expect(renderChatTemplate({ template: tpl, messages: conv, tools: [WEATHER_TOOL], chatTemplateKwargs: { enable_thinking: false } }))
      .toBe(expected + '<think>\n\n</think>\n\n');
    // A past assistant turn after the last query keeps its reasoning only when it is the last message.
    const withReasoning = renderChatTemplate({ template: tpl, messages: [USER1, { role: 'assistant', content: 'Sunny.', reasoning: 'look it up' }], addGenerationPrompt: false });
    expect(withReasoning).toBe('<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n<think>\nlook it up\n</think>\n\nSunny.<|im_end|>\n');
  });

  it('Llama 3.1: tools in the first user turn (indent=4 JSON), call as {"name", "parameters"}, ipython result as JSON', () => {
    const out = renderChatTemplate({ template: readTemplate('meta-llama-Llama-3.1-8B-Instruct.jinja'), messages: conv, tools: [WEATHER_TOOL], bosToken: '<|begin_of_text|>' });
    const toolIndented = '{\n    "type": "function",\n    "function": {\n        "name": "get_weather",\n        "description": "Get the weather for a city",\n'
      + '        "parameters": {\n            "type": "object",\n            "properties": {\n                "city": {\n                    "type": "string",\n'
      + '                    "description": "City name"\n                }\n            },\n            "required": [\n                "city"\n            ]\n        }\n    }\n}';
    expect(out).toBe(
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n'
      + 'You are helpful.<|eot_id|>'
      + '<|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a JSON for a function call '
      + 'with its proper arguments that best answers the given prompt.\n\n'
      + 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.\n\n'
      + toolIndented + '\n\nWeather in Paris?<|eot_id|>'
      + '<|start_header_id|>assistant<|end_header_id|>\n\n{"name": "get_weather", "parameters": {"city": "Lyon"}}<|eot_id|>'
      // A str is iterable in Jinja, so the template JSON-encodes the tool result.
      + '<|start_header_id|>ipython<|end_header_id|>\n\n"22C"<|eot_id|>'
      + '<|start_header_id|>assistant<|end_header_id|>\n\n');
  });

  it('Mistral Small 3.2: [AVAILABLE_TOOLS] before the last user turn, [TOOL_CALLS]name[CALL_ID]id[ARGS]json', () => {
    const out = renderChatTemplate({ template: readTemplate('Mistral-Small-3.2-24B-Instruct-2506.jinja'), messages: conv, tools: [WEATHER_TOOL], bosToken: '<s>', eosToken: '</s>', now: FIXED_NOW });
    expect(out).toBe(
      '<s>[SYSTEM_PROMPT]You are helpful.[/SYSTEM_PROMPT][AVAILABLE_TOOLS][' + TOOL_JSON + '][/AVAILABLE_TOOLS][INST]Weather in Paris?[/INST]'
      + '[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Lyon"}</s>'
      + '[TOOL_RESULTS]a1b2c3d4e[TOOL_CONTENT]22C[/TOOL_RESULTS]');
    // Without a system message the default one carries strftime_now("%Y-%m-%d").
    const dflt = renderChatTemplate({ template: readTemplate('Mistral-Small-3.2-24B-Instruct-2506.jinja'), messages: [USER1], bosToken: '<s>', now: FIXED_NOW });
    expect(dflt).toContain('The current date is 2025-06-07.');
    expect(dflt.endsWith('[/SYSTEM_PROMPT][INST]Weather in Paris?[/INST]')).toBe(true);
  });

  it('Hermes 3: python-style signature in <tools>, <tool_call> JSON, tool role turn', () => {
    const out = renderChatTemplate({ template: readTemplate('NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja'), messages: conv, tools: [WEATHER_TOOL], bosToken: '<|begin_of_text|>' });
    expect(out).toBe(
      '<|begin_of_text|><|im_start|>system\nYou are a function calling AI model. You are provided with function signatures within <tools></tools> XML tags. '
      + "You may call one or more functions to assist with the user query. Don't make assumptions about what values to plug into functions. Here are the available tools: <tools> "
      + '{"type": "function", "function": {"name": "get_weather", "description": "get_weather(city: str) - Get the weather for a city\n\n    Args:\n        city(str): City name"'
      + ', "parameters": ' + PARAMS_JSON + '}'
      + ' </tools>Use the following pydantic model json schema for each tool call you will make: {"properties": {"name": {"title": "Name", "type": "string"}, '
      + '"arguments": {"title": "Arguments", "type": "object"}}, "required": ["name", "arguments"], "title": "FunctionCall", "type": "object"}}\n'
      + 'For each function call return a json object with function name and arguments within <tool_call></tool_call> XML tags as follows:\n'
      + '<tool_call>\n{"name": <function-name>, "arguments": <args-dict>}\n</tool_call><|im_end|>\n'
      + '<|im_start|>system\nYou are helpful.<|im_end|>\n'
      + '<|im_start|>user\nWeather in Paris?<|im_end|>\n'
      + '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lyon"}}\n</tool_call><|im_end|>\n'
      + '<|im_start|>tool\n<tool_response>\n22C\n</tool_response><|im_end|>'
      + '<|im_start|>assistant\n');
  });

  it('DeepSeek-R1 distill (HF 2025-09 copy): system first, </think> stripped from history, prefilled <think>', () => {
    const tpl = readTemplate('llama.cpp-2025-09/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja');
    const out = renderChatTemplate({ template: tpl, bosToken: '<｜begin▁of▁sentence｜>', messages: [
      SYSTEM, { role: 'user', content: 'Hello' }, { role: 'assistant', content: '<think>greet</think>Hi there' }, USER2,
    ] });
    expect(out).toBe('<｜begin▁of▁sentence｜>You are helpful.<｜User｜>Hello<｜Assistant｜>Hi there<｜end▁of▁sentence｜><｜User｜>Thanks!<｜Assistant｜><think>\n');
    // A tool result after the (content "") assistant turn closes the outputs; no generation prompt after a tool turn.
    const tools = renderChatTemplate({ template: tpl, bosToken: '<s>', messages: [USER1, CALL, RESULT] });
    expect(tools).toBe('<s><｜User｜>Weather in Paris?<｜Assistant｜><｜end▁of▁sentence｜><｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>22C<｜tool▁output▁end｜><｜tool▁outputs▁end｜>');
  });
});
