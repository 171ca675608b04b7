// NOTE(openai/protocol-response): zod schemas of what the server answers, for /openapi.json (the request
// schemas are protocol.ts's). The TS response types in protocol.ts are what the code builds; the
// compile-time checks at the end fail when a type and its schema stop describing the same shape.
import { z } from 'zod';
import type { ChatCompletionResponse, ModelList, ValidationDetail } from './protocol.js';

const nullableNum = z.number().nullable();

const TopLogprobSchema = z.object({ token: z.string(), logprob: z.number(), bytes: z.array(z.number().int()).nullable() });
const LogprobEntrySchema = TopLogprobSchema.extend({ top_logprobs: z.array(TopLogprobSchema) });
const ChoiceLogprobsSchema = z.object({ content: z.array(LogprobEntrySchema).nullable() });

const ToolCallOutSchema = z.object({ id: z.string(), type: z.literal('function'), function: z.object({ name: z.string(), arguments: z.string() }) });

const FinishReasonSchema = z.enum(['stop', 'length', 'tool_calls', 'abort', 'repetition']);

export const UsageSchema = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  prompt_tokens_details: z.object({ cached_tokens: z.number().int() }).nullable().optional(),
});

const PromptLogprobEntrySchema = z.record(z.string(), z.object({ logprob: z.number(), rank: nullableNum, decoded_token: z.string().nullable() })).nullable();

export const ChatCompletionResponseSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(z.object({
    index: z.number().int(),
    message: z.object({
      role: z.string(),
      content: z.string().nullable(),
      reasoning: z.string().nullable().optional(),
      tool_calls: z.array(ToolCallOutSchema).optional(),
      refusal: z.string().nullable(),
      annotations: z.null(),
      audio: z.null(),
      function_call: z.null(),
    }),
    logprobs: ChoiceLogprobsSchema.nullable(),
    finish_reason: FinishReasonSchema.nullable(),
    stop_reason: z.union([z.number(), z.string()]).nullable(),
    token_ids: z.array(z.number().int()).nullable().optional(),
  })),
  usage: UsageSchema,
  service_tier: z.null(),
  system_fingerprint: z.string().nullable(),
  prompt_logprobs: z.array(PromptLogprobEntrySchema).nullable(),
  prompt_token_ids: z.array(z.number().int()).nullable().optional(),
  kv_transfer_params: z.record(z.string(), z.unknown()).nullable(),
});

export const ModelListSchema = z.object({
  object: z.literal('list'),
  data: z.array(z.object({
    id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string(), root: z.string(),
    max_model_len: z.number().int().optional(),
  })),
});

export const ErrorEnvelopeSchema = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.number().int() }),
});

export const ValidationErrorSchema = z.object({
  detail: z.array(z.object({ loc: z.array(z.union([z.string(), z.number().int()])), msg: z.string(), type: z.string() })),
});

export const TrajectoryLogResponseSchema = z.object({
  object: z.literal('trajectory_log'),
  model: z.string(),
  split: z.string(),
  groups: z.number().int(),
  trajectories: z.number().int(),
  metrics: z.record(z.string(), z.number()),
});

// Drift checks: each built type must satisfy its schema.
type Satisfies<T, S> = T extends S ? true : never;
const responseFits: Satisfies<ChatCompletionResponse, z.infer<typeof ChatCompletionResponseSchema>> = true;
const modelsFit: Satisfies<ModelList, z.infer<typeof ModelListSchema>> = true;
const detailFits: Satisfies<{ detail: ValidationDetail[] }, z.infer<typeof ValidationErrorSchema>> = true;
void responseFits;
void modelsFit;
void detailFits;
