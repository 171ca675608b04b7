// NOTE(openai/content-parts): tokenmill serves text-only models. Like vLLM on a text-only model, a
// non-text content part is a semantic 400 (the body is well-formed; the model cannot take it), while
// non-text parts of a system message are ignored (vLLM only warns there). Part types vLLM knows as
// multimodal get a "text only" message; anything else is vLLM's "Unknown part type".
import { InvalidArgumentError } from '../engine/errors.js';

const MULTIMODAL_PARTS = new Set([
  'image_url', 'image_pil', 'image_embeds', 'input_image', 'audio_url', 'input_audio', 'audio_embeds', 'video_url', 'file',
]);

interface MessageWithParts {
  role: string;
  content?: string | readonly { type: string }[] | null;
}

/** Throws a 400 (param `messages`) for the first non-text part outside system messages. */
export function rejectNonTextParts(messages: readonly MessageWithParts[]): void {
  messages.forEach((m, i) => {
    if (!Array.isArray(m.content) || m.role === 'system') return;
    const part = m.content.find((p) => p.type !== 'text');
    if (!part) return;
    const message = MULTIMODAL_PARTS.has(part.type)
      ? `messages[${i}]: content parts of type '${part.type}' are not supported; this model accepts text only.`
      : `messages[${i}]: Unknown part type: ${part.type}`;
    throw new InvalidArgumentError(message, 'invalid_argument', 400, { param: 'messages' });
  });
}
