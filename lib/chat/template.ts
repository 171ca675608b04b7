// NOTE(chat/template): request messages → prompt text, the way vLLM/HF apply_chat_template do it.
// Messages are normalised first (content parts joined with "\n", tool-call arguments parsed from
// JSON strings to objects, empty tool_calls and null fields dropped, reasoning/reasoning_content
// mirrored, null content → "") so templates see the dicts they were written for. continue_final_message renders without
// the generation prompt and cuts the text right after the final message's content, so the turn stays
// open (HF's rule, including its whitespace handling).
import type { ChatMessage, ChatTool } from '../openai/protocol.js';
import { DEFAULT_RENDER_LIMITS, renderBounded, TemplateError } from './template-sandbox.js';
import type { RenderLimits } from './template-sandbox.js';

export { TemplateError, DEFAULT_RENDER_LIMITS };
export type { RenderLimits };

/** docs/http-api.md#chat-template: no template from the model, the request or --chat-template. */
export const NO_CHAT_TEMPLATE_MESSAGE =
  'This model has no chat template; pass chat_template in the request or start the server with --chat-template.';

export interface RenderChatOptions {
  /** Template source; null/undefined → 400 with the message of docs/http-api.md#chat-template. */
  template: string | null | undefined;
  messages: readonly ChatMessage[];
  tools?: readonly ChatTool[] | null;
  documents?: readonly Record<string, unknown>[] | null;
  addGenerationPrompt?: boolean;
  continueFinalMessage?: boolean;
  bosToken?: string;
  eosToken?: string;
  /** Spread as top-level template variables (after ours, so a caller may set e.g. enable_thinking). */
  chatTemplateKwargs?: Record<string, unknown> | null;
  reasoningEffort?: string | null;
  limits?: Partial<RenderLimits>;
  /** Clock for strftime_now (tests pin it). */
  now?: () => Date;
}

/**
 * Time a render gets per message, tool and document, on top of its limit: handing the conversation to
 * the template (normalising the messages, converting them to the interpreter's values) is linear in
 * it, ~5-8 µs a message on a loaded 2-core EPYC (270k messages: 1.2-2.2 s), so a long conversation is
 * not refused for its length while a runaway template over a short one still stops at the limit.
 */
export const RENDER_MS_PER_ITEM = 0.02;

/** A render's time limit for a conversation of `items` messages, tools and documents. */
export function renderTimeMs(baseMs: number, items: number): number {
  return baseMs + Math.floor(items * RENDER_MS_PER_ITEM);
}

/** Text of a message's content: a string, or its text parts joined by "\n" (vLLM "string" format). */
export function contentText(content: ChatMessage['content']): string | null {
  if (content == null) return null;
  if (typeof content === 'string') return content;
  return content.filter((p) => p.type === 'text').map((p) => p.text ?? '').join('\n');
}

function parseArguments(args: string): unknown {
  try {
    const v: unknown = JSON.parse(args);
    return v !== null && typeof v === 'object' ? v : args;
  } catch {
    return args; // not JSON: the template gets the string as sent
  }
}

/** The message dicts a template sees. */
export function templateMessages(messages: readonly ChatMessage[]): Record<string, unknown>[] {
  return messages.map((m) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(m)) if (v !== null && v !== undefined) out[k] = v;
    // vLLM hands templates "" for absent/null content (an assistant turn carrying only tool_calls).
    out.content = contentText(m.content) ?? '';
    const reasoning = m.reasoning ?? m.reasoning_content;
    if (reasoning != null) { out.reasoning = reasoning; out.reasoning_content = reasoning; }
    if (m.tool_calls && m.tool_calls.length > 0) {
      out.tool_calls = m.tool_calls.map((tc) => ({
        ...tc,
        type: tc.type ?? 'function',
        function: { ...tc.function, arguments: parseArguments(tc.function.arguments) },
      }));
    } else {
      delete out.tool_calls;
    }
    return out;
  });
}

/** Cuts `rendered` after the final message's content so the model continues it (HF semantics). */
function keepFinalMessageOpen(rendered: string, finalContent: string | null): string {
  const text = finalContent ?? '';
  const stripped = text.trim();
  const at = stripped === '' ? -1 : rendered.lastIndexOf(stripped);
  if (at < 0) {
    throw new TemplateError('continue_final_message is set but the final message does not appear in the chat after applying the chat template! This can happen if the chat template deletes portions of the final message. Please verify the chat template and final message in your chat to ensure they are compatible.');
  }
  const left = text.trimStart();
  // The template kept the message's trailing whitespace: keep it too; otherwise cut after the stripped text.
  const end = rendered.slice(at, at + left.length) === left ? at + left.length : at + stripped.length;
  return rendered.slice(0, end);
}

/** Renders the prompt. Throws TemplateError (status 400) on any failure. */
export function renderChatTemplate(opts: RenderChatOptions): string {
  if (opts.template == null) throw new TemplateError(NO_CHAT_TEMPLATE_MESSAGE);
  const addGen = opts.addGenerationPrompt ?? true;
  const cont = opts.continueFinalMessage ?? false;
  if (cont && addGen) throw new TemplateError('Cannot set both `continue_final_message` and `add_generation_prompt` to True.');
  const messages = templateMessages(opts.messages);
  const vars: Record<string, unknown> = {
    messages,
    tools: opts.tools && opts.tools.length > 0 ? opts.tools : undefined,
    documents: opts.documents ?? undefined,
    add_generation_prompt: addGen,
    bos_token: opts.bosToken ?? '',
    eos_token: opts.eosToken ?? '',
    reasoning_effort: opts.reasoningEffort ?? undefined,
    ...(opts.chatTemplateKwargs ?? {}),
  };
  const limits = { ...DEFAULT_RENDER_LIMITS, ...opts.limits };
  // maxItems bounds the lists a template builds, not the request's own: a template may hold (and
  // slice, reverse, filter) lists as long as the conversation it was given, which the body size bounds.
  limits.maxItems = Math.max(limits.maxItems, opts.messages.length, opts.tools?.length ?? 0, opts.documents?.length ?? 0);
  limits.timeMs = renderTimeMs(limits.timeMs, opts.messages.length + (opts.tools?.length ?? 0) + (opts.documents?.length ?? 0));
  const rendered = renderBounded(opts.template, vars, limits, opts.now);
  if (!cont) return rendered;
  const last = opts.messages[opts.messages.length - 1];
  if (!last) throw new TemplateError('continue_final_message is set but there are no messages.');
  return keepFinalMessageOpen(rendered, contentText(last.content));
}
