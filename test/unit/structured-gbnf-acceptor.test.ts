// The test-only GBNF reference acceptor (test/helpers/gbnf-acceptor.ts): it must follow the dialect
// strictly, or the converter tests that lean on it prove nothing.
import { describe, expect, it } from 'vitest';
import { compileGbnf } from '../helpers/gbnf-acceptor.js';

describe('gbnf acceptor', () => {
  it('matches literals, classes, dot, groups, alternatives and repetitions', () => {
    const a = compileGbnf('root ::= "a" [b-d]+ ( "x" | y ){2} .? "\\x41\\u00e9"\ny ::= [^a-z\\]]\n');
    expect(a.accepts('abxxAé')).toBe(true);
    expect(a.accepts('acdx!?Aé')).toBe(true);
    expect(a.accepts('acdx]?Aé')).toBe(false);
    expect(a.accepts('abxAé')).toBe(false);
    expect(a.accepts('axxAé')).toBe(false);
    expect(a.accepts('abxqAé')).toBe(false);
  });

  it('handles recursion, bounded repeats and comments; newlines continue only inside parentheses', () => {
    const a = compileGbnf('# comment\nroot ::= "(" root ")" | "x"{1,3} # tail\n');
    expect(a.accepts('((xx))')).toBe(true);
    expect(a.accepts('((xxxx))')).toBe(false);
    expect(a.accepts('(x')).toBe(false);
    expect(compileGbnf('root ::= ( "a"\n  | "b" )\n').accepts('b')).toBe(true);
    expect(() => compileGbnf('root ::= "a"\n  | "b"\n')).toThrow();
  });

  it('rejects what the dialect does not have', () => {
    for (const bad of ['root ::= "\\q"', 'root ::= "a"*+', 'root ::= other', 'x ::= "a"', 'root ::= []', 'root ::= "a" )', 'root ::= "\\U0001F600"', 'root ::= "a"\nroot ::= "b"']) {
      expect(() => compileGbnf(bad), bad).toThrow();
    }
  });

  it('reports left recursion instead of looping', () => {
    expect(() => compileGbnf('root ::= root "a" | "a"\n').accepts('aa')).toThrow(/left recursion/);
  });
});
