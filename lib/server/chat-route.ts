// NOTE(server/chat-route): POST /v1/chat/completions after auth, content type and body parsing. Order of
// errors (docs/http-api.md#request-pipeline): 422 validation → 404 model → 400 priority / engine checks. The
// stream's first chunk is awaited before any header is written, so errors found before generation still get a
// proper status; after that an error is one `data: {"error":…}` event then `data: [DONE]`. A closed socket
// aborts the request's signal: work of it still waiting for a thread (render, conversion, tokenization)
// is dropped, a queued or running engine request is freed within one step, and the iterator is still
// consumed to its end so the usage of an aborted request is counted.
import type { ServerResponse } from 'node:http';
import { markValidated } from '../openai/chat-input.js';
import type { ChatInput } from '../openai/chat-input.js';
import type { ChatCompletionChunk } from '../openai/protocol.js';
import type { StreamErrorEvent } from './types.js';
import type { UsageRecorder } from '../store/usage.js';
import type { Project } from './auth.js';
import { errorEnvelope, HttpError, startSse, writeSse } from './http-io.js';
import { sendJsonInSlices } from './json-slices.js';
import type { ModelMetrics } from './metrics.js';
import type { ServedModel, ServerOptions } from './types.js';

export interface ChatContext {
  res: ServerResponse;
  /** The validated request, split (body-parse.ts). */
  input: ChatInput;
  project: Project;
  /** Who the request is for (its API key, on an open server its remote address): its share of the template/schema workers. */
  client: string;
  headers: Record<string, string>;
  models: readonly ServedModel[];
  metricsOf: (id: string) => ModelMetrics;
  usage: UsageRecorder | null;
  options: ServerOptions;
  onError: (error: unknown) => void;
  /** Aborted when a draining server's timeout ran out: running requests end as 'abort', with their final chunks. */
  stop?: AbortSignal;
  /** The prompt + completion tokens of the finished request (the caller's per-key token limit). */
  onTokens?: (tokens: number) => void;
}

interface UsageLike {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

/** Maps a thrown error to [status, JSON body]; unknown errors are 500 without internals. */
export function errorResponse(error: unknown): [number, unknown] {
  const e = error as { status?: unknown; detail?: unknown; message?: unknown; param?: unknown };
  if (error instanceof HttpError) return [error.status, errorEnvelope(error.status, error.message, error.param)];
  if (e && typeof e.status === 'number' && e.status === 422 && Array.isArray(e.detail)) return [422, { detail: e.detail }];
  if (e && typeof e.status === 'number' && e.status >= 400 && e.status < 600 && typeof e.message === 'string') {
    return [e.status, errorEnvelope(e.status, e.message, typeof e.param === 'string' ? e.param : null)];
  }
  return [500, errorEnvelope(500, 'The server had an error while processing your request.')];
}

export async function handleChat(ctx: ChatContext): Promise<void> {
  const { res, options } = ctx;
  const request = ctx.input.request;
  if (!request.model && ctx.models.length > 1) {
    throw new HttpError(400, `The \`model\` field is required: this server serves ${ctx.models.length} models (${ctx.models.map((m) => m.id).join(', ')}).`, 'model');
  }
  const served = request.model ? ctx.models.find((m) => m.id === request.model) : ctx.models[0];
  if (!served) throw new HttpError(404, `The model \`${request.model}\` does not exist.`, 'model');
  const stats = served.engine.stats();
  if (options.maxQueue !== undefined && stats.waiting >= options.maxQueue) {
    throw new HttpError(503, `The server is overloaded: ${stats.waiting} requests are waiting (--max-queue ${options.maxQueue}).`);
  }

  // The validated request goes to the chat layer (marked, so it is not validated again), which owns the
  // semantic checks (priority, template, context length).
  const input: ChatInput = { ...ctx.input, request: { ...request } };
  const controller = new AbortController();
  const stopNow = (): void => controller.abort();
  ctx.stop?.addEventListener('abort', stopNow, { once: true });
  let clientGone = false;
  res.once('close', () => {
    ctx.stop?.removeEventListener('abort', stopNow);
    if (!res.writableFinished) {
      clientGone = true;
      controller.abort();
    }
  });
  if (ctx.stop?.aborted) controller.abort();
  const metrics = ctx.metricsOf(served.id);
  markValidated(input, options.maxLogprobs ?? 20);
  const call = { signal: controller.signal, project: `${ctx.project.team}/${ctx.project.project}`, client: ctx.client };
  const started = performance.now();
  const count = (u: UsageLike | null | undefined): void => {
    ctx.onTokens?.((u?.prompt_tokens ?? 0) + (u?.completion_tokens ?? 0));
    if (options.engineReportsUsage) return;
    ctx.usage?.record({
      team: ctx.project.team,
      project: ctx.project.project,
      model: served.id,
      promptTokens: u?.prompt_tokens ?? 0,
      cachedTokens: u?.prompt_tokens_details?.cached_tokens ?? 0,
      completionTokens: u?.completion_tokens ?? 0,
    });
  };

  // Aborted before generation (its work was still waiting for a thread): a client that left needs no
  // answer; a draining server's abort answers 503.
  const beforeGeneration = (error: unknown): unknown => {
    if (!controller.signal.aborted) return error;
    count(null);
    if (error !== controller.signal.reason) return error;
    return clientGone ? null : new HttpError(503, 'The server is shutting down.');
  };

  if (!request.stream) {
    let response;
    try {
      response = await served.engine.chat(input, call);
    } catch (error) {
      const answer = beforeGeneration(error);
      if (answer === null) return;
      throw answer;
    }
    metrics.e2e.observe((performance.now() - started) / 1000);
    for (const c of response.choices) metrics.finished(controller.signal.aborted ? 'abort' : String(c.finish_reason ?? 'stop'));
    count(response.usage);
    await sendJsonInSlices(res, 200, response, ctx.headers);
    return;
  }

  // Streams always ask the chat layer for the usage chunk (for accounting) and drop it when the client did not.
  const clientWantsUsage = request.stream_options?.include_usage === true;
  input.request.stream_options = { ...(request.stream_options ?? {}), include_usage: true };
  const iterator = (await served.engine.chatStream(input, call))[Symbol.asyncIterator]();
  let first: IteratorResult<ChatCompletionChunk | StreamErrorEvent>;
  try {
    first = await iterator.next();
  } catch (error) {
    const answer = beforeGeneration(error);
    if (answer === null) return;
    throw answer;
  }
  startSse(res, ctx.headers);
  let usage: UsageLike | null = null;
  let lastToken = 0;
  const finishes = new Map<number, string>();
  try {
    for (let step = first; !step.done; step = await iterator.next()) {
      if ('error' in step.value) {
        // The chat layer's in-stream error event (docs/http-api.md#errors-in-a-stream): forward it, then end
        // the stream.
        finishes.set(-1, 'error');
        if (!res.destroyed) await writeSse(res, step.value);
        continue;
      }
      const chunk = step.value;
      if (chunk.usage && chunk.choices.length === 0) {
        usage = chunk.usage;
        if (!clientWantsUsage) continue;
      } else {
        const hasToken = chunk.choices.some((c) => (c.delta?.content ?? '') !== '' || c.finish_reason || (c.delta as { reasoning?: string })?.reasoning || c.delta?.tool_calls);
        if (hasToken) {
          const now = performance.now();
          if (lastToken === 0) metrics.ttft.observe((now - started) / 1000);
          else metrics.itl.observe((now - lastToken) / 1000);
          lastToken = now;
        }
        for (const c of chunk.choices) if (c.finish_reason) finishes.set(c.index, String(c.finish_reason));
        if (chunk.usage && !clientWantsUsage) {
          const { usage: u, ...rest } = chunk;
          usage = u;
          if (!res.destroyed) await writeSse(res, rest);
          continue;
        }
      }
      if (!res.destroyed) await writeSse(res, chunk);
    }
    if (!res.destroyed) res.end('data: [DONE]\n\n');
  } catch (error) {
    ctx.onError(error);
    if (!res.destroyed) {
      const [, errBody] = errorResponse(error);
      await writeSse(res, errBody);
      res.end('data: [DONE]\n\n');
    }
    finishes.set(-1, 'error');
  } finally {
    metrics.e2e.observe((performance.now() - started) / 1000);
    if (controller.signal.aborted) metrics.finished('abort');
    else for (const reason of finishes.values()) metrics.finished(reason);
    count(usage);
  }
}
