// NOTE(chat/json-scan): finds where a JSON value that starts at `i` ends, on text that may still be
// growing (streamed model output). Strings with escapes and nested brackets are honoured; the result
// is the index just past the value, or -1 while the value is incomplete. It does not validate (the
// caller JSON.parses complete values); it only has to be right on well-formed input.

/** Index past the JSON value starting at text[i] (after whitespace), or -1 if not complete yet. */
export function scanValueEnd(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i]!)) i++;
  if (i >= text.length) return -1;
  const c = text[i]!;
  if (c === '"') return scanStringEnd(text, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const ch = text[j]!;
      if (ch === '"') {
        const end = scanStringEnd(text, j);
        if (end < 0) return -1;
        j = end - 1;
      } else if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }
  // A literal or number ends at a delimiter; at the end of the text it may still grow.
  for (let j = i; j < text.length; j++) if (/[\s,}\]]/.test(text[j]!)) return j;
  return -1;
}

function scanStringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return -1;
}

/** Length of the longest suffix of `text` that is a proper prefix of `marker` (text to hold back). */
export function partialMarkerSuffix(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
    if (marker.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}
