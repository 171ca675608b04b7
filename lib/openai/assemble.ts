// NOTE(openai/assemble): neutral engine outputs → the non-stream chat.completion
// (docs/http-api.md#non-streaming-response). Pure functions: the caller supplies ids, clock, usage and the
// per-choice text/tokens; reasoning is split first (include_reasoning false drops it), then tool calls are
// parsed out of the remaining content (finish_reason becomes tool_calls when any were), and echo prepends the
// last message's content. Engine finish `error` never reaches here: it is a 500 for the caller.
import { extractReasoning } from '../chat/reasoning-parser.js';
import type { ReasoningParserName } from '../chat/reasoning-parser.js';
import { extractToolCalls } from '../chat/tool-parser.js';
import type { ToolParserName } from '../chat/tool-parser.js';
import { formatLogprobEntry } from './logprobs.js';
import type { SampledLogprob } from './logprobs.js';
import type { ChatCompletionResponse, FinishReason, PromptLogprobEntry, ResponseChoice, Usage } from './protocol.js';

export type EngineFinishReason = 'stop' | 'length' | 'abort' | 'repetition';

/** What the engine produced for one choice. */
export interface EngineChoiceOutput {
  index: number;
  text: string;
  tokenIds: readonly number[];
  finishReason: EngineFinishReason | null;
  /** stop string (str), stop token id (int), "repetition_detected", or null (EOS/length). */
  stopReason?: number | string | null;
  logprobs?: readonly SampledLogprob[] | null;
}

export interface UsageCounts { promptTokens: number; completionTokens: number; cachedTokens: number }

/** Per-request settings shared by the non-stream and stream assemblers. */
export interface AssembleOptions {
  requestId: string;
  model: string;
  created: number;
  systemFingerprint: string | null;
  role: string;
  toolParser: ToolParserName | null;
  toolChoice?: 'none' | null;
  parallelToolCalls?: boolean;
  /** Names of the request's tools (the tool parser's untagged hermes form needs them). */
  toolNames?: readonly string[];
  reasoningParser: ReasoningParserName | null;
  /** The prompt prefilled `<think>` (reasoning-parser.ts startsInReasoning). */
  startsInReasoning?: boolean;
  includeReasoning?: boolean;
  /** echo: text prepended to each choice's content ("" for none). */
  echo?: string;
  logprobs?: boolean;
  returnTokensAsTokenIds?: boolean;
  returnTokenIds?: boolean;
  promptTokenIds?: readonly number[] | null;
  kvTransferParams?: Record<string, unknown> | null;
}

export function completionId(requestId: string): string {
  return `chatcmpl-${requestId}`;
}

export function buildUsage(u: UsageCounts): Usage {
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens },
  };
}

/** docs/http-api.md#non-streaming-response: `tokenmill-<version>-<first 12 hex of the model's sha256>`. */
export function systemFingerprint(version: string, modelSha256: string): string {
  return `tokenmill-${version}-${modelSha256.slice(0, 12)}`;
}

function buildChoice(o: EngineChoiceOutput, opts: AssembleOptions): ResponseChoice {
  let reasoning: string | null = null;
  let content: string | null = o.text;
  if (opts.reasoningParser) {
    const split = extractReasoning(o.text, opts.startsInReasoning ?? false);
    reasoning = split.reasoning;
    content = split.content;
  }
  const tools = extractToolCalls(content ?? '', opts.toolParser, { toolChoice: opts.toolChoice, parallelToolCalls: opts.parallelToolCalls, toolNames: opts.toolNames });
  const called = tools.toolCalls.length > 0;
  if (called) content = tools.content;
  if (opts.echo) content = opts.echo + (content ?? '');
  const finish: FinishReason = called ? 'tool_calls' : (o.finishReason ?? 'stop');
  return {
    index: o.index,
    message: {
      role: opts.role,
      content,
      ...(opts.reasoningParser && opts.includeReasoning !== false ? { reasoning } : {}),
      ...(called ? { tool_calls: tools.toolCalls } : {}),
      refusal: null,
      annotations: null,
      audio: null,
      function_call: null,
    },
    logprobs: opts.logprobs && o.logprobs
      ? { content: o.logprobs.map((l) => formatLogprobEntry(l, { returnTokensAsTokenIds: opts.returnTokensAsTokenIds })) }
      : null,
    finish_reason: finish,
    stop_reason: o.stopReason ?? null,
    ...(opts.returnTokenIds ? { token_ids: [...o.tokenIds] } : {}),
  };
}

export function buildChatResponse(
  outputs: readonly EngineChoiceOutput[],
  usage: UsageCounts,
  opts: AssembleOptions,
  promptLogprobs: PromptLogprobEntry[] | null = null,
): ChatCompletionResponse {
  return {
    id: completionId(opts.requestId),
    object: 'chat.completion',
    created: opts.created,
    model: opts.model,
    choices: [...outputs].sort((a, b) => a.index - b.index).map((o) => buildChoice(o, opts)),
    usage: buildUsage(usage),
    service_tier: null,
    system_fingerprint: opts.systemFingerprint,
    prompt_logprobs: promptLogprobs,
    ...(opts.returnTokenIds ? { prompt_token_ids: opts.promptTokenIds ? [...opts.promptTokenIds] : null } : {}),
    kv_transfer_params: opts.kvTransferParams ?? null,
  };
}
