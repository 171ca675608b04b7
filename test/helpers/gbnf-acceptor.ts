// NOTE(test/gbnf-acceptor): a small reference for the GBNF that lib/structured emits, used only by
// tests until the native grammar engine exists. The parser is strict about the dialect the task names
// (llama.cpp's: newline ends a rule outside parentheses, escapes \n \r \t \\ \" \] \- \xHH \uHHHH), so
// grammars that pass here use nothing the native parser lacks. Matching returns every end position an
// expression can reach from a start position (sets, memoised per rule and position), so it is exact
// for any grammar without left recursion, which it reports instead of looping.

type Expr =
  | { t: 'alt'; options: Expr[] }
  | { t: 'seq'; items: Expr[] }
  | { t: 'lit'; cps: number[] }
  | { t: 'class'; negated: boolean; ranges: [number, number][] }
  | { t: 'any' }
  | { t: 'ref'; name: string }
  | { t: 'rep'; e: Expr; min: number; max: number | undefined };

export class GbnfSyntaxError extends Error {}

export interface Acceptor {
  readonly rules: ReadonlyMap<string, unknown>;
  accepts(text: string): boolean;
}

export function compileGbnf(grammar: string): Acceptor {
  const rules = new GbnfParser(grammar).parse();
  return {
    rules,
    accepts(text: string): boolean {
      const cps = [...text].map((c) => c.codePointAt(0)!);
      return new Matcher(rules, cps).ends({ t: 'ref', name: 'root' }, 0).has(cps.length);
    },
  };
}

class GbnfParser {
  private readonly s: string[];
  private i = 0;
  constructor(text: string) {
    this.s = [...text];
  }

  private fail(what: string): never {
    const line = this.s.slice(0, this.i).filter((c) => c === '\n').length + 1;
    throw new GbnfSyntaxError(`gbnf: ${what} at line ${line} (offset ${this.i}): …${this.s.slice(this.i, this.i + 30).join('')}`);
  }

  private space(nested: boolean): void {
    for (;;) {
      const c = this.s[this.i];
      if (c === ' ' || c === '\t' || (nested && (c === '\n' || c === '\r'))) this.i++;
      else if (c === '#') while (this.i < this.s.length && this.s[this.i] !== '\n') this.i++;
      else return;
    }
  }

  parse(): Map<string, Expr> {
    const rules = new Map<string, Expr>();
    this.space(true);
    while (this.i < this.s.length) {
      const name = this.name();
      if (!name) this.fail('expected a rule name');
      this.space(false);
      if (this.s.slice(this.i, this.i + 3).join('') !== '::=') this.fail('expected ::=');
      this.i += 3;
      this.space(true);
      if (rules.has(name)) this.fail(`rule ${name} defined twice`);
      rules.set(name, this.alternatives(false));
      const c = this.s[this.i];
      if (c === '\r') this.i++;
      if (this.s[this.i] === '\n') this.i++;
      else if (this.i < this.s.length) this.fail('expected newline or end after rule');
      this.space(true);
    }
    if (!rules.has('root')) throw new GbnfSyntaxError('gbnf: no root rule');
    const check = (e: Expr): void => {
      if (e.t === 'ref' && !rules.has(e.name)) throw new GbnfSyntaxError(`gbnf: undefined rule ${e.name}`);
      if (e.t === 'alt') e.options.forEach(check);
      if (e.t === 'seq') e.items.forEach(check);
      if (e.t === 'rep') check(e.e);
    };
    rules.forEach(check);
    return rules;
  }

  private name(): string {
    let out = '';
    while (this.i < this.s.length && /[a-zA-Z0-9_-]/.test(this.s[this.i]!)) out += this.s[this.i++];
    return out;
  }

  private alternatives(nested: boolean): Expr {
    const options = [this.sequence(nested)];
    while (this.s[this.i] === '|') {
      this.i++;
      this.space(true);
      options.push(this.sequence(nested));
    }
    return options.length === 1 ? options[0]! : { t: 'alt', options };
  }

  private sequence(nested: boolean): Expr {
    const items: Expr[] = [];
    for (;;) {
      const c = this.s[this.i];
      let e: Expr;
      if (c === '"') e = { t: 'lit', cps: this.literal() };
      else if (c === '[') e = this.charClass();
      else if (c === '.') { this.i++; e = { t: 'any' }; }
      else if (c === '(') {
        this.i++;
        this.space(true);
        e = this.alternatives(true);
        if (this.s[this.i] !== ')') this.fail('expected )');
        this.i++;
      } else if (c !== undefined && /[a-zA-Z0-9_-]/.test(c)) e = { t: 'ref', name: this.name() };
      else break;
      this.space(nested);
      const p = this.s[this.i];
      if (p === '*' || p === '+' || p === '?') {
        this.i++;
        e = { t: 'rep', e, min: p === '+' ? 1 : 0, max: p === '?' ? 1 : undefined };
        this.space(nested);
      } else if (p === '{') {
        const m = /^\{\s*(\d+)\s*(,\s*(\d*)\s*)?\}/.exec(this.s.slice(this.i, this.i + 40).join(''));
        if (!m) this.fail('bad repetition');
        const min = Number(m[1]);
        const max = m[2] === undefined ? min : m[3] === '' ? undefined : Number(m[3]);
        if (max !== undefined && max < min) this.fail('repetition bounds out of order');
        this.i += m[0].length;
        e = { t: 'rep', e, min, max };
        this.space(nested);
      }
      const after = this.s[this.i];
      if (after === '*' || after === '+' || after === '?' || after === '{') this.fail('stacked postfix operators');
      items.push(e);
    }
    if (items.length === 0) this.fail('empty sequence');
    return items.length === 1 ? items[0]! : { t: 'seq', items };
  }

  private escapedChar(inClass: boolean): number {
    const c = this.s[this.i];
    if (c === undefined) this.fail('unterminated');
    if (c !== '\\') {
      if (c === '\n' || c === '\r') this.fail('raw newline in literal or class');
      this.i++;
      return c.codePointAt(0)!;
    }
    const e = this.s[this.i + 1];
    this.i += 2;
    const simple: Record<string, number> = { n: 10, r: 13, t: 9, '\\': 92, '"': 34, ']': 93, '-': 45 };
    if (e !== undefined && simple[e] !== undefined) {
      if (!inClass && (e === ']' || e === '-')) this.fail(`\\${e} outside a class`);
      return simple[e]!;
    }
    const width = e === 'x' ? 2 : e === 'u' ? 4 : 0;
    if (width === 0) this.fail(`unknown escape \\${e}`);
    const digits = this.s.slice(this.i, this.i + width).join('');
    if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(digits)) this.fail('bad hex escape');
    this.i += width;
    return parseInt(digits, 16);
  }

  private literal(): number[] {
    this.i++;
    const cps: number[] = [];
    while (this.s[this.i] !== '"') cps.push(this.escapedChar(false));
    this.i++;
    return cps;
  }

  private charClass(): Expr {
    this.i++;
    let negated = false;
    if (this.s[this.i] === '^') { negated = true; this.i++; }
    const ranges: [number, number][] = [];
    while (this.s[this.i] !== ']') {
      const lo = this.escapedChar(true);
      if (this.s[this.i] === '-' && this.s[this.i + 1] !== ']') {
        this.i++;
        const hi = this.escapedChar(true);
        if (hi < lo) this.fail('class range out of order');
        ranges.push([lo, hi]);
      } else ranges.push([lo, lo]);
    }
    this.i++;
    if (ranges.length === 0) this.fail('empty class');
    return { t: 'class', negated, ranges };
  }
}

class Matcher {
  private readonly memo = new Map<string, Set<number> | 'busy'>();
  constructor(private readonly rules: Map<string, Expr>, private readonly cps: number[]) {}

  ends(e: Expr, pos: number): Set<number> {
    switch (e.t) {
      case 'lit': {
        for (let k = 0; k < e.cps.length; k++) if (this.cps[pos + k] !== e.cps[k]) return new Set();
        return new Set([pos + e.cps.length]);
      }
      case 'any':
        return pos < this.cps.length ? new Set([pos + 1]) : new Set();
      case 'class': {
        const cp = this.cps[pos];
        if (cp === undefined) return new Set();
        const inside = e.ranges.some(([lo, hi]) => cp >= lo && cp <= hi);
        return inside !== e.negated ? new Set([pos + 1]) : new Set();
      }
      case 'alt': {
        const out = new Set<number>();
        for (const o of e.options) for (const p of this.ends(o, pos)) out.add(p);
        return out;
      }
      case 'seq': {
        let cur = new Set([pos]);
        for (const item of e.items) {
          const next = new Set<number>();
          for (const p of cur) for (const q of this.ends(item, p)) next.add(q);
          cur = next;
          if (cur.size === 0) break;
        }
        return cur;
      }
      case 'rep': {
        const out = new Set<number>();
        let cur = new Set([pos]);
        if (e.min === 0) out.add(pos);
        for (let k = 1; e.max === undefined || k <= e.max; k++) {
          const next = new Set<number>();
          for (const p of cur) for (const q of this.ends(e.e, p)) next.add(q);
          if (k >= e.min) {
            const fresh = [...next].filter((q) => !out.has(q));
            fresh.forEach((q) => out.add(q));
            if (fresh.length === 0) break; // every further round only revisits known ends
            cur = new Set(fresh);
          } else cur = next;
          if (cur.size === 0) break;
        }
        return out;
      }
      case 'ref': {
        const key = `${e.name}@${pos}`;
        const known = this.memo.get(key);
        if (known === 'busy') throw new Error(`gbnf: left recursion through ${e.name} at ${pos}`);
        if (known) return known;
        this.memo.set(key, 'busy');
        const result = this.ends(this.rules.get(e.name)!, pos);
        this.memo.set(key, result);
        return result;
      }
    }
  }
}
