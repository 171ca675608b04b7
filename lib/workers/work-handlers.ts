// NOTE(workers/work-handlers): what a work-pool worker can run, by task kind. The functions are the
// same ones the synchronous library API calls, so a render or a conversion off the event loop gives
// exactly the output (and the error) it gives inline.
import { renderChatTemplate } from '../chat/template.js';
import type { RenderChatOptions } from '../chat/template.js';
import { toGrammar } from '../structured/index.js';
import type { StructuredRequestInput } from '../structured/index.js';
import { validateBodyText } from '../openai/validate.js';
import type { BodyKind, ValidateOptions } from '../openai/validate.js';

/** A render request as it crosses to a worker: functions do not cross, so a pinned clock is a time. */
export type RenderPayload = Omit<RenderChatOptions, 'now'> & { nowMs?: number };

/** A large request body to parse and validate (lib/server/body-parse.ts). */
export interface BodyPayload {
  kind: BodyKind;
  text: string;
  options: ValidateOptions;
}

// Payloads arrive by structured clone from this package's own callers (template-off-thread.ts,
// to-engine.ts, server/body-parse.ts), which build them with these types.
export const WORK_HANDLERS: Record<string, (payload: unknown) => unknown> = {
  'chat-template': (payload): string => {
    const { nowMs, ...opts } = payload as RenderPayload;
    return renderChatTemplate(nowMs === undefined ? opts : { ...opts, now: () => new Date(nowMs) });
  },
  'structured-grammar': (payload): string | undefined => toGrammar(payload as StructuredRequestInput),
  'request-body': (payload) => {
    const { kind, text, options } = payload as BodyPayload;
    return validateBodyText(kind, text, options);
  },
};
