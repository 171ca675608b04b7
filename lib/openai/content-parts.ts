// NOTE(openai/content-parts): tokenmill serves text-only models. Like vLLM on a text-only model, a
// non-text content part is a semantic 400 (the body is well-formed; the model cannot take it), while
// non-text parts of a system message are ignored (vLLM only warns there). Part types vLLM knows as
// multimodal get a "text only" message; anything else is vLLM's "Unknown part type". The part is found
// where the messages were parsed (chat-input.ts) and refused in the pipeline's order.
import { InvalidArgumentError } from '../engine/errors.js';

const MULTIMODAL_PARTS = new Set([
  'image_url', 'image_pil', 'image_embeds', 'input_image', 'audio_url', 'input_audio', 'audio_embeds', 'video_url', 'file',
]);

interface MessageWithParts {
  role: string;
  content?: string | readonly { type: string }[] | null;
}

/** A non-text part: the index of its message and its type. */
export interface NonTextPart {
  index: number;
  type: string;
}

/** The first non-text part outside system messages, or null. */
export function firstNonTextPart(messages: readonly MessageWithParts[]): NonTextPart | null {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (!Array.isArray(m.content) || m.role === 'system') continue;
    const part = m.content.find((p) => p.type !== 'text');
    if (part) return { index: i, type: part.type };
  }
  return null;
}

/** The 400 (param `messages`) for a non-text part. */
export function nonTextPartError(part: NonTextPart): InvalidArgumentError {
  const message = MULTIMODAL_PARTS.has(part.type)
    ? `messages[${part.index}]: content parts of type '${part.type}' are not supported; this model accepts text only.`
    : `messages[${part.index}]: Unknown part type: ${part.type}`;
  return new InvalidArgumentError(message, 'invalid_argument', 400, { param: 'messages' });
}
