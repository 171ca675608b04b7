// Engine: many concurrent generations over one model, run by the native engine thread. JS only submits,
// aborts and routes drained records (woken by a payload-free notify) to per-request async queues.
import { cudaMemoryLimit, type DeviceRequest } from '../native/device.js';
import type { NativeEngine, NativeEngineOptions, NativeEngineStats, NativeLogprobs, NativeRecord } from '../native/types.js';
import { AsyncQueue } from './async-queue.js';
import { DisposedError, EngineError, fromNative, InvalidArgumentError, TokenmillError } from './errors.js';
import { toNativeRequest, type GenerateRequest } from './generate-request.js';
import { describeEstimate, estimateMemory, formatBytes, memoryLimit } from './memory-estimate.js';
import type { Model } from './model.js';

export interface EngineOptions extends NativeEngineOptions {
  /**
   * The device the engine must run on; the model's (Model.load's `device`) decides, so 'cpu' or 'cuda'
   * here is only a check that it agrees (an invalid_argument error otherwise). 'auto' or absent: any.
   */
  device?: DeviceRequest;
}
export type EngineStats = Omit<NativeEngineStats, 'steps'>;
export type FinishReason = 'stop' | 'length' | 'abort' | 'repetition' | 'error';

export interface TokenLogprob {
  token: number;
  logprob: number;
  rank: number;
  /** The top-N alternatives (largest first), when N > 0 was asked for. */
  top: { token: number; logprob: number; rank: number }[];
}

export interface GenerateEvent {
  /** Which choice this event belongs to (0 unless n > 1). */
  index: number;
  tokenIds: number[];
  text: string;
  logprobs?: TokenLogprob[];
  /** With the first token of a request that asked for them: one entry per prompt position from 1. */
  promptLogprobs?: TokenLogprob[];
  finishReason?: FinishReason;
  /** The stop string or stop token id that ended the request (null for EOS / length). */
  stopReason?: string | number | null;
  usage?: { promptTokens: number; completionTokens: number; cachedTokens: number };
  /** With finishReason 'error'. */
  error?: TokenmillError;
  /** The last event of the request (every choice has finished). */
  done?: boolean;
  /** Beam search: the beam's cumulative logprob (index = rank, best first), with finishReason. */
  cumLogprob?: number;
}

export interface GenerateOptions {
  signal?: AbortSignal;
}

export class Engine {
  readonly model: Model;
  readonly maxModelLen: number;
  readonly kvBlocksTotal: number;
  #native: NativeEngine | null;
  #queues = new Map<number, AsyncQueue<GenerateEvent>>();
  #nextId = 1;
  #closing: Promise<void> | null = null;

  private constructor(model: Model, handle: NativeEngine) {
    this.model = model;
    this.#native = handle;
    const info = handle.info();
    this.maxModelLen = info.maxModelLen;
    this.kvBlocksTotal = info.kvBlocksTotal;
  }

  static async create(model: Model, options: EngineOptions = {}): Promise<Engine> {
    const callSite = new Error();
    refuseIfTooLarge(model, options);
    let engine: Engine | null = null;
    try {
      const { device, ...nativeOptions } = options;
      if (device !== undefined && device !== 'auto' && device !== model.device) {
        throw new InvalidArgumentError(
          `Engine.create: device '${device}' was asked for but the model was loaded for '${model.device}'; pass { device: '${device}' } to Model.load`,
          'invalid_argument',
          400,
          { param: 'device' },
        );
      }
      const handle = await model.addon.createEngine(model.handle, nativeOptions, () => {
        if (engine) engine.#drain();
      });
      engine = new Engine(model, handle);
      return engine;
    } catch (error) {
      throw fromNative(error, callSite);
    }
  }

  /**
   * Streams one request's output. Each choice ends with an event carrying finishReason and that choice's
   * usage; the request's last event also has done: true. Leaving the loop early (break, return, throw)
   * aborts the request and resolves once its final record arrived: its KV blocks are free by then.
   */
  generate(request: GenerateRequest, options: GenerateOptions = {}): AsyncIterable<GenerateEvent> {
    const handle = this.#live();
    const id = this.#nextId++;
    const nativeRequest = toNativeRequest(id, request);
    const signal = options.signal;
    if (signal?.aborted) {
      const queue = new AsyncQueue<GenerateEvent>();
      const usage = { promptTokens: nativeRequest.promptTokens.length, completionTokens: 0, cachedTokens: 0 };
      const n = nativeRequest.n ?? 1;
      for (let index = 0; index < n; index++) {
        queue.push({ index, tokenIds: [], text: '', finishReason: 'abort', stopReason: null, usage, done: index === n - 1 });
      }
      queue.close();
      return queue;
    }
    // Closing already aborts every request, and the native engine refuses calls then: an abort thrown
    // from a signal listener would be an uncaught exception.
    const abort = (): void => {
      if (this.#queues.has(id) && this.#native && !this.#closing) this.#native.abort(id);
    };
    const queue = new AsyncQueue<GenerateEvent>(abort);
    this.#queues.set(id, queue);
    try {
      handle.submit(nativeRequest);
    } catch (error) {
      this.#queues.delete(id);
      throw fromNative(error);
    }
    if (signal) {
      signal.addEventListener('abort', abort, { once: true });
      // Detached when the request is over, so long-lived signals do not accumulate listeners.
      queue.onClose(() => signal.removeEventListener('abort', abort));
    }
    return queue;
  }

  stats(): EngineStats {
    const { steps: _steps, ...stats } = this.#live().stats();
    return stats;
  }

  /** Aborts what runs (each request ends with finishReason 'abort') and frees the KV pool. Twice is fine. */
  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    const handle = this.#native;
    this.#closing = (async () => {
      if (!handle) return;
      this.#drain();
      const last = await handle.close();
      this.#route(last);
      this.#native = null;
      for (const q of this.#queues.values()) q.close();
      this.#queues.clear();
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #live(): NativeEngine {
    if (!this.#native || this.#closing) throw new DisposedError('engine is closed', 'disposed', 400);
    return this.#native;
  }

  #drain(): void {
    if (this.#native) this.#route(this.#native.drain());
  }

  #route(records: NativeRecord[]): void {
    for (const rec of records) {
      const queue = this.#queues.get(rec.id);
      if (!queue) continue;
      queue.push(toEvent(rec));
      if (rec.done) {
        queue.close();
        this.#queues.delete(rec.id);
      }
    }
  }
}

function unflatten({ ids, logprobs, ranks, nTop }: NativeLogprobs): TokenLogprob[] {
  const stride = nTop + 1;
  const out: TokenLogprob[] = [];
  for (let i = 0; i + stride <= ids.length; i += stride) {
    const top = [];
    for (let k = 1; k <= nTop; k++) top.push({ token: ids[i + k]!, logprob: logprobs[i + k]!, rank: ranks[i + k]! });
    out.push({ token: ids[i]!, logprob: logprobs[i]!, rank: ranks[i]!, top });
  }
  return out;
}

function toEvent(rec: NativeRecord): GenerateEvent {
  const event: GenerateEvent = { index: rec.seq, tokenIds: Array.from(rec.tokens), text: rec.text };
  if (rec.logprobs) event.logprobs = unflatten(rec.logprobs);
  if (rec.promptLogprobs) event.promptLogprobs = unflatten(rec.promptLogprobs);
  if (rec.finish) {
    event.finishReason = rec.finish;
    event.stopReason = rec.stopReason ?? null;
    event.usage = rec.usage;
    if (rec.error) event.error = fromNative(rec.error);
    if (rec.cumLogprob !== undefined) event.cumLogprob = rec.cumLogprob;
  }
  if (rec.done) event.done = true;
  return event;
}

// The fit check: an engine whose weights, KV cache and buffers exceed the memory this process may use is
// refused before it allocates anything, with the numbers (see memory-estimate.ts). A model on a GPU must
// also fit in the GPU's free memory, where its weights, KV cache and buffers go once the forward pass runs
// on the device (docs/cuda.md).
function refuseIfTooLarge(model: Model, options: EngineOptions): void {
  if (!model.info.hparams) return;   // a vocab-only model: the native side refuses it with its own error
  const estimate = estimateMemory(model.info, options);
  const limits = model.selection.cudaDevice ? [memoryLimit(), cudaMemoryLimit(model.selection)] : [memoryLimit()];
  for (const limit of limits) {
    if (estimate.total > limit.bytes) {
      throw new EngineError(
        `${model.info.path} needs about ${describeEstimate(estimate)}, more than the memory limit of ` +
        `${formatBytes(limit.bytes)} (${limit.source}); lower kvCacheMemory (--kv-cache-memory), ` +
        'maxNumBatchedTokens or maxNumSeqs, or use a smaller quantisation of the model',
        'out_of_memory', 503);
    }
  }
}
