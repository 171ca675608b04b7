// NOTE(chat/untagged-tool-call): the hermes family's untagged form (docs/chat.md#untagged-tool-calls).
// Qwen2.5 models, the small Coder ones above all, answer a request that offers tools with a bare
// `{"name": …, "arguments": {…}}` instead of wrapping it in `<tool_call>…</tool_call>`; llama.cpp's Hermes 2 Pro
// parser accepts the bare object too. We accept it only in its strict shape, so that ordinary JSON answers
// stay content: the whole output (surrounding whitespace aside) is one such object or a JSON array of them,
// each with exactly the keys `name` (one of the offered tools) and `arguments` (an object), optionally inside
// one ```json code fence.
import { scanValueEnd } from './json-scan.js';

export interface UntaggedCall { name: string; arguments: string }

// llama.cpp also takes the object inside a code fence; Qwen2.5-Coder writes one now and then.
const FENCE_OPEN = /^```(?:json)?[ \t]*\n/;
const FENCE_OPENINGS = ['```json\n', '```\n'];

/** False once output that begins like this can no longer be an untagged call; while true it must be held. */
export function couldBeUntagged(text: string): boolean {
  const t = text.trimStart();
  if (FENCE_OPENINGS.some((f) => f.startsWith(t))) return true;
  const fence = FENCE_OPEN.exec(t);
  const body = (fence ? t.slice(fence[0].length) : t).trimStart();
  if (body === '') return true;
  if (body[0] !== '{' && body[0] !== '[') return false;
  const end = scanValueEnd(body, 0);
  if (end < 0) return true;
  const rest = body.slice(end).trim();
  return fence ? '```'.startsWith(rest) : rest === '';
}

/** The calls of a whole output in the strict untagged shape, or null when it is not one. */
export function parseUntagged(text: string, offered: ReadonlySet<string>): UntaggedCall[] | null {
  let json = text.trim();
  const fence = FENCE_OPEN.exec(json);
  if (fence) {
    if (!json.endsWith('```') || json.length < fence[0].length + 3) return null;
    json = json.slice(fence[0].length, -3);
  }
  let value: unknown;
  try { value = JSON.parse(json); } catch { return null; }
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return null;
  const calls: UntaggedCall[] = [];
  for (const item of items) {
    if (!isPlainObject(item)) return null;
    const keys = Object.keys(item).sort();
    if (keys.length !== 2 || keys[0] !== 'arguments' || keys[1] !== 'name') return null;
    const { name, arguments: args } = item as { name: unknown; arguments: unknown };
    if (typeof name !== 'string' || !offered.has(name) || !isPlainObject(args)) return null;
    calls.push({ name, arguments: JSON.stringify(args) });
  }
  return calls;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
