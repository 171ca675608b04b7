// The server's view of what it serves: an engine with the chat layer (docs/library.md#chat-without-http) and
// the options of docs/cli.md#tokenmill-serve.
import type { ChatInput } from '../openai/chat-input.js';
import type { ChatCompletionChunk, ChatCompletionResponse } from '../openai/protocol.js';
import type { Database } from '../store/database.js';
import type { EngineStatsLike } from './metrics.js';

export interface ChatCallOptions {
  signal?: AbortSignal;
  /** `<team>/<project>` from the OpenAI-Project header (default/default when absent). */
  project?: string;
  /** Who the request is for (its API key's hash, else its remote address): fair sharing of workers. */
  client?: string;
}

/**
 * What the HTTP layer needs from an engine: the chat layer (given the body the server validated and
 * split, lib/openai/chat-input.ts) plus stats and the model's facts.
 */
export interface ChatEngineLike {
  chat(input: ChatInput, options?: ChatCallOptions): Promise<ChatCompletionResponse>;
  chatStream(input: ChatInput, options?: ChatCallOptions): AsyncIterable<ChatCompletionChunk | StreamErrorEvent> | Promise<AsyncIterable<ChatCompletionChunk | StreamErrorEvent>>;
  stats(): EngineStatsLike;
  readonly maxModelLen: number;
  readonly model?: { info?: { path?: string; vocabSize?: number } };
  close?(): Promise<void>;
}

/**
 * The chat layer's in-stream error event (docs/http-api.md#errors-in-a-stream), yielded when generation
 * fails after output began.
 */
export interface StreamErrorEvent {
  error: { message: string; type: string; param: string | null; code: number };
}

/** One finished request's usage as the chat layer's onUsage hook reports it. */
export interface UsageReport {
  model: string;
  project: string | null;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
}

export interface ServedModel {
  id: string;
  engine: ChatEngineLike;
  /** Shown as `root` in /v1/models (default: the model file path, else the id). */
  root?: string;
}

export type LogLevel = 'debug' | 'info' | 'warning' | 'error';

export interface ServerOptions {
  /** The served models, or a promise of them: /health answers 503 and /v1 routes 503 until it resolves. */
  models: readonly ServedModel[] | Promise<readonly ServedModel[]>;
  /** Bearer keys; none → open server. */
  apiKeys?: readonly string[];
  /** Where the SQLite database lives (default ./tokenmill-data). Ignored when `database` is given. */
  dataDir?: string;
  database?: Database;
  /**
   * true when the engines report usage through their onUsage hook wired to server.recordUsage (what
   * `tokenmill serve` does; counts aborted requests exactly); otherwise the server counts from each
   * response's usage.
   */
  engineReportsUsage?: boolean;
  maxLogprobs?: number;
  /** 503 when this many requests already wait in a model's queue. */
  maxQueue?: number;
  /** Default 8 MiB. */
  maxRequestBytes?: number;
  /** Requests per minute per API key (429 with Retry-After beyond); default unlimited. */
  rateLimitRequests?: number;
  /** Prompt + completion tokens per minute per API key (429 with Retry-After beyond); default unlimited. */
  rateLimitTokens?: number;
  /** Time allowed to receive a whole request (ms, default 300 000). */
  requestTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  /** KV block size reported in vllm:cache_config_info (default 16). */
  blockSize?: number;
  /** Usage batch interval (ms, default 1000). */
  usageFlushMs?: number;
  logLevel?: LogLevel;
  log?: (level: LogLevel, message: string) => void;
}
