// NOTE(openai/chat-engine): the public Engine — the core engine (lib/engine, which knows nothing about
// OpenAI) plus chat()/chatStream(). It wraps rather than extends the core class so the core keeps its
// private constructor and its own create(); every core method is forwarded unchanged. Server-level
// settings (served name, --chat-template, parsers, …) are fixed at creation; the model file's sha256
// for system_fingerprint is computed once, on first use, by a streaming read off the JS thread.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Engine as CoreEngine } from '../engine/engine.js';
import type { EngineOptions as CoreEngineOptions, EngineStats, GenerateEvent, GenerateOptions } from '../engine/engine.js';
import type { GenerateRequest } from '../engine/generate-request.js';
import type { Model } from '../engine/model.js';
import { InvalidArgumentError } from '../engine/errors.js';
import { ENGINE_DEFAULTS } from '../engine/request-fields.js';
import type { ReasoningParserName } from '../chat/reasoning-parser.js';
import { REASONING_PARSERS } from '../chat/reasoning-parser.js';
import type { ToolParserName } from '../chat/tool-parser.js';
import { TOOL_PARSERS } from '../chat/tool-parser.js';
import { systemFingerprint } from './assemble.js';
import { checkChat, prepareChat, runChat, runChatStream } from './chat-completions.js';
import type { ChatCallOptions, ChatContext, ChatStreamItem, ChatUsageRecord } from './chat-completions.js';
import type { ChatInput } from './chat-input.js';
import { parseRequestBody } from './parse-body.js';
import { RequestValidationError } from './validate.js';
import type { ChatCompletionResponse } from './protocol.js';

export interface EngineOptions extends CoreEngineOptions {
  /** The id clients name in `model` and responses echo (default: the file name without .gguf). */
  servedModelName?: string;
  /** Server-level chat template (--chat-template); the request's chat_template still wins. */
  chatTemplate?: string;
  /** false refuses a request's chat_template with a 400 (--no-request-chat-template). Default true. */
  allowRequestChatTemplate?: boolean;
  /** Overrides the tool-call parser auto-detected from the template (--tool-call-parser). */
  toolCallParser?: ToolParserName;
  /** Overrides the reasoning parser auto-detected from the template (--reasoning-parser). */
  reasoningParser?: ReasoningParserName;
  /** The role of generated messages when add_generation_prompt is true (--response-role). */
  responseRole?: string;
  /** Write every logprob token as `token_id:<id>` (--return-tokens-as-token-ids). */
  returnTokensAsTokenIds?: boolean;
  /** Called once per finished chat request (aborted ones too) with its token usage. */
  onUsage?: (record: ChatUsageRecord) => void;
}

/** A request body as it came over the wire: JSON text, or its UTF-8 bytes. */
function isBodyText(request: unknown): request is string | Uint8Array {
  return typeof request === 'string' || request instanceof Uint8Array;
}

const VERSION = (createRequire(__filename)('../../package.json') as { version: string }).version;

function defaultServedName(file: string): string {
  return path.basename(file).replace(/\.gguf$/i, '');
}

// One hash per file for the whole process (several engines may serve one model file).
const fileHashes = new Map<string, Promise<string>>();

function hashFile(file: string): Promise<string> {
  let p = fileHashes.get(file);
  if (!p) {
    p = hashStream(file);
    p.catch(() => fileHashes.delete(file));
    fileHashes.set(file, p);
  }
  return p;
}

function hashStream(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(file)
      .on('data', (b) => h.update(b))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}

export class Engine {
  readonly #core: CoreEngine;
  readonly #ctx: ChatContext;
  #fingerprint: Promise<string | null> | null = null;
  readonly #bytes = new Map<number, Uint8Array>();

  private constructor(core: CoreEngine, model: Model, options: EngineOptions) {
    this.#core = core;
    if (options.toolCallParser !== undefined && !TOOL_PARSERS.includes(options.toolCallParser)) {
      throw new InvalidArgumentError(`Expected one of ${TOOL_PARSERS.join(', ')} for toolCallParser but received ${String(options.toolCallParser)}`, 'invalid_argument', 400);
    }
    if (options.reasoningParser !== undefined && !REASONING_PARSERS.includes(options.reasoningParser)) {
      throw new InvalidArgumentError(`Expected one of ${REASONING_PARSERS.join(', ')} for reasoningParser but received ${String(options.reasoningParser)}`, 'invalid_argument', 400);
    }
    this.#ctx = {
      core,
      model,
      servedModelName: options.servedModelName ?? defaultServedName(model.info.path),
      maxLogprobs: options.maxLogprobs ?? ENGINE_DEFAULTS.maxLogprobs,
      maxNumSeqs: options.maxNumSeqs ?? ENGINE_DEFAULTS.maxNumSeqs,
      schedulingPolicy: options.schedulingPolicy ?? 'fcfs',
      chatTemplate: options.chatTemplate ?? null,
      allowRequestChatTemplate: options.allowRequestChatTemplate ?? true,
      toolCallParser: options.toolCallParser ?? null,
      reasoningParser: options.reasoningParser ?? null,
      responseRole: options.responseRole ?? 'assistant',
      returnTokensAsTokenIds: options.returnTokensAsTokenIds ?? false,
      tokenBytes: (id) => {
        let b = this.#bytes.get(id);
        if (!b) {
          b = model.tokenBytes(id);
          this.#bytes.set(id, b);
        }
        return b;
      },
      fingerprint: () => {
        this.#fingerprint ??= hashFile(model.info.path).then(
          (sha) => systemFingerprint(VERSION, sha),
          () => null, // unreadable file (moved after load): no fingerprint rather than a failed request
        );
        return this.#fingerprint;
      },
      onUsage: options.onUsage,
    };
  }

  static async create(model: Model, options: EngineOptions = {}): Promise<Engine> {
    const {
      servedModelName: _s, chatTemplate: _t, allowRequestChatTemplate: _a, toolCallParser: _tp,
      reasoningParser: _rp, responseRole: _rr, returnTokensAsTokenIds: _rt, onUsage: _u, ...coreOptions
    } = options;
    const core = await CoreEngine.create(model, coreOptions);
    try {
      return new Engine(core, model, options);
    } catch (error) {
      await core.close();
      throw error;
    }
  }

  get model(): Model { return this.#core.model; }
  get maxModelLen(): number { return this.#core.maxModelLen; }
  get kvBlocksTotal(): number { return this.#core.kvBlocksTotal; }
  /** The id this engine answers to in `model`. */
  get servedModelName(): string { return this.#ctx.servedModelName; }

  /**
   * An OpenAI chat completion (non-stream). `request` is the request object, or the request body as it
   * came (JSON text or its UTF-8 bytes): a body over 64 KiB is parsed and validated off the caller's
   * event loop, and its messages never become objects there (docs/library.md#chat-without-http).
   * Rejects with TokenmillError subclasses with `status`. Template rendering, schema conversion and
   * long tokenizations run off the caller's event loop (a request's template or schema cannot block
   * it); `options.client` shares those workers fairly. Aborting `options.signal` while that work still
   * waits for a thread drops it: the call rejects with the signal's reason, and the request never
   * reaches the engine.
   */
  async chat(request: unknown, options: ChatCallOptions = {}): Promise<ChatCompletionResponse> {
    const input = checkChat(this.#ctx, await this.#parsedBody(request, options));
    const prepared = await prepareChat(this.#ctx, input, { client: options.client, signal: options.signal });
    return runChat(this.#ctx, prepared, options);
  }

  /**
   * An OpenAI chat completion as chunks. For a request object, validation (422) and an unknown model
   * (404) throw here, synchronously; for a body given as text or bytes they throw from the first step
   * of the iteration (the body is parsed first, off the event loop when large). The other request
   * errors — template, structured outputs, context length, a grammar the compiler rejects — are found
   * off the JS thread and, like an engine failure before any chunk, throw from the first step of the
   * iteration; after output began a failure is yielded as `{error}` and the stream ends.
   * Breaking out of the loop aborts the request.
   */
  chatStream(request: unknown, options: ChatCallOptions = {}): AsyncIterable<ChatStreamItem> {
    if (isBodyText(request)) return this.#streamBody(request, options);
    return this.#stream(checkChat(this.#ctx, request), options);
  }

  async *#streamBody(body: string | Uint8Array, options: ChatCallOptions): AsyncGenerator<ChatStreamItem> {
    yield* this.#stream(checkChat(this.#ctx, await this.#parsedBody(body, options)), options);
  }

  async *#stream(request: ChatInput, options: ChatCallOptions): AsyncGenerator<ChatStreamItem> {
    yield* runChatStream(this.#ctx, await prepareChat(this.#ctx, request, { client: options.client, signal: options.signal }), options);
  }

  /** A body given as text or bytes, parsed and validated (a 422 when it is not a valid request); anything else as it is. */
  async #parsedBody(request: unknown, options: ChatCallOptions): Promise<unknown> {
    if (!isBodyText(request)) return request;
    const bytes = typeof request === 'string' ? Buffer.from(request, 'utf8') : request;
    const parsed = await parseRequestBody('chat', bytes, { maxLogprobs: this.#ctx.maxLogprobs, client: options.client ?? '', signal: options.signal, transfer: typeof request === 'string', maxIds: this.#ctx.model.info.vocabSize });
    if (!parsed.ok) throw new RequestValidationError(parsed.detail);
    return parsed.value;
  }

  generate(request: GenerateRequest, options: GenerateOptions = {}): AsyncIterable<GenerateEvent> {
    return this.#core.generate(request, options);
  }

  stats(): EngineStats {
    return this.#core.stats();
  }

  close(): Promise<void> {
    return this.#core.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
