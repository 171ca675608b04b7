// NOTE(structured/to-grammar): one chat request's constraint (structured_outputs and response_format) as
// one GBNF grammar, following vLLM: response_format is mapped onto the structured_outputs fields of the
// same name (json_object → json_object, json_schema → json) and then exactly one constraint kind must
// remain. `grammar` is passed through verbatim (the native engine compiles and checks it). Every error
// is a 400 whose param names the request field it came from.
import { TokenmillError } from '../engine/errors.js';
import { choiceGrammar } from './choice-grammar.js';
import { structuredError } from './error.js';
import { jsonObjectGrammar, jsonSchemaToGrammar, type JsonGrammarOptions } from './json-schema-to-grammar.js';
import { regexToGrammar } from './regex-to-grammar.js';

export interface StructuredOutputsInput {
  json?: string | Record<string, unknown> | boolean | null;
  regex?: string | null;
  choice?: string[] | null;
  grammar?: string | null;
  json_object?: boolean | null;
  structural_tag?: string | null;
  disable_fallback?: boolean | null;
  disable_any_whitespace?: boolean | null;
  disable_additional_properties?: boolean | null;
  whitespace_pattern?: string | null;
  _backend?: string | null;
  _backend_was_auto?: boolean | null;
}

export interface ResponseFormatInput {
  type: 'text' | 'json_object' | 'json_schema' | 'structural_tag' | string;
  json_schema?: { name?: string; description?: string | null; schema?: Record<string, unknown> | boolean | null; strict?: boolean | null } | null;
}

export interface StructuredRequestInput {
  structured_outputs?: StructuredOutputsInput | null;
  response_format?: ResponseFormatInput | null;
}

const KINDS = ['json', 'regex', 'choice', 'grammar', 'json_object', 'structural_tag'] as const;
type Kind = (typeof KINDS)[number];

// The backend a client may name in `_backend` (vLLM's default backend setting).
const SERVER_BACKEND = 'auto';

/** The grammar constraining this request's output, or undefined when it has no constraint. */
export function toGrammar(request: StructuredRequestInput): string | undefined {
  const rf = request.response_format ?? null;
  const so: StructuredOutputsInput = { ...(request.structured_outputs ?? {}) };
  // Which request field each constraint kind came from, for error params.
  const origin = new Map<Kind, string>(KINDS.map((k) => [k, 'structured_outputs']));
  if (rf !== null) {
    if (rf.type === 'json_object') {
      so.json_object = true;
      origin.set('json_object', 'response_format');
    } else if (rf.type === 'json_schema') {
      if (rf.json_schema == null) throw structuredError("When response_format type is 'json_schema', the 'json_schema' field must be provided.", 'response_format');
      if (rf.json_schema.schema == null) throw structuredError("response_format.json_schema.schema must be provided when response_format type is 'json_schema'.", 'response_format');
      so.json = rf.json_schema.schema;
      origin.set('json', 'response_format');
    } else if (rf.type === 'structural_tag') {
      throw structuredError("response_format type 'structural_tag' is not supported.", 'response_format');
    } else if (rf.type !== 'text') {
      throw structuredError(`Unknown response_format type '${String(rf.type)}'.`, 'response_format');
    }
  }
  if (request.structured_outputs == null && (rf === null || rf.type === 'text')) return undefined;

  const kinds = KINDS.filter((k) => so[k] != null && so[k] !== false);
  if (kinds.length > 1) throw structuredError(`You can only use one kind of structured outputs constraint but multiple are specified: ${kinds.join(', ')}.`, origin.get(kinds[1]!)!);
  const kind = kinds[0];
  if (kind === undefined) throw structuredError('You must use one kind of structured outputs constraint but none are specified.', 'structured_outputs');
  if (so._backend != null && so._backend !== SERVER_BACKEND) {
    throw structuredError(`Request-level structured output backend selection is not supported. The request specified '${so._backend}', but tokenmill was initialised with '${SERVER_BACKEND}'. This error can be resolved by removing '_backend' from the request.`, 'structured_outputs');
  }
  const param = origin.get(kind)!;
  const opts: JsonGrammarOptions = {
    disableAnyWhitespace: so.disable_any_whitespace === true,
    disableAdditionalProperties: so.disable_additional_properties === true,
    ...(so.whitespace_pattern != null ? { whitespacePattern: so.whitespace_pattern } : {}),
  };
  try {
    return grammarFor(kind, so, opts, param);
  } catch (e) {
    if (e instanceof TokenmillError && e.param === null) throw structuredError(e.message, param);
    throw e;
  }
}

function grammarFor(kind: Kind, so: StructuredOutputsInput, opts: JsonGrammarOptions, param: string): string {
  switch (kind) {
    case 'json': {
      let schema: unknown = so.json;
      if (typeof schema === 'string') {
        if (schema.trim() === '') throw structuredError(`${param === 'response_format' ? 'response_format.json_schema.schema' : 'structured_outputs.json'} must not be empty.`, param);
        try {
          schema = JSON.parse(schema);
        } catch (e) {
          throw structuredError(`structured_outputs.json is not valid JSON: ${(e as Error).message}`, param);
        }
      }
      return jsonSchemaToGrammar(schema, opts);
    }
    case 'json_object':
      return jsonObjectGrammar(opts);
    case 'regex': {
      const regex = so.regex!;
      if (regex.includes('\0')) throw structuredError('structured_outputs.regex must not contain NUL characters.', param);
      return regexToGrammar(regex);
    }
    case 'choice':
      return choiceGrammar(so.choice!);
    case 'grammar': {
      const grammar = so.grammar!;
      if (grammar.trim() === '') throw structuredError('structured_outputs.grammar must not be empty.', param);
      return grammar;
    }
    case 'structural_tag':
      throw structuredError('structured_outputs.structural_tag is not supported.', param);
  }
}
