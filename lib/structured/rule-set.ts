// NOTE(structured/rule-set): the rules of one grammar being built. Names are sanitised to GBNF's
// [a-zA-Z0-9_-]+; asking for a taken name with the same body reuses it, with another body gets a
// numbered name. Fixed names (the shared JSON rules) are only given out through addFixed, so a user's
// $defs/string can never be mistaken for the built-in `string`. `root` is always written first.

export function ruleName(raw: string): string {
  const cleaned = raw.replace(/[^a-zA-Z0-9_-]+/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '');
  return cleaned.length > 0 ? cleaned : 'rule';
}

export class RuleSet {
  private readonly bodies = new Map<string, string | undefined>();

  constructor(private readonly fixedNames: ReadonlySet<string> = new Set()) {}

  /** Adds `name ::= body` and returns the name it got. */
  add(name: string, body: string): string {
    const base = ruleName(name);
    for (let i = this.fixedNames.has(base) ? 1 : 0; ; i++) {
      const candidate = i === 0 ? base : `${base}-${i}`;
      if (!this.bodies.has(candidate)) {
        this.bodies.set(candidate, body);
        return candidate;
      }
      if (this.bodies.get(candidate) === body) return candidate;
    }
  }

  /** Adds a rule under exactly one of the fixed names. pre: `name` is fixed and not added with another body. */
  addFixed(name: string, body: string): string {
    if (!this.fixedNames.has(name)) throw new Error(`rule-set: ${name} is not a fixed name`);
    const known = this.bodies.get(name);
    if (known !== undefined && known !== body) throw new Error(`rule-set: fixed rule ${name} added twice with different bodies`);
    this.bodies.set(name, body);
    return name;
  }

  /** Takes a fresh name whose body is given later with `define` (recursive rules). */
  reserve(name: string): string {
    const base = ruleName(name);
    for (let i = this.fixedNames.has(base) ? 1 : 0; ; i++) {
      const candidate = i === 0 ? base : `${base}-${i}`;
      if (!this.bodies.has(candidate)) {
        this.bodies.set(candidate, undefined);
        return candidate;
      }
    }
  }

  // pre: `name` came from reserve() and is not defined yet.
  define(name: string, body: string): void {
    if (!this.bodies.has(name) || this.bodies.get(name) !== undefined) throw new Error(`rule-set: ${name} was not reserved`);
    this.bodies.set(name, body);
  }

  has(name: string): boolean {
    return this.bodies.has(name);
  }

  /** The grammar text, `root` first. pre: a root rule exists and every reserved rule was defined. */
  toText(): string {
    const root = this.bodies.get('root');
    if (root === undefined) throw new Error('rule-set: no root rule');
    const lines = [`root ::= ${root}`];
    for (const [name, body] of this.bodies) {
      if (name === 'root') continue;
      if (body === undefined) throw new Error(`rule-set: rule ${name} was reserved but never defined`);
      lines.push(`${name} ::= ${body}`);
    }
    return lines.join('\n') + '\n';
  }
}
