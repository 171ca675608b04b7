// NOTE(structured/gbnf-text): the only place that spells GBNF tokens. Everything emitted stays inside the
// dialect the native grammar engine reads (llama.cpp's): "literals" with \n \r \t \\ \" \xHH \uHHHH,
// [classes] where ] - ^ \ " are always escaped (\] \x2D \x5E \\ \"), `.`, ( groups ), postfix * + ? {m}
// {m,} {m,n}. Control and invisible characters are written as escapes so grammars stay readable;
// other characters are written as themselves (UTF-8).
import { complement, has, MAX_CODE_POINT, onlyMember, type CharSet } from './char-set.js';

function hex(cp: number, width: number): string {
  return cp.toString(16).toUpperCase().padStart(width, '0');
}

// A code point that must not appear raw: C0/C1 controls, DEL, line/paragraph separators, BOM, surrogates.
function needsEscape(cp: number): boolean {
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp === 0x2028 || cp === 0x2029 || cp === 0xfeff || (cp >= 0xd800 && cp <= 0xdfff);
}

function escapeCodePoint(cp: number): string {
  if (cp === 0x0a) return '\\n';
  if (cp === 0x0d) return '\\r';
  if (cp === 0x09) return '\\t';
  if (cp <= 0xff) return `\\x${hex(cp, 2)}`;
  return `\\u${hex(cp, 4)}`;
}

/** A GBNF string literal matching exactly `text` (by code points). */
export function gbnfLiteral(text: string): string {
  let out = '"';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (needsEscape(cp)) out += escapeCodePoint(cp);
    else out += ch;
  }
  return out + '"';
}

function classChar(cp: number): string {
  if (cp === 0x5c) return '\\\\';
  if (cp === 0x5d) return '\\]';
  if (cp === 0x22) return '\\"';
  if (cp === 0x2d) return '\\x2D';
  if (cp === 0x5e) return '\\x5E';
  if (needsEscape(cp)) return escapeCodePoint(cp);
  return String.fromCodePoint(cp);
}

function classBody(set: CharSet): string {
  let out = '';
  for (const [lo, hi] of set) {
    out += classChar(lo);
    if (hi > lo) out += (hi > lo + 1 ? '-' : '') + classChar(hi);
  }
  return out;
}

/** One code point from a non-empty set: a literal, `.`, [ranges] or [^ranges] (whichever is exact and shorter). */
export function gbnfCharSet(set: CharSet): string {
  if (set.length === 0) throw new Error('gbnfCharSet: empty set has no GBNF form');
  const only = onlyMember(set);
  if (only !== undefined) return gbnfLiteral(String.fromCodePoint(only));
  const rest = complement(set);
  if (rest.length === 0) return '.';
  // Negate when the set reaches the top of Unicode (its positive form would have to spell U+10FFFF) or is bigger.
  if (has(set, MAX_CODE_POINT) || rest.length < set.length) return `[^${classBody(rest)}]`;
  return `[${classBody(set)}]`;
}

/**
 * Whether `expr` is one GBNF primary (a name, literal, class, `.` or a whole parenthesised group) that a
 * postfix operator can follow; anything else must be wrapped before repeating it.
 */
export function isPrimary(expr: string): boolean {
  if (/^[a-zA-Z0-9_-]+$/.test(expr) || expr === '.') return true;
  const open = expr[0];
  const close = open === '"' ? '"' : open === '[' ? ']' : open === '(' ? ')' : undefined;
  if (!close) return false;
  let depth = 0;
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i];
    if (c === '\\') { i++; continue; }
    if (open === '(') {
      if (c === '"' || c === '[') { i = skipToken(expr, i); continue; }
      if (c === '(') depth++;
      else if (c === ')') { depth--; if (depth === 0) return i === expr.length - 1; }
    } else if (i > 0 && c === close) return i === expr.length - 1;
  }
  return false;
}

function skipToken(expr: string, i: number): number {
  const close = expr[i] === '"' ? '"' : ']';
  for (let j = i + 1; j < expr.length; j++) {
    if (expr[j] === '\\') j++;
    else if (expr[j] === close) return j;
  }
  return expr.length;
}

/** `expr` ready for a postfix operator: itself if primary, else `( expr )`. */
export function primary(expr: string): string {
  return isPrimary(expr) ? expr : `( ${expr} )`;
}

/** `expr` as one alternative-safe unit inside a sequence: wrapped when it has a top-level `|`. */
export function seqItem(expr: string): string {
  return hasTopLevelBar(expr) ? `( ${expr} )` : expr;
}

function hasTopLevelBar(expr: string): boolean {
  let depth = 0;
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i];
    if (c === '"' || c === '[') i = skipToken(expr, i);
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return true;
  }
  return false;
}

/**
 * `expr` repeated min..max times (max undefined = unbounded), or null for exactly zero times.
 * pre: 0 <= min, min <= max when max is given.
 */
export function gbnfRepeat(expr: string, min: number, max: number | undefined): string | null {
  if (!(min >= 0 && (max === undefined || max >= min))) throw new Error(`gbnfRepeat: bad bounds {${min},${max}}`);
  if (max === 0) return null;
  if (min === 1 && max === 1) return expr;
  const p = primary(expr);
  if (max === undefined) return min === 0 ? `${p}*` : min === 1 ? `${p}+` : `${p}{${min},}`;
  if (min === 0 && max === 1) return `${p}?`;
  if (min === max) return `${p}{${min}}`;
  return `${p}{${min},${max}}`;
}

/** Alternatives joined with ` | `; null entries (empty matches) make the whole group optional. */
export function gbnfAlternatives(options: (string | null)[]): string | null {
  const present = [...new Set(options.filter((o): o is string => o !== null))];
  if (present.length === 0) return null;
  const body = present.join(' | ');
  if (present.length === options.length) return body;
  return `${primary(body)}?`;
}

/** A sequence of parts; null parts (empty matches) are dropped, adjacent literals joined; null when nothing is left. */
export function gbnfSequence(parts: (string | null)[]): string | null {
  const out: string[] = [];
  for (const part of parts) {
    if (part === null) continue;
    const prev = out[out.length - 1];
    if (prev !== undefined && isLiteral(prev) && isLiteral(part)) out[out.length - 1] = prev.slice(0, -1) + part.slice(1);
    else out.push(seqItem(part));
  }
  return out.length === 0 ? null : out.join(' ');
}

function isLiteral(expr: string): boolean {
  return expr.startsWith('"') && isPrimary(expr);
}
