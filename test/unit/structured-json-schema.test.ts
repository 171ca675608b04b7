// jsonSchemaToGrammar / jsonObjectGrammar: emitted GBNF for representative schemas, and acceptance of
// valid / rejection of invalid JSON documents through the reference acceptor.
import { describe, expect, it } from 'vitest';
import { jsonObjectGrammar, jsonSchemaToGrammar, type JsonGrammarOptions } from '../../lib/structured/json-schema-to-grammar.js';
import { compileGbnf } from '../helpers/gbnf-acceptor.js';

function acceptor(schema: unknown, opts?: JsonGrammarOptions): (doc: string) => boolean {
  const a = compileGbnf(jsonSchemaToGrammar(schema, opts));
  return (doc) => a.accepts(doc);
}

// Each document is tried compact, with single spaces, and pretty-printed (2-space indent).
function spellings(value: unknown): string[] {
  const compact = JSON.stringify(value);
  let spaced = '';
  let inString = false;
  for (let i = 0; i < compact.length; i++) {
    const c = compact[i]!;
    spaced += c;
    if (inString && c === '\\') spaced += compact[++i]!;
    else if (c === '"') inString = !inString;
    else if (!inString && (c === ',' || c === ':')) spaced += ' ';
  }
  return [compact, JSON.stringify(value, null, 2), spaced];
}

function expectValid(accepts: (doc: string) => boolean, values: unknown[]): void {
  for (const v of values) for (const doc of spellings(v)) expect(accepts(doc), `should accept ${doc}`).toBe(true);
}

function expectInvalid(accepts: (doc: string) => boolean, docs: string[]): void {
  for (const doc of docs) expect(accepts(doc), `should reject ${doc}`).toBe(false);
}

describe('jsonSchemaToGrammar output', () => {
  it('writes an object with required and optional properties in declaration order', () => {
    const g = jsonSchemaToGrammar({
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0, maximum: 150 } },
      required: ['name'],
    });
    expect(g).toBe([
      'root ::= "{" ws root-name-kv ( "," ws root-age-kv )? "}" ws',
      'string ::= "\\"" char* "\\"" ws',
      'char ::= [^"\\\\\\x7F\\x00-\\x1F] | "\\\\" ( ["\\\\/bfnrt] | "u" [0-9a-fA-F]{4} )',
      'root-name-kv ::= "\\"name\\"" ws ":" ws string',
      'root-age ::= ( [0-9] | [1-9] [0-9] | "1" ( [0-4] [0-9] | "50" ) ) ws',
      'root-age-kv ::= "\\"age\\"" ws ":" ws root-age',
      'ws ::= ( " " | "\\n"{1,2} [ \\t]{0,20} )?',
      '',
    ].join('\n'));
  });

  it('leaves whitespace out entirely with disableAnyWhitespace', () => {
    const g = jsonSchemaToGrammar({ type: 'array', items: { type: 'boolean' } }, { disableAnyWhitespace: true });
    expect(g).toBe('root ::= "[" ( boolean ( "," boolean )* )? "]"\nboolean ::= ( "true" | "false" )\n');
  });

  it('makes recursive $refs recursive rules', () => {
    const g = jsonSchemaToGrammar({
      $defs: { node: { type: 'object', properties: { next: { anyOf: [{ $ref: '#/$defs/node' }, { type: 'null' }] } }, required: ['next'] } },
      $ref: '#/$defs/node',
    }, { disableAnyWhitespace: true });
    expect(g).toBe([
      'root ::= node',
      'node ::= "{" node-next-kv "}"',
      'null ::= "null"',
      'node-next ::= node | null',
      'node-next-kv ::= "\\"next\\"" ":" node-next',
      '',
    ].join('\n'));
  });

  it('never lets a $defs name shadow a built-in rule', () => {
    const g = jsonSchemaToGrammar({ $defs: { string: { const: 1 } }, type: 'array', items: [{ $ref: '#/$defs/string' }, { type: 'string' }] });
    expect(g).toMatch(/^string-1 ::= "1" ws$/m);
    expect(g).toMatch(/^string ::= "\\"" char\* "\\"" ws$/m);
    const accepts = acceptor({ $defs: { string: { const: 1 } }, type: 'array', items: [{ $ref: '#/$defs/string' }, { type: 'string' }] });
    expectValid(accepts, [[1, 'x']]);
    expectInvalid(accepts, ['["x","x"]', '[1,1]']);
  });
});

describe('jsonSchemaToGrammar acceptance', () => {
  it('empty schema and true accept any JSON value', () => {
    for (const schema of [{}, true]) {
      const accepts = acceptor(schema);
      expectValid(accepts, [1, -2.5e3, 'x', null, true, [], {}, { a: [1, { b: null }] }, [[['deep']]]]);
      expectInvalid(accepts, ['', '{', '[1,]', '{"a"}', "'x'", '01', 'nul', '1.', '"\\x"', '"a\nb"']);
    }
  });

  it('jsonObjectGrammar accepts objects only', () => {
    const a = compileGbnf(jsonObjectGrammar());
    expectValid((d) => a.accepts(d), [{}, { a: 1 }, { a: { b: [1, 'two', null] }, 'k"ey': '\u00e9' }]);
    expectInvalid((d) => a.accepts(d), ['[]', '1', '"{}"', '{"a":1,}', '{a:1}', '{"a":1}}', ' {}']);
  });

  it('primitive types and type arrays', () => {
    expectValid(acceptor({ type: 'string' }), ['', 'a b', 'quote " backslash \\ tab \t é 😀']);
    expectInvalid(acceptor({ type: 'string' }), ['1', 'null', '"a', '"\t"']);
    expectValid(acceptor({ type: 'number' }), [0, -1, 3.25, 1e21, -0.5e-7]);
    expectInvalid(acceptor({ type: 'number' }), ['"1"', '+1', '.5', '1e', '00', '--1', 'NaN']);
    expectValid(acceptor({ type: 'integer' }), [0, -7, 1234567890]);
    expectInvalid(acceptor({ type: 'integer' }), ['1.5', '1e3', '01', '-']);
    expectValid(acceptor({ type: 'boolean' }), [true, false]);
    expectInvalid(acceptor({ type: 'boolean' }), ['1', 'True', '"true"']);
    expectValid(acceptor({ type: 'null' }), [null]);
    const strOrNull = acceptor({ type: ['string', 'null'] });
    expectValid(strOrNull, ['x', null]);
    expectInvalid(strOrNull, ['1', 'false', '[]']);
  });

  it('objects: required always, optional in order and any subset, no undeclared keys by default', () => {
    const accepts = acceptor({
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'string' }, c: { type: 'boolean' }, d: { type: 'null' } },
      required: ['c'],
    });
    expectValid(accepts, [{ c: true }, { a: 1, c: false }, { b: 'x', c: true, d: null }, { a: 1, b: '', c: true, d: null }, { c: true, d: null }]);
    expectInvalid(accepts, ['{}', '{"a":1}', '{"c":true,"a":1}', '{"c":true,"e":1}', '{"c":"yes"}', '{"c":true,}', '{"c":true,"c":true}']);
  });

  it('objects with every property optional, including the empty object', () => {
    const accepts = acceptor({ type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } } });
    expectValid(accepts, [{}, { x: 1 }, { y: 2 }, { x: 1, y: 2 }]);
    expectInvalid(accepts, ['{"y":2,"x":1}', '{,}', '{"x":1,}', '{"z":1}']);
  });

  it('additionalProperties: true / schema allow other keys after the declared ones, never a declared key again', () => {
    const free = acceptor({ type: 'object', properties: { id: { type: 'integer' } }, required: ['id'], additionalProperties: true });
    expectValid(free, [{ id: 1 }, { id: 1, extra: 'x', i: [1], idx: null, '': 0 }]);
    expectInvalid(free, ['{"extra":1}', '{"id":1,"id":2}', '{"extra":1,"id":1}']);
    const typed = acceptor({ type: 'object', properties: { id: { type: 'integer' } }, additionalProperties: { type: 'string' } });
    expectValid(typed, [{}, { id: 1 }, { x: 'a' }, { id: 2, x: 'a', y: 'b' }]);
    expectInvalid(typed, ['{"x":1}', '{"id":"1"}', '{"x":"a","id":1}', '{"id":1,"id":1}']);
  });

  it('disableAdditionalProperties closes objects that allow extras', () => {
    const schema = { type: 'object', properties: { id: { type: 'integer' } }, additionalProperties: true };
    expectValid(acceptor(schema), [{ id: 1, x: 2 }]);
    const closed = acceptor(schema, { disableAdditionalProperties: true });
    expectValid(closed, [{}, { id: 1 }]);
    expectInvalid(closed, ['{"id":1,"x":2}', '{"x":2}']);
    expectInvalid(acceptor({ type: 'object' }, { disableAdditionalProperties: true }), ['{"x":2}']);
  });

  it('a bare object type is any object; required names not in properties take any value', () => {
    expectValid(acceptor({ type: 'object' }), [{}, { a: [1] }]);
    const accepts = acceptor({ type: 'object', properties: { a: { type: 'integer' } }, required: ['a', 'b'] });
    expectValid(accepts, [{ a: 1, b: 'anything' }, { a: 1, b: { x: [] } }]);
    expectInvalid(accepts, ['{"a":1}', '{"b":1,"a":1}']);
  });

  it('enum and const match the exact JSON values', () => {
    const e = acceptor({ enum: ['red', 'green', 42, null, { k: [1] }] });
    expectValid(e, ['red', 'green', 42, null]);
    expect(e('{"k":[1]}')).toBe(true);
    expectInvalid(e, ['"blue"', '"Red"', '43', '"42"', '{"k":[2]}']);
    const c = acceptor({ type: 'object', properties: { v: { const: 'fixed' } }, required: ['v'] });
    expectValid(c, [{ v: 'fixed' }]);
    expectInvalid(c, ['{"v":"other"}']);
  });

  it('anyOf / oneOf alternatives, with sibling keywords applied to each', () => {
    const a = acceptor({ anyOf: [{ type: 'integer' }, { type: 'string', maxLength: 2 }] });
    expectValid(a, [1, 'ab', '']);
    expectInvalid(a, ['"abc"', '1.5', 'null']);
    const o = acceptor({ type: 'object', properties: { kind: { type: 'string' } }, required: ['kind'], oneOf: [{ properties: { n: { type: 'integer' } }, required: ['n'] }, { properties: { s: { type: 'string' } }, required: ['s'] }] });
    expectValid(o, [{ kind: 'a', n: 1 }, { kind: 'b', s: 'x' }]);
    expectInvalid(o, ['{"kind":"a"}', '{"kind":"a","n":"x"}', '{"n":1}']);
  });

  it('allOf merges object parts (with $refs) into one object', () => {
    const accepts = acceptor({
      $defs: { base: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } },
      allOf: [{ $ref: '#/$defs/base' }, { properties: { name: { type: 'string' } }, required: ['name'] }],
    });
    expectValid(accepts, [{ id: 1, name: 'x' }]);
    expectInvalid(accepts, ['{"id":1}', '{"name":"x"}', '{"name":"x","id":1}', '{"id":"1","name":"x"}']);
    const bounds = acceptor({ allOf: [{ type: 'integer', minimum: 0 }, { maximum: 9 }, { type: ['integer', 'string'] }] });
    expectValid(bounds, [0, 5, 9]);
    expectInvalid(bounds, ['10', '-1', '"a"']);
  });

  it('$ref pointers unescape ~1, ~0 and percent-encoding', () => {
    const accepts = acceptor({ $defs: { 'a/b': { type: 'integer' }, 'c~d': { type: 'null' }, 'e f': { type: 'boolean' } }, prefixItems: [{ $ref: '#/$defs/a~1b' }, { $ref: '#/$defs/c~0d' }, { $ref: '#/$defs/e%20f' }] });
    expectValid(accepts, [[1, null, true]]);
    expectInvalid(accepts, ['[null,null,true]', '[1,1,true]', '[1,null,1]']);
  });

  it('$ref to #/definitions and recursive trees', () => {
    const accepts = acceptor({
      definitions: { tree: { type: 'object', properties: { v: { type: 'integer' }, kids: { type: 'array', items: { $ref: '#/definitions/tree' } } }, required: ['v'] } },
      $ref: '#/definitions/tree',
    });
    expectValid(accepts, [{ v: 1 }, { v: 1, kids: [] }, { v: 1, kids: [{ v: 2, kids: [{ v: 3 }] }, { v: 4 }] }]);
    expectInvalid(accepts, ['{"v":1,"kids":[{}]}', '{"v":1,"kids":[{"v":"x"}]}']);
    const self = acceptor({ type: 'object', properties: { child: { anyOf: [{ $ref: '#' }, { type: 'null' }] } }, required: ['child'] });
    expectValid(self, [{ child: null }, { child: { child: { child: null } } }]);
    expectInvalid(self, ['{"child":{}}']);
  });

  it('arrays: items, minItems / maxItems', () => {
    const accepts = acceptor({ type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 4 });
    expectValid(accepts, [[1, 2], [1, 2, 3, 4]]);
    expectInvalid(accepts, ['[]', '[1]', '[1,2,3,4,5]', '[1,"2"]', '[1,2,]']);
    expectValid(acceptor({ type: 'array' }), [[], [1, 'a', null, [{}]]]);
    expectValid(acceptor({ type: 'array', maxItems: 0 }), [[]]);
    expectInvalid(acceptor({ type: 'array', maxItems: 0 }), ['[1]']);
    expectValid(acceptor({ type: 'array', items: { type: 'string' }, minItems: 1 }), [['a'], ['a', 'b', 'c']]);
    expectInvalid(acceptor({ type: 'array', items: { type: 'string' }, minItems: 1 }), ['[]']);
  });

  it('arrays: prefixItems / tuple items, with and without further items', () => {
    const tuple = acceptor({ type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] });
    expectValid(tuple, [['a', 1]]);
    expectInvalid(tuple, ['[1,"a"]', '["a",1,2]']);
    const rest = acceptor({ type: 'array', prefixItems: [{ type: 'string' }], items: { type: 'boolean' }, maxItems: 3 });
    expectValid(rest, [['a'], ['a', true], ['a', true, false]]);
    expectInvalid(rest, ['[]', '["a",1]', '["a",true,true,true]', '[true]']);
    const cut = acceptor({ type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], maxItems: 1 });
    expectValid(cut, [['a']]);
    expectInvalid(cut, ['[]', '["a",1]']);
    const draft7 = acceptor({ type: 'array', items: [{ type: 'null' }], additionalItems: { type: 'integer' } });
    expectValid(draft7, [[null], [null, 1, 2]]);
    expectInvalid(draft7, ['[null,null]', '[1]']);
  });

  it('strings: minLength / maxLength count characters, escapes included as one', () => {
    const accepts = acceptor({ type: 'string', minLength: 2, maxLength: 3 });
    expectValid(accepts, ['ab', 'abc', 'a"', '\n\t', 'éü']);
    expectInvalid(accepts, ['"a"', '"abcd"', '""']);
  });

  it('strings: pattern is matched against the decoded content', () => {
    const accepts = acceptor({ type: 'string', pattern: '^[a-z]+-\\d{2}$' });
    expectValid(accepts, ['ab-12', 'x-00']);
    expectInvalid(accepts, ['"AB-12"', '"ab-1"', '"ab-123"', '"ab12"', '"xab-12 "']);
    const quotes = acceptor({ type: 'string', pattern: '"[^"]*"|\\\\n' });
    expectValid(quotes, ['"hi"', '""', '\\n']);
    expectInvalid(quotes, ['"\\"hi"', '"hi"', '"\\n"']);
    const nl = acceptor({ type: 'string', pattern: 'a\\sb' });
    expectValid(nl, ['a b', 'a\nb', 'a\tb']);
    expectInvalid(nl, ['"ab"', '"a\nb"']);
  });

  it('strings: formats', () => {
    const date = acceptor({ type: 'string', format: 'date' });
    expectValid(date, ['2024-02-29', '1999-12-31']);
    expectInvalid(date, ['"2024-13-01"', '"2024-1-01"', '"24-01-01"', '"2024-01-32"']);
    const time = acceptor({ type: 'string', format: 'time' });
    expectValid(time, ['23:59:59Z', '00:00:00.123+05:30', '12:00:00-08:00']);
    expectInvalid(time, ['"24:00:00Z"', '"12:00Z"', '"12:00:00"']);
    const dt = acceptor({ type: 'string', format: 'date-time' });
    expectValid(dt, ['2024-05-01T10:20:30Z', '2024-05-01T10:20:30.5+01:00']);
    expectInvalid(dt, ['"2024-05-01 10:20:30Z"', '"2024-05-01"']);
    const uuid = acceptor({ type: 'string', format: 'uuid' });
    expectValid(uuid, ['123e4567-e89b-12d3-a456-426614174000', 'ABCDEF01-2345-6789-abcd-ef0123456789']);
    expectInvalid(uuid, ['"123e4567e89b12d3a456426614174000"', '"123e4567-e89b-12d3-a456-42661417400g"']);
    const email = acceptor({ type: 'string', format: 'email' });
    expectValid(email, ['a.b+c@example.com', 'x@y.co.uk']);
    expectInvalid(email, ['"a@b"', '"@b.com"', '"a b@c.com"']);
    expectValid(acceptor({ type: 'string', format: 'hostname' }), ['anything at all']);
  });

  it('integers with minimum / maximum / exclusive bounds match exactly the integers in range', () => {
    const ranges: [Record<string, unknown>, number, number][] = [
      [{ minimum: 0, maximum: 150 }, 0, 150],
      [{ minimum: -15, maximum: 7 }, -15, 7],
      [{ minimum: -120, maximum: -37 }, -120, -37],
      [{ minimum: 95, maximum: 1003 }, 95, 1003],
      [{ exclusiveMinimum: 9, exclusiveMaximum: 100 }, 10, 99],
      [{ minimum: 5, exclusiveMinimum: true, maximum: 20, exclusiveMaximum: true }, 6, 19],
      [{ minimum: 1.5, maximum: 4.5 }, 2, 4],
      [{ minimum: 42 }, 42, Infinity],
      [{ maximum: -3 }, -Infinity, -3],
      [{ minimum: -5 }, -5, Infinity],
      [{ maximum: 12 }, -Infinity, 12],
    ];
    for (const [bounds, lo, hi] of ranges) {
      const accepts = acceptor({ type: 'integer', ...bounds });
      for (let v = -1200; v <= 1200; v++) {
        expect(accepts(String(v)), `${JSON.stringify(bounds)} on ${v}`).toBe(v >= lo && v <= hi);
      }
      expect(accepts('-0')).toBe(false);
      expect(accepts('007')).toBe(false);
      expect(accepts('1'.repeat(12))).toBe(hi === Infinity);
      expect(accepts('-' + '1'.repeat(12))).toBe(lo === -Infinity);
    }
  });

  it('number bounds are ignored (not expressible as a grammar), integers honour them', () => {
    expect(acceptor({ type: 'number', minimum: 0, maximum: 1 })('5.5')).toBe(true);
  });

  it('whitespace: bounded by default, absent with disableAnyWhitespace, a regex with whitespacePattern', () => {
    const schema = { type: 'object', properties: { a: { type: 'array', items: { type: 'integer' } } } };
    const def = acceptor(schema);
    expect(def('{ "a" : [ 1 , 2 ] } ')).toBe(true);
    expect(def('{\n  "a": [\n    1\n  ]\n}\n')).toBe(true);
    expect(def(' {"a":[1]}')).toBe(false);
    expect(def(`{"a":${' '.repeat(2)}[1]}`)).toBe(false);
    expect(def(`{\n${' '.repeat(21)}"a":[1]}`)).toBe(false);
    const none = acceptor(schema, { disableAnyWhitespace: true });
    expect(none('{"a":[1,2]}')).toBe(true);
    expect(none('{"a": [1,2]}')).toBe(false);
    expect(none('{"a":[1,2]} ')).toBe(false);
    const tabs = acceptor(schema, { whitespacePattern: '\\t{0,2}' });
    expect(tabs('{\t\t"a":\t[1,\t2]}\t')).toBe(true);
    expect(tabs('{ "a":[1]}')).toBe(false);
    expect(tabs('{\t\t\t"a":[1]}')).toBe(false);
  });
});

describe('jsonSchemaToGrammar errors name the keyword path', () => {
  const cases: [unknown, RegExp][] = [
    [{ not: { type: 'string' } }, /Unsupported JSON schema keyword 'not' at #\/not/],
    [{ type: 'object', properties: { a: { if: {}, then: {} } } }, /'if' at #\/properties\/a\/if/],
    [{ type: 'array', items: { type: 'integer' }, uniqueItems: true }, /'uniqueItems' at #\/uniqueItems/],
    [{ type: 'array', items: { patternProperties: {} } }, /'patternProperties' at #\/items\/patternProperties/],
    [{ type: 'number', multipleOf: 2 }, /'multipleOf' at #\/multipleOf/],
    [{ anyOf: [{ type: 'string' }, { minProperties: 1 }] }, /'minProperties' at #\/anyOf\/1\/minProperties/],
    [{ $ref: 'https://example.com/s.json' }, /Unsupported \$ref "https:\/\/example.com\/s.json" at #\/\$ref/],
    [{ $ref: '#/$defs/missing' }, /Unresolvable \$ref "#\/\$defs\/missing"/],
    [{ type: 'text' }, /Unsupported JSON schema type "text" at #\/type/],
    [{ type: 'string', pattern: 'a(?=b)' }, /lookaround assertions are not supported at position 1 \(JSON schema #\/pattern\)/],
    [{ type: 'integer', minimum: 5, maximum: 4 }, /allows no value/],
    [{ type: 'array', minItems: 3, prefixItems: [{}, {}] }, /allows no length/],
    [{ allOf: [{ type: 'string' }, { type: 'integer' }] }, /allOf at #\/allOf has no type in common/],
    [{ allOf: [{ pattern: 'a' }, { pattern: 'b' }] }, /conflicting 'pattern'/],
    [false, /'false' and matches no value/],
    [{ enum: [] }, /'enum' at #\/enum must be a non-empty array/],
    [{ $defs: { a: { allOf: [{ $ref: '#/$defs/a' }, { type: 'object' }] } }, $ref: '#/$defs/a' }, /refers to itself through \$ref "#\/\$defs\/a"/],
    [{ anyOf: [{}], oneOf: [{}] }, /anyOf and oneOf together at # are not supported/],
    [{ $defs: { a: {} }, $ref: '#/$defs/%E0%A4%A' }, /Malformed \$ref/],
  ];
  for (const [schema, message] of cases) {
    it(`rejects ${JSON.stringify(schema)}`, () => {
      let error: unknown;
      try {
        jsonSchemaToGrammar(schema);
      } catch (e) {
        error = e;
      }
      expect((error as Error | undefined)?.message).toMatch(message);
      expect((error as { status?: number }).status).toBe(400);
    });
  }
});

describe('the any-value grammar agrees with JSON.parse', () => {
  it('on 500 single-edit mutations of JSON documents', () => {
    const accepts = acceptor({});
    const docs = ['{"a":[1,2.5,-3e+2],"b":{"c":null,"d":true}}', '[false,"x\\"y",{},[],0.0]', '"\\u00e9\\n"', '-12.5E-07', '{"":""}'];
    const alphabet = [...'{}[]",:0123456789-+.eEtrufalsn\\ux'];
    let s = 7;
    const r = (): number => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32);
    let valid = 0;
    for (let n = 0; n < 500; n++) {
      const chars = [...docs[n % docs.length]!];
      const at = Math.floor(r() * chars.length);
      const op = r();
      const ch = alphabet[Math.floor(r() * alphabet.length)]!;
      if (op < 0.33) chars.splice(at, 1);
      else if (op < 0.66) chars.splice(at, 0, ch);
      else chars.splice(at, 1, ch);
      const doc = chars.join('');
      let want = true;
      try {
        JSON.parse(doc);
      } catch {
        want = false;
      }
      expect(accepts(doc), doc).toBe(want);
      if (want) valid++;
    }
    expect(valid).toBeGreaterThan(20);
    expect(valid).toBeLessThan(480);
  });
});

describe('a realistic response_format schema', () => {
  const schema = {
    type: 'object',
    properties: {
      title: { type: 'string', minLength: 1, maxLength: 80 },
      'start-date': { type: 'string', format: 'date' },
      attendees: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          properties: { name: { type: 'string' }, role: { enum: ['host', 'guest'] }, 'e-mail': { type: ['string', 'null'], format: 'email' } },
          required: ['name', 'role'],
          additionalProperties: false,
        },
      },
      priority: { type: 'integer', minimum: 1, maximum: 5 },
      tags: { type: 'array', items: { type: 'string', pattern: '^#[a-z0-9_]{1,20}$' }, maxItems: 5 },
      location: { anyOf: [{ $ref: '#/$defs/place' }, { type: 'null' }] },
      'ünïcode key': { type: 'boolean' },
    },
    required: ['title', 'start-date', 'attendees'],
    $defs: { place: { type: 'object', properties: { city: { type: 'string' }, lat: { type: 'number' }, lon: { type: 'number' } }, required: ['city'] } },
  };
  const accepts = acceptor(schema);

  it('accepts instances', () => {
    expectValid(accepts, [
      { title: 'Standup', 'start-date': '2025-01-31', attendees: [{ name: 'Ann', role: 'host' }] },
      {
        title: 'Offsite "Q3"', 'start-date': '2025-07-01',
        attendees: [{ name: 'Bo', role: 'guest', 'e-mail': 'bo@example.org' }, { name: 'Cy', role: 'host', 'e-mail': null }],
        priority: 5, tags: ['#team', '#q3_plan'], location: { city: 'Zürich', lat: 47.37, lon: 8.54 }, 'ünïcode key': false,
      },
      { title: 'x', 'start-date': '2025-02-28', attendees: [{ name: '', role: 'guest' }], location: null },
    ]);
  });

  it('rejects instances that break the schema', () => {
    const ok = { title: 'T', 'start-date': '2025-01-31', attendees: [{ name: 'Ann', role: 'host' }] };
    const bad: unknown[] = [
      { ...ok, title: '' },
      { ...ok, 'start-date': '31.01.2025' },
      { ...ok, attendees: [] },
      { ...ok, attendees: [{ name: 'Ann', role: 'owner' }] },
      { ...ok, attendees: [{ name: 'Ann', role: 'host', age: 3 }] },
      { ...ok, priority: 6 },
      { ...ok, tags: ['team'] },
      { ...ok, tags: ['#a', '#b', '#c', '#d', '#e', '#f'] },
      { ...ok, location: { lat: 1 } },
      { ...ok, extra: 1 },
    ];
    for (const v of bad) expect(accepts(JSON.stringify(v)), JSON.stringify(v)).toBe(false);
  });
});
