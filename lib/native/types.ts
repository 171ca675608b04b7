// The one typed picture of everything the .node file exports (docs/native-boundary.md#exports). Every name
// that crosses the boundary carries a `Native` prefix so a reader sees each crossing.

export interface NativeTensorInfo {
  name: string;
  type: string;
  shape: number[];
  /** Size of the tensor's data in the file. */
  bytes: number;
}

export interface NativeHparams {
  nCtxTrain: number;
  nEmbd: number;
  nLayer: number;
  nFf: number;
  nHead: number;
  nHeadKv: number;
  headDim: number;
  nRot: number;
  rmsEps: number;
  ropeFreqBase: number;
  ropeFreqScale: number;
  ropeScaling: 'none' | 'linear';
  ropeStyle: 'normal' | 'neox';
  /** The gated FFN's activation: silu (llama, qwen) or gelu (gemma). */
  ffnActivation: 'silu' | 'gelu';
  /** Keys a sliding-window layer attends to (0: none), and how many layers slide (the rest are global). */
  slidingWindow: number;
  slidingWindowLayers: number;
}

export type NativeMetadataValue =
  | string
  | number
  | bigint
  | boolean
  | NativeMetadataValue[]
  | { arrayType: string; length: number };

export interface NativeModelInfo {
  path: string;
  ggufVersion: number;
  architecture: string | null;
  name: string | null;
  contextLength: number | null;
  vocabSize: number;
  tokenizerModel: string;
  tokenizerPre: string | null;
  bosTokenId: number | null;
  eosTokenId: number | null;
  eotTokenIds: number[];
  addBosToken: boolean;
  addEosToken: boolean;
  chatTemplate: string | null;
  fileType: number | null;
  hparams: NativeHparams | null;
  tensors: NativeTensorInfo[];
  /** The bytes the weights occupy once loaded: the tensors' data in the file, the matrices repacked at load
   * counted at their repacked size (docs/kernels.md, "Q4_K repacked at load" and "The AMX path"). */
  weightBytes: number;
  /** The part of weightBytes held in the process's own repacked copy rather than mapped from the file (0 when
   * nothing was repacked). */
  repackedBytes: number;
  metadata: Record<string, NativeMetadataValue>;
}

export interface NativeLoadOptions {
  vocabOnly?: boolean;
  /** The memory the process may use (memoryLimit() of lib/engine/memory-estimate.ts), in bytes: the weights are
   * repacked at load only when all of them, repacked, fit in it (docs/kernels.md, "Q4_K repacked at load"). */
  memoryLimit?: number;
}

export interface NativeDetokenizeOptions {
  skipSpecialTokens?: boolean;
  spacesBetweenSpecialTokens?: boolean;
}

export interface WeightReadBandwidth {
  bytesPerSecond: number;
  /** The weight bytes one decode step reads, each once (the token embedding table only when it is also the output matrix). */
  bytes: number;
}

export interface NativeModel {
  info(): NativeModelInfo;
  tokenize(text: string, addSpecial: boolean, parseSpecial: boolean): Int32Array;
  tokenizeMany(texts: string[], addSpecial: boolean, parseSpecial: boolean): Promise<Int32Array[]>;
  detokenize(ids: Int32Array, options: NativeDetokenizeOptions): string;
  tokenPiece(id: number): string;
  tokenBytes(id: number): Uint8Array;
  evaluate(tokens: Int32Array, threads: number): Promise<Float32Array>;
  /** Read bandwidth over the weights a decode step reads (`bytes` of them): best of `reps` passes of `threads` threads (libuv worker). */
  measureWeightReadBandwidth(threads: number, reps: number): Promise<WeightReadBandwidth>;
  dispose(): void;
}

/** A GBNF grammar compiled for one model's vocabulary (compileGrammar). */
export interface NativeGrammar {
  info(): { rules: number; elements: number };
}

export interface NativeAddon {
  loadModel(path: string, options: NativeLoadOptions): Promise<NativeModel>;
  createEngine(model: NativeModel, options: NativeEngineOptions, notify: () => void): Promise<NativeEngine>;
  /** Compiles on a libuv worker; rejects with code 'grammar_invalid' and 1-based `line` / `column` for bad text. */
  compileGrammar(model: NativeModel, text: string): Promise<NativeGrammar>;
  cpuIsa(): string;
  /** Read bandwidth in bytes/s: `threads` threads streaming through a `bytes` buffer, best of `reps` (libuv worker). */
  measureReadBandwidth(bytes: number, threads: number, reps: number): Promise<number>;
  version: string;
  /** Which build this is: the CPU addon (binding.gyp) or the CUDA variant (CMakeLists.txt). */
  variant: 'cpu' | 'cuda';
  /** CUDA variant only: the device code compiled in, e.g. "sm_80, sm_90 (+ PTX compute_90)". */
  cudaArchitectures?: string;
  /** CUDA variant only: what the CUDA runtime finds; never throws for a missing GPU or driver. */
  cudaProbe?(): NativeCudaProbe;
}

export interface NativeCudaDevice {
  index: number;
  name: string;
  /** "9.0" */
  computeCapability: string;
  totalBytes: number;
  freeBytes: number;
  /** Compute capability 8.0 or newer and a context could be created. */
  usable: boolean;
}

export interface NativeCudaProbe {
  runtimeVersion: number;
  /** 0 when no driver is installed. */
  driverVersion: number;
  devices: NativeCudaDevice[];
  /** Why no device is usable (the CUDA runtime's error name and text), or null. */
  error: string | null;
}

export interface NativeEngineOptions {
  kvCacheMemory?: number;
  maxNumSeqs?: number;
  maxNumBatchedTokens?: number;
  schedulingPolicy?: 'fcfs' | 'priority';
  threads?: number;
  enablePrefixCaching?: boolean;
  maxLogprobs?: number;
  maxModelLen?: number;
  /** Engine-wide seed (vLLM's --seed): requests without a seed draw theirs from a stream seeded with it. */
  seed?: number;
}

export interface NativeRequest {
  id: number;
  promptTokens: Int32Array;
  n?: number;
  /** Top-N prompt logprobs (-1 or absent: off). */
  promptLogprobs?: number;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  repetitionPenalty?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  seed?: number;
  stop?: string[];
  stopTokenIds?: number[] | Int32Array;
  includeStopStrInOutput?: boolean;
  ignoreEos?: boolean;
  minTokens?: number;
  logprobs?: boolean;
  topLogprobs?: number;
  priority?: number;
  cacheSalt?: string;
  skipSpecialTokens?: boolean;
  spacesBetweenSpecialTokens?: boolean;
  /** ids[i] gets bias[i]; equal lengths. */
  logitBias?: { ids: Int32Array; bias: Float32Array };
  allowedTokenIds?: number[] | Int32Array;
  badWordsTokenIds?: (number[] | Int32Array)[];
  xargs?: Record<string, unknown>;
  repetitionDetection?: { maxPatternSize: number; minPatternSize: number; minCount: number };
  /** Grammar-constrained decoding; compiled for the engine's model. */
  grammar?: NativeGrammar;
  /** The grammar applies once the output contains this text (empty/omitted: from the first token). */
  grammarAfter?: string;
  /** Beam search with width n (vLLM's use_beam_search). */
  useBeamSearch?: boolean;
  lengthPenalty?: number;
}

/** Flattened (token, logprob, rank) entries: per position the chosen/prompt token then nTop alternatives. */
export interface NativeLogprobs {
  ids: Int32Array;
  logprobs: Float32Array;
  ranks: Int32Array;
  nTop: number;
}

export interface NativeRecord {
  id: number;
  /** Choice index (0 unless n > 1). */
  seq: number;
  /** The request is over: this is the last record for its id. */
  done?: boolean;
  tokens: Int32Array;
  text: string;
  /** Per token: the chosen token then nTop entries, flattened (nTop + 1 per token). */
  logprobs?: NativeLogprobs;
  /** With the first token: per prompt position 1.., the prompt token then nTop entries. */
  promptLogprobs?: NativeLogprobs;
  finish?: 'stop' | 'length' | 'abort' | 'repetition' | 'error';
  stopReason?: string | number;
  error?: { code: string; message: string };
  usage?: { promptTokens: number; completionTokens: number; cachedTokens: number };
  /** Beam search: the beam's cumulative logprob, with its finish record. */
  cumLogprob?: number;
}

export interface NativeEngineStats {
  running: number;
  waiting: number;
  kvCacheUsage: number;
  kvBlocksTotal: number;
  kvBlocksFree: number;
  prefixCacheQueries: number;
  prefixCacheHits: number;
  preemptions: number;
  promptTokens: number;
  generationTokens: number;
  /** Token positions run through the forward pass (prompt chunks and decode tokens). */
  tokensComputed: number;
  steps: number;
}

export interface NativeEngine {
  submit(request: NativeRequest): void;
  abort(id: number): void;
  drain(): NativeRecord[];
  stats(): NativeEngineStats;
  info(): { maxModelLen: number; kvBlocksTotal: number; blockSize: number };
  close(): Promise<NativeRecord[]>;
}
