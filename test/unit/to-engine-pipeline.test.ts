// The chat pipeline (checkChat → prepareChat → runChat / runChatStream) over a scripted core engine and a toy
// model, without the addon: what reaches generate (n, seed, prompt ids), engine failures
// before and after output, abort on an early break, tool calls and reasoning, the usage hook.
import { describe, expect, test } from 'vitest';
import type { GenerateEvent, GenerateOptions } from '../../lib/engine/engine.js';
import { EngineError, GrammarError, TokenmillError } from '../../lib/engine/errors.js';
import type { Grammar } from '../../lib/engine/grammar.js';
import type { GenerateRequest } from '../../lib/engine/generate-request.js';
import { checkChat, prepareChat, runChat, runChatStream } from '../../lib/openai/chat-completions.js';
import type { ChatContext, ChatModel, ChatStreamItem, ChatUsageRecord } from '../../lib/openai/chat-completions.js';
import type { ChatCompletionChunk } from '../../lib/openai/protocol.js';
import { validateChatRequest } from '../../lib/openai/validate.js';
import { markValidated, toChatInput } from '../../lib/openai/chat-input.js';

// The events of one choice; the fake engine interleaves the n choices as the native engine does.
type Script = (req: GenerateRequest, choice: number) => GenerateEvent[];

const text = (s: string, extra: Partial<GenerateEvent> = {}): GenerateEvent => ({ index: 0, tokenIds: [...s].map((c) => c.charCodeAt(0)), text: s, ...extra });
const end = (s: string, completionTokens: number, finishReason: GenerateEvent['finishReason'] = 'stop', promptTokens = 2): GenerateEvent =>
  text(s, { finishReason, stopReason: null, usage: { promptTokens, completionTokens, cachedTokens: 1 } });

function fixture(script: Script, template = '{% for m in messages %}{{ m.content }}{% endfor %}') {
  const calls: GenerateRequest[] = [];
  const signals: AbortSignal[] = [];
  const usage: ChatUsageRecord[] = [];
  // Resolved when the usage hook has run `n` times (the hook runs after the stream's consumer has left).
  const usageWaiters: { n: number; resolve: () => void }[] = [];
  const recordUsage = (u: ChatUsageRecord): void => {
    usage.push(u);
    for (const w of usageWaiters.filter((x) => usage.length >= x.n)) w.resolve();
  };
  const untilUsage = (n: number): Promise<void> =>
    usage.length >= n ? Promise.resolve() : new Promise((resolve) => usageWaiters.push({ n, resolve }));
  const model: ChatModel = {
    info: { chatTemplate: template, bosTokenId: 1, eosTokenId: 2, vocabSize: 256, path: '/nonexistent/toy.gguf' } as ChatModel['info'],
    tokenize: (t: string) => [...t].map((c) => c.charCodeAt(0) & 0xff),
    tokenPiece: (id: number) => String.fromCharCode(id),
  };
  const ctx: ChatContext = {
    core: {
      maxModelLen: 64,
      generate(req: GenerateRequest, opts: GenerateOptions = {}): AsyncIterable<GenerateEvent> {
        calls.push(req);
        if (opts.signal) signals.push(opts.signal);
        const n = req.n ?? 1;
        const perChoice = Array.from({ length: n }, (_, c) => script(req, c).map((ev) => ({ ...ev, index: c })));
        return (async function* () {
          const produced = new Array<number>(n).fill(0);
          const finished = new Array<boolean>(n).fill(false);
          const pending = (): number => finished.filter((f) => !f).length;
          for (let step = 0; pending() > 0; step++) {
            for (let c = 0; c < n; c++) {
              const ev = perChoice[c]![step];
              if (finished[c] || !ev) continue;
              await new Promise((r) => setTimeout(r, 1));
              if (opts.signal?.aborted) {
                for (let k = 0; k < n; k++) {
                  if (finished[k]) continue;
                  finished[k] = true;
                  yield { ...end('', produced[k]!, 'abort', req.promptTokens.length), index: k, done: pending() === 0 };
                }
                return;
              }
              produced[c]! += ev.tokenIds.length;
              if (ev.finishReason || step === perChoice[c]!.length - 1) finished[c] = true;
              yield pending() === 0 ? { ...ev, done: true } : ev;
            }
          }
        })();
      },
    },
    model,
    servedModelName: 'toy',
    maxLogprobs: 20,
    maxNumSeqs: 64,
    schedulingPolicy: 'fcfs',
    chatTemplate: null,
    allowRequestChatTemplate: true,
    toolCallParser: null,
    reasoningParser: null,
    responseRole: 'assistant',
    returnTokensAsTokenIds: false,
    tokenBytes: (id) => new TextEncoder().encode(String.fromCharCode(id)),
    fingerprint: async () => 'tokenmill-test-000000000000',
    onUsage: recordUsage,
  };
  return { ctx, calls, signals, usage, untilUsage };
}

/** checkChat then prepareChat, as Engine.chat does. */
const prep = (ctx: ChatContext, b: unknown) => prepareChat(ctx, checkChat(ctx, b));
const body = (extra: Record<string, unknown> = {}) => ({ messages: [{ role: 'user', content: 'hi' }], ...extra });

async function drain(it: AsyncIterable<ChatStreamItem>): Promise<ChatStreamItem[]> {
  const out: ChatStreamItem[] = [];
  for await (const c of it) out.push(c);
  return out;
}

describe('chat pipeline over a scripted engine', () => {
  test('n=3 with a seed: one generate call with n and the seed (the engine forks the choices)', async () => {
    const f = fixture((_req, choice) => [text('a'), end(String(choice), 2)]);
    const r = await runChat(f.ctx, await prep(f.ctx, body({ n: 3, seed: 5, max_tokens: 4 })));
    expect(f.calls.map((c) => [c.seed, c.n])).toEqual([[5, 3]]);
    expect(f.calls[0]!.promptTokens).toEqual([104, 105]);
    expect(f.calls[0]!.maxTokens).toBe(4);
    expect(r.choices.map((c) => c.message.content)).toEqual(['a0', 'a1', 'a2']);
    expect(r.usage).toEqual({ prompt_tokens: 2, completion_tokens: 6, total_tokens: 8, prompt_tokens_details: { cached_tokens: 1 } });
    expect(r.system_fingerprint).toBe('tokenmill-test-000000000000');
    expect(f.usage).toEqual([{ model: 'toy', project: null, promptTokens: 2, cachedTokens: 1, completionTokens: 6, finishReasons: ['stop', 'stop', 'stop'] }]);
  });

  test('an engine error before any output is a thrown 500 (chat and chatStream)', async () => {
    const failing: Script = () => [{ index: 0, tokenIds: [], text: '', finishReason: 'error', error: new EngineError('kv exploded', 'engine_fault', 500) }];
    const f = fixture(failing);
    const e = await runChat(f.ctx, await prep(f.ctx, body())).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TokenmillError);
    expect((e as TokenmillError).status).toBe(500);
    const s = runChatStream(f.ctx, await prep(f.ctx, body({ stream: true })));
    const e2 = await s.next().catch((x: unknown) => x);
    expect((e2 as TokenmillError).status).toBe(500);
    // Without an error object the engine's failure is still a 500.
    const g = fixture(() => [{ index: 0, tokenIds: [], text: '', finishReason: 'error' }]);
    expect(((await runChat(g.ctx, await prep(g.ctx, body())).catch((x: unknown) => x)) as TokenmillError).message).toBe('Internal server error');
  });

  test('an engine error after output: a non-stream 500; in a stream one error event, then the end', async () => {
    const script: Script = () => [text('ab'), { index: 0, tokenIds: [], text: '', finishReason: 'error' }];
    const f = fixture(script);
    expect(((await runChat(f.ctx, await prep(f.ctx, body())).catch((x: unknown) => x)) as TokenmillError).status).toBe(500);
    const items = await drain(runChatStream(f.ctx, await prep(f.ctx, body({ stream: true }))));
    expect(items).toHaveLength(3);
    expect((items[0] as ChatCompletionChunk).choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    expect((items[1] as ChatCompletionChunk).choices[0]!.delta).toEqual({ content: 'ab' });
    expect(items[2]).toEqual({ error: { message: 'Internal server error', type: 'InternalServerError', param: null, code: 500 } });
  });

  test('engine failures the request caused (admission refusal, a grammar that cannot go on) are 400s with the engine\'s message', async () => {
    for (const error of [new GrammarError('grammar: too ambiguous to follow', 'grammar_invalid', 400), new EngineError('n must be between 1 and maxNumSeqs (64), got 65', 'invalid_argument', 400)]) {
      const before = fixture(() => [{ index: 0, tokenIds: [], text: '', finishReason: 'error', error }]);
      const e = (await runChat(before.ctx, await prep(before.ctx, body())).catch((x: unknown) => x)) as TokenmillError;
      expect([e.status, e.message]).toEqual([400, error.message]);
      const after = fixture(() => [text('ab'), { index: 0, tokenIds: [], text: '', finishReason: 'error', error }]);
      const items = await drain(runChatStream(after.ctx, await prep(after.ctx, body({ stream: true }))));
      expect(items.at(-1)).toEqual({ error: { message: error.message, type: 'BadRequestError', param: null, code: 400 } });
    }
    // Other codes below 500 (an engine closed under the request) stay server errors.
    const closed = fixture(() => [{ index: 0, tokenIds: [], text: '', finishReason: 'error', error: new EngineError('engine is closed', 'disposed', 400) }]);
    expect(((await runChat(closed.ctx, await prep(closed.ctx, body())).catch((x: unknown) => x)) as TokenmillError).status).toBe(500);
  });

  test('breaking out of a stream aborts every choice', async () => {
    const f = fixture(() => Array.from({ length: 50 }, () => text('x')));
    for await (const c of runChatStream(f.ctx, await prep(f.ctx, body({ stream: true, n: 2, temperature: 1 })))) {
      if ('choices' in c && c.choices[0]?.delta.content) break;
    }
    expect(f.signals).toHaveLength(1);
    expect(f.signals[0]!.aborted).toBe(true);
    await f.untilUsage(1);
    expect(f.usage).toHaveLength(1);
    expect(f.usage[0]!.finishReasons).toEqual(['abort', 'abort']);
  });

  test('hermes tool calls are parsed from the output when the template shows <tool_call>', async () => {
    const tpl = '{% for m in messages %}{{ m.content }}{% endfor %}{# <tool_call> #}';
    const out = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>';
    const f = fixture(() => [text(out.slice(0, 20)), end(out.slice(20), out.length)], tpl);
    const r = await runChat(f.ctx, await prep(f.ctx, body()));
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    expect(r.choices[0]!.message.tool_calls).toEqual([{ id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '{"city": "Oslo"}' } }]);
    const chunks = (await drain(runChatStream(f.ctx, await prep(f.ctx, body({ stream: true }))))) as ChatCompletionChunk[];
    const calls = chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? []));
    expect(calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather' } });
    expect(calls.map((c) => c.function.arguments ?? '').join('')).toBe('{"city": "Oslo"}');
    expect(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason).toBe('tool_calls');
    // tool_choice "none": nothing parsed.
    const none = await runChat(f.ctx, await prep(f.ctx, body({ tool_choice: 'none' })));
    expect(none.choices[0]!.message.content).toBe(out);
    expect(none.choices[0]!.finish_reason).toBe('stop');
  });

  test('reasoning is split when the template emits think tags; include_reasoning false drops it', async () => {
    const tpl = '{% for m in messages %}{{ m.content }}{% endfor %}{# <think></think> #}';
    const f = fixture(() => [text('<think>hmm'), end('</think>Yes.', 4)], tpl);
    const r = await runChat(f.ctx, await prep(f.ctx, body()));
    expect(r.choices[0]!.message.reasoning).toBe('hmm');
    expect(r.choices[0]!.message.content).toBe('Yes.');
    const dropped = await runChat(f.ctx, await prep(f.ctx, body({ include_reasoning: false })));
    expect(dropped.choices[0]!.message).not.toHaveProperty('reasoning');
    expect(dropped.choices[0]!.message.content).toBe('Yes.');
  });

  test('a refused request chat_template and bos/eos text reach the template', async () => {
    const f = fixture(() => [end('ok', 1)], '{{ bos_token }}|{{ messages[0].content }}|{{ eos_token }}');
    await runChat(f.ctx, await prep(f.ctx, body()));
    expect(f.calls[0]!.promptTokens).toEqual([...'\u0001|hi|\u0002'].map((c) => c.charCodeAt(0)));
    f.ctx.allowRequestChatTemplate = false;
    const e = await prep(f.ctx, body({ chat_template: 'x' })).then(() => null, (x: unknown) => x as TokenmillError);
    expect(e?.status).toBe(400);
  });

  test('non-text content parts: 400 naming the message (multimodal vs unknown types); system messages ignore them', async () => {
    const f = fixture(() => [end('ok', 1)]);
    const fail = (messages: unknown[]) => prep(f.ctx, { messages }).then(() => null, (x: unknown) => x as TokenmillError);
    const image = await fail([{ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:,' } }] }]);
    expect(image?.status).toBe(400);
    expect(image?.message).toBe("messages[0]: content parts of type 'image_url' are not supported; this model accepts text only.");
    expect(image?.param).toBe('messages');
    const odd = await fail([{ role: 'system', content: 's' }, { role: 'user', content: [{ type: 'hologram' }] }]);
    expect(odd?.message).toBe('messages[1]: Unknown part type: hologram');
    const sys = await prep(f.ctx, { messages: [{ role: 'system', content: [{ type: 'text', text: 'be brief' }, { type: 'image_url', image_url: { url: 'x' } }] }, { role: 'user', content: 'hi' }] });
    await runChat(f.ctx, sys);
    expect(String.fromCharCode(...f.calls[0]!.promptTokens)).toContain('be brief');
  });
});

// A toy compileGrammar that settles on a later timer (as the worker-thread compile does): `root ::= …`
// texts compile to a stand-in object; anything else rejects with a GrammarError. `settled` holds one
// promise per compile that resolves once it settled — without a handler on the compile's own promise,
// which would mark its rejection handled.
function withGrammars(f: ReturnType<typeof fixture>) {
  const compiled: string[] = [];
  const settled: Promise<void>[] = [];
  f.ctx.model.compileGrammar = (t: string): Promise<Grammar> => {
    compiled.push(t);
    let markSettled = (): void => {};
    settled.push(new Promise<void>((resolve) => (markSettled = resolve)));
    return new Promise((resolve, reject) => setTimeout(() => {
      if (t.startsWith('root ::= ')) resolve({ text: t } as unknown as Grammar);
      else reject(Object.assign(new GrammarError(`grammar: bad at line 1, column 1`, 'grammar_invalid', 400), { line: 1, column: 1 }));
      markSettled();
    }, 2));
  };
  return { compiled, settled };
}

describe('the structured-outputs grammar compiles asynchronously', () => {
  test('runChat and runChatStream await the compile and submit the compiled grammar', async () => {
    const f = fixture(() => [end('yes', 1)]);
    const { compiled } = withGrammars(f);
    const p = await prep(f.ctx, body({ structured_outputs: { grammar: 'root ::= "yes"' } }));
    expect(compiled).toEqual(['root ::= "yes"']);
    expect(p.grammar).toBeInstanceOf(Promise);
    expect(p.generate).not.toHaveProperty('grammar');
    const r = await runChat(f.ctx, p);
    expect(r.choices[0]!.message.content).toBe('yes');
    expect((f.calls[0]!.grammar as unknown as { text: string }).text).toBe('root ::= "yes"');
    const items = await drain(runChatStream(f.ctx, await prep(f.ctx, body({ stream: true, structured_outputs: { grammar: 'root ::= "no"' } }))));
    expect(items.length).toBeGreaterThan(0);
    expect((f.calls[1]!.grammar as unknown as { text: string }).text).toBe('root ::= "no"');
    // Without structured outputs there is nothing to await and no grammar.
    const plain = await prep(f.ctx, body());
    expect(plain.grammar).toBeNull();
    await runChat(f.ctx, plain);
    expect(f.calls[2]).not.toHaveProperty('grammar');
  });

  test('a rejected grammar fails the request before the engine: runChat rejects, the stream throws from its first next()', async () => {
    const f = fixture(() => [end('x', 1)]);
    const { settled } = withGrammars(f);
    const bad = { structured_outputs: { grammar: 'oops' } };
    const p = await prep(f.ctx, body(bad)); // does not reject: the compile is still running
    const e = await runChat(f.ctx, p).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GrammarError);
    expect((e as GrammarError).status).toBe(400);
    const s = runChatStream(f.ctx, await prep(f.ctx, body({ stream: true, ...bad })));
    const e2 = await s.next().catch((x: unknown) => x);
    expect(e2).toBeInstanceOf(GrammarError);
    expect(f.calls).toHaveLength(0);
    expect(f.usage).toHaveLength(0);
    // A prepared request that is never run leaves no unhandled rejection behind (vitest would fail the run).
    await prep(f.ctx, body(bad));
    await Promise.all(settled);
    // Node reports an unhandled rejection once the microtasks after the rejecting timer ran: before the
    // next macrotask.
    await new Promise((r) => setImmediate(r));
  });

  test('error order holds: 422, 404 and earlier 400s fail the request without compiling', async () => {
    const f = fixture(() => [end('x', 1)]);
    const { compiled } = withGrammars(f);
    const g = { structured_outputs: { grammar: 'oops' } };
    const status = (b: unknown): Promise<number | undefined> => Promise.resolve().then(() => prep(f.ctx, b)).then(() => undefined, (x: unknown) => (x as TokenmillError).status);
    expect(await status({ ...body(g), n: 0 })).toBe(422);
    expect(await status(body({ ...g, model: 'nope' }))).toBe(404);
    expect(await status(body({ ...g, priority: 1 }))).toBe(400);
    expect(await status(body({ ...g, max_completion_tokens: 1000 }))).toBe(400);
    expect(compiled).toEqual([]);
    // Otherwise the bad grammar is only seen when the run awaits it.
    expect(await status(body(g))).toBeUndefined();
    expect(compiled).toEqual(['oops']);
    // A model without compileGrammar refuses structured outputs with a 400, synchronously.
    f.ctx.model = fixture(() => []).ctx.model;
    expect(await status(body(g))).toBe(400);
  });

});

describe('checkChat and requests the server validated', () => {
  test('a request marked validated is taken as it is (no second validation), unless the max_logprobs differs', () => {
    const f = fixture(() => []);
    const v = validateChatRequest(body({ top_logprobs: 3, logprobs: true }), { maxLogprobs: 20 });
    if (!v.ok) throw new Error('the fixture body is valid');
    // A marked object is not looked at again: even a field made invalid afterwards goes through, which
    // shows no second validation ran (the server only marks values validateChatRequest returned).
    const input = toChatInput(v.value, false);
    const marked = markValidated({ ...input, request: { ...input.request, stream: 'yes' as never } }, 20);
    expect(checkChat(f.ctx, marked)).toBe(marked);
    expect(() => checkChat(f.ctx, { ...marked })).toThrow(expect.objectContaining({ status: 422 }));
    expect(() => checkChat(f.ctx, markValidated({ ...input, request: { ...input.request, stream: 'yes' as never } }, 5))).toThrow(expect.objectContaining({ status: 422 }));
    // Checked against another max_logprobs: the fields are checked again with the engine's.
    const checked5 = markValidated(input, 5);
    expect(checkChat(f.ctx, checked5)).toBe(checked5);
    const wide = validateChatRequest(body({ top_logprobs: 15, logprobs: true }), { maxLogprobs: 20 });
    if (!wide.ok) throw new Error('top_logprobs 15 is valid under 20');
    const e = (() => { try { checkChat({ ...f.ctx, maxLogprobs: 10 }, markValidated(toChatInput(wide.value, false), 20)); } catch (x) { return x; } return null; })();
    expect(e).toMatchObject({ status: 422, detail: [{ msg: expect.stringContaining('greater than max allowed: 10') }] });
  });
});
