// NOTE(openai/parse-body): JSON.parse and schema validation of a request body given as its bytes
// (docs/http-api.md#work-off-the-event-loop): the server's bodies, and the bodies a library caller hands
// to Engine.chat as text. Their cost grows with the body, up to --max-request-bytes (8 MiB by default).
// Bodies up to INLINE_BODY_BYTES are handled inline; larger ones on the work pool, under the client's
// share like a render: the bytes go to the worker (transferred when the caller allows it), and a chat
// body comes back split and packed (chat-input.ts) with its conversation's bytes transferred back, so
// the event loop never holds the body's objects. A chat body comes back marked validated, so the chat
// layer does not check it again.
// Measured on the shared 2-core EPYC (largest event-loop hold; before = inline parse + the two
// validations the server used to make):
// - 64 KiB: before 1-50 ms, on the pool 1-14 ms (a wash: hence the threshold);
// - 1 MiB of 30k short messages: before 53-163 ms, on the pool 11-25 ms;
// - 8 MiB, one long string: before 26-65 ms, on the pool 7-27 ms; full of escapes: 89-114 → 9-59 ms;
// - 8 MiB of 270k short messages: before 558-908 ms; on the pool with the validated value cloned back
//   as objects 425-860 ms (the clone, the request-limit walk and the clone to the render worker);
//   packed 16-45 ms (load average 5-6).
import { InvalidArgumentError } from '../engine/errors.js';
import { workPool } from '../workers/offload.js';
import type { BodyPayload } from '../workers/work-handlers.js';
import { WorkLimitError } from '../workers/work-pool.js';
import { chatInputFromText, markValidated } from './chat-input.js';
import type { ChatInput } from './chat-input.js';
import type { TrajectoryLogRequest } from './protocol.js';
import { validateBodyText } from './validate.js';
import type { BodyKind, Validated } from './validate.js';

/** Bodies up to this many bytes are parsed and validated on the event loop. */
export const INLINE_BODY_BYTES = 64 * 1024;
/** Time limit of a body's parse and validation on a worker (an 8 MiB body needs about 1 s on a busy machine). */
export const BODY_PARSE_TIME_MS = 20_000;
/** The error code of a body whose parse ran past the worker's limits (status 413). */
export const BODY_TOO_COMPLEX = 'request_too_complex';

export interface ParseBodyOptions {
  maxLogprobs: number;
  /** Who the request is for (the work pool's fair share). */
  client: string;
  /** Aborted when the client disconnects: a parse still waiting for a worker is dropped. */
  signal?: AbortSignal;
  /** The bytes may be handed to the worker (unusable here afterwards) instead of copied. */
  transfer?: boolean;
  /** The largest vocabulary the body may be for: longer token-id fields are refused anyway, and not copied back. */
  maxIds?: number;
}

type ParsedBody = Validated<ChatInput> | Validated<TrajectoryLogRequest>;

/**
 * The validated body, or its 422 details. Rejects with a 413 InvalidArgumentError (code
 * BODY_TOO_COMPLEX) when the parse runs past the worker's limits, with the pool's OverloadedError, or
 * with the signal's reason.
 */
export async function parseRequestBody(kind: 'chat', body: Uint8Array, opts: ParseBodyOptions): Promise<Validated<ChatInput>>;
export async function parseRequestBody(kind: 'trajectory-log', body: Uint8Array, opts: ParseBodyOptions): Promise<Validated<TrajectoryLogRequest>>;
export async function parseRequestBody(kind: BodyKind, body: Uint8Array, opts: ParseBodyOptions): Promise<ParsedBody> {
  const options = { maxLogprobs: opts.maxLogprobs };
  let result: ParsedBody;
  if (body.byteLength <= INLINE_BODY_BYTES) {
    const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
    result = kind === 'chat' ? chatInputFromText(text, options, false) : (validateBodyText(kind, text, options) as Validated<TrajectoryLogRequest>);
  } else {
    // The bytes are transferred, never cloned; a caller's bytes, or a view into a larger (pooled)
    // buffer, are copied first (~2 ms at 8 MiB).
    const own = opts.transfer === true && body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
    const bytes = own ? body : new Uint8Array(body);
    const payload: BodyPayload = { kind, body: bytes, options, maxIds: opts.maxIds };
    try {
      result = (await workPool().run('request-body', payload, { client: opts.client, timeMs: BODY_PARSE_TIME_MS, signal: opts.signal, transfer: [bytes.buffer as ArrayBuffer] })) as ParsedBody;
    } catch (error) {
      if (error instanceof WorkLimitError) throw new InvalidArgumentError(`Request body is too complex to parse: it ${error.message}.`, BODY_TOO_COMPLEX, 413);
      throw error;
    }
  }
  if (result.ok && kind === 'chat') markValidated(result.value as ChatInput, opts.maxLogprobs);
  return result;
}
