// NOTE(openai/chat-input): a validated chat request as the pipeline (chat-completions.ts) takes it: its
// fields without the conversation, the conversation (lib/chat/conversation.ts: objects, or packed when
// a large body was parsed on a worker) and the facts about the conversation that the event loop needs
// (request limits, the non-text-part check, the response role, echo, tool names). The facts are
// computed where the conversation was parsed, so for a large body no request-sized array is ever walked,
// cloned or collected on the event loop (docs/http-api.md#work-off-the-event-loop).
import { contentText } from '../chat/template.js';
import { packConversation } from '../chat/conversation.js';
import type { Conversation, ConversationParts } from '../chat/conversation.js';
import { firstNonTextPart } from './content-parts.js';
import { jsonValueCount, nestingDepth } from './json-walk.js';
import type { NonTextPart } from './content-parts.js';
import { DEFAULT_REQUEST_LIMITS, FREE_FORM_FIELDS } from './request-limits.js';
import { idArray, packLogitBias } from './token-id-fields.js';
import type { PackedLogitBias } from './token-id-fields.js';
import { validateBodyText } from './validate.js';

export { nestingDepth } from './json-walk.js';
import type { ChatRequest, OmitKnown, Validated, ValidateOptions } from './validate.js';

/**
 * A validated request's fields except the conversation, its token-id fields as typed arrays
 * (token-id-fields.ts): transferred from a parse worker, handed to the engine without a per-id pass.
 */
export type ChatRequestFields = OmitKnown<ChatRequest, 'messages' | 'tools' | 'documents' | 'logit_bias' | 'allowed_token_ids' | 'stop_token_ids'> & {
  logit_bias?: PackedLogitBias | null;
  allowed_token_ids?: Float64Array | null;
  stop_token_ids: Float64Array;
};

export interface ConversationFacts {
  tools: number;
  documents: number;
  /**
   * The tools' function names; null when there are more tools than any request may have (the request
   * limits refuse it), so a request-sized list never crosses.
   */
  toolNames: string[] | null;
  /** How deep each part nests (objects and arrays; 0 for a missing part). */
  depth: { messages: number; tools: number; documents: number };
  /** The first non-text content part outside system messages (a 400). */
  nonTextPart: NonTextPart | null;
  /** The last message's role (the response role without a generation prompt). */
  lastRole: string | null;
  /** The last message's text when the request asks for echo (else null: it may be large). */
  lastText: string | null;
  /**
   * The largest free-form field (request-limits.ts FREE_FORM_FIELDS) when it holds more JSON values
   * than any request may: the limits refuse it, and a packed input leaves the field out rather than
   * copy it to the event loop.
   */
  oversized: { field: string; values: number } | null;
  /**
   * Sizes of the token-id fields, checked against the vocabulary (request-limits.ts). A packed input
   * leaves out a field larger than any served vocabulary (refused anyway).
   */
  ids: { allowed_token_ids: number; stop_token_ids: number; logit_bias: number };
}

export interface ChatInput {
  request: ChatRequestFields;
  conversation: Conversation;
  facts: ConversationFacts;
}

/** The free-form field holding the most JSON values, when over the limit. */
function oversizedField(r: { [F in (typeof FREE_FORM_FIELDS)[number]]?: unknown }): { field: string; values: number } | null {
  let worst: { field: string; values: number } | null = null;
  for (const field of FREE_FORM_FIELDS) {
    const value = r[field];
    if (value == null) continue;
    const values = jsonValueCount(value);
    if (values > DEFAULT_REQUEST_LIMITS.maxFreeFormValues && (worst === null || values > worst.values)) worst = { field, values };
  }
  return worst;
}

export function conversationFacts(parts: ConversationParts, echo: boolean): Omit<ConversationFacts, 'oversized' | 'ids'> {
  const last = parts.messages[parts.messages.length - 1];
  const tools = parts.tools ?? [];
  return {
    tools: tools.length,
    documents: parts.documents?.length ?? 0,
    toolNames: tools.length <= DEFAULT_REQUEST_LIMITS.maxTools ? tools.map((t) => t.function.name) : null,
    depth: { messages: nestingDepth(parts.messages), tools: nestingDepth(parts.tools), documents: nestingDepth(parts.documents) },
    nonTextPart: firstNonTextPart(parts.messages),
    lastRole: last?.role ?? null,
    lastText: echo && last ? contentText(last.content) : null,
  };
}

/**
 * Splits a validated request, its token-id fields made typed arrays; `pack` packs its conversation (a
 * worker's result for the event loop) and leaves out fields the limits refuse whatever the model: a
 * free-form field over its limit, token-id fields larger than `maxIds` (the largest vocabulary served).
 */
export function toChatInput(r: ChatRequest, pack: boolean, maxIds = Number.POSITIVE_INFINITY): ChatInput {
  const { messages, tools, documents, logit_bias, allowed_token_ids, stop_token_ids, ...rest } = r;
  const parts: ConversationParts = { messages, tools: tools ?? null, documents: documents ?? null };
  const oversized = oversizedField(rest);
  const ids = {
    allowed_token_ids: allowed_token_ids?.length ?? 0,
    stop_token_ids: stop_token_ids.length,
    logit_bias: logit_bias == null ? 0 : Object.keys(logit_bias).length,
  };
  // Refused by the limits in the pipeline's order; meanwhile not worth a copy to the event loop.
  const keep = (n: number): boolean => !pack || n <= maxIds;
  if (pack && oversized) delete rest[oversized.field as (typeof FREE_FORM_FIELDS)[number]];
  const request: ChatRequestFields = { ...rest, stop_token_ids: idArray(keep(ids.stop_token_ids) ? stop_token_ids : []) };
  if (allowed_token_ids != null && keep(ids.allowed_token_ids)) request.allowed_token_ids = idArray(allowed_token_ids);
  if (logit_bias != null && keep(ids.logit_bias)) request.logit_bias = packLogitBias(logit_bias);
  return { request, conversation: pack ? packConversation(parts) : { inline: parts }, facts: { ...conversationFacts(parts, r.echo), oversized, ids } };
}

/** A chat body's text parsed, validated and split (json_invalid and 422 details as validateBodyText). */
export function chatInputFromText(text: string, opts: ValidateOptions, pack: boolean, maxIds?: number): Validated<ChatInput> {
  const v = validateBodyText('chat', text, opts) as Validated<ChatRequest>;
  return v.ok ? { ok: true, value: toChatInput(v.value, pack, maxIds), ignoredFields: v.ignoredFields } : v;
}

/** The response role (vLLM): the server's role with a generation prompt, else the last message's. */
export function responseRole(facts: ConversationFacts, addGenerationPrompt: boolean, defaultRole = 'assistant'): string {
  if (addGenerationPrompt) return defaultRole;
  return facts.lastRole ?? defaultRole;
}

/** echo: the last message's content when its role is the response role, else "". */
export function echoText(facts: ConversationFacts, role: string): string {
  return facts.lastRole === role ? facts.lastText ?? '' : '';
}

// Inputs this package validated (inline, or on a worker: lib/server/body-parse.ts): checkChat takes them
// as they are instead of validating a second time on the event loop (that pass alone took 588 ms for
// an 8 MiB body of 300k short messages, measured). Only this package's own code marks an object; a
// structured clone from a worker is a new object, marked when it arrives. The mark keeps the
// max_logprobs it was checked against: an engine with another limit validates again.
const validatedInputs = new WeakMap<object, number>();

/**
 * Marks `input` (made by toChatInput from a request validated with `maxLogprobs`, or a copy of one
 * changed only in valid ways) as validated.
 */
export function markValidated(input: ChatInput, maxLogprobs: number): ChatInput {
  validatedInputs.set(input, maxLogprobs);
  return input;
}

/** The max_logprobs a marked input was checked against, or undefined for anything else. */
export function validatedWith(body: unknown): number | undefined {
  return typeof body === 'object' && body !== null ? validatedInputs.get(body) : undefined;
}
