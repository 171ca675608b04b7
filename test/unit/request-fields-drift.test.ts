// The request field table (lib/engine/request-fields.ts) against the files that define the same fields
// a second time: the addon's conversion (js-convert.cpp), the C++ structs it fills (engine.h,
// sampling-params.h, repetition-detector.h) and the TS shape of the native request (native/types.ts).
// A field added, renamed, re-ranged or re-defaulted in one of them without the table fails here.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINE_DEFAULTS, NUMERIC_FIELDS, REPETITION_FIELDS, type NumericField } from '../../lib/engine/request-fields.js';

const root = path.resolve(__dirname, '..', '..');
const read = (p: string): string => fs.readFileSync(path.join(root, p), 'utf8');
const convertAll = read('native/addon/js-convert.cpp');
/** engine_request_from_js: the conversion of one request. */
const convert = /engine_request engine_request_from_js[\s\S]*?\n\}/.exec(convertAll)![0];
const engineH = read('native/engine/engine.h');
const samplingH = read('native/sample/sampling-params.h');
const repetitionH = read('native/decode/repetition-detector.h');
const nativeTypes = read('lib/native/types.ts');

/** `struct name { … };` → member → default initialiser (numbers only). */
function structDefaults(source: string, name: string): Map<string, number> {
  const m = new RegExp(`struct ${name} \\{([\\s\\S]*?)\\n\\};`).exec(source);
  if (!m) throw new Error(`struct ${name} not found`);
  const out = new Map<string, number>();
  for (const line of m[1]!.matchAll(/^\s*(?:int32_t|int64_t|uint64_t|float|double)\s+(\w+)\s*=\s*([^;]+);/gm)) {
    out.set(line[1]!, cppNumber(line[2]!.trim()));
  }
  return out;
}

const CPP_CONSTANTS: Record<string, number> = {
  k_i32_max: 0x7fffffff,
  INT32_MAX: 0x7fffffff,
  '1 << 16': 1 << 16,
  '-(int64_t(1) << 53)': -(2 ** 53),
  'int64_t(1) << 53': 2 ** 53,
  '(int64_t(1) << 53) - 1': 2 ** 53 - 1,
};

function cppNumber(text: string): number {
  const t = text.trim();
  if (t in CPP_CONSTANTS) return CPP_CONSTANTS[t]!;
  const n = Number(t.replace(/f$/, ''));
  if (!Number.isFinite(n)) throw new Error(`cannot read the C++ value '${text}'`);
  return n;
}

const structs: Record<string, Map<string, number>> = {
  q: structDefaults(engineH, 'engine_request'),
  s: structDefaults(samplingH, 'sampling_params'),
  'q.repetition': structDefaults(repetitionH, 'repetition_params'),
};

interface Conversion { target: string; member: string; reader: 'integer' | 'number'; fallback: string; lo?: number; hi?: number }

/** The arguments of the call whose `(` is at `open`, split at top-level commas. */
function callArgs(text: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) return [...args, text.slice(start, i).trim()];
    else if (ch === ',' && depth === 1) {
      args.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  throw new Error('unbalanced call in js-convert.cpp');
}

/** js-convert.cpp's `x.member = …r.integer("key", fallback, lo, hi)` / `r.number("key", fallback)` lines. */
function conversions(): Map<string, Conversion> {
  const out = new Map<string, Conversion>();
  const re = /([\w.]+?)\.(\w+) = (?:\w+\()?\w+\.(integer|number)(\()"(\w+)"/g;
  for (const m of convert.matchAll(re)) {
    const args = callArgs(convert, m.index + m[0].length - m[5]!.length - 3);
    out.set(m[5]!, {
      target: m[1]!,
      member: m[2]!,
      reader: m[3] as 'integer' | 'number',
      fallback: args[1]!,
      lo: args[2] === undefined ? undefined : cppNumber(args[2]),
      hi: args[3] === undefined ? undefined : cppNumber(args[3]),
    });
  }
  return out;
}

const conv = conversions();

function checkField(f: NumericField): void {
  const c = conv.get(f.key);
  expect(c, `js-convert.cpp reads "${f.key}"`).toBeDefined();
  const target = c!.target;
  expect(Object.keys(structs), `${f.key} fills a known struct`).toContain(target);
  expect(c!.member, `${f.key} fills ${f.native}`).toBe(f.native);
  expect(c!.reader, `${f.key} is read as ${f.kind}`).toBe(f.kind === 'int' ? 'integer' : 'number');
  const member = structs[target]!.get(f.native);
  expect(member, `${f.native} has a numeric default in its struct`).toBeDefined();
  expect(member, `${f.native}'s C++ default`).toBe(f.default);
  if (c!.fallback !== `${target}.${f.native}` && !c!.fallback.startsWith('s.')) {
    expect(cppNumber(c!.fallback), `js-convert's fallback for ${f.key}`).toBe(f.default);
  }
  if (f.kind === 'int') {
    expect(c!.lo! <= f.min && f.max <= c!.hi!, `${f.key}: the table's [${f.min}, ${f.max}] fits the addon's [${c!.lo}, ${c!.hi}]`).toBe(true);
  }
}

describe('request field table vs the native side', () => {
  const nativeRequest = /export interface NativeRequest \{([\s\S]*?)\n\}/.exec(nativeTypes)![1]!;
  const nativeKeys = new Set([...nativeRequest.matchAll(/^\s+(\w+)\??:/gm)].map((m) => m[1]!));

  it.each(NUMERIC_FIELDS.map((f) => [f.key, f] as const))('%s: js-convert.cpp, the C++ struct and its default agree', (_key, f) => {
    checkField(f);
    expect(nativeKeys.has(f.key), `NativeRequest has ${f.key}`).toBe(true);
  });

  it.each(REPETITION_FIELDS.map((f) => [f.key, f] as const))('repetitionDetection.%s agrees with repetition_params', (_key, f) => {
    checkField(f);
    expect(conv.get(f.key)!.target).toBe('q.repetition');
  });

  it('every key js-convert.cpp reads from a request is a NativeRequest key, and the other way round', () => {
    const read = new Set([...convert.matchAll(/\br\.\w+\("(\w+)"/g)].map((m) => m[1]!));
    // grammar is attached by js_engine::submit, not by the conversion
    expect([...read].sort()).toEqual([...nativeKeys].filter((k) => k !== 'grammar').sort());
  });

  it('the engine-wide defaults the JS side relies on match engine_params', () => {
    const params = structDefaults(engineH, 'engine_params');
    expect(params.get('max_num_seqs')).toBe(ENGINE_DEFAULTS.maxNumSeqs);
    expect(params.get('max_logprobs')).toBe(ENGINE_DEFAULTS.maxLogprobs);
  });
});
