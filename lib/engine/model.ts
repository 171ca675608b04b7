// Model: a loaded GGUF file (weights mapped read-only, vocabulary built). Immutable and shareable.
import { selectDevice, type Device, type DeviceRequest, type DeviceSelection } from '../native/device.js';
import type { NativeAddon, NativeModel, NativeModelInfo, WeightReadBandwidth } from '../native/types.js';
import { DisposedError, InvalidArgumentError, fromNative } from './errors.js';
import { Grammar, GrammarCache } from './grammar.js';
import { memoryLimit } from './memory-estimate.js';

export interface ModelLoadOptions {
  /** Read only the metadata and the tokenizer (like llama.cpp's vocab_only); no weights are checked. */
  vocabOnly?: boolean;
  /**
   * Which variant of the addon runs the model (see lib/native/device.ts): 'cpu' (default), 'cuda' (an
   * error with code device_unavailable when no usable GPU is found), or 'auto' (CUDA when usable, else
   * the CPU with one logged line saying why). Engines created for the model run on the same device.
   */
  device?: DeviceRequest;
}

export interface TokenizeOptions {
  /** Add BOS/EOS as the GGUF's add_bos_token / add_eos_token flags say. Default true. */
  addSpecial?: boolean;
  /** Recognise special/added tokens written in the text (e.g. `<|im_start|>`) as single tokens. Default false. */
  parseSpecial?: boolean;
}

export interface DetokenizeOptions {
  skipSpecialTokens?: boolean;
  spacesBetweenSpecialTokens?: boolean;
}

export type ModelInfo = NativeModelInfo;

export class Model {
  readonly info: ModelInfo;
  /** @internal the device and the variant of the addon that loaded the model (its handles only work with it). */
  readonly selection: DeviceSelection;
  #native: NativeModel | null;
  /** @internal compiled grammars by text (Grammar.compile), an LRU of GRAMMAR_CACHE_SIZE. */
  readonly grammarCache = new GrammarCache();

  private constructor(handle: NativeModel, selection: DeviceSelection) {
    this.#native = handle;
    this.selection = selection;
    this.info = Object.freeze(handle.info());
  }

  static async load(path: string, options: ModelLoadOptions = {}): Promise<Model> {
    if (typeof path !== 'string' || path.length === 0) {
      throw new InvalidArgumentError(`Expected a non-empty string for path but received ${describe(path)}`, 'invalid_argument', 400);
    }
    const callSite = new Error();
    try {
      const selection = selectDevice(options.device ?? 'cpu');
      const handle = await selection.addon.loadModel(path, { vocabOnly: options.vocabOnly === true, memoryLimit: memoryLimit().bytes });
      return new Model(handle, selection);
    } catch (error) {
      throw fromNative(error, callSite);
    }
  }

  /** The device the model's engines run on. */
  get device(): Device {
    return this.selection.device;
  }

  /** The device in one line, e.g. "cpu (avx512)" or "cuda:0 NVIDIA H100 (compute 9.0, ...)". */
  get deviceDescription(): string {
    return this.selection.description;
  }

  /** @internal the variant of the addon that loaded the model. */
  get addon(): NativeAddon {
    return this.selection.addon;
  }

  /** @internal the addon handle, for Engine.create. */
  get handle(): NativeModel {
    if (!this.#native) throw new DisposedError('model is disposed', 'disposed', 400);
    return this.#native;
  }

  tokenize(text: string, options: TokenizeOptions = {}): number[] {
    if (typeof text !== 'string') {
      throw new InvalidArgumentError(`Expected a string for text but received ${describe(text)}`, 'invalid_argument', 400);
    }
    try {
      return Array.from(this.handle.tokenize(text, options.addSpecial ?? true, options.parseSpecial ?? false));
    } catch (error) {
      throw fromNative(error);
    }
  }

  /**
   * Tokenizes several texts on a libuv worker thread (never on the JS thread): for long texts, which
   * take milliseconds per 16 KB. One Int32Array per text, as tokenize() would return them.
   */
  async tokenizeMany(texts: readonly string[], options: TokenizeOptions = {}): Promise<Int32Array[]> {
    const bad = texts.findIndex((t) => typeof t !== 'string');
    if (bad >= 0) {
      throw new InvalidArgumentError(`Expected a string for texts[${bad}] but received ${describe(texts[bad])}`, 'invalid_argument', 400);
    }
    const callSite = new Error();
    try {
      return await this.handle.tokenizeMany([...texts], options.addSpecial ?? true, options.parseSpecial ?? false);
    } catch (error) {
      throw fromNative(error, callSite);
    }
  }

  detokenize(ids: readonly number[] | Int32Array, options: DetokenizeOptions = {}): string {
    const array = ids instanceof Int32Array ? ids : Int32Array.from(ids);
    try {
      return this.handle.detokenize(array, {
        skipSpecialTokens: options.skipSpecialTokens ?? false,
        spacesBetweenSpecialTokens: options.spacesBetweenSpecialTokens ?? true,
      });
    } catch (error) {
      throw fromNative(error);
    }
  }

  /** The text a token contributes when it follows other text (`" there"`, not `"▁there"`). */
  tokenPiece(id: number): string {
    try {
      return this.handle.tokenPiece(id);
    } catch (error) {
      throw fromNative(error);
    }
  }

  /**
   * Raw logits of every position of `tokens` (row i predicts the token after tokens[0..i]), computed
   * outside any engine: the diagnostic path for numerical comparisons with other implementations.
   * Returns a (tokens.length × vocabSize) Float32Array.
   */
  async evaluate(tokens: readonly number[] | Int32Array, options: { threads?: number } = {}): Promise<Float32Array> {
    const callSite = new Error();
    try {
      return await this.handle.evaluate(tokens instanceof Int32Array ? tokens : Int32Array.from(tokens), options.threads ?? 0);
    } catch (error) {
      throw fromNative(error, callSite);
    }
  }

  /**
   * The memory read bandwidth over this model's own weights: `threads` threads (default 2) sum the weights
   * one decode step reads, best of `reps` passes (default 5), on a libuv worker. `bytesPerSecond / bytes` is
   * the decode ceiling at the time of the reading: these are the very pages decode streams, and a reading is
   * quick enough to take beside each decode measurement (a shared host's bandwidth drifts within minutes).
   */
  async measureWeightReadBandwidth(options: { threads?: number; reps?: number } = {}): Promise<WeightReadBandwidth> {
    const callSite = new Error();
    try {
      return await this.handle.measureWeightReadBandwidth(options.threads ?? 2, options.reps ?? 5);
    } catch (error) {
      throw fromNative(error, callSite);
    }
  }

  /** The raw bytes a token contributes to the output (a byte-fallback token may not be valid UTF-8 alone). */
  tokenBytes(id: number): Uint8Array {
    try {
      return this.handle.tokenBytes(id);
    } catch (error) {
      throw fromNative(error);
    }
  }

  /**
   * Compiles a GBNF grammar for this model's vocabulary on a worker thread (see Grammar.compile); a
   * text compiled recently resolves to the same cached Grammar.
   */
  compileGrammar(text: string): Promise<Grammar> {
    return Grammar.compile(this, text);
  }

  dispose(): void {
    this.#native?.dispose();
    this.#native = null;
    this.grammarCache.clear();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.dispose();
  }
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `${JSON.stringify(value) ?? String(value)} of type ${typeof value}`;
}
