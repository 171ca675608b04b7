#!/usr/bin/env node
// Writes test/fuzz/grammars/schema-*.gbnf: GBNF produced by the TypeScript json-schema-to-grammar
// (dist/structured, so run `npm run build:ts` first) from a few representative JSON schemas. The native
// fuzz targets parse and match these grammars; they do not fuzz the TypeScript conversion itself (its
// property tests under test/ do).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const { jsonSchemaToGrammar } = require(path.join(__dirname, '..', '..', 'dist', 'structured', 'json-schema-to-grammar.js'));

const schemas = {
  person: {
    type: 'object',
    properties: { name: { type: 'string', minLength: 1, maxLength: 20 }, age: { type: 'integer', minimum: 0, maximum: 150 },
      email: { type: 'string', format: 'email' } },
    required: ['name'],
  },
  list: { type: 'array', items: { anyOf: [{ type: 'number' }, { enum: ['a', 'b', null] }] }, minItems: 1, maxItems: 5 },
  pattern: { type: 'object', properties: { id: { type: 'string', pattern: '^[A-Z]{2}-\\d{3,5}$' },
    tags: { type: 'array', items: { type: 'string', const: 'x' } } }, additionalProperties: { type: 'boolean' } },
};

for (const [name, schema] of Object.entries(schemas)) {
  fs.writeFileSync(path.join(__dirname, 'grammars', `schema-${name}.gbnf`), jsonSchemaToGrammar(schema));
}
