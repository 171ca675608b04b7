// lib/structured: request constraints (JSON schema, regex, choice, grammar) as GBNF grammar text for the
// native grammar engine.
export { choiceGrammar } from './choice-grammar.js';
export { jsonObjectGrammar, jsonSchemaToGrammar, type JsonGrammarOptions } from './json-schema-to-grammar.js';
export { regexToGrammar } from './regex-to-grammar.js';
export { toGrammar, type ResponseFormatInput, type StructuredOutputsInput, type StructuredRequestInput } from './to-grammar.js';
