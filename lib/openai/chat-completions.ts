// NOTE(openai/chat-completions): one chat request through the engine, in vLLM's order
// (docs/http-api.md#request-pipeline): validate (422) → model (404) → request limits → structured-output
// conversion / unsupported features / priority (400) →
// template resolution and render (400) → tokenize (parseSpecial, addSpecial = add_special_tokens) →
// truncation and context checks (400) → bad_words → grammar compile (400) → n engine requests →
// assembly. checkChat does the first three synchronously; prepareChat does the rest, and every step whose
// cost the request controls runs off the event loop: the conversion and the render on a work-pool
// worker (killed at its time limit), long tokenizations on libuv's threads, the grammar compile on a
// libuv worker (runChat / runChatStream await it before submitting). So a bad template, schema or
// grammar still fails the request before any output exists, and no request can stall the event loop
// that writes everyone's streams. An engine `error` finish is a 500 thrown while nothing was yielded,
// and an in-stream `{error}` event after that (then the stream ends). The caller's signal and an early
// `break` both abort every choice's engine request.
import type { Engine as CoreEngine, GenerateEvent, TokenLogprob as EngineTokenLogprob } from '../engine/engine.js';
import { EngineError, InvalidArgumentError, NotFoundError, TokenmillError } from '../engine/errors.js';
import type { Model } from '../engine/model.js';
import type { Grammar } from '../engine/grammar.js';
import { AsyncQueue } from '../engine/async-queue.js';
import { detectReasoningParser, promptEndsReasoning, REASONING_END, startsInReasoning } from '../chat/reasoning-parser.js';
import type { ReasoningParserName } from '../chat/reasoning-parser.js';
import { TemplateError } from '../chat/template.js';
import { renderConversationOffThread } from '../chat/template-off-thread.js';
import { detectToolParser } from '../chat/tool-parser.js';
import type { ToolParserName } from '../chat/tool-parser.js';
import { buildChatResponse } from './assemble.js';
import type { AssembleOptions, EngineChoiceOutput, EngineFinishReason, UsageCounts } from './assemble.js';
import { ChatStreamAssembler } from './assemble-stream.js';
import { formatPromptLogprobs } from './logprobs.js';
import type { SampledLogprob } from './logprobs.js';
import type { ChatCompletionChunk, ChatCompletionResponse, PromptLogprobEntry } from './protocol.js';
import { nonTextPartError } from './content-parts.js';
import { echoText, responseRole, toChatInput, validatedWith } from './chat-input.js';
import type { ChatInput, ChatRequestFields } from './chat-input.js';
import { checkRequestLimits, DEFAULT_REQUEST_LIMITS } from './request-limits.js';
import { BAD_WORDS_TOKENIZE, badWordForms, fitPrompt, pretokenizedView, requestSeed, samplingFields, structuredGrammarOffThread } from './to-engine.js';
import { tokenizeTexts } from '../workers/tokenize-texts.js';
import type { WorkOptions } from '../workers/offload.js';
import { validateChatRequest, RequestValidationError } from './validate.js';
import type { ChatRequest } from './validate.js';
import type { GenerateRequest } from '../engine/generate-request.js';

/** Per-call options of engine.chat / engine.chatStream. */
export interface ChatCallOptions {
  signal?: AbortSignal;
  /**
   * Who the request is for (an API key, a remote address …): each client gets at most its share of the
   * workers that render templates and convert schemas, so one client cannot hold them all.
   */
  client?: string;
  /** `<team>/<project>` usage attribution, handed to the engine's onUsage hook. */
  project?: string;
}

/** One request's token usage, reported once it finished (aborted ones too). */
export interface ChatUsageRecord {
  model: string;
  project: string | null;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  finishReasons: string[];
}

/**
 * The in-stream error event (docs/http-api.md#errors-in-a-stream), yielded when the engine fails after
 * output began.
 */
export interface ChatStreamErrorEvent {
  error: { message: string; type: string; param: string | null; code: number };
}

export type ChatStreamItem = ChatCompletionChunk | ChatStreamErrorEvent;

/** The parts of the core engine and the model the pipeline uses (tests substitute scripted ones). */
export type ChatCore = Pick<CoreEngine, 'generate' | 'maxModelLen'>;
export type ChatModel = Pick<Model, 'info' | 'tokenize' | 'tokenPiece'> & Partial<Pick<Model, 'compileGrammar' | 'tokenizeMany'>>;

/** What the pipeline needs from the engine that runs it. */
export interface ChatContext {
  core: ChatCore;
  model: ChatModel;
  servedModelName: string;
  maxLogprobs: number;
  /** The engine's --max-num-seqs: the largest n (and beam width) a request may ask for. */
  maxNumSeqs: number;
  schedulingPolicy: 'fcfs' | 'priority';
  chatTemplate: string | null;
  allowRequestChatTemplate: boolean;
  toolCallParser: ToolParserName | null;
  reasoningParser: ReasoningParserName | null;
  responseRole: string;
  returnTokensAsTokenIds: boolean;
  /** UTF-8 bytes of a token's text (cached per engine). */
  tokenBytes(id: number): Uint8Array;
  fingerprint(): Promise<string | null>;
  onUsage?: (record: ChatUsageRecord) => void;
}

export interface PreparedChat {
  request: ChatRequestFields;
  promptTokens: number[];
  generate: Omit<GenerateRequest, 'promptTokens' | 'seed' | 'grammar'>;
  /** The structured-outputs grammar, compiling off the JS thread (rejects with a 400 GrammarError). */
  grammar: Promise<Grammar> | null;
  seed: number | undefined;
  assemble: Omit<AssembleOptions, 'systemFingerprint'>;
}

/**
 * The checks a chat request fails synchronously: validation (422), the served model (404), the request
 * limits (400). `body` is a request object, or an input this package validated already (chat-input.ts).
 */
export function checkChat(ctx: ChatContext, body: unknown): ChatInput {
  const checkedWith = validatedWith(body);
  const input = checkedWith === undefined ? toChatInput(validated(ctx, body), false) : (body as ChatInput);
  // Checked against another max_logprobs (an embedder's server and engine disagree): only the
  // request's fields depend on it, so they are checked again, without the conversation and without the
  // token-id fields (typed arrays by now, and independent of max_logprobs).
  if (checkedWith !== undefined && checkedWith !== ctx.maxLogprobs) {
    validated(ctx, { ...input.request, messages: [], logit_bias: null, allowed_token_ids: null, stop_token_ids: null });
  }
  const r = input.request;
  if (r.model && r.model !== ctx.servedModelName) {
    throw new NotFoundError(`The model \`${r.model}\` does not exist.`, 'not_found', 404, { param: 'model' });
  }
  checkRequestLimits(r, input.facts, { ...DEFAULT_REQUEST_LIMITS, maxN: ctx.maxNumSeqs, maxLogitBias: ctx.model.info.vocabSize });
  return input;
}

function validated(ctx: ChatContext, body: unknown): ChatRequest {
  const v = validateChatRequest(body, { maxLogprobs: ctx.maxLogprobs });
  if (!v.ok) throw new RequestValidationError(v.detail);
  return v.value;
}

/**
 * Everything else before the engine, in order, off the event loop where a request controls the cost:
 * rejects with the 400s. The grammar compile it starts is awaited by runChat / runChatStream.
 */
export async function prepareChat(ctx: ChatContext, input: ChatInput, work: WorkOptions = {}): Promise<PreparedChat> {
  const { request: r, facts } = input;
  const grammarText = await structuredGrammarOffThread(r, work);
  if (facts.nonTextPart) throw nonTextPartError(facts.nonTextPart);
  if (r.priority !== 0 && ctx.schedulingPolicy !== 'priority') {
    throw new InvalidArgumentError(`Got priority ${r.priority} but Priority scheduling is not enabled.`, 'invalid_argument', 400, { param: 'priority' });
  }
  if (r.chat_template != null && !ctx.allowRequestChatTemplate) {
    throw new TemplateError('Chat template is passed with request, but this server refuses request chat templates (--no-request-chat-template).');
  }
  const template = r.chat_template ?? ctx.chatTemplate ?? ctx.model.info.chatTemplate;
  const info = ctx.model.info;
  const specialText = (id: number | null): string => (id == null ? '' : ctx.model.tokenPiece(id));
  // tool_choice "none" still renders the tools (vLLM does, unless --exclude-tools-when-tool-choice-none).
  const prompt = await renderConversationOffThread({
    template,
    conversation: input.conversation,
    addGenerationPrompt: r.add_generation_prompt,
    continueFinalMessage: r.continue_final_message,
    bosToken: specialText(info.bosTokenId),
    eosToken: specialText(info.eosTokenId),
    chatTemplateKwargs: r.chat_template_kwargs,
    reasoningEffort: r.reasoning_effort,
  }, work);
  const [tokenized] = await tokenizeTexts(ctx.model, [prompt], { addSpecial: r.add_special_tokens, parseSpecial: true }, work);
  const promptTokens = fitPrompt(tokenized!, r, ctx.core.maxModelLen);
  const forms = r.bad_words && r.bad_words.length > 0 ? badWordForms(r.bad_words) : [];
  const formIds = forms.length > 0 ? await tokenizeTexts(ctx.model, forms, BAD_WORDS_TOKENIZE, work) : [];
  const generate = samplingFields(r, pretokenizedView(info.vocabSize, forms, formIds));
  const reasoningParser = ctx.reasoningParser ?? detectReasoningParser(template);
  let grammar: Promise<Grammar> | null = null;
  if (grammarText !== undefined) {
    if (!ctx.model.compileGrammar) {
      throw new InvalidArgumentError('structured outputs are not available for this model.', 'invalid_argument', 400, { param: 'structured_outputs' });
    }
    // A grammar the native compiler rejects (structured_outputs.grammar) is a 400 GrammarError, seen
    // when the run awaits it; the no-op handler keeps a prepared request that is never run from
    // leaving an unhandled rejection behind.
    grammar = ctx.model.compileGrammar(grammarText);
    grammar.catch(() => {});
    // As in vLLM, a reasoning model thinks unconstrained; the answer after its think block follows the grammar.
    if (reasoningParser && !promptEndsReasoning(prompt)) generate.grammarAfter = REASONING_END;
  }
  const role = responseRole(facts, r.add_generation_prompt, ctx.responseRole);
  const toolParser = ctx.toolCallParser ?? detectToolParser(template);
  return {
    request: r,
    promptTokens,
    generate,
    grammar,
    seed: requestSeed(r.seed),
    assemble: {
      requestId: r.request_id,
      model: ctx.servedModelName,
      created: Math.floor(Date.now() / 1000),
      role,
      toolParser,
      toolChoice: r.tool_choice,
      parallelToolCalls: r.parallel_tool_calls,
      toolNames: facts.toolNames ?? [],
      reasoningParser,
      startsInReasoning: reasoningParser ? startsInReasoning(reasoningParser, prompt) : false,
      includeReasoning: r.include_reasoning,
      echo: r.echo ? echoText(facts, role) : '',
      logprobs: r.logprobs,
      returnTokensAsTokenIds: r.return_tokens_as_token_ids ?? ctx.returnTokensAsTokenIds,
      returnTokenIds: r.return_token_ids ?? false,
      promptTokenIds: promptTokens,
      kvTransferParams: r.kv_transfer_params ?? null,
    },
  };
}

interface ChoiceEvent { index: number; ev: GenerateEvent }

/** The engine request of one chat call (n choices forked natively), as a queue of per-choice events. */
class ChoiceRun {
  readonly events = new AsyncQueue<ChoiceEvent>();
  readonly finals: (GenerateEvent | null)[];
  readonly #controller = new AbortController();
  #done = false;
  #detach: (() => void) | null = null;

  constructor(ctx: ChatContext, p: PreparedChat, grammar: Grammar | undefined, signal: AbortSignal | undefined) {
    const n = p.request.n;
    this.finals = new Array<GenerateEvent | null>(n).fill(null);
    if (signal) {
      if (signal.aborted) this.#controller.abort();
      const onAbort = (): void => this.#controller.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#detach = () => signal.removeEventListener('abort', onAbort);
    }
    // Submit synchronously (a submit error throws to the caller), then pump the events.
    const req: GenerateRequest = { ...p.generate, promptTokens: p.promptTokens };
    if (grammar) req.grammar = grammar;
    if (p.seed !== undefined) req.seed = p.seed;
    void this.#pump(ctx.core.generate(req, { signal: this.#controller.signal }));
  }

  async #pump(stream: AsyncIterable<GenerateEvent>): Promise<void> {
    let failure: TokenmillError | undefined;
    try {
      for await (const ev of stream) {
        if (ev.finishReason) this.finals[ev.index] = ev;
        this.events.push({ index: ev.index, ev });
      }
    } catch (error) {
      failure = error instanceof TokenmillError ? error : undefined;
    } finally {
      // Choices without a finish (the engine failed or closed under us) end with an error or abort.
      this.finals.forEach((f, index) => {
        if (f !== null) return;
        const ev: GenerateEvent = failure
          ? { index, tokenIds: [], text: '', finishReason: 'error', error: failure }
          : { index, tokenIds: [], text: '', finishReason: 'abort', stopReason: null };
        this.finals[index] = ev;
        this.events.push({ index, ev });
      });
      this.#done = true;
      this.#detach?.();
      this.events.close();
    }
  }

  /** Stops every choice still running (idempotent). */
  abort(): void {
    this.#controller.abort();
  }

  get done(): boolean {
    return this.#done;
  }

  usage(): UsageCounts {
    let promptTokens = 0, cachedTokens = 0, completionTokens = 0;
    for (const f of this.finals) {
      const u = f?.usage;
      if (!u) continue;
      // The prompt is shared by every choice: count it once.
      promptTokens = u.promptTokens;
      cachedTokens = u.cachedTokens;
      completionTokens += u.completionTokens;
    }
    return { promptTokens, cachedTokens, completionTokens };
  }
}

/** Engine failures caused by the request itself: the client's 400, never a 500. */
const CLIENT_FAULTS = new Set([
  'invalid_argument', // refused at admission: a value the checks before submit let through
  'grammar_invalid', // the request's grammar cannot go on (too ambiguous to follow, no token allowed)
]);

/** The error a failed choice ends the request with. */
function engineFailure(ev: GenerateEvent): TokenmillError {
  const e = ev.error;
  if (e && (e.status >= 500 || CLIENT_FAULTS.has(e.code))) return e;
  return new EngineError('Internal server error', 'engine_fault', 500, { cause: e });
}

function toSampled(ctx: ChatContext, ev: GenerateEvent): SampledLogprob[] | null {
  if (!ev.logprobs) return null;
  return ev.logprobs.map((l) => ({
    id: l.token,
    bytes: ctx.tokenBytes(l.token),
    logprob: l.logprob,
    top: l.top.map((t) => ({ id: t.token, bytes: ctx.tokenBytes(t.token), logprob: t.logprob })),
  }));
}

function reportUsage(ctx: ChatContext, run: ChoiceRun, project: string | undefined, usage: UsageCounts): void {
  if (!ctx.onUsage) return;
  try {
    ctx.onUsage({
      model: ctx.servedModelName,
      project: project ?? null,
      ...usage,
      finishReasons: run.finals.map((f) => f?.finishReason ?? 'abort'),
    });
  } catch {
    // A failing usage hook must not fail the request it reports on.
  }
}

/** Non-stream: runs every choice to its end and assembles the chat.completion. */
export async function runChat(ctx: ChatContext, p: PreparedChat, opts: ChatCallOptions = {}): Promise<ChatCompletionResponse> {
  const run = new ChoiceRun(ctx, p, (await p.grammar) ?? undefined, opts.signal);
  const fingerprint = ctx.fingerprint();
  const outputs: EngineChoiceOutput[] = Array.from({ length: p.request.n }, (_, index) => ({ index, text: '', tokenIds: [], finishReason: null, stopReason: null, logprobs: p.request.logprobs && !p.request.use_beam_search ? [] : null }));
  let failure: TokenmillError | null = null;
  let promptLogprobs: PromptLogprobEntry[] | null = null;
  try {
    for await (const { index, ev } of run.events) {
      if (ev.finishReason === 'error') {
        failure ??= engineFailure(ev);
        run.abort();
        continue;
      }
      if (ev.promptLogprobs) promptLogprobs = toPromptLogprobs(ctx, ev.promptLogprobs);
      const o = outputs[index]!;
      o.text += ev.text;
      (o.tokenIds as number[]).push(...ev.tokenIds);
      const lp = toSampled(ctx, ev);
      if (lp && o.logprobs) (o.logprobs as SampledLogprob[]).push(...lp);
      if (ev.finishReason) {
        o.finishReason = ev.finishReason as EngineFinishReason;
        o.stopReason = ev.stopReason ?? null;
      }
    }
  } finally {
    run.abort();
  }
  const usage = run.usage();
  reportUsage(ctx, run, opts.project, usage);
  if (failure) throw failure;
  return buildChatResponse(outputs, usage, { ...p.assemble, systemFingerprint: await fingerprint }, promptLogprobs);
}

/** vLLM's prompt_logprobs: null for the first prompt token, then per position the prompt token and its top N. */
function toPromptLogprobs(ctx: ChatContext, entries: readonly EngineTokenLogprob[]): PromptLogprobEntry[] {
  const text = (id: number): string => ctx.model.tokenPiece(id);
  return formatPromptLogprobs([
    null,
    ...entries.map((e) => [
      { id: e.token, logprob: e.logprob, rank: e.rank, text: text(e.token) },
      ...e.top.map((t) => ({ id: t.token, logprob: t.logprob, rank: t.rank, text: text(t.token) })),
    ]),
  ]);
}

function errorEvent(e: TokenmillError): ChatStreamErrorEvent {
  return { error: { message: e.status >= 500 ? 'Internal server error' : e.message, type: e.status >= 500 ? 'InternalServerError' : 'BadRequestError', param: e.param, code: e.status } };
}

/**
 * Stream: role chunks once the first engine event arrived (so an engine failure before any output
 * still throws), then deltas in arrival order, then the usage chunk when asked.
 */
export async function* runChatStream(ctx: ChatContext, p: PreparedChat, opts: ChatCallOptions = {}): AsyncGenerator<ChatStreamItem> {
  // A grammar error throws from the first next(), before any chunk (the server answers it as an HTTP error).
  const run = new ChoiceRun(ctx, p, (await p.grammar) ?? undefined, opts.signal);
  const r = p.request;
  let reported = false;
  try {
    const asm = new ChatStreamAssembler({
      ...p.assemble,
      systemFingerprint: await ctx.fingerprint(),
      n: p.request.n,
      promptTokens: p.promptTokens.length,
      includeUsage: r.stream_options?.include_usage ?? false,
      continuousUsageStats: r.stream_options?.continuous_usage_stats ?? false,
    });
    let started = false;
    for await (const { index, ev } of run.events) {
      if (ev.finishReason === 'error') {
        run.abort();
        const failure = engineFailure(ev);
        if (!started) throw failure;
        for await (const _ of run.events) { /* let the other choices end */ }
        reported = true;
        reportUsage(ctx, run, opts.project, run.usage());
        yield errorEvent(failure);
        return;
      }
      if (!started) {
        started = true;
        yield* asm.start();
      }
      yield* asm.push({
        index,
        text: ev.text,
        tokenIds: ev.tokenIds,
        logprobs: toSampled(ctx, ev),
        finishReason: (ev.finishReason as EngineFinishReason | undefined) ?? null,
        stopReason: ev.stopReason ?? null,
      });
    }
    if (!started) yield* asm.start();
    const usage = run.usage();
    reported = true;
    reportUsage(ctx, run, opts.project, usage);
    yield* asm.end(usage);
  } finally {
    // A consumer that stops early (break, thrown error) ends the engine requests too.
    run.abort();
    if (!reported) {
      for await (const _ of run.events) { /* drain to the final usage */ }
      reportUsage(ctx, run, opts.project, run.usage());
    }
  }
}
