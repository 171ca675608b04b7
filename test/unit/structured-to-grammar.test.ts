// toGrammar (request → one grammar) and choiceGrammar.
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../lib/engine/errors.js';
import { choiceGrammar, jsonObjectGrammar, jsonSchemaToGrammar, regexToGrammar, toGrammar } from '../../lib/structured/index.js';
import type { StructuredRequestInput } from '../../lib/structured/index.js';
import { compileGbnf } from '../helpers/gbnf-acceptor.js';

function rejects(request: StructuredRequestInput, message: RegExp | string, param: string): void {
  let error: unknown;
  try {
    toGrammar(request);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect((error as InvalidArgumentError).message).toMatch(message);
  expect((error as InvalidArgumentError).status).toBe(400);
  expect((error as InvalidArgumentError).param).toBe(param);
}

describe('choiceGrammar', () => {
  it('matches exactly one of the strings, escaped', () => {
    const g = choiceGrammar(['yes', 'no', 'say "hi"\n', 'a\\b']);
    expect(g).toBe('root ::= "yes" | "no" | "say \\"hi\\"\\n" | "a\\\\b"\n');
    const a = compileGbnf(g);
    for (const s of ['yes', 'no', 'say "hi"\n', 'a\\b']) expect(a.accepts(s)).toBe(true);
    for (const s of ['', 'ye', 'yesno', 'Yes', 'no ', 'say "hi"', 'a\\\\b']) expect(a.accepts(s)).toBe(false);
  });

  it('an empty-string choice makes the output optional', () => {
    const a = compileGbnf(choiceGrammar(['', 'x']));
    expect(a.accepts('')).toBe(true);
    expect(a.accepts('x')).toBe(true);
    expect(a.accepts('y')).toBe(false);
  });

  it('rejects an empty list', () => {
    expect(() => choiceGrammar([])).toThrow("Choice '[]' cannot be an empty list");
  });
});

describe('toGrammar', () => {
  const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] };

  it('no constraint: undefined', () => {
    expect(toGrammar({})).toBeUndefined();
    expect(toGrammar({ structured_outputs: null, response_format: null })).toBeUndefined();
    expect(toGrammar({ response_format: { type: 'text' } })).toBeUndefined();
  });

  it('structured_outputs.json as an object or as JSON text', () => {
    expect(toGrammar({ structured_outputs: { json: schema } })).toBe(jsonSchemaToGrammar(schema));
    expect(toGrammar({ structured_outputs: { json: JSON.stringify(schema) } })).toBe(jsonSchemaToGrammar(schema));
  });

  it('response_format json_schema and json_object', () => {
    const g = toGrammar({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema, strict: true } } });
    expect(g).toBe(jsonSchemaToGrammar(schema));
    expect(compileGbnf(g!).accepts('{"a": 1}')).toBe(true);
    expect(compileGbnf(g!).accepts('{"a": "1"}')).toBe(false);
    expect(toGrammar({ response_format: { type: 'json_object' } })).toBe(jsonObjectGrammar());
    expect(toGrammar({ structured_outputs: { json_object: true } })).toBe(jsonObjectGrammar());
  });

  it('regex, choice and grammar (verbatim)', () => {
    expect(toGrammar({ structured_outputs: { regex: '\\d+' } })).toBe(regexToGrammar('\\d+'));
    expect(toGrammar({ structured_outputs: { choice: ['a', 'b'] } })).toBe(choiceGrammar(['a', 'b']));
    const gbnf = 'root ::= "x" | other\nother ::= [0-9]+ # digits\n';
    expect(toGrammar({ structured_outputs: { grammar: gbnf } })).toBe(gbnf);
  });

  it('whitespace and additional-property options apply to json and json_object', () => {
    const open = { type: 'object', properties: { a: { type: 'integer' } }, additionalProperties: true };
    expect(toGrammar({ structured_outputs: { json: open, disable_any_whitespace: true, disable_additional_properties: true } }))
      .toBe(jsonSchemaToGrammar(open, { disableAnyWhitespace: true, disableAdditionalProperties: true }));
    expect(toGrammar({ structured_outputs: { whitespace_pattern: ' ?' }, response_format: { type: 'json_object' } }))
      .toBe(jsonObjectGrammar({ whitespacePattern: ' ?' }));
    const g = toGrammar({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: open } }, structured_outputs: { disable_any_whitespace: true } })!;
    expect(compileGbnf(g).accepts('{"a":1,"b":2}')).toBe(true);
    expect(compileGbnf(g).accepts('{"a": 1}')).toBe(false);
  });

  it('response_format json_schema replaces structured_outputs.json (same-named field)', () => {
    const other = { type: 'string' };
    expect(toGrammar({ structured_outputs: { json: other }, response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } }))
      .toBe(jsonSchemaToGrammar(schema));
  });

  it('exactly one constraint kind', () => {
    rejects({ structured_outputs: { json: schema, regex: 'a' } }, 'You can only use one kind of structured outputs constraint but multiple are specified: json, regex.', 'structured_outputs');
    rejects({ structured_outputs: { regex: 'a' }, response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } }, /multiple are specified: json, regex/, 'structured_outputs');
    rejects({ structured_outputs: { choice: ['a'] }, response_format: { type: 'json_object' } }, /multiple are specified: choice, json_object/, 'response_format');
    rejects({ structured_outputs: {} }, 'You must use one kind of structured outputs constraint but none are specified.', 'structured_outputs');
    rejects({ structured_outputs: { disable_any_whitespace: true, json_object: false } }, /none are specified/, 'structured_outputs');
  });

  it('400s for malformed constraints, with the request field as param', () => {
    rejects({ response_format: { type: 'json_schema' } }, "When response_format type is 'json_schema', the 'json_schema' field must be provided.", 'response_format');
    rejects({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }, /json_schema.schema must be provided/, 'response_format');
    rejects({ response_format: { type: 'structural_tag' } }, /structural_tag' is not supported/, 'response_format');
    rejects({ response_format: { type: 'yaml' } }, "Unknown response_format type 'yaml'.", 'response_format');
    rejects({ structured_outputs: { structural_tag: '{}' } }, /structural_tag is not supported/, 'structured_outputs');
    rejects({ structured_outputs: { choice: [] } }, "Choice '[]' cannot be an empty list", 'structured_outputs');
    rejects({ structured_outputs: { grammar: '  ' } }, 'structured_outputs.grammar must not be empty.', 'structured_outputs');
    rejects({ structured_outputs: { json: '' } }, 'structured_outputs.json must not be empty.', 'structured_outputs');
    rejects({ structured_outputs: { json: '{"type":' } }, /structured_outputs.json is not valid JSON/, 'structured_outputs');
    rejects({ structured_outputs: { regex: 'a\0b' } }, 'structured_outputs.regex must not contain NUL characters.', 'structured_outputs');
    rejects({ structured_outputs: { regex: '(a)\\1' } }, /backreferences are not supported at position 3/, 'structured_outputs');
    rejects({ structured_outputs: { json: { not: {} } } }, "Unsupported JSON schema keyword 'not' at #/not", 'structured_outputs');
    rejects({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: { a: { if: {} } } } } } },
      "Unsupported JSON schema keyword 'if' at #/properties/a/if", 'response_format');
    rejects({ structured_outputs: { json_object: true, _backend: 'xgrammar' } }, /Request-level structured output backend selection is not supported/, 'structured_outputs');
    expect(toGrammar({ structured_outputs: { json_object: true, _backend: 'auto' } })).toBe(jsonObjectGrammar());
  });
});
