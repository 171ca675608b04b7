// NOTE(openai/protocol): the single source of truth for the OpenAI-compatible wire shapes
// (docs/http-api.md: request fields, responses, streaming, trajectory log). Request schemas are zod, so
// the TS types (z.infer) and the runtime validation (validate.ts) cannot drift; response/chunk shapes are
// produced by our own code (assemble*.ts), so they are plain types checked by the compiler. Defaults are
// applied by validate.ts (`applyDefaults`), never by the schema, so "was it sent?" stays answerable.
import { z } from 'zod';
import {
  INT64_MAX, INT64_MIN, py_bool, py_dict, py_float, py_int, py_list, py_literal, py_object, py_str, py_union,
} from './py-types.js';

const nullable = <T extends z.ZodType>(s: T) => s.nullable().optional();

import { ContentSchema, MessageSchema, ToolCallSchema, ToolSchema, TextPartSchema } from './protocol-message.js';
export { ContentSchema, MessageSchema, ToolCallSchema, ToolSchema, TextPartSchema };

// ---- request --------------------------------------------------------------------------------------

const int64 = () => py_int().gte(INT64_MIN).lte(INT64_MAX);

export const StreamOptionsSchema = py_object({
  include_usage: nullable(py_bool()),
  continuous_usage_stats: nullable(py_bool()),
});

export const ResponseFormatSchema = py_object({
  type: py_literal(['text', 'json_object', 'json_schema', 'structural_tag']),
  json_schema: nullable(py_object({
    name: py_str(),
    description: nullable(py_str()),
    schema: nullable(py_dict()),
    strict: nullable(py_bool()),
  })),
});

export const StructuredOutputsSchema = py_object({
  json: nullable(py_union(['str', 'dict'], [py_str(), py_dict()])),
  regex: nullable(py_str()),
  choice: nullable(py_list(py_str())),
  grammar: nullable(py_str()),
  json_object: nullable(py_bool()),
  disable_fallback: py_bool().optional(),
  disable_any_whitespace: py_bool().optional(),
  disable_additional_properties: py_bool().optional(),
  whitespace_pattern: nullable(py_str()),
  structural_tag: nullable(py_str()),
  _backend: nullable(py_str()),
  _backend_was_auto: py_bool().optional(),
});

export const RepetitionDetectionSchema = py_object({
  max_pattern_size: py_int().gte(0).optional(),
  min_pattern_size: py_int().gte(0).optional(),
  min_count: py_int().gte(0).optional(),
});

const xargValue = py_union(['str', 'int', 'float', 'list'], [
  py_str(), py_int(), py_float(), py_list(py_union(['str', 'float'], [py_str(), py_float()])),
]);

export const ChatCompletionRequestSchema = py_object({
  messages: py_list(MessageSchema),
  model: nullable(py_str()),
  frequency_penalty: nullable(py_float().gte(-2).lte(2)),
  logit_bias: nullable(z.record(z.string(), py_float(), { error: () => 'py:dict_type' })),
  logprobs: nullable(py_bool()),
  top_logprobs: nullable(py_int().gte(-1)),
  max_tokens: nullable(py_int().gte(1)),
  max_completion_tokens: nullable(py_int().gte(1)),
  n: nullable(py_int().gte(1)),
  presence_penalty: nullable(py_float().gte(-2).lte(2)),
  response_format: nullable(ResponseFormatSchema),
  seed: nullable(int64()),
  stop: nullable(py_union(['str', 'list[str]'], [py_str(), py_list(py_str())])),
  stream: nullable(py_bool()),
  stream_options: nullable(StreamOptionsSchema),
  temperature: nullable(py_float().gte(0)),
  top_p: nullable(py_float().gt(0).lte(1)),
  tools: nullable(py_list(ToolSchema)),
  tool_choice: nullable(py_literal(['none'])),
  reasoning_effort: nullable(py_literal(['low', 'medium', 'high'])),
  include_reasoning: py_bool().optional(),
  parallel_tool_calls: nullable(py_bool()),
  user: nullable(py_str()),
  use_beam_search: py_bool().optional(),
  top_k: nullable(py_int().gte(-1)),
  min_p: nullable(py_float().gte(0).lte(1)),
  repetition_penalty: nullable(py_float().gt(0)),
  length_penalty: py_float().optional(),
  stop_token_ids: nullable(py_list(py_int().gte(0))),
  include_stop_str_in_output: py_bool().optional(),
  ignore_eos: py_bool().optional(),
  min_tokens: py_int().gte(0).optional(),
  skip_special_tokens: py_bool().optional(),
  spaces_between_special_tokens: py_bool().optional(),
  truncate_prompt_tokens: nullable(py_int().gte(-1).lte(INT64_MAX)),
  prompt_logprobs: nullable(py_int().gte(-1)),
  allowed_token_ids: nullable(py_list(py_int().gte(0))),
  bad_words: py_list(py_str()).optional(),
  echo: py_bool().optional(),
  add_generation_prompt: py_bool().optional(),
  continue_final_message: py_bool().optional(),
  add_special_tokens: py_bool().optional(),
  documents: nullable(py_list(py_dict())),
  chat_template: nullable(py_str()),
  chat_template_kwargs: nullable(py_dict()),
  mm_processor_kwargs: nullable(py_dict()),
  structured_outputs: nullable(StructuredOutputsSchema),
  priority: int64().optional(),
  request_id: py_str().optional(),
  return_tokens_as_token_ids: nullable(py_bool()),
  return_token_ids: nullable(py_bool()),
  cache_salt: nullable(py_str()),
  kv_transfer_params: nullable(py_dict()),
  vllm_xargs: nullable(z.record(z.string(), xargValue, { error: () => 'py:dict_type' })),
  repetition_detection: nullable(RepetitionDetectionSchema),
});

export type ChatMessage = z.infer<typeof MessageSchema>;
export type ChatTool = z.infer<typeof ToolSchema>;
export type ChatToolCall = z.infer<typeof ToolCallSchema>;
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequestSchema>;

/** Top-level request keys the schema knows; anything else is ignored (and reported for a debug log). */
export const KNOWN_REQUEST_FIELDS: ReadonlySet<string> = new Set(Object.keys(ChatCompletionRequestSchema.shape));

// ---- response (non-stream) ------------------------------------------------------------------------

export interface TopLogprob { token: string; logprob: number; bytes: number[] | null }
export interface LogprobEntry extends TopLogprob { top_logprobs: TopLogprob[] }
export interface ChoiceLogprobs { content: LogprobEntry[] | null }

export interface ResponseToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ResponseMessage {
  role: string;
  content: string | null;
  reasoning?: string | null;
  tool_calls?: ResponseToolCall[];
  refusal: string | null;
  annotations: null;
  audio: null;
  function_call: null;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'abort' | 'repetition';

export interface ResponseChoice {
  index: number;
  message: ResponseMessage;
  logprobs: ChoiceLogprobs | null;
  finish_reason: FinishReason | null;
  stop_reason: number | string | null;
  token_ids?: number[] | null;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number } | null;
}

/** One prompt position: `{ "<token_id>": {logprob, rank, decoded_token} }`, the first entry null. */
export type PromptLogprobEntry = Record<string, { logprob: number; rank: number | null; decoded_token: string | null }> | null;

export interface ChatCompletionResponse {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ResponseChoice[];
  usage: Usage;
  service_tier: null;
  system_fingerprint: string | null;
  prompt_logprobs: PromptLogprobEntry[] | null;
  prompt_token_ids?: number[] | null;
  kv_transfer_params: Record<string, unknown> | null;
}

// ---- stream chunks --------------------------------------------------------------------------------

export interface DeltaToolCall {
  index: number;
  id?: string;
  type?: 'function';
  function: { name?: string; arguments?: string };
}

export interface ChunkDelta {
  role?: string;
  content?: string;
  reasoning?: string;
  tool_calls?: DeltaToolCall[];
}

export interface ChunkChoice {
  index: number;
  delta: ChunkDelta;
  logprobs: ChoiceLogprobs | null;
  finish_reason: FinishReason | null;
  stop_reason?: number | string | null;
  token_ids?: number[];
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  system_fingerprint: string | null;
  choices: ChunkChoice[];
  usage?: Usage | null;
  prompt_token_ids?: number[] | null;
}

// ---- models list ----------------------------------------------------------------------------------

export interface ModelCard {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  root: string;
  max_model_len?: number;
}
export interface ModelList { object: 'list'; data: ModelCard[] }

// ---- validation error body (docs/http-api.md#validation-errors-422) ------------------------------

export interface ValidationDetail { loc: (string | number)[]; msg: string; type: string }

export {
  TrajectoryLogRequestSchema, TrajectoryGroupSchema, TrajectorySchema,
  type TrajectoryLogRequest, type TrajectoryGroup, type Trajectory,
} from './protocol-trajectory.js';
