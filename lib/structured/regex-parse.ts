// NOTE(structured/regex-parse): parses the ECMAScript regex subset that can become a grammar (a regular
// language): literals, escapes, classes, `.`, groups, alternation and greedy quantifiers. A grammar
// matches the whole output, so the pattern is taken as anchored; `^`/`$` are accepted only where they
// say nothing more (start/end of a top-level alternative). Everything that needs lookbehind/ahead or
// memory (assertions, backreferences) is rejected with its 0-based position. Code points, not UTF-16
// units, are the characters.
import {
  charSet, complement, DIGIT, DOT, single, SPACE, union, WORD, type CharSet,
} from './char-set.js';
import { structuredError } from './error.js';

export type RegexNode =
  | { kind: 'chars'; set: CharSet }
  | { kind: 'seq'; items: RegexNode[] }
  | { kind: 'alt'; options: RegexNode[] }
  | { kind: 'repeat'; node: RegexNode; min: number; max: number | undefined };

const ESCAPE_CLASSES: Record<string, CharSet> = {
  d: DIGIT, D: complement(DIGIT), w: WORD, W: complement(WORD), s: SPACE, S: complement(SPACE),
};

const CONTROL_ESCAPES: Record<string, number> = { n: 0x0a, r: 0x0d, t: 0x09, f: 0x0c, v: 0x0b };

// Bounded so a pattern like a{100000} cannot make an enormous grammar or matcher.
const MAX_REPEAT = 10_000;

export function parseRegex(pattern: string): RegexNode {
  return new RegexParser(pattern).parse();
}

class RegexParser {
  private readonly cps: number[];
  private i = 0;

  constructor(private readonly pattern: string) {
    this.cps = [...pattern].map((c) => c.codePointAt(0)!);
  }

  parse(): RegexNode {
    const node = this.parseAlternation(0);
    if (this.i < this.cps.length) this.fail(`unmatched ')'`);
    return node;
  }

  private fail(what: string, at = this.i): never {
    throw structuredError(`Invalid regex ${JSON.stringify(this.pattern)}: ${what} at position ${at}`);
  }

  private peek(offset = 0): string | undefined {
    const cp = this.cps[this.i + offset];
    return cp === undefined ? undefined : String.fromCodePoint(cp);
  }

  private parseAlternation(depth: number): RegexNode {
    const options = [this.parseSequence(depth)];
    while (this.peek() === '|') {
      this.i++;
      options.push(this.parseSequence(depth));
    }
    return options.length === 1 ? options[0]! : { kind: 'alt', options };
  }

  private parseSequence(depth: number): RegexNode {
    const items: RegexNode[] = [];
    const start = this.i;
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === '|' || c === ')') break;
      if (c === '^') {
        if (depth !== 0 || this.i !== start) this.fail(`'^' is only supported at the start of the pattern`);
        this.i++;
        continue;
      }
      if (c === '$') {
        const next = this.peek(1);
        if (depth !== 0 || (next !== undefined && next !== '|')) this.fail(`'$' is only supported at the end of the pattern`);
        this.i++;
        continue;
      }
      const atomAt = this.i;
      const atom = this.parseAtom(depth);
      items.push(this.parseQuantifiers(atom, atomAt));
    }
    return items.length === 1 ? items[0]! : { kind: 'seq', items };
  }

  private parseQuantifiers(atom: RegexNode, atomAt: number): RegexNode {
    const q = this.readQuantifier();
    if (!q) return atom;
    if (this.peek() === '?') this.i++; // lazy: same language, so treated as greedy
    if (this.readQuantifier(true)) this.fail('nothing to repeat', atomAt);
    return { kind: 'repeat', node: atom, min: q.min, max: q.max };
  }

  // Reads * + ? {m} {m,} {m,n} at the cursor; a `{` that is no quantifier is left alone (a literal).
  private readQuantifier(probeOnly = false): { min: number; max: number | undefined } | undefined {
    const c = this.peek();
    if (c === '*' || c === '+' || c === '?') {
      if (!probeOnly) this.i++;
      return c === '*' ? { min: 0, max: undefined } : c === '+' ? { min: 1, max: undefined } : { min: 0, max: 1 };
    }
    if (c !== '{') return undefined;
    const rest = this.cps.slice(this.i).map((cp) => String.fromCodePoint(cp)).join('');
    const m = /^\{(\d+)(,(\d*))?\}/.exec(rest);
    if (!m) return undefined;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? undefined : Number(m[3]);
    if (max !== undefined && max < min) this.fail('numbers out of order in {} quantifier');
    if (min > MAX_REPEAT || (max ?? 0) > MAX_REPEAT) this.fail(`repeat count above ${MAX_REPEAT}`);
    if (!probeOnly) this.i += [...m[0]].length;
    return { min, max };
  }

  private parseAtom(depth: number): RegexNode {
    const at = this.i;
    const c = this.peek()!;
    if (c === '*' || c === '+' || c === '?' || (c === '{' && this.readQuantifier(true))) this.fail('nothing to repeat');
    if (c === '(') return this.parseGroup(depth);
    if (c === '[') return { kind: 'chars', set: this.parseClass() };
    if (c === '.') { this.i++; return { kind: 'chars', set: DOT }; }
    if (c === '\\') return { kind: 'chars', set: this.parseEscape(false) };
    this.i++;
    return { kind: 'chars', set: single(this.cps[at]!) };
  }

  private parseGroup(depth: number): RegexNode {
    const at = this.i;
    this.i++;
    if (this.peek() === '?') {
      const a = this.peek(1);
      const b = this.peek(2);
      if (a === ':') this.i += 2;
      else if (a === '=' || a === '!' || (a === '<' && (b === '=' || b === '!'))) this.fail('lookaround assertions are not supported', at);
      else if (a === '<') {
        const close = this.cps.indexOf(0x3e, this.i);
        if (close < 0) this.fail('unterminated group name', at);
        this.i = close + 1;
      } else this.fail('unsupported group syntax', at);
    }
    const node = this.parseAlternation(depth + 1);
    if (this.peek() !== ')') this.fail(`unterminated group`, at);
    this.i++;
    return node;
  }

  // Reads one escape after `\`; inClass changes \b (backspace) and \- (a literal minus).
  private parseEscape(inClass: boolean): CharSet {
    const at = this.i;
    this.i++;
    const c = this.peek();
    if (c === undefined) this.fail('\\ at end of pattern', at);
    this.i++;
    const cls = ESCAPE_CLASSES[c];
    if (cls) return cls;
    const ctl = CONTROL_ESCAPES[c];
    if (ctl !== undefined) return single(ctl);
    if (c === 'b' && inClass) return single(0x08);
    if (c === 'b' || c === 'B') this.fail('word boundary assertions are not supported', at);
    if (/[1-9]/.test(c)) this.fail('backreferences are not supported', at);
    if (c === 'k' && this.peek() === '<') this.fail('backreferences are not supported', at);
    if (c === '0') {
      if (/[0-9]/.test(this.peek() ?? '')) this.fail('octal escapes are not supported', at);
      return single(0);
    }
    if (c === 'x') return single(this.readHex(2, at));
    if (c === 'u') {
      if (this.peek() === '{') {
        const close = this.cps.indexOf(0x7d, this.i);
        const digits = close < 0 ? '' : this.cps.slice(this.i + 1, close).map((d) => String.fromCodePoint(d)).join('');
        if (!/^[0-9a-fA-F]{1,6}$/.test(digits) || parseInt(digits, 16) > 0x10ffff) this.fail('bad \\u{…} escape', at);
        this.i = close + 1;
        return single(parseInt(digits, 16));
      }
      return single(this.readHex(4, at));
    }
    if (c === 'c') {
      const letter = this.peek();
      if (letter === undefined || !/[a-zA-Z]/.test(letter)) this.fail('bad \\c escape', at);
      this.i++;
      return single(letter.codePointAt(0)! % 32);
    }
    if (c === 'p' || c === 'P') this.fail('unicode property escapes are not supported', at);
    return single(c.codePointAt(0)!); // identity escape: \. \* \/ \- …
  }

  private readHex(n: number, at: number): number {
    const digits = this.cps.slice(this.i, this.i + n).map((d) => String.fromCodePoint(d)).join('');
    if (digits.length !== n || !/^[0-9a-fA-F]+$/.test(digits)) this.fail(`bad hex escape`, at);
    this.i += n;
    return parseInt(digits, 16);
  }

  private parseClass(): CharSet {
    const at = this.i;
    this.i++;
    let negated = false;
    if (this.peek() === '^') { negated = true; this.i++; }
    const parts: CharSet[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined) this.fail('unterminated character class', at);
      if (c === ']') { this.i++; break; }
      const loAt = this.i;
      const lo = this.classAtom();
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined) {
        this.i++;
        const hi = this.classAtom();
        const a = lo.length === 1 && lo[0]![0] === lo[0]![1] ? lo[0]![0] : undefined;
        const b = hi.length === 1 && hi[0]![0] === hi[0]![1] ? hi[0]![0] : undefined;
        if (a === undefined || b === undefined) this.fail('a class escape cannot bound a range', loAt);
        if (a > b) this.fail('range out of order in character class', loAt);
        parts.push([[a, b]]);
      } else parts.push(lo);
    }
    const set = union(...parts);
    const result = negated ? complement(set) : set;
    if (result.length === 0) this.fail('character class matches nothing', at);
    return charSet(result);
  }

  private classAtom(): CharSet {
    if (this.peek() === '\\') return this.parseEscape(true);
    return single(this.cps[this.i++]!);
  }
}
