// regexToGrammar: the emitted GBNF, and agreement with JS RegExp (anchored) on random and near-miss strings
// through the reference acceptor.
import { describe, expect, it } from 'vitest';
import { regexToExpression, regexToGrammar } from '../../lib/structured/regex-to-grammar.js';
import { compileGbnf } from '../helpers/gbnf-acceptor.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

// Strings over `alphabet`, plus single-edit mutations of the positive examples.
function samples(alphabet: string[], positives: string[], n: number, seed: number): string[] {
  const r = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  const out = [...positives];
  while (out.length < n) {
    if (positives.length > 0 && r() < 0.5) {
      const chars = [...pick(positives)];
      const at = Math.floor(r() * (chars.length + 1));
      const op = r();
      if (op < 0.33) chars.splice(at, 1);
      else if (op < 0.66) chars.splice(at, 0, pick(alphabet));
      else chars.splice(at, 1, pick(alphabet));
      out.push(chars.join(''));
    } else {
      const len = Math.floor(r() * 10);
      out.push(Array.from({ length: len }, () => pick(alphabet)).join(''));
    }
  }
  return out;
}

const CASES: { pattern: string; alphabet: string; positives: string[] }[] = [
  { pattern: 'abc', alphabet: 'abcd', positives: ['abc'] },
  { pattern: '^a(b|c)*d$', alphabet: 'abcd', positives: ['ad', 'abcbd', 'acd'] },
  { pattern: '\\d{3}-\\d{4}', alphabet: '0123456789-a', positives: ['555-1234', '000-0000'] },
  { pattern: '[A-Z][a-z]+( [A-Z][a-z]+)?', alphabet: 'AaBbZz -', positives: ['Ab', 'Abc Zz'] },
  { pattern: '(?:ab)+|c?', alphabet: 'abc', positives: ['', 'c', 'ab', 'abab'] },
  { pattern: '[^abc]x', alphabet: 'abcx1 "\\\n', positives: ['1x', ' x', '"x', '\nx'] },
  { pattern: 'a{2,4}b{2}c{1,}', alphabet: 'abc', positives: ['aabbc', 'aaaabbccc'] },
  { pattern: '\\w+@\\w+\\.(com|org)', alphabet: 'ab_1@.comrg', positives: ['a@b.com', 'a_1@bb.org'] },
  { pattern: '-?(0|[1-9]\\d*)(\\.\\d+)?', alphabet: '-0123.9', positives: ['0', '-12.5', '3.14'] },
  { pattern: '\\s*\\S+\\s*', alphabet: ' \tab\n', positives: ['a', ' ab \n', '\tb'] },
  { pattern: '.+?!', alphabet: 'a!\n ', positives: ['a!', '!!', ' a!'] },
  { pattern: '[\\]\\-^x]+', alphabet: ']-^xy\\', positives: [']', '-^x]'] },
  { pattern: '[a-c\\d]{0,3}z*', alphabet: 'abcd1z', positives: ['', 'a1z', 'zzz', 'cb9'] },
  { pattern: '(a|)(b|)c', alphabet: 'abc', positives: ['c', 'abc', 'bc', 'ac'] },
  { pattern: '\\x41\\u0042\\t\\.\\*\\/', alphabet: 'AB\t.*/x', positives: ['AB\t.*/'] },
  { pattern: '"quoted"|\\\\', alphabet: '"quoted\\', positives: ['"quoted"', '\\'] },
  { pattern: '[\\s\\S]{2}', alphabet: 'a \n"', positives: ['a\n', '  '] },
  { pattern: 'é+ü?', alphabet: 'éüa', positives: ['é', 'ééü'] },
  { pattern: 'x{2}{', alphabet: 'x{', positives: ['xx{'] },
];

describe('regexToGrammar output', () => {
  it('writes literals, classes, groups and quantifiers as GBNF', () => {
    expect(regexToGrammar('abc')).toBe('root ::= "abc"\n');
    expect(regexToGrammar('^a(b|c)*d$')).toBe('root ::= "a" ( "b" | "c" )* "d"\n');
    expect(regexToGrammar('\\d{3}-\\d{4}')).toBe('root ::= [0-9]{3} "-" [0-9]{4}\n');
    expect(regexToGrammar('[^"\\\\]+')).toBe('root ::= [^\\"\\\\]+\n');
    expect(regexToGrammar('a|b?')).toBe('root ::= "a" | "b"?\n');
    expect(regexToGrammar('(a|)c')).toBe('root ::= "a"? "c"\n');
    expect(regexToGrammar('.')).toBe('root ::= [^\\n\\r\\u2028\\u2029]\n');
    expect(regexToGrammar('[-a]')).toBe('root ::= [\\x2Da]\n');
    expect(regexToGrammar('a+?b*?')).toBe('root ::= "a"+ "b"*\n');
    expect(regexToGrammar('')).toBe('root ::= ""\n');
  });

  it('spells JSON-string content with escapes for quotes, backslashes and controls', () => {
    expect(regexToExpression('a"b', 'json-string')).toBe('"a\\\\\\"b"');
    expect(regexToExpression('[a"]', 'json-string')).toBe('( "a" | "\\\\\\"" )');
    expect(regexToExpression('\\n', 'json-string')).toBe('"\\\\n"');
  });
});

describe('regexToGrammar errors', () => {
  const bad: [string, RegExp][] = [
    ['(a)\\1', /backreferences are not supported at position 3/],
    ['a(?=b)', /lookaround assertions are not supported at position 1/],
    ['(?<!x)y', /lookaround assertions are not supported at position 0/],
    ['a\\bc', /word boundary assertions are not supported at position 1/],
    ['a^b', /'\^' is only supported at the start of the pattern at position 1/],
    ['a$b', /'\$' is only supported at the end of the pattern at position 1/],
    ['(a$)', /'\$' is only supported at the end/],
    ['*a', /nothing to repeat at position 0/],
    ['a**', /nothing to repeat at position 0/],
    ['(ab', /unterminated group at position 0/],
    ['ab)', /unmatched '\)' at position 2/],
    ['[z-a]', /range out of order/],
    ['a{3,1}', /numbers out of order/],
    ['[ab', /unterminated character class at position 0/],
  ];
  for (const [pattern, message] of bad) {
    it(`rejects ${pattern}`, () => {
      expect(() => regexToGrammar(pattern)).toThrow(message);
      try {
        regexToGrammar(pattern);
      } catch (e) {
        expect((e as { status?: number }).status).toBe(400);
      }
    });
  }
});

describe('regexToGrammar agrees with RegExp', () => {
  CASES.forEach(({ pattern, alphabet, positives }, k) => {
    it(`matches ${JSON.stringify(pattern)} like /^(?:…)$/ on 500 strings`, () => {
      const acceptor = compileGbnf(regexToGrammar(pattern));
      const js = new RegExp(`^(?:${pattern.replace(/^\^/, '').replace(/\$$/, '')})$`);
      let accepted = 0;
      for (const s of samples([...alphabet], positives, 500, 1000 + k)) {
        const want = js.test(s);
        expect(acceptor.accepts(s), `${JSON.stringify(s)}`).toBe(want);
        if (want) accepted++;
      }
      expect(accepted).toBeGreaterThanOrEqual(positives.length);
      expect(accepted).toBeLessThan(500);
    });
  });
});

describe('schema patterns match the decoded JSON string', () => {
  const cases: { pattern: string; alphabet: string[]; positives: string[] }[] = [
    { pattern: '[^"\\\\]*', alphabet: ['a', '"', '\\', '\n', '\u0001', 'é'], positives: ['', 'a\n', '\u0001é'] },
    { pattern: '"[a-z]+"', alphabet: ['a', 'z', '"', '\\'], positives: ['"a"', '"az"'] },
    { pattern: '(\\\\|\\n|\\t|\\x00|\\x1f)+x', alphabet: ['\\', '\n', '\t', '\u0000', '\u001f', '\u0010', 'x'], positives: ['\\x', '\n\t\u0000\u001fx'] },
    { pattern: '.{2,3}', alphabet: ['a', '"', '\n', '\r', '\u0002', '\\'], positives: ['a"', '\\\u0002a'] },
    { pattern: '\\s\\S', alphabet: [' ', '\n', '\t', '"', 'a', '\u000b'], positives: [' a', '\n"', '\u000b\\'] },
  ];
  cases.forEach(({ pattern, alphabet, positives }, k) => {
    it(`${JSON.stringify(pattern)} on 500 strings, JSON-encoded`, () => {
      const expr = regexToExpression(pattern, 'json-string') ?? '""';
      const acceptor = compileGbnf(`root ::= "\\"" ${expr} "\\""\n`);
      const js = new RegExp(`^(?:${pattern})$`);
      let accepted = 0;
      for (const s of samples(alphabet, positives, 500, 2000 + k)) {
        const want = js.test(s);
        expect(acceptor.accepts(JSON.stringify(s)), JSON.stringify(s)).toBe(want);
        if (want) accepted++;
      }
      expect(accepted).toBeGreaterThanOrEqual(positives.length);
      expect(accepted).toBeLessThan(500);
    });
  });
});
