// Rendering on a work-pool worker gives exactly the inline render's output and errors (every shared
// template, with and without the generation prompt; parse, raise and runtime errors with their template
// lines), and its limits are hard: a render that never yields is terminated at the time limit, one that
// allocates past the worker's heap dies with its worker, and the pool replaces the worker for the
// next render. Schema conversion off the thread likewise equals the inline conversion.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderChatTemplate, TemplateError } from '../../lib/chat/template.js';
import type { RenderChatOptions } from '../../lib/chat/template.js';
import { renderChatTemplateOffThread, renderConversationOffThread } from '../../lib/chat/template-off-thread.js';
import { packConversation } from '../../lib/chat/conversation.js';
import { TokenmillError } from '../../lib/engine/errors.js';
import { structuredGrammar, structuredGrammarOffThread } from '../../lib/openai/to-engine.js';
import { validateChatRequest } from '../../lib/openai/validate.js';
import { toChatInput } from '../../lib/openai/chat-input.js';
import type { ChatRequestFields } from '../../lib/openai/chat-input.js';
import { configureWorkPool, workPool } from '../../lib/workers/offload.js';
import { readTemplate, TEMPLATES, TOOL_CONVERSATION, WEATHER_TOOL } from './chat-fixtures.js';

const FIXED_NOW = () => new Date(2025, 5, 7, 12, 0, 0);
const files = [...readdirSync(TEMPLATES).filter((f) => f.endsWith('.jinja')),
  ...readdirSync(join(TEMPLATES, 'llama.cpp-2025-09')).filter((f) => f.endsWith('.jinja')).map((f) => `llama.cpp-2025-09/${f}`)];

/** The inline result: the output, or the error's class, message and line. */
function inline(opts: RenderChatOptions): unknown {
  try {
    return renderChatTemplate(opts);
  } catch (e) {
    return { cls: (e as Error).constructor.name, message: (e as Error).message, line: (e as TemplateError).line, status: (e as TokenmillError).status };
  }
}
/** Off the event loop; `packed` sends the conversation as packed bytes (a large body's way, lib/chat/conversation.ts). */
async function offThread(opts: RenderChatOptions, packed = false): Promise<unknown> {
  try {
    if (!packed) return await renderChatTemplateOffThread(opts, { client: 'test' });
    const { messages, tools, documents, ...rest } = opts;
    return await renderConversationOffThread({ ...rest, conversation: packConversation({ messages, tools: tools ?? null, documents: documents ?? null }) }, { client: 'test' });
  } catch (e) {
    return { cls: (e as Error).constructor.name, message: (e as Error).message, line: (e as TemplateError).line, status: (e as TokenmillError).status };
  }
}

beforeAll(() => configureWorkPool({ size: 2, perClient: 2, memoryMb: 64 }));
afterAll(() => workPool().close());

describe('renderChatTemplateOffThread', () => {
  it('finds the shared templates', () => { expect(files.length).toBeGreaterThanOrEqual(79); });

  it('equals the inline render for every shared template (tool conversation, with and without the generation prompt), the conversation inline or packed', async () => {
    for (const file of files) {
      for (const addGenerationPrompt of [true, false]) {
        const opts: RenderChatOptions = { template: readTemplate(file), messages: TOOL_CONVERSATION, tools: [WEATHER_TOOL], bosToken: '<s>', eosToken: '</s>', now: FIXED_NOW, addGenerationPrompt };
        const want = inline(opts);
        expect(await offThread(opts), `${file} addGenerationPrompt=${addGenerationPrompt}`).toEqual(want);
        expect(await offThread(opts, true), `${file} addGenerationPrompt=${addGenerationPrompt}, packed`).toEqual(want);
      }
    }
  }, 120_000);

  it('errors keep their class, message, status and template line', async () => {
    const msgs = [{ role: 'user' as const, content: 'hi' }];
    const cases: RenderChatOptions[] = [
      { template: null, messages: msgs },
      { template: 'a\n{% if %}', messages: msgs },
      { template: 'x\ny\n{{ raise_exception("no system role") }}', messages: msgs },
      { template: 'x\n{{ messages[0].content.nope() }}', messages: msgs },
      { template: '{{ messages[0].content }}', messages: msgs, continueFinalMessage: true },
      { template: '{{ "other" }}', messages: msgs, continueFinalMessage: true, addGenerationPrompt: false },
      { template: '{% for i in range(2000000) %}{% endfor %}', messages: msgs },
    ];
    for (const opts of cases) {
      const want = inline(opts);
      expect(want).toHaveProperty('status', 400);
      expect(await offThread(opts)).toEqual(want);
    }
  });

  it('a render that never ends is terminated at the time limit: the same 400 as inline, and the next render works', async () => {
    const before = workPool().stats().terminatedTime;
    const bomb = "{% for i in range(99999) %}{% for j in range(99999) %}{{ '' }}{% endfor %}{% endfor %}";
    const started = performance.now();
    const e = await renderChatTemplateOffThread({ template: bomb, messages: [], limits: { timeMs: 300 } }).catch((x: unknown) => x);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(e).toBeInstanceOf(TemplateError);
    expect(e).toMatchObject({ status: 400, message: 'chat template render exceeded the time limit of 300 ms' });
    expect(workPool().stats().terminatedTime).toBe(before + 1);
    expect(await renderChatTemplateOffThread({ template: 'ok {{ messages | length }}', messages: [] })).toBe('ok 0');
  }, 60_000);

  it('a render past the worker\'s heap limit kills only its worker: a 400 naming the memory limit', async () => {
    const before = workPool().stats().terminatedMemory;
    const hog = '{% set ns = namespace(s="x", a=[]) %}{% for i in range(17) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}'
      + '{% for i in range(5000) %}{% set _ = ns.a.append((ns.s ~ i) | upper) %}{% endfor %}{{ ns.a | length }}';
    const e = await renderChatTemplateOffThread({ template: hog, messages: [], limits: { timeMs: 60_000 } }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TemplateError);
    expect(e).toMatchObject({ status: 400, message: 'chat template render exceeded the memory limit of 64 MiB' });
    expect(workPool().stats().terminatedMemory).toBe(before + 1);
    expect(await renderChatTemplateOffThread({ template: 'still {{ 1 + 1 }}', messages: [] })).toBe('still 2');
  }, 60_000);
});

describe('structuredGrammarOffThread', () => {
  const chat = (extra: Record<string, unknown>): ChatRequestFields => {
    const v = validateChatRequest({ messages: [{ role: 'user', content: 'x' }], ...extra }, { maxLogprobs: 20 });
    if (!v.ok) throw new Error(JSON.stringify(v.detail));
    return toChatInput(v.value, false).request;
  };
  const settle = async (f: () => unknown): Promise<unknown> => {
    try {
      return await f();
    } catch (e) {
      return { cls: (e as Error).constructor.name, message: (e as Error).message, status: (e as TokenmillError).status, param: (e as TokenmillError).param };
    }
  };

  it('equals the inline conversion, errors included', async () => {
    const requests = [
      chat({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'integer', minimum: 3, maximum: 70 } }, required: ['a'] } } } }),
      chat({ structured_outputs: { regex: '[a-z]{2,5}\\d?' } }),
      chat({ structured_outputs: { choice: ['yes', 'no'] } }),
      chat({ structured_outputs: { json: { type: 'nonsense' } } }),
      chat({ structured_outputs: { regex: '(' } }),
      chat({ response_format: { type: 'json_object' } }),
    ];
    for (const r of requests) expect(await settle(() => structuredGrammarOffThread(r, { client: 'test' }))).toEqual(await settle(() => structuredGrammar(r)));
  });

  // Which hard limit stops the expansion first depends on the machine's speed and load (on an idle EPYC
  // the 64 MiB heap limit, under load the 2000 ms clock); either must end it with the same 400.
  it('a schema whose expansion is exponential is stopped by a hard limit with a 400 naming response_format', async () => {
    const defs: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    defs.d40 = { type: 'string' };
    const r = chat({ response_format: { type: 'json_schema', json_schema: { name: 'bomb', schema: { $defs: defs, allOf: [{ $ref: '#/$defs/d0' }] } } } });
    const e = await structuredGrammarOffThread(r).catch((x: unknown) => x);
    expect(e).toMatchObject({ status: 400, param: 'response_format' });
    expect((e as Error).message).toMatch(/^structured output conversion exceeded the (time limit of 2000 ms|memory limit of 64 MiB)$/);
  }, 60_000);
});
