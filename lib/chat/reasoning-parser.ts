// NOTE(chat/reasoning-parser): splits `<think>…</think>` reasoning from content (Qwen3, QwQ,
// DeepSeek-R1). Whether the output *starts inside* the reasoning is a fact of the rendered prompt: R1
// and QwQ templates prefill `<think>\n` after the assistant header, so the model's text begins with
// reasoning and only `</think>` appears (detected with `promptOpensReasoning`). Otherwise reasoning is
// recognised only when the output begins with `<think>`. An unclosed reasoning block (length cut) is
// all reasoning. The stream version holds back a possible partial tag, so tags never leak.
import { partialMarkerSuffix } from './json-scan.js';

export type ReasoningParserName = 'deepseek_r1' | 'qwen3';
export const REASONING_PARSERS: readonly ReasoningParserName[] = ['deepseek_r1', 'qwen3'];

const OPEN = '<think>';
const CLOSE = '</think>';

/**
 * A template that emits think tags gets the reasoning split (docs/chat.md#reasoning-parsers); null otherwise.
 * Both names parse the same tags; they differ only in where the output starts (see startsInReasoning), so
 * detection returns 'qwen3' and lets the rendered prompt decide about prefilled `<think>`.
 */
export function detectReasoningParser(template: string | null | undefined): ReasoningParserName | null {
  if (!template || !template.includes(OPEN) || !template.includes(CLOSE)) return null;
  return 'qwen3';
}

/** deepseek_r1 always starts inside reasoning (vLLM's parser); otherwise the prompt tells. */
export function startsInReasoning(parser: ReasoningParserName, prompt: string): boolean {
  return parser === 'deepseek_r1' || promptOpensReasoning(prompt);
}

/** True when the rendered prompt ends inside an opened think block (prefilled reasoning). */
export function promptOpensReasoning(prompt: string): boolean {
  const open = prompt.lastIndexOf(OPEN);
  return open >= 0 && prompt.indexOf(CLOSE, open) < 0 && prompt.slice(open + OPEN.length).trim() === '';
}

/** The marker after which structured outputs apply when a reasoning parser is active. */
export const REASONING_END = CLOSE;

/**
 * vLLM's is_reasoning_end on the prompt: the later of the last `<think>` and the last `</think>` decides
 * (a prompt that closed its think block, e.g. Qwen3 with enable_thinking false, has ended reasoning).
 */
export function promptEndsReasoning(prompt: string): boolean {
  return prompt.lastIndexOf(CLOSE) > prompt.lastIndexOf(OPEN);
}

export interface ReasoningSplit { reasoning: string | null; content: string | null }

/** Non-streaming split. `startsInReasoning`: the prompt prefilled `<think>`. */
export function extractReasoning(text: string, startsInReasoning: boolean): ReasoningSplit {
  const p = new ReasoningStreamParser(startsInReasoning);
  const a = p.push(text);
  const b = p.finish();
  const reasoning = a.reasoning + b.reasoning;
  const content = a.content + b.content;
  return { reasoning: p.sawReasoning ? reasoning : null, content: p.sawReasoning && content === '' ? null : content };
}

export interface ReasoningDelta { reasoning: string; content: string }

export class ReasoningStreamParser {
  private state: 'start' | 'reasoning' | 'content';
  private buf = '';
  /** No reasoning text emitted yet: a leading `<think>` (repeated after a prefill) is dropped. */
  private atReasoningStart = true;
  /** True once the output was found to carry reasoning. */
  sawReasoning: boolean;

  constructor(startsInReasoning: boolean) {
    this.state = startsInReasoning ? 'reasoning' : 'start';
    this.sawReasoning = startsInReasoning;
  }

  push(text: string): ReasoningDelta {
    this.buf += text;
    return this.run(false);
  }

  finish(): ReasoningDelta {
    return this.run(true);
  }

  private run(final: boolean): ReasoningDelta {
    const out: ReasoningDelta = { reasoning: '', content: '' };
    for (;;) {
      if (this.state === 'content') { out.content += this.buf; this.buf = ''; return out; }
      if (this.state === 'start') {
        const t = this.buf.trimStart();
        if (t.startsWith(OPEN)) { this.buf = t.slice(OPEN.length); this.state = 'reasoning'; this.sawReasoning = true; continue; }
        if (!final && OPEN.startsWith(t)) return out; // '' or a partial <think>
        this.state = 'content';
        continue;
      }
      // reasoning: a model that was prefilled may still repeat <think> first
      if (this.atReasoningStart) {
        const t = this.buf.trimStart();
        if (t.startsWith(OPEN)) { this.buf = t.slice(OPEN.length); }
        else if (!final && t !== '' && OPEN.startsWith(t)) return out;
        if (t !== '') this.atReasoningStart = false;
      }
      const at = this.buf.indexOf(CLOSE);
      if (at >= 0) {
        out.reasoning += this.buf.slice(0, at);
        this.buf = this.buf.slice(at + CLOSE.length);
        this.state = 'content';
        continue;
      }
      const hold = final ? 0 : Math.max(partialMarkerSuffix(this.buf, CLOSE), partialMarkerSuffix(this.buf, OPEN));
      out.reasoning += this.buf.slice(0, this.buf.length - hold);
      this.buf = this.buf.slice(this.buf.length - hold);
      return out;
    }
  }
}
