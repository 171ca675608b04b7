// NOTE(workers/work-handlers): what a work-pool worker can run, by task kind. The functions are the
// same ones the synchronous library API calls, so a render or a conversion off the event loop gives
// exactly the output (and the error) it gives inline. A chat body comes back split and packed
// (lib/openai/chat-input.ts), its conversation's bytes and its token-id fields' typed arrays
// transferred: the event loop receives a few fields and a few buffers however many messages or ids the
// body holds.
import { renderChatTemplate } from '../chat/template.js';
import type { RenderChatOptions } from '../chat/template.js';
import { conversationParts } from '../chat/conversation.js';
import type { Conversation } from '../chat/conversation.js';
import { toGrammar } from '../structured/index.js';
import type { StructuredRequestInput } from '../structured/index.js';
import { chatInputFromText } from '../openai/chat-input.js';
import { tokenIdBuffers } from '../openai/token-id-fields.js';
import { validateBodyText } from '../openai/validate.js';
import type { BodyKind, ValidateOptions } from '../openai/validate.js';
import type { TrajectoryLogRequest, ValidationDetail } from '../openai/protocol.js';
import type { Validated } from '../openai/validate.js';
import { openDatabase, SERVER_BUSY_TIMEOUT_MS } from '../store/database.js';
import { logTrajectories } from '../store/trajectories.js';
import type { LoggedTrajectories } from '../store/trajectories.js';
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
  /** The largest vocabulary served: longer token-id fields are left out (chat-input.ts). */
  maxIds?: number;
}

/** A trajectory-log request, stored by the worker (lib/server/log-route.ts): its bytes, transferred. */
export interface TrajectoryLogPayload {
  body: Uint8Array;
  /** The server's data directory: the worker opens its own connection there. */
  dataDir: string;
  model: string;
  /** Whether the path's model is served (its 404 comes after the 422). */
  modelServed: boolean;
}

export type TrajectoryLogOutcome =
  | { kind: 'invalid'; detail: ValidationDetail[] }
  | { kind: 'not-found' }
  | { kind: 'stored'; logged: LoggedTrajectories };

/** The body's text; ignoreBOM keeps a leading BOM, as the inline path's Buffer.toString does (a json_invalid). */
function bodyText(body: Uint8Array): string {
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(body);
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
    const { kind, body, options, maxIds } = payload as BodyPayload;
    const text = bodyText(body);
    if (kind !== 'chat') return validateBodyText(kind, text, options);
    const result = chatInputFromText(text, options, true, maxIds);
    if (!result.ok || !('packed' in result.value.conversation)) return result;
    return new Transferring(result, [result.value.conversation.packed.buffer as ArrayBuffer, ...tokenIdBuffers(result.value.request)]);
  },
  'trajectory-log': (payload): TrajectoryLogOutcome => {
    const { body, dataDir, model, modelServed } = payload as TrajectoryLogPayload;
    const v = validateBodyText('trajectory-log', bodyText(body)) as Validated<TrajectoryLogRequest>;
    if (!v.ok) return { kind: 'invalid', detail: v.detail };
    if (!modelServed) return { kind: 'not-found' };
    // A connection of its own, for this request only: nothing stays open in a worker that may be
    // terminated, and its transaction is all or nothing like the event loop's.
    const db = openDatabase(dataDir);
    try {
      // Another process's lock gets the event loop's wait, so a locked database is the same prompt 503
      // (the server's own log writes take turns, lib/server/log-route.ts).
      db.pragma(`busy_timeout = ${SERVER_BUSY_TIMEOUT_MS}`);
      return { kind: 'stored', logged: logTrajectories(db, model, v.value) };
    } finally {
      db.close();
    }
  },
};
