// NOTE(chat/conversation): what a chat template renders from a request — its messages, tools and
// documents — either as objects or packed as the UTF-8 JSON text of them. A body of hundreds of
// thousands of small messages is as many objects, and handing objects between threads is a structured
// clone of each, on the event loop at both ends (0.4 s for 8 MiB of 300k messages, measured); a packed
// conversation crosses as one byte array (a transfer or a memcpy: ~2 ms at 8 MiB). So a large body
// parsed on a worker stays packed on the event loop, and only the render worker unpacks it
// (docs/http-api.md#work-off-the-event-loop).
import type { ChatMessage, ChatTool } from '../openai/protocol.js';

export interface ConversationParts {
  messages: readonly ChatMessage[];
  tools: readonly ChatTool[] | null;
  documents: readonly Record<string, unknown>[] | null;
}

/**
 * The parts as objects (a small request, or a library caller's own), or packed (a large body) with the
 * number of its messages, tools and documents.
 */
export type Conversation = { inline: ConversationParts } | { packed: Uint8Array; items: number };

function partsItems(parts: ConversationParts): number {
  return parts.messages.length + (parts.tools?.length ?? 0) + (parts.documents?.length ?? 0);
}

/** How many messages, tools and documents the conversation holds (what a render's time grows with). */
export function conversationItems(c: Conversation): number {
  return 'inline' in c ? partsItems(c.inline) : c.items;
}

/**
 * Packs validated parts: JSON keeps them exactly (they came from JSON), and TextEncoder gives the
 * bytes an ArrayBuffer of their own, so they can be transferred.
 */
export function packConversation(parts: ConversationParts): { packed: Uint8Array; items: number } {
  return { packed: new TextEncoder().encode(JSON.stringify(parts)), items: partsItems(parts) };
}

/** The parts as objects; unpacking parses them (on a worker: the render's). */
export function conversationParts(c: Conversation): ConversationParts {
  if ('inline' in c) return c.inline;
  return JSON.parse(new TextDecoder().decode(c.packed)) as ConversationParts;
}
