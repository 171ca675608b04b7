// NOTE(workers/work-handlers): what a work-pool worker can run, by task kind. The functions are the
// same ones the synchronous library API calls, so a render or a conversion off the event loop gives
// exactly the output (and the error) it gives inline. A chat body comes back split and packed
// (lib/openai/chat-input.ts), its conversation's bytes transferred: the event loop receives a few
// fields and one byte array however many messages the body holds.
import { renderChatTemplate } from '../chat/template.js';
import type { RenderChatOptions } from '../chat/template.js';
import { conversationParts } from '../chat/conversation.js';
import type { Conversation } from '../chat/conversation.js';
import { toGrammar } from '../structured/index.js';
import type { StructuredRequestInput } from '../structured/index.js';
import { chatInputFromText } from '../openai/chat-input.js';
import { validateBodyText } from '../openai/validate.js';
import type { BodyKind, ValidateOptions } from '../openai/validate.js';
import { Transferring } from './work-protocol.js';

/**
 * A render request as it crosses to a worker: functions do not cross, so a pinned clock is a time; the
 * conversation may be packed.
 */
export type RenderPayload = Omit<RenderChatOptions, 'now' | 'messages' | 'tools' | 'documents'> & { nowMs?: number; conversation: Conversation };

/** A large request body to parse and validate (lib/server/body-parse.ts): its UTF-8 bytes, transferred. */
export interface BodyPayload {
  kind: BodyKind;
  body: Uint8Array;
  options: ValidateOptions;
}

// Payloads arrive by structured clone from this package's own callers (template-off-thread.ts,
// to-engine.ts, server/body-parse.ts), which build them with these types.
export const WORK_HANDLERS: Record<string, (payload: unknown) => unknown> = {
  'chat-template': (payload): string => {
    const { nowMs, conversation, ...opts } = payload as RenderPayload;
    const parts = conversationParts(conversation);
    return renderChatTemplate({ ...opts, ...parts, ...(nowMs === undefined ? {} : { now: () => new Date(nowMs) }) });
  },
  'structured-grammar': (payload): string | undefined => toGrammar(payload as StructuredRequestInput),
  'request-body': (payload) => {
    const { kind, body, options } = payload as BodyPayload;
    // ignoreBOM keeps a leading BOM in the text, as the inline path's Buffer.toString does (a json_invalid).
    const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(body);
    if (kind !== 'chat') return validateBodyText(kind, text, options);
    const result = chatInputFromText(text, options, true);
    if (!result.ok || !('packed' in result.value.conversation)) return result;
    return new Transferring(result, [result.value.conversation.packed.buffer as ArrayBuffer]);
  },
};
