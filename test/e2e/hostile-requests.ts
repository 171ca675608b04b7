// A seeded generator of malformed and extreme chat requests for test/e2e/server-hostile.test.ts. Each
// case is a body (text or raw bytes) and how to send it; the same (seed, index) always gives the same
// case, so a failure is replayed with TOKENMILL_HOSTILE_SEED (and TOKENMILL_HOSTILE_ONLY=<index>).
// Families: one field set to a hostile value (wrong type, NaN/Infinity spellings, extremes, NUL bytes,
// lone surrogates, __proto__/constructor keys), nested fields likewise, numeric edges, raw bodies
// (invalid JSON or UTF-8, truncated), huge arrays and maps, deep nesting, regex / GBNF / JSON-schema
// bombs, Jinja templates that loop, recurse or grow, and requests that are valid (they reach the engine).
import { makeRng } from '../../lib/gguf/weights.js';
import { KNOWN_REQUEST_FIELDS } from '../../lib/openai/protocol.js';

export interface HostileCase {
  index: number;
  family: string;
  /** What was done, for the failure message. */
  what: string;
  body: string | Buffer;
  contentType: string;
  /** An expensive case (a template that runs into the render time limit). */
  slow?: boolean;
}

export const rng = makeRng;

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

export const BASE = {
  model: 'm',
  messages: [{ role: 'user', content: 'Once upon a time' }],
  chat_template: '{{ messages[0].content }}',
  max_tokens: 2,
  temperature: 0,
};

/** Values parsed from JSON text, so `__proto__` / `constructor` are own keys as a client sends them. */
const PROTO_VALUES: unknown[] = [
  JSON.parse('{"__proto__":{"polluted":1}}'),
  JSON.parse('{"constructor":{"prototype":{"polluted":1}}}'),
  JSON.parse('{"__proto__":null,"toString":1,"hasOwnProperty":"x","valueOf":[]}'),
];

const SCALARS: unknown[] = [
  null, true, false, 0, -0, 1, -1, 0.5, -0.5, 2, 2.5, 3, 100, 1e-300, -1e-300, 1e300, -1e300, 5e-324,
  2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 2 ** 63, -(2 ** 63), 1e19, 65536,
  '', ' ', '0', '1', '-1', 'NaN', 'Infinity', '-Infinity', 'null', 'true', 'none', 'auto', 'm',
  '\u0000', 'a\u0000b', '\ud800', '\udfff', 'x\ud800y', '\u202e', '𝕏', '\uffff', 'x'.repeat(5000), '\\', '"', '{{', '{%',
];

function hostileValue(r: Rand, depth = 0): unknown {
  const roll = r();
  if (roll < 0.6 || depth > 2) return pick(r, SCALARS);
  if (roll < 0.7) return pick(r, PROTO_VALUES);
  if (roll < 0.85) return times(int(r, 0, 4), () => hostileValue(r, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = int(r, 0, 3); i > 0; i--) o[pick(r, ['a', 'type', 'role', 'content', 'json', 'name', '0', ''])] = hostileValue(r, depth + 1);
  return o;
}

const TOP_FIELDS = [...KNOWN_REQUEST_FIELDS, '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'x'.repeat(300)];

/** JSON text of `value`, with `__proto__` kept as an own key. */
const json = (value: unknown): string => JSON.stringify(value);

function withField(field: string, value: unknown, stream: boolean): string {
  const body: Record<string, unknown> = JSON.parse(json(BASE));
  Object.defineProperty(body, field, { value, enumerable: true, writable: true, configurable: true });
  if (stream) body.stream = true;
  return json(body);
}

/** A request with `path` (into a copy of a richer base) set to `value`. */
function withPath(path: (string | number)[], value: unknown, stream: boolean): string {
  const body = JSON.parse(json({
    ...BASE,
    messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: [{ type: 'text', text: 'Once' }] }],
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
    response_format: { type: 'json_schema', json_schema: { name: 'n', schema: { type: 'object' } } },
    stream_options: stream ? { include_usage: true } : undefined,
    repetition_detection: { max_pattern_size: 2, min_count: 2 },
    logit_bias: { '1': 1 },
    vllm_xargs: { a: 1 },
  })) as Record<string, unknown>;
  if (stream) body.stream = true;
  let cur: Record<string | number, unknown> = body;
  for (const key of path.slice(0, -1)) {
    if (cur[key] === null || typeof cur[key] !== 'object') cur[key] = typeof path[path.indexOf(key) + 1] === 'number' ? [] : {};
    cur = cur[key] as Record<string | number, unknown>;
  }
  Object.defineProperty(cur, path[path.length - 1]!, { value, enumerable: true, writable: true, configurable: true });
  return json(body);
}

const NESTED_PATHS: (string | number)[][] = [
  ['messages', 0, 'role'], ['messages', 0, 'content'], ['messages', 1, 'content', 0, 'type'], ['messages', 1, 'content', 0, 'text'],
  ['messages', 1, 'name'], ['messages', 1, 'tool_calls'], ['messages', 1, 'tool_call_id'], ['messages', 1, 'reasoning'],
  ['messages', 0], ['messages', 5, 'role'], ['tools', 0, 'type'], ['tools', 0, 'function'], ['tools', 0, 'function', 'name'],
  ['tools', 0, 'function', 'parameters'], ['response_format', 'type'], ['response_format', 'json_schema', 'schema'],
  ['response_format', 'json_schema', 'name'], ['response_format', 'json_schema', 'strict'], ['structured_outputs', 'json'],
  ['structured_outputs', 'regex'], ['structured_outputs', 'choice'], ['structured_outputs', 'grammar'],
  ['structured_outputs', 'structural_tag'], ['structured_outputs', 'json_object'], ['structured_outputs', 'whitespace_pattern'],
  ['stream_options', 'include_usage'], ['stream_options', 'continuous_usage_stats'], ['repetition_detection', 'max_pattern_size'],
  ['repetition_detection', 'min_count'], ['repetition_detection', 'min_pattern_size'], ['logit_bias', '1'], ['logit_bias', '-1'],
  ['logit_bias', '__proto__'], ['logit_bias', ' 7 '], ['logit_bias', '1e3'], ['logit_bias', '99999999999999999999'],
  ['vllm_xargs', 'a'], ['vllm_xargs', '__proto__'], ['chat_template_kwargs', 'x'], ['chat_template_kwargs', 'tokenize'],
  ['kv_transfer_params', 'x'], ['documents', 0], ['documents', 0, 'text'], ['mm_processor_kwargs', 'x'],
];

/** Numeric fields with values at and past their edges (valid ones reach the engine). */
const EDGES: [string, unknown[]][] = [
  ['temperature', [0, 1e-300, 0.009, 0.01, 2, 2.0000001, 65536, 1e300, -0, -1e-300]],
  ['top_p', [1e-300, 5e-324, 1e-45, 1, 1.0000001, 0]],
  ['top_k', [-2, -1, 0, 1, 511, 512, 2 ** 31, 2 ** 53, 2 ** 63]],
  ['min_p', [0, 1e-300, 1, 1.0000001]],
  ['repetition_penalty', [1e-300, 1e-31, 1e-30, 1, 1e30, 1e31, 1e300, 0]],
  ['frequency_penalty', [-2, 2, 2.0000001, 1e-300]],
  ['presence_penalty', [-2.0000001, -2, 2]],
  ['n', [0, 1, 8, 9, 64, 65536, 2 ** 31 - 1, 2 ** 53]],
  ['max_tokens', [0, 1, 127, 128, 129, 2 ** 31 - 1, 2 ** 63]],
  ['max_completion_tokens', [0, 1, 128, 2 ** 53]],
  ['min_tokens', [0, 1, 2, 3, 2 ** 53]],
  ['seed', [-1, 0, 2 ** 53, 2 ** 63, -(2 ** 63), 1e19]],
  ['priority', [0, 1, -(2 ** 63), 2 ** 63]],
  ['top_logprobs', [-2, -1, 0, 20, 21, 2 ** 53]],
  ['prompt_logprobs', [-2, -1, 0, 20, 21]],
  ['truncate_prompt_tokens', [-2, -1, 0, 1, 126, 127, 2 ** 63]],
  ['length_penalty', [-1e300, -1e30, 0, 1e30, 1e300]],
];

const REGEX_BOMBS = [
  '(a|aa)*b', '(a*)*b', '((a{1000}){1000}){1000}', 'a{10000}', 'a{10001}', '[^x]{1000}{1000}', '(?:a|b|c|d|e){1,1000}',
  '\\p{L}+', '(?=a)b', '(a)\\1', '[z-a]', '(', ')', '*', 'a{2,1}', '\\', '[', 'a{99999999999}', '\u0000', '.*'.repeat(500),
  '(a|b)'.repeat(3000), '('.repeat(150) + 'a' + ')'.repeat(150), '('.repeat(20000) + 'a' + ')'.repeat(20000), '[' + 'a-'.repeat(5000) + ']',
  '(((a|b)*c)*d)*', '\\u{10FFFF}+', '[\\s\\S]{0,100000}',
];

function grammarBombs(r: Rand): string[] {
  const chain = times(2000, (i) => `x${i} ::= x${i + 1}`).join('\n');
  const expo = times(40, (i) => `r${i} ::= r${i + 1} r${i + 1}`).join('\n');
  return [
    'root ::= root', 'root ::= x\nx ::= x', 'root ::= "a"{1000}', 'root ::= "a"{100000}', 'root ::= ' + '"a" '.repeat(20000),
    'root ::= [^]*', 'root ::= ' + '('.repeat(5000) + '"a"' + ')'.repeat(5000), `root ::= x0\n${chain}\nx2000 ::= "a"`,
    `root ::= r0\n${expo}\nr40 ::= "a"`, 'root ::= "\\u0000"', '', 'root ::= "', 'root ::= y', 'root ::= [\\x00-\\U0010FFFF]+',
    'root ::= ("a" | "b")* "c"', 'root ::= "a"*' + '*'.repeat(int(r, 1, 100)), '\u0000', 'root ::= ' + '"' + 'x'.repeat(200000) + '"',
  ];
}

function schemaBombs(): unknown[] {
  const deepArray = (d: number): unknown => (d === 0 ? {} : { type: 'array', items: deepArray(d - 1) });
  return [
    { $ref: '#' }, { type: 'string', minLength: 1e9 }, { type: 'array', minItems: 1e9, items: {} },
    { type: 'integer', minimum: -1e300, maximum: 1e300 }, { enum: times(2000, (i) => `v${i}`) },
    { anyOf: times(300, (i) => ({ const: i })) }, { type: 'object', properties: Object.fromEntries(times(300, (i) => [`p${i}`, { type: 'integer' }])), required: times(300, (i) => `p${i}`) },
    { type: 'string', pattern: '(a|aa)*b' }, { allOf: [{ $ref: '#/$defs/a' }], $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } } },
    { type: 'number', multipleOf: 1e-300 }, { type: 'string', minLength: 5, maxLength: 2 }, { type: 'array', prefixItems: times(300, () => ({ type: 'null' })) },
    { type: 'array', minItems: 1000, items: { type: 'array', minItems: 1000, items: { type: 'array', minItems: 1000 } } },
    { type: ['string', 'null', 'integer', 'object', 'array', 'boolean', 'number'] }, { type: 'nonsense' }, deepArray(99), deepArray(101),
    { $ref: 'http://example.com/schema.json' }, { $ref: 'file:///etc/passwd' }, { type: 'string', format: 'date-time', minLength: 1000 },
    { properties: { a: { $ref: '#/properties/a' } }, required: ['a'] }, JSON.parse('{"__proto__":{"type":"string"}}'),
  ];
}

/** Templates that loop, recurse, grow or try to reach out; the looping ones run into the time limit. */
const TEMPLATE_FAST = [
  "{% set x = 'x' %}{% for i in range(64) %}{% set x = x ~ x %}{% endfor %}{{ x }}",
  '{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}', "{{ 'x' * 400000000 }}", '{{ range(1000000000)|length }}',
  "{{ range.constructor('return process')() }}", "{{ messages.constructor.constructor('return process.env')() }}",
  "{% include '/etc/passwd' %}", "{% import 'os' as os %}", '{{ cycler.__init__.__globals__ }}', '{{ self.__dict__ }}',
  "{{ raise_exception('boom') }}", '{{ messages[0].content.__proto__ }}', '{{ ' + '('.repeat(5000) + '1' + ')'.repeat(5000) + ' }}',
  '{% for m in messages %}{{ m.content }}{% endfor %}{{ 1/0 }}', '{{ messages|tojson }}', '{% if %}', '{{', '{% endfor %}',
  "{{ [1]*100000000 }}", '{% for a in range(1000000) %}{% for b in range(1000000) %}{% endfor %}{% endfor %}', "{{ 'a'|replace('', 'b'*1000) }}", '{{ messages[0].content|center(1000000000) }}',
];
const TEMPLATE_SLOW = [
  '{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}',
  '{% set ns = namespace(i=0) %}{% for a in range(100000) %}{% for b in range(100000) %}{% set ns.i = ns.i + 1 %}{% endfor %}{% endfor %}',
];

function raw(r: Rand): { what: string; body: string | Buffer; contentType?: string } {
  const good = withField('temperature', 0, r() < 0.3);
  const roll = int(r, 0, 13);
  switch (roll) {
    case 0: return { what: 'NaN literal', body: good.replace('"temperature":0', '"temperature":NaN') };
    case 1: return { what: 'Infinity literal', body: good.replace('"temperature":0', `"temperature":${pick(r, ['Infinity', '-Infinity', '1e999', '-1e999', '1e-999'])}`) };
    case 2: return { what: 'truncated JSON', body: good.slice(0, int(r, 0, good.length - 1)) };
    case 3: {
      const b = Buffer.from(good);
      const at = int(r, 0, b.length - 1);
      return { what: 'invalid UTF-8 bytes', body: Buffer.concat([b.subarray(0, at), Buffer.from(pick(r, [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80]])), b.subarray(at)]) };
    }
    case 4: return { what: 'invalid UTF-8 inside a string', body: Buffer.concat([Buffer.from(good.replace('Once upon a time', '@@')).subarray(0, good.indexOf('Once upon a time')), Buffer.from([0xff, 0xfe, 0xc0, 0x80]), Buffer.from(good.slice(good.indexOf('Once upon a time') + 'Once upon a time'.length))]) };
    case 5: return { what: 'byte order mark', body: '\ufeff' + good };
    case 6: return { what: 'empty body', body: '' };
    case 7: return { what: 'garbage bytes', body: Buffer.from(times(int(r, 1, 300), () => int(r, 0, 255))) };
    case 8: return { what: 'duplicate keys', body: good.replace('{', '{"model":"zzz","messages":1,') };
    case 9: return { what: 'JSON scalar body', body: pick(r, ['null', '1', '"x"', 'true', '[]', '[{}]']) };
    case 10: return { what: 'wrong content type', body: good, contentType: pick(r, ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', '']) };
    case 11: return { what: 'escaped lone surrogates and NUL', body: good.replace('Once upon a time', '\\ud800\\u0000\\udfff\\uDBFF') };
    case 12: return { what: '__proto__ at the top', body: good.replace('{', '{"__proto__":{"model":"zzz","stream":true},"constructor":{"prototype":{"x":1}},') };
    default: return { what: 'trailing garbage', body: good + pick(r, ['x', '}', ',', '\u0000', ' {}']) };
  }
}

function big(r: Rand, stream: boolean): { what: string; body: string } {
  const n = 100_000;
  switch (int(r, 0, 12)) {
    case 0: return { what: '100k stop strings', body: withField('stop', times(n, (i) => `s${i}`), stream) };
    case 1: return { what: '100k stop_token_ids', body: withField('stop_token_ids', times(n, (i) => i % 512), stream) };
    case 2: return { what: '100k allowed_token_ids', body: withField('allowed_token_ids', times(n, (i) => i % 512), stream) };
    case 3: return { what: '100k bad_words', body: withField('bad_words', times(n, (i) => `w${i}`), stream) };
    case 4: return { what: '100k messages', body: withField('messages', times(n, () => ({ role: 'user', content: 'a' })), stream) };
    case 5: return { what: '100k tools', body: withField('tools', times(n, () => ({ type: 'function', function: { name: 'f' } })), stream) };
    case 6: return { what: '100k logit_bias entries', body: withField('logit_bias', Object.fromEntries(times(n, (i) => [String(i), 1])), stream) };
    case 7: return { what: '100k documents', body: withField('documents', times(n, () => ({ t: 1 })), stream) };
    case 8: return { what: '100k choices', body: withField('structured_outputs', { choice: times(n, (i) => `c${i}`) }, stream) };
    case 9: return { what: '1M-character content', body: withField('messages', [{ role: 'user', content: 'Once '.repeat(200_000) }], stream) };
    case 10: {
      const field = pick(r, ['chat_template_kwargs', 'vllm_xargs', 'kv_transfer_params', 'messages', 'tools', 'documents', 'response_format', 'structured_outputs', 'logit_bias']);
      const depth = pick(r, [99, 101, 10_000, 100_000]);
      const nest = pick(r, [['[', ']'], ['{"a":', '}']]);
      return { what: `${field} nested ${depth} deep`, body: withField(field, '@@', stream).replace('"@@"', nest[0]!.repeat(depth) + '1' + nest[1]!.repeat(depth)) };
    }
    case 11: return { what: 'top-level nesting', body: '['.repeat(100_000) + ']'.repeat(100_000) };
    default: return { what: '100k-key chat_template_kwargs', body: withField('chat_template_kwargs', Object.fromEntries(times(n, (i) => [`k${i}`, i])), stream) };
  }
}

/**
 * Case `index` of the run seeded `seed`. Slow template cases are only produced at the indexes
 * `slowAt` says (a few per run: each holds the event loop for the render time limit).
 */
export function hostileCase(seed: number, index: number, slowAt: (index: number) => boolean): HostileCase {
  const r = rng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const stream = r() < 0.3;
  const c = (family: string, what: string, body: string | Buffer, contentType = 'application/json', slow = false): HostileCase =>
    ({ index, family, what, body, contentType, slow });
  if (slowAt(index)) {
    const t = pick(r, TEMPLATE_SLOW);
    return c('jinja', `looping template ${t.slice(0, 40)}`, withField('chat_template', t, stream), 'application/json', true);
  }
  const roll = r();
  if (roll < 0.45) {
    const field = pick(r, TOP_FIELDS);
    const value = hostileValue(r);
    return c('field', `${field} = ${json(value)?.slice(0, 80)}`, withField(field, value, stream));
  }
  if (roll < 0.65) {
    const path = pick(r, NESTED_PATHS);
    const value = hostileValue(r);
    return c('nested', `${path.join('.')} = ${json(value)?.slice(0, 80)}`, withPath(path, value, stream));
  }
  if (roll < 0.77) {
    const [field, values] = pick(r, EDGES);
    const value = pick(r, values);
    const extra = field === 'length_penalty' ? { use_beam_search: true, n: 2 } : field === 'n' ? { temperature: 1 } : field === 'top_logprobs' ? { logprobs: true } : {};
    const body = JSON.parse(withField(field, value, stream && field !== 'prompt_logprobs')) as Record<string, unknown>;
    return c('edge', `${field} = ${value}`, json({ ...body, ...extra }));
  }
  if (roll < 0.86) {
    const x = raw(r);
    return c('raw', x.what, x.body, x.contentType ?? 'application/json');
  }
  // Big bodies cost the server a parse of megabytes each: about five per 10,000.
  if (roll < 0.8605) {
    const x = big(r, stream);
    return c('big', x.what, x.body);
  }
  if (roll < 0.93) {
    const kind = int(r, 0, 2);
    if (kind === 0) {
      const re = pick(r, REGEX_BOMBS);
      return c('regex', `regex ${json(re).slice(0, 60)}`, withField('structured_outputs', { regex: re }, stream));
    }
    if (kind === 1) {
      const g = pick(r, grammarBombs(r));
      return c('grammar', `grammar ${json(g).slice(0, 60)}`, withField('structured_outputs', { grammar: g }, stream));
    }
    const s = pick(r, schemaBombs());
    const asString = r() < 0.3;
    return c('schema', `schema ${json(s).slice(0, 60)}${asString ? ' (as a string)' : ''}`,
      r() < 0.5 ? withField('structured_outputs', { json: asString ? json(s) : s }, stream) : withField('response_format', { type: 'json_schema', json_schema: { name: 'x', schema: s } }, stream));
  }
  if (roll < 0.98) {
    const t = pick(r, TEMPLATE_FAST);
    return c('jinja', `template ${t.slice(0, 60)}`, withField('chat_template', t, stream));
  }
  // Valid requests with random sampling settings: they reach the engine.
  const body: Record<string, unknown> = {
    ...BASE,
    temperature: pick(r, [0, 0.7, 1, 2]),
    max_tokens: int(r, 1, 8),
    stream,
    ...(r() < 0.3 ? { n: int(r, 1, 8) } : {}),
    ...(r() < 0.3 ? { logprobs: true, top_logprobs: int(r, 0, 20) } : {}),
    ...(r() < 0.2 ? { stop: [' a', 'the'] } : {}),
    ...(r() < 0.2 ? { cache_salt: pick(r, ['s1', 's2']) } : {}),
    ...(r() < 0.1 ? { structured_outputs: { choice: ['yes', 'no'] } } : {}),
    ...(r() < 0.1 ? { seed: int(r, 0, 1000) } : {}),
  };
  if ((body.n as number) > 1 && body.temperature === 0) body.temperature = 1;
  return c('valid', `valid ${json(body).slice(0, 100)}`, json(body));
}
