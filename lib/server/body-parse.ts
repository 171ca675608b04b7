// NOTE(server/body-parse): a request body's bytes → its validated value (lib/openai/parse-body.ts:
// off the event loop when large, the bytes transferred to the worker). A parse past the worker's limits
// is a 413 that closes the connection, like a body over the size limit.
import { BODY_TOO_COMPLEX, parseRequestBody } from '../openai/parse-body.js';
import type { ParseBodyOptions } from '../openai/parse-body.js';
import type { ChatInput } from '../openai/chat-input.js';
import type { TrajectoryLogRequest } from '../openai/protocol.js';
import type { BodyKind, Validated } from '../openai/validate.js';
import { TokenmillError } from '../engine/errors.js';
import { HttpError } from './http-io.js';

export type BodyParseOptions = Omit<ParseBodyOptions, 'transfer'>;

/** `body` may be handed to a worker: the caller must not use it afterwards. */
export async function parseBody(kind: 'chat', body: Buffer, opts: BodyParseOptions): Promise<Validated<ChatInput>>;
export async function parseBody(kind: 'trajectory-log', body: Buffer, opts: BodyParseOptions): Promise<Validated<TrajectoryLogRequest>>;
export async function parseBody(kind: BodyKind, body: Buffer, opts: BodyParseOptions): Promise<Validated<ChatInput> | Validated<TrajectoryLogRequest>> {
  try {
    return kind === 'chat'
      ? await parseRequestBody('chat', body, { ...opts, transfer: true })
      : await parseRequestBody('trajectory-log', body, { ...opts, transfer: true });
  } catch (error) {
    if (error instanceof TokenmillError && error.code === BODY_TOO_COMPLEX) throw new HttpError(413, error.message, null, { Connection: 'close' });
    throw error;
  }
}
