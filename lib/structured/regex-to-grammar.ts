// NOTE(structured/regex-to-grammar): a parsed regex becomes one GBNF expression, inline (no helper rules),
// so it can sit inside a bigger grammar. Two spellings: raw text (structured_outputs.regex, whitespace
// patterns) and JSON-string content (a schema `pattern`: the regex describes the decoded string, the
// grammar must match its JSON encoding, so `"`, `\` and control characters become their escapes).
import { charSet, complement, has, intersect, isEmpty, onlyMember, type CharSet } from './char-set.js';
import { gbnfAlternatives, gbnfCharSet, gbnfLiteral, gbnfRepeat, gbnfSequence } from './gbnf-text.js';
import { parseRegex, type RegexNode } from './regex-parse.js';
import { RuleSet } from './rule-set.js';

export type RegexSpelling = 'raw' | 'json-string';

/** A grammar whose root matches exactly the strings the (anchored) pattern matches. */
export function regexToGrammar(pattern: string): string {
  const rules = new RuleSet();
  rules.add('root', regexToExpression(pattern, 'raw') ?? '""');
  return rules.toText();
}

/** The pattern as one GBNF expression, or null when it only matches the empty string. */
export function regexToExpression(pattern: string, spelling: RegexSpelling): string | null {
  return emit(parseRegex(pattern), spelling);
}

function emit(node: RegexNode, spelling: RegexSpelling): string | null {
  switch (node.kind) {
    case 'chars':
      return spelling === 'raw' ? gbnfCharSet(node.set) : jsonChars(node.set);
    case 'alt':
      return gbnfAlternatives(node.options.map((o) => emit(o, spelling)));
    case 'repeat': {
      const inner = emit(node.node, spelling);
      return inner === null ? null : gbnfRepeat(inner, node.min, node.max);
    }
    case 'seq': {
      // Runs of single characters become one literal, which is what a reader expects to see.
      const parts: (string | null)[] = [];
      let run = '';
      const flush = (): void => {
        if (run) parts.push(spelling === 'raw' ? gbnfLiteral(run) : gbnfLiteral(jsonEncode(run)));
        run = '';
      };
      for (const item of node.items) {
        const cp = item.kind === 'chars' ? onlyMember(item.set) : undefined;
        if (cp !== undefined) run += String.fromCodePoint(cp);
        else { flush(); parts.push(emit(item, spelling)); }
      }
      flush();
      return gbnfSequence(parts);
    }
  }
}

function jsonEncode(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

// Characters a JSON string may hold raw: everything but `"`, `\` and C0 controls.
const JSON_RAW: CharSet = complement(charSet([[0x00, 0x1f], [0x22, 0x22], [0x5c, 0x5c]]));
const SHORT_ESCAPES: [number, string][] = [[0x22, '\\"'], [0x5c, '\\\\'], [0x08, '\\b'], [0x0c, '\\f'], [0x0a, '\\n'], [0x0d, '\\r'], [0x09, '\\t']];

// One character of the set, spelled as JSON string content.
function jsonChars(set: CharSet): string {
  const options: string[] = [];
  const raw = intersect(set, JSON_RAW);
  if (!isEmpty(raw)) options.push(gbnfCharSet(raw));
  for (const [cp, esc] of SHORT_ESCAPES) if (has(set, cp)) options.push(gbnfLiteral(esc));
  // Other C0 controls only have the \u00XX form (JSON.stringify writes lowercase hex; both are accepted).
  const shortCps = new Set(SHORT_ESCAPES.map(([cp]) => cp));
  for (let hi = 0; hi <= 1; hi++) {
    const lows: [number, number][] = [];
    for (let lo = 0; lo < 16; lo++) {
      const cp = hi * 16 + lo;
      if (has(set, cp) && !shortCps.has(cp)) lows.push([lo, lo]);
    }
    if (lows.length === 0) continue;
    options.push(`${gbnfLiteral(`\\u00${hi}`)} ${gbnfCharSet(hexDigits(charSet(lows)))}`);
  }
  return options.length === 1 ? options[0]! : `( ${options.join(' | ')} )`;
}

// The characters that spell hex digit values in `values` (0..15), in either case.
function hexDigits(values: CharSet): CharSet {
  const out: [number, number][] = [];
  for (const [lo, hi] of values) {
    for (let v = lo; v <= hi; v++) {
      const ch = v.toString(16);
      out.push([ch.codePointAt(0)!, ch.codePointAt(0)!]);
      const upper = ch.toUpperCase();
      if (upper !== ch) out.push([upper.codePointAt(0)!, upper.codePointAt(0)!]);
    }
  }
  return charSet(out);
}
