// NOTE(server/body-parse): JSON.parse and schema validation of a request body (docs/http-api.md#work-off-the-event-loop).
// Their cost grows with the body, up to --max-request-bytes (8 MiB by default). Bodies up to
// INLINE_BODY_CHARS are handled inline; larger ones on the work pool, under the client's share like a
// render. A chat request comes back marked validated, so the chat layer does not check it again.
// Measured on the shared 2-core EPYC (load average 12, so single figures are noisy; largest event-loop
// hold of three runs, before = inline parse + the two validations the server used to make):
// - 64 KiB: before 1-50 ms, on the pool 1-14 ms (a wash: hence the threshold);
// - 1 MiB of 30k short messages: before 53-163 ms, on the pool 11-25 ms;
// - 8 MiB, one long string: before 26-65 ms, on the pool 7-27 ms; full of escapes: 89-114 → 9-59 ms;
// - 8 MiB of 300k short messages: before 558-908 ms, on the pool 425-517 ms. What stays on the event
//   loop is the structured clone of the validated value (386 ms of it on a quiet run): object-heavy
//   bodies still hold it, and only a bound on the number of messages (or keeping the request on the
//   worker through rendering) would remove that.
import { markValidated, validateBodyText } from '../openai/validate.js';
import type { BodyKind, ChatRequest, ValidatedBody } from '../openai/validate.js';
import type { TrajectoryLogRequest } from '../openai/protocol.js';
import type { Validated } from '../openai/validate.js';
import { workPool } from '../workers/offload.js';
import type { BodyPayload } from '../workers/work-handlers.js';
import { WorkLimitError } from '../workers/work-pool.js';
import { HttpError } from './http-io.js';

/** Bodies up to this many characters are parsed and validated on the event loop. */
export const INLINE_BODY_CHARS = 64 * 1024;
/** Time limit of a body's parse and validation on a worker (an 8 MiB body needs about 1 s on a busy machine). */
export const BODY_PARSE_TIME_MS = 20_000;

export interface BodyParseOptions {
  maxLogprobs: number;
  /** Who the request is for (the work pool's fair share). */
  client: string;
  /** Aborted when the client disconnects: a parse still waiting for a worker is dropped. */
  signal?: AbortSignal;
}

export async function parseBody(kind: 'chat', text: string, opts: BodyParseOptions): Promise<Validated<ChatRequest>>;
export async function parseBody(kind: 'trajectory-log', text: string, opts: BodyParseOptions): Promise<Validated<TrajectoryLogRequest>>;
export async function parseBody(kind: BodyKind, text: string, opts: BodyParseOptions): Promise<ValidatedBody> {
  const options = { maxLogprobs: opts.maxLogprobs };
  let result: ValidatedBody;
  if (text.length <= INLINE_BODY_CHARS) {
    result = validateBodyText(kind, text, options);
  } else {
    const payload: BodyPayload = { kind, text, options };
    try {
      result = (await workPool().run('request-body', payload, { client: opts.client, timeMs: BODY_PARSE_TIME_MS, signal: opts.signal })) as ValidatedBody;
    } catch (error) {
      if (error instanceof WorkLimitError) {
        throw new HttpError(413, `Request body is too complex to parse: it ${error.message}.`, null, { Connection: 'close' });
      }
      throw error;
    }
  }
  if (result.ok && kind === 'chat') markValidated(result.value as ChatRequest, opts.maxLogprobs);
  return result;
}
