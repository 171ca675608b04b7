// NOTE(openai/assemble-stream): engine events → chat.completion.chunk objects
// (docs/http-api.md#streaming). Per choice: a role chunk `{role, content: ""}` first (the very first chunk of
// the stream carries prompt_token_ids when asked), an echo chunk when echo applies, then content /
// reasoning / tool-call deltas from the incremental parsers; finish_reason rides on the chunk with the
// last text (`delta: {}` if that event had none). A usage chunk with `choices: []` ends the stream when
// include_usage; continuous_usage_stats puts running usage on every chunk. SSE framing is `sse()`.
import { ReasoningStreamParser } from '../chat/reasoning-parser.js';
import { ToolCallStream } from '../chat/tool-parser.js';
import { buildUsage, completionId } from './assemble.js';
import type { AssembleOptions, EngineFinishReason, UsageCounts } from './assemble.js';
import { formatLogprobEntry } from './logprobs.js';
import type { SampledLogprob } from './logprobs.js';
import type { ChatCompletionChunk, ChunkChoice, ChunkDelta, FinishReason, Usage } from './protocol.js';

/** One engine event for one choice. */
export interface EngineChoiceDelta {
  index: number;
  text: string;
  tokenIds: readonly number[];
  logprobs?: readonly SampledLogprob[] | null;
  finishReason?: EngineFinishReason | null;
  stopReason?: number | string | null;
}

export interface StreamOptions extends AssembleOptions {
  n: number;
  promptTokens: number;
  includeUsage?: boolean;
  continuousUsageStats?: boolean;
}

interface ChoiceState { reasoning: ReasoningStreamParser | null; tools: ToolCallStream; completionTokens: number; finished: boolean }

export class ChatStreamAssembler {
  private readonly choices: ChoiceState[] = [];
  private first = true;

  constructor(private readonly opts: StreamOptions) {
    for (let i = 0; i < opts.n; i++) {
      this.choices.push({
        reasoning: opts.reasoningParser ? new ReasoningStreamParser(opts.startsInReasoning ?? false) : null,
        tools: new ToolCallStream(opts.toolParser, { toolChoice: opts.toolChoice, parallelToolCalls: opts.parallelToolCalls, toolNames: opts.toolNames }),
        completionTokens: 0,
        finished: false,
      });
    }
  }

  private chunk(choice: ChunkChoice | null, usage?: Usage | null): ChatCompletionChunk {
    const c: ChatCompletionChunk = {
      id: completionId(this.opts.requestId),
      object: 'chat.completion.chunk',
      created: this.opts.created,
      model: this.opts.model,
      system_fingerprint: this.opts.systemFingerprint,
      choices: choice ? [choice] : [],
    };
    if (this.first) {
      this.first = false;
      if (this.opts.returnTokenIds) c.prompt_token_ids = this.opts.promptTokenIds ? [...this.opts.promptTokenIds] : null;
    }
    if (usage !== undefined) c.usage = usage;
    return c;
  }

  private running(i: number): Usage | undefined {
    if (!this.opts.continuousUsageStats) return undefined;
    const done = this.choices[i]!.completionTokens;
    return { prompt_tokens: this.opts.promptTokens, completion_tokens: done, total_tokens: this.opts.promptTokens + done };
  }

  /** The opening chunks: the role chunk of every choice, then echo chunks. */
  start(): ChatCompletionChunk[] {
    const out: ChatCompletionChunk[] = [];
    for (let i = 0; i < this.opts.n; i++) {
      out.push(this.chunk({ index: i, delta: { role: this.opts.role, content: '' }, logprobs: null, finish_reason: null }, this.running(i)));
    }
    if (this.opts.echo) {
      for (let i = 0; i < this.opts.n; i++) {
        out.push(this.chunk({ index: i, delta: { content: this.opts.echo }, logprobs: null, finish_reason: null }, this.running(i)));
      }
    }
    return out;
  }

  /** One engine event → zero or one chunk. */
  push(ev: EngineChoiceDelta): ChatCompletionChunk[] {
    const st = this.choices[ev.index];
    if (!st || st.finished) throw new RangeError(`no running choice ${ev.index}`);
    st.completionTokens += ev.tokenIds.length;
    const final = ev.finishReason != null;
    const delta: ChunkDelta = {};
    let content = ev.text;
    let reasoning = '';
    if (st.reasoning) {
      const a = st.reasoning.push(ev.text);
      const b = final ? st.reasoning.finish() : { reasoning: '', content: '' };
      reasoning = a.reasoning + b.reasoning;
      content = a.content + b.content;
    }
    const t1 = st.tools.push(content);
    const t2 = final ? st.tools.finish() : { content: '', toolCalls: [] };
    const text = t1.content + t2.content;
    const calls = [...t1.toolCalls, ...t2.toolCalls];
    if (reasoning && this.opts.includeReasoning !== false) delta.reasoning = reasoning;
    if (text) delta.content = text;
    if (calls.length > 0) delta.tool_calls = calls;
    const hasLogprobs = this.opts.logprobs && ev.logprobs && ev.logprobs.length > 0;
    if (!final && Object.keys(delta).length === 0 && !hasLogprobs) return [];
    if (final) st.finished = true;
    const finish: FinishReason | null = final ? (st.tools.called ? 'tool_calls' : ev.finishReason!) : null;
    const choice: ChunkChoice = {
      index: ev.index,
      delta,
      logprobs: hasLogprobs ? { content: ev.logprobs!.map((l) => formatLogprobEntry(l, { returnTokensAsTokenIds: this.opts.returnTokensAsTokenIds })) } : null,
      finish_reason: finish,
      ...(final ? { stop_reason: ev.stopReason ?? null } : {}),
      ...(this.opts.returnTokenIds ? { token_ids: [...ev.tokenIds] } : {}),
    };
    return [this.chunk(choice, this.running(ev.index))];
  }

  /** After every choice finished: the usage chunk when include_usage. */
  end(usage: UsageCounts): ChatCompletionChunk[] {
    if (!this.opts.includeUsage) return [];
    return [this.chunk(null, buildUsage(usage))];
  }
}

/** SSE framing of one event; `SSE_DONE` terminates every stream (also after an error event). */
export function sse(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}
export const SSE_DONE = 'data: [DONE]\n\n';
