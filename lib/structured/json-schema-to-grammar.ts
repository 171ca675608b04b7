// NOTE(structured/json-schema-to-grammar): a JSON Schema becomes a GBNF grammar whose language is JSON
// text that validates against the schema, written token by token with the bounded whitespace rule after
// each token (nothing before the first). Each schema node gets a rule named after its path (root-name,
// root-items, …); $refs become rules of their own first, so recursive schemas are recursive rules.
// Objects write properties in declaration order, required ones always, optional ones in any subset;
// additional properties (when allowed) come after them with keys other than the declared ones.
// Keywords a context-free grammar cannot express (not, if/then/else, uniqueItems, …) are rejected
// with their path; bounds llama.cpp also ignores (number ranges) are ignored, as noted where it happens.
import { structuredError } from './error.js';
import { gbnfAlternatives, gbnfLiteral, gbnfRepeat, gbnfSequence } from './gbnf-text.js';
import { intRangeExpression } from './int-range.js';
import { DEFAULT_WS_BODY, FIXED_RULE_NAMES, JsonRules, STRING_FORMATS, WS_RULE } from './json-rules.js';
import { otherKeyExpression } from './object-keys.js';
import { regexToExpression } from './regex-to-grammar.js';
import { RuleSet } from './rule-set.js';
import { ANNOTATION_KEYWORDS, mergeAllOf, type Schema } from './schema-merge.js';

export interface JsonGrammarOptions {
  /** No whitespace anywhere between tokens (vLLM's disable_any_whitespace). */
  disableAnyWhitespace?: boolean;
  /** Treat every object as additionalProperties: false (vLLM's disable_additional_properties). */
  disableAdditionalProperties?: boolean;
  /** A regex for the whitespace allowed between tokens (vLLM's whitespace_pattern), instead of the default. */
  whitespacePattern?: string;
}

const UNSUPPORTED = [
  'not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'dependencies', 'patternProperties',
  'propertyNames', 'unevaluatedProperties', 'unevaluatedItems', 'contains', 'minContains', 'maxContains',
  'minProperties', 'maxProperties', 'multipleOf', '$dynamicRef', '$dynamicAnchor', '$recursiveRef', 'contentSchema',
];
const OBJECT_KEYWORDS = ['properties', 'required', 'additionalProperties'];
const ARRAY_KEYWORDS = ['items', 'prefixItems', 'additionalItems', 'minItems', 'maxItems'];
const STRING_KEYWORDS = ['pattern', 'format', 'minLength', 'maxLength'];
const NUMBER_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];
const TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];

/** A GBNF grammar for JSON text valid against `schema` (an object, a JSON text string, or a boolean schema). */
export function jsonSchemaToGrammar(schema: unknown, opts: JsonGrammarOptions = {}): string {
  const rules = new RuleSet(FIXED_RULE_NAMES);
  const ws = wsBody(opts);
  const converter = new SchemaConverter(schema, rules, new JsonRules(rules, ws !== null), opts);
  converter.convertRoot();
  if (ws !== null) rules.addFixed(WS_RULE, ws);
  return rules.toText();
}

/** Any JSON object (response_format json_object). */
export function jsonObjectGrammar(opts: JsonGrammarOptions = {}): string {
  return jsonSchemaToGrammar({ type: 'object' }, opts);
}

function wsBody(opts: JsonGrammarOptions): string | null {
  if (opts.disableAnyWhitespace) return null;
  if (opts.whitespacePattern === undefined) return DEFAULT_WS_BODY;
  return regexToExpression(opts.whitespacePattern, 'raw');
}

function isSchemaObject(s: unknown): s is Schema {
  return typeof s === 'object' && s !== null && !Array.isArray(s);
}

function pointerPart(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

class SchemaConverter {
  private readonly refRules = new Map<string, string>();
  private readonly sp: string;

  constructor(private readonly root: unknown, private readonly rules: RuleSet, private readonly json: JsonRules, private readonly opts: JsonGrammarOptions) {
    this.sp = json.sp;
  }

  convertRoot(): void {
    const name = this.rules.reserve('root');
    this.refRules.set('#', name);
    this.rules.define(name, this.body(this.root, name, '#'));
  }

  // A rule name (or fixed rule) for `schema`, adding a rule named after `name` when needed.
  private visit(schema: unknown, name: string, path: string): string {
    const body = this.body(schema, name, path);
    return /^[a-zA-Z0-9_-]+$/.test(body) ? body : this.rules.add(name, body);
  }

  // The rule body (an expression) for `schema`.
  private body(schema: unknown, name: string, path: string): string {
    if (schema === true) return this.json.use('value');
    if (schema === false) throw structuredError(`JSON schema at ${path} is 'false' and matches no value`);
    if (!isSchemaObject(schema)) throw structuredError(`Expected a JSON schema object at ${path}, got ${JSON.stringify(schema)}`);
    this.checkKeywords(schema, path);

    if ('$ref' in schema) {
      const { $ref, ...rest } = schema;
      if (!this.constrains(rest)) return this.ref($ref, `${path}/$ref`);
      return this.body({ allOf: [{ $ref }, rest] }, name, path);
    }
    if ('const' in schema) return this.literalJson([schema.const]);
    if ('enum' in schema) {
      if (!Array.isArray(schema.enum) || schema.enum.length === 0) throw structuredError(`'enum' at ${path}/enum must be a non-empty array`);
      return this.literalJson(schema.enum);
    }
    if ('anyOf' in schema && 'oneOf' in schema) throw structuredError(`anyOf and oneOf together at ${path} are not supported`);
    for (const key of ['anyOf', 'oneOf'] as const) {
      if (!(key in schema)) continue;
      // oneOf is taken as anyOf: exclusivity is not enforced. Sibling keywords apply to every alternative.
      const { [key]: options, ...rest } = schema;
      if (!Array.isArray(options) || options.length === 0) throw structuredError(`'${key}' at ${path}/${key} must be a non-empty array`);
      const shared = this.constrains(rest);
      return gbnfAlternatives(options.map((o, i) => this.visit(shared ? { allOf: [rest, o] } : o, `${name}-${i}`, `${path}/${key}/${i}`)))!;
    }
    if ('allOf' in schema) {
      if (!Array.isArray(schema.allOf)) throw structuredError(`'allOf' at ${path}/allOf must be an array`);
      const { allOf, ...rest } = schema;
      const merged = mergeAllOf([rest, ...allOf], `${path}/allOf`, (s, at) => this.resolve(s.$ref, `${at}/$ref`));
      return this.body(merged, name, path);
    }

    const type = schema.type;
    if (Array.isArray(type)) {
      if (type.length === 0) throw structuredError(`'type' at ${path}/type must not be an empty array`);
      if (type.length === 1) return this.body({ ...schema, type: type[0] }, name, path);
      return gbnfAlternatives(type.map((t) => this.visit({ ...schema, type: t }, `${name}-${String(t)}`, path)))!;
    }
    if (type !== undefined && (typeof type !== 'string' || !TYPES.includes(type))) {
      throw structuredError(`Unsupported JSON schema type ${JSON.stringify(type)} at ${path}/type`);
    }
    const has = (keys: string[]): boolean => keys.some((k) => k in schema);
    const kind = type ?? (has(OBJECT_KEYWORDS) ? 'object' : has(ARRAY_KEYWORDS) ? 'array' : has(STRING_KEYWORDS) ? 'string' : has(NUMBER_KEYWORDS) ? 'number' : undefined);
    switch (kind) {
      case 'object': return this.object(schema, name, path);
      case 'array': return this.array(schema, name, path);
      case 'string': return this.string(schema, name, path);
      // Number bounds are ignored (llama.cpp only supports ranges for integers); integers honour them.
      case 'number': return this.json.use('number');
      case 'integer': return this.integer(schema, path);
      case 'boolean': return this.json.use('boolean');
      case 'null': return this.json.use('null');
      default: return this.json.use('value');
    }
  }

  private checkKeywords(schema: Schema, path: string): void {
    for (const key of UNSUPPORTED) {
      if (key in schema) throw structuredError(`Unsupported JSON schema keyword '${key}' at ${path}/${key}`);
    }
    if (schema.uniqueItems === true) throw structuredError(`Unsupported JSON schema keyword 'uniqueItems' at ${path}/uniqueItems`);
  }

  // Whether a schema has keywords beyond annotations (so it must be combined with a $ref or alternatives).
  private constrains(schema: Schema): boolean {
    return Object.keys(schema).some((k) => !ANNOTATION_KEYWORDS.has(k));
  }

  private resolve(ref: unknown, path: string): unknown {
    if (typeof ref !== 'string' || !ref.startsWith('#')) throw structuredError(`Unsupported $ref ${JSON.stringify(ref)} at ${path}: only local references (#/$defs/…, #/definitions/…) are supported`);
    let node: unknown = this.root;
    const tail = ref.slice(1);
    if (tail !== '' && !tail.startsWith('/')) throw structuredError(`Unsupported $ref ${JSON.stringify(ref)} at ${path}: anchors are not supported`);
    for (const raw of tail.split('/').slice(1)) {
      let key: string;
      try {
        key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      } catch {
        throw structuredError(`Malformed $ref ${JSON.stringify(ref)} at ${path}`);
      }
      node = isSchemaObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined;
      if (node === undefined) throw structuredError(`Unresolvable $ref ${JSON.stringify(ref)} at ${path}`);
    }
    return node;
  }

  private ref(ref: unknown, path: string): string {
    const known = this.refRules.get(ref as string);
    if (known) return known;
    const target = this.resolve(ref, path);
    const name = this.rules.reserve((ref as string).split('/').pop() || 'ref');
    this.refRules.set(ref as string, name);
    this.rules.define(name, this.body(target, name, (ref as string) || '#'));
    return name;
  }

  private literalJson(values: unknown[]): string {
    const options = values.map((v) => gbnfLiteral(JSON.stringify(v)));
    return gbnfSequence([gbnfAlternatives(options), this.sp ? WS_RULE : null])!;
  }

  private object(schema: Schema, name: string, path: string): string {
    if (schema.properties !== undefined && !isSchemaObject(schema.properties)) throw structuredError(`'properties' at ${path}/properties must be an object`);
    const required = schema.required ?? [];
    if (!Array.isArray(required) || required.some((r) => typeof r !== 'string')) throw structuredError(`'required' at ${path}/required must be an array of strings`);
    const props: [string, unknown, string][] = Object.entries(schema.properties ?? {}).map(([k, v]) => [k, v, `${path}/properties/${pointerPart(k)}`]);
    for (const r of required as string[]) if (!props.some(([k]) => k === r)) props.push([r, true, `${path}/required`]);
    let additional = schema.additionalProperties;
    if (additional === undefined) additional = !('properties' in schema); // declared properties close the object (as llama.cpp and xgrammar do)
    if (this.opts.disableAdditionalProperties) additional = false;
    if (props.length === 0 && additional === true) return this.json.use('object');

    const sp = this.sp;
    const comma = `","${sp}`;
    const kvs = props.map(([key, sub, at]) => {
      const value = this.visit(sub, `${name}-${key}`, at);
      return this.rules.add(`${name}-${key}-kv`, `${gbnfLiteral(JSON.stringify(key))}${sp} ":"${sp} ${value}`);
    });
    let extra: string | null = null;
    if (additional !== false) {
      const value = additional === true ? this.json.use('value') : this.visit(additional, `${name}-additional-value`, `${path}/additionalProperties`);
      const keyContent = otherKeyExpression(props.map(([k]) => k), this.json.use('char'));
      const key = keyContent === null ? this.json.use('string') : this.rules.add(`${name}-additional-key`, `"\\"" ${keyContent} "\\""${sp}`);
      extra = this.rules.add(`${name}-additional-kv`, `${key} ":"${sp} ${value}`);
    }
    const extras = extra ? `( ${comma} ${extra} )*` : null;
    const isRequired = props.map(([k]) => (required as string[]).includes(k));
    // Whatever follows property k once something has been written: each later property with its comma.
    const tail = (k: number): string | null => gbnfSequence([
      ...kvs.slice(k + 1).map((kv, j) => (isRequired[k + 1 + j] ? `${comma} ${kv}` : `( ${comma} ${kv} )?`)),
      extras,
    ]);
    const firstRequired = isRequired.indexOf(true);
    const starts: string[] = [];
    for (let k = 0; k < kvs.length && (firstRequired < 0 || k <= firstRequired); k++) starts.push(gbnfSequence([kvs[k]!, tail(k)])!);
    if (firstRequired < 0 && extra) starts.push(gbnfSequence([extra, extras])!);
    const members = starts.length === 0 ? null : firstRequired < 0 ? `( ${starts.join(' | ')} )?` : starts.length === 1 ? starts[0]! : `( ${starts.join(' | ')} )`;
    return gbnfSequence([`"{"${sp}`, members, `"}"${sp}`])!;
  }

  private array(schema: Schema, name: string, path: string): string {
    let minItems = this.count(schema, 'minItems', path) ?? 0;
    const maxItems = this.count(schema, 'maxItems', path);
    // Tuple form: prefixItems (2020-12) or an items array (draft 4–7); the rest is items / additionalItems.
    let prefix: unknown[] = [];
    let rest: unknown = schema.items;
    let restAt = `${path}/items`;
    if (Array.isArray(schema.prefixItems)) prefix = schema.prefixItems;
    else if (Array.isArray(schema.items)) {
      prefix = schema.items;
      rest = schema.additionalItems;
      restAt = `${path}/additionalItems`;
    }
    // Tuple items are all required (as llama.cpp writes them; a tuple cut short is rarely what is meant),
    // and a missing rest schema after a tuple means no more items; without a tuple, any items.
    if (rest === undefined) rest = prefix.length > 0 ? false : true;
    const sp = this.sp;
    const comma = `","${sp}`;
    const itemsAt = Array.isArray(schema.prefixItems) ? `${path}/prefixItems` : `${path}/items`;
    const prefixRules = prefix.map((p, i) => this.visit(p, `${name}-${i}`, `${itemsAt}/${i}`));
    const hi = rest === false ? Math.min(prefix.length, maxItems ?? Infinity) : maxItems;
    minItems = Math.max(minItems, Math.min(prefix.length, hi ?? Infinity));
    if (minItems > (hi ?? Infinity)) throw structuredError(`Array schema at ${path} allows no length (minItems ${minItems} > ${hi} possible items)`);

    let elements: string | null = null;
    if (rest !== false && (hi === undefined || hi > prefix.length)) {
      const item = this.visit(rest, `${name}-item`, restAt);
      const lo = Math.max(0, minItems - prefix.length);
      const more = hi === undefined ? undefined : hi - prefix.length;
      if (prefix.length > 0) elements = gbnfRepeat(`${comma} ${item}`, lo, more);
      else {
        const others = gbnfRepeat(`${comma} ${item}`, Math.max(0, lo - 1), more === undefined ? undefined : more - 1);
        const list = gbnfSequence([item, others])!;
        elements = lo === 0 ? `( ${list} )?` : list;
      }
    }
    for (let i = Math.min(prefix.length, hi ?? Infinity) - 1; i >= 0; i--) {
      elements = gbnfSequence([i === 0 ? prefixRules[i]! : `${comma} ${prefixRules[i]!}`, elements]);
      if (i >= minItems) elements = `( ${elements} )?`;
    }
    return gbnfSequence([`"["${sp}`, elements, `"]"${sp}`])!;
  }

  private count(schema: Schema, key: string, path: string): number | undefined {
    const v = schema[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw structuredError(`'${key}' at ${path}/${key} must be a non-negative integer`);
    return v;
  }

  private string(schema: Schema, name: string, path: string): string {
    const sp = this.sp;
    const quoted = (content: string | null): string => gbnfSequence(['"\\""', content, `"\\""${sp}`])!;
    if (schema.pattern !== undefined) {
      // A pattern decides the whole content; length limits next to it are not intersected.
      if (typeof schema.pattern !== 'string') throw structuredError(`'pattern' at ${path}/pattern must be a string`);
      let content: string | null;
      try {
        content = regexToExpression(schema.pattern, 'json-string');
      } catch (e) {
        throw structuredError(`${(e as Error).message} (JSON schema ${path}/pattern)`);
      }
      return quoted(content);
    }
    const format = schema.format;
    if (typeof format === 'string' && (STRING_FORMATS as readonly string[]).includes(format)) return quoted(this.json.use(format));
    // Other formats are annotations (JSON Schema 2020-12) and leave the string free.
    const minLength = this.count(schema, 'minLength', path) ?? 0;
    const maxLength = this.count(schema, 'maxLength', path);
    if (maxLength !== undefined && maxLength < minLength) throw structuredError(`String schema at ${path} has maxLength < minLength`);
    if (minLength === 0 && maxLength === undefined) return this.json.use('string');
    return quoted(gbnfRepeat(this.json.use('char'), minLength, maxLength));
  }

  private integer(schema: Schema, path: string): string {
    const bound = (key: string): number | undefined => {
      const v = schema[key];
      if (v === undefined || typeof v === 'boolean') return undefined;
      if (typeof v !== 'number' || !Number.isFinite(v)) throw structuredError(`'${key}' at ${path}/${key} must be a finite number`);
      return v;
    };
    let min: bigint | undefined;
    let max: bigint | undefined;
    const raise = (v: bigint): void => { min = min === undefined || v > min ? v : min; };
    const lower = (v: bigint): void => { max = max === undefined || v < max ? v : max; };
    const minimum = bound('minimum');
    const maximum = bound('maximum');
    const exMin = bound('exclusiveMinimum');
    const exMax = bound('exclusiveMaximum');
    // Draft 4 spells exclusive bounds as booleans next to minimum/maximum.
    if (minimum !== undefined) raise(schema.exclusiveMinimum === true ? BigInt(Math.floor(minimum)) + 1n : BigInt(Math.ceil(minimum)));
    if (maximum !== undefined) lower(schema.exclusiveMaximum === true ? BigInt(Math.ceil(maximum)) - 1n : BigInt(Math.floor(maximum)));
    if (exMin !== undefined) raise(BigInt(Math.floor(exMin)) + 1n);
    if (exMax !== undefined) lower(BigInt(Math.ceil(exMax)) - 1n);
    if (min === undefined && max === undefined) return this.json.use('integer');
    if (min !== undefined && max !== undefined && min > max) throw structuredError(`Integer schema at ${path} allows no value (minimum above maximum)`);
    return gbnfSequence([intRangeExpression(min, max), this.sp ? WS_RULE : null])!;
  }
}
