// NOTE(chat/template-off-thread): renderChatTemplate on a work-pool worker, so a template (a request's
// chat_template, or any template over request-sized messages) never runs on the event loop. The time
// limit is the pool's: a render still running at limits.timeMs (plus the conversation's allowance,
// renderTimeMs) has its worker terminated, and a render
// past the worker's heap limit dies with it; both are the same 400 TemplateError the inline render
// gives (same message for the time limit). Everything else — output, error messages, template line
// numbers — is the inline render's, because the worker runs that very function. A packed conversation
// (lib/chat/conversation.ts) is unpacked on the worker, so its objects never exist on the event loop.
import { workPool } from '../workers/offload.js';
import type { WorkOptions } from '../workers/offload.js';
import { WorkLimitError, WorkTaskError } from '../workers/work-pool.js';
import type { RenderPayload } from '../workers/work-handlers.js';
import { DEFAULT_RENDER_LIMITS, renderTimeMs, TemplateError } from './template.js';
import type { RenderChatOptions } from './template.js';
import { conversationItems } from './conversation.js';
import type { Conversation } from './conversation.js';

/** What a render off the event loop takes: the render options, with the conversation inline or packed. */
export type ConversationRenderOptions = Omit<RenderChatOptions, 'messages' | 'tools' | 'documents'> & { conversation: Conversation };

/** renderChatTemplate off the event loop; rejects with the errors it throws (TemplateError, 400). */
export function renderChatTemplateOffThread(opts: RenderChatOptions, work: WorkOptions = {}): Promise<string> {
  const { messages, tools, documents, ...rest } = opts;
  return renderConversationOffThread({ ...rest, conversation: { inline: { messages, tools: tools ?? null, documents: documents ?? null } } }, work);
}

/**
 * The same for a conversation that may be packed (chat-input.ts): only its bytes cross — transferred,
 * so a packed conversation is rendered once and its bytes are empty here afterwards — and the worker
 * unpacks them inside the render's time and memory limits.
 */
export async function renderConversationOffThread(opts: ConversationRenderOptions, work: WorkOptions = {}): Promise<string> {
  const { now, ...rest } = opts;
  const limits = { ...DEFAULT_RENDER_LIMITS, ...opts.limits };
  // The worker's own cooperative deadline is switched off: the pool's termination is the limit.
  const payload: RenderPayload = { ...rest, limits: { ...limits, timeMs: Number.POSITIVE_INFINITY } };
  if (now) payload.nowMs = now().getTime();
  const timeMs = renderTimeMs(limits.timeMs, conversationItems(opts.conversation));
  try {
    const transfer = 'packed' in opts.conversation ? [opts.conversation.packed.buffer as ArrayBuffer] : [];
    return (await workPool().run('chat-template', payload, { client: work.client ?? '', timeMs, signal: work.signal, transfer })) as string;
  } catch (error) {
    if (error instanceof WorkLimitError) throw new TemplateError(`chat template render ${error.message}`);
    if (error instanceof WorkTaskError && error.errorName === 'TemplateError') {
      const line = error.fields.line;
      throw new TemplateError(error.message, typeof line === 'number' ? line : null);
    }
    throw error;
  }
}
