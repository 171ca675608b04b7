// NOTE(structured/schema-merge): allOf becomes one schema before conversion. Object parts merge their
// properties (a name in several parts gets allOf of its schemas) and required lists; numeric and
// length bounds take the tighter value; types intersect; any other keyword must agree exactly across
// parts, else the allOf is rejected (a grammar cannot intersect two arbitrary languages cheaply).
import { structuredError } from './error.js';

export type Schema = Record<string, unknown>;

export const ANNOTATION_KEYWORDS = new Set(['title', 'description', 'default', 'examples', '$comment', '$id', '$schema', '$anchor', 'deprecated', 'readOnly', 'writeOnly', '$defs', 'definitions']);
const TAKE_MAX = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems']);
const TAKE_MIN = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems']);

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function typesOf(t: unknown): string[] {
  return Array.isArray(t) ? t.map(String) : [String(t)];
}

/**
 * One schema equivalent to allOf(parts). `resolve` follows a top-level $ref of a part.
 * pre: every part is a schema object (or true); `path` names the allOf for error messages.
 */
export function mergeAllOf(parts: unknown[], path: string, resolve: (s: Schema, at: string) => unknown): Schema {
  const flat: Schema[] = [];
  // `refs` are the $refs being expanded on the way here: meeting one again is a cycle with no base case.
  const collect = (part: unknown, at: string, refs: string[]): void => {
    if (part === true) return;
    if (part === false) throw structuredError(`JSON schema at ${at} is 'false' and matches no value`);
    if (typeof part !== 'object' || part === null || Array.isArray(part)) throw structuredError(`Expected a JSON schema object at ${at}`);
    let s = part as Schema;
    if (s.$ref !== undefined) {
      const { $ref, ...rest } = s;
      if (refs.includes(String($ref))) throw structuredError(`allOf at ${path} refers to itself through $ref ${JSON.stringify($ref)}`);
      collect(resolve({ $ref }, at), at, [...refs, String($ref)]);
      s = rest;
    }
    if (s.allOf !== undefined) {
      const { allOf, ...rest } = s;
      if (!Array.isArray(allOf)) throw structuredError(`'allOf' at ${at}/allOf must be an array`);
      allOf.forEach((p, i) => collect(p, `${at}/allOf/${i}`, refs));
      s = rest;
    }
    flat.push(s);
  };
  parts.forEach((p, i) => collect(p, `${path}/${i}`, []));

  const out: Schema = {};
  for (const part of flat) {
    for (const [key, value] of Object.entries(part)) {
      if (ANNOTATION_KEYWORDS.has(key)) continue;
      if (!(key in out)) {
        out[key] = key === 'properties' ? { ...(value as Schema) } : value;
        continue;
      }
      const prev = out[key];
      if (key === 'properties') {
        const merged = out.properties as Schema;
        for (const [name, sub] of Object.entries(value as Schema)) {
          merged[name] = name in merged && !sameJson(merged[name], sub) ? { allOf: [merged[name], sub] } : sub;
        }
      } else if (key === 'required') {
        out.required = [...new Set([...(prev as string[]), ...(value as string[])])];
      } else if (key === 'type') {
        const b = typesOf(value);
        const both = typesOf(prev).flatMap((t) => (b.includes(t) ? [t] : t === 'number' && b.includes('integer') ? ['integer'] : t === 'integer' && b.includes('number') ? ['integer'] : []));
        if (both.length === 0) throw structuredError(`allOf at ${path} has no type in common (${JSON.stringify(prev)} and ${JSON.stringify(value)})`);
        out.type = both.length === 1 ? both[0] : both;
      } else if (key === 'additionalProperties') {
        if (prev === false || value === false) out.additionalProperties = false;
        else if (prev === true || prev === undefined) out.additionalProperties = value;
        else if (value !== true && !sameJson(prev, value)) out.additionalProperties = { allOf: [prev, value] };
      } else if (TAKE_MAX.has(key) && typeof prev === 'number' && typeof value === 'number') {
        out[key] = Math.max(prev, value);
      } else if (TAKE_MIN.has(key) && typeof prev === 'number' && typeof value === 'number') {
        out[key] = Math.min(prev, value);
      } else if (!sameJson(prev, value)) {
        throw structuredError(`allOf at ${path} has conflicting '${key}' values that cannot be combined`);
      }
    }
  }
  return out;
}
