// Public exports of tokenmill.
export { Model } from './engine/model.js';
export { Engine } from './engine/engine.js';
export type { EngineOptions, EngineStats, FinishReason, GenerateEvent, GenerateOptions, TokenLogprob } from './engine/engine.js';
export type { GenerateRequest } from './engine/generate-request.js';
export type { ModelInfo, ModelLoadOptions, TokenizeOptions, DetokenizeOptions } from './engine/model.js';
export {
  TokenmillError,
  InvalidArgumentError,
  ModelLoadError,
  DisposedError,
  EngineError,
  InternalError,
} from './engine/errors.js';
