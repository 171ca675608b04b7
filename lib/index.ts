// Public exports of tokenmill.
export { Model } from './engine/model.js';
export { Grammar } from './engine/grammar.js';
export { kernelLevel, measureReadBandwidth } from './engine/platform.js';
export type { ReadBandwidthOptions } from './engine/platform.js';
export { Engine } from './openai/chat-engine.js';
export type { EngineOptions } from './openai/chat-engine.js';
export type { EngineStats, FinishReason, GenerateEvent, GenerateOptions, TokenLogprob } from './engine/engine.js';
export type { GenerateRequest, LogitBiasArrays } from './engine/generate-request.js';
export type { ModelInfo, ModelLoadOptions, TokenizeOptions, DetokenizeOptions } from './engine/model.js';
export type { Device, DeviceRequest } from './native/device.js';
export type { WeightReadBandwidth } from './native/types.js';
export type { ChatCallOptions, ChatStreamErrorEvent, ChatStreamItem, ChatUsageRecord } from './openai/chat-completions.js';
export type { ChatCompletionChunk, ChatCompletionResponse, ValidationDetail } from './openai/protocol.js';
export {
  TokenmillError,
  InvalidArgumentError,
  ModelLoadError,
  DisposedError,
  EngineError,
  InternalError,
  NotFoundError,
  GrammarError,
  OverloadedError,
} from './engine/errors.js';
export { RequestValidationError } from './openai/validate.js';
export { TemplateError } from './chat/template.js';
export { configureWorkPool } from './workers/offload.js';
export type { WorkPoolOptions } from './workers/work-pool.js';
export { createServer } from './server/server.js';
export type { TokenmillServer } from './server/server.js';
export type { ServerOptions, ServedModel, ChatEngineLike, LogLevel } from './server/types.js';
