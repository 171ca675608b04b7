// NOTE(openai/logprobs): neutral per-token logprob records → OpenAI `logprobs.content` entries
// (docs/http-api.md#logprobs): −inf (and anything below) is written −9999.0; `token` is the token's text, or,
// when its bytes are not valid UTF-8 on their own, `bytes:\xNN…` (OpenAI's form); `bytes` is the UTF-8 bytes;
// with return_tokens_as_token_ids every token (top ones too) is `token_id:<id>` with that string's bytes.
import type { LogprobEntry, TopLogprob } from './protocol.js';

/** One candidate token as the engine reports it. */
export interface TokenLogprob {
  id: number;
  /** The token's raw bytes (its piece of the output, before UTF-8 decoding). */
  bytes: Uint8Array | readonly number[];
  logprob: number;
}

/** A sampled token with its top alternatives (top may be empty: logprobs with top_logprobs 0). */
export interface SampledLogprob extends TokenLogprob {
  top: readonly TokenLogprob[];
}

export const LOGPROB_FLOOR = -9999.0;

export function clampLogprob(v: number): number {
  return Number.isNaN(v) || v < LOGPROB_FLOOR ? LOGPROB_FLOOR : v;
}

const decoder = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

/** The token text, or `bytes:\xNN…` when the bytes alone are not valid UTF-8. */
export function tokenText(bytes: Uint8Array | readonly number[]): string {
  const u8 = bytes instanceof Uint8Array ? bytes : Uint8Array.from(bytes);
  try {
    return decoder.decode(u8);
  } catch {
    return 'bytes:' + [...u8].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('');
  }
}

export interface LogprobFormat { returnTokensAsTokenIds?: boolean }

export function formatTop(t: TokenLogprob, f: LogprobFormat = {}): TopLogprob {
  if (f.returnTokensAsTokenIds) {
    const token = `token_id:${t.id}`;
    return { token, logprob: clampLogprob(t.logprob), bytes: [...encoder.encode(token)] };
  }
  return { token: tokenText(t.bytes), logprob: clampLogprob(t.logprob), bytes: [...t.bytes] };
}

export function formatLogprobEntry(s: SampledLogprob, f: LogprobFormat = {}): LogprobEntry {
  return { ...formatTop(s, f), top_logprobs: s.top.map((t) => formatTop(t, f)) };
}

/** Prompt logprobs (non-stream): first position null, then {"<id>": {logprob, rank, decoded_token}}. */
export interface PromptTokenLogprob { id: number; logprob: number; rank: number | null; text: string | null }
export function formatPromptLogprobs(positions: readonly (readonly PromptTokenLogprob[] | null)[]) {
  return positions.map((p) => (p === null ? null : Object.fromEntries(p.map((t) => [String(t.id), { logprob: clampLogprob(t.logprob), rank: t.rank, decoded_token: t.text }]))));
}
