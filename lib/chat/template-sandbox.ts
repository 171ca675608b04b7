// NOTE(chat/template-sandbox): a bounded run of @huggingface/jinja. The library's interpreter is a
// recursive tree walker: every statement and expression goes through `Interpreter.evaluate` and every
// loop iteration through `evaluateBlock`, so overrides there bound it. A step counter checks a
// wall-clock deadline every 16 steps, and every produced string/list is checked against the output
// limits right after it is built (a doubling `x ~ x` loop fails at the first value over the limit).
// `range` is replaced by a bounded one because it materialises its list in one call. Residual gap: a
// single built-in operation (e.g. `"x" * 10**9`) allocates before the check sees it; V8 caps strings
// (~512 MiB) and its RangeError becomes a TemplateError. The template never sees JS objects with
// methods: variables go in as plain data (the library's convertToRuntimeValues).
// template-extensions.ts adds the Python behaviour real templates use that the library lacks.
import { TokenmillError } from '../engine/errors.js';
import { extensionFilter, extensionMethod, makeRuntimeKit } from './template-extensions.js';
import type { RV } from './template-extensions.js';
import { instrumentLines, LINE_MARKER, locateParseError, scanTags } from './template-locate.js';

// @huggingface/jinja is an ES module with a CommonJS build; this package compiles to CommonJS, so it is
// loaded through require (exports map → dist/index.cjs). Its declarations use extensionless relative
// imports that do not resolve under module Node16 (everything would be `any`), so the few members we
// use are typed here.
type RuntimeValueLike = RV;
interface Environment { set(name: string, value: unknown): unknown }
type Program = { readonly type: 'Program' };
interface Node { type: string; [k: string]: unknown }
interface Interpreter {
  run(program: Program): RuntimeValueLike;
  evaluate(statement: unknown, environment: Environment): RuntimeValueLike;
}
/** Private members of the library's Interpreter that BoundedInterpreter extends (present in 0.5.x). */
interface InterpreterInternals {
  evaluateMemberExpression(expr: Node, environment: Environment): RV;
  evaluateSliceExpression(object: RV, expr: Node, environment: Environment): RV;
  applyFilter(operand: RV, filterNode: Node, environment: Environment): RV;
  evaluateBlock(statements: unknown[], environment: Environment): RV;
}
interface JinjaModule {
  Environment: new () => Environment;
  Interpreter: new (env: Environment) => Interpreter;
  Template: new (source: string) => { parsed: Program };
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Environment, Interpreter, Template } = require('@huggingface/jinja') as JinjaModule;
const kit = makeRuntimeKit(Environment);
const base = Interpreter.prototype as unknown as InterpreterInternals;
/** A node standing for an already evaluated value (so a fallback to the library never re-evaluates). */
const PRECOMPUTED = '__tm_precomputed';
const pre = (value: RV): Node => ({ type: PRECOMPUTED, value });

export interface RenderLimits {
  /** Wall-clock budget for one render (ms). */
  timeMs: number;
  /** Largest string (rendered output or any intermediate) in UTF-16 code units. */
  maxChars: number;
  /** Largest list an expression may build (range(), list literals, filters). */
  maxItems: number;
}

// maxItems also bounds how far a render can overshoot timeMs: one range()/list is built (and converted
// to the interpreter's values) between two deadline checks; a million items took seconds of that.
export const DEFAULT_RENDER_LIMITS: RenderLimits = { timeMs: 2000, maxChars: 4 * 1024 * 1024, maxItems: 100_000 };

/** Thrown for raise_exception(), limit breaches and any interpreter error; status 400. */
export class TemplateError extends TokenmillError {
  constructor(message: string, readonly line: number | null = null) {
    super(message, 'template_error', 400);
  }
}

/** raise_exception() from the template: the message is the template author's. */
export class TemplateRaise extends Error {}
class LimitError extends Error {}

class BoundedInterpreter extends Interpreter {
  private steps = 0;
  constructor(env: Environment, private readonly deadline: number, private readonly limits: RenderLimits) {
    super(env);
  }

  private tick(): void {
    if ((++this.steps & 15) === 0 && Date.now() > this.deadline) {
      throw new LimitError(`chat template render exceeded the time limit of ${this.limits.timeMs} ms`);
    }
  }

  /** Every loop iteration runs its body through here, even an empty one: count it too. */
  evaluateBlock(statements: unknown[], environment: Environment): RV {
    this.tick();
    return base.evaluateBlock.call(this, statements, environment);
  }

  override evaluate(statement: unknown, environment: Environment): RuntimeValueLike {
    this.tick();
    const node = statement as Node | undefined;
    let result: RV;
    if (node?.type === PRECOMPUTED) return node.value as RV;
    else if (node?.type === 'ObjectLiteral') result = this.objectLiteral(node, environment);
    // The library's for-loop unpacks only lists, not tuples (`for a, b in [("x", "y")]`, functionary).
    else if (node?.type === 'TupleLiteral') result = kit.array((node.value as unknown[]).map((x) => this.evaluate(x, environment)));
    else result = super.evaluate(statement, environment);
    const v = result;
    if (typeof v.value === 'string' && v.value.length > this.limits.maxChars) {
      throw new LimitError(`chat template output exceeded the size limit of ${this.limits.maxChars} characters`);
    }
    if (Array.isArray(v.value) && v.value.length > this.limits.maxItems) {
      throw new LimitError(`chat template built a list longer than ${this.limits.maxItems} items`);
    }
    return result;
  }

  /** Dict literal; integer keys are kept as numbers (Python dicts allow them; Seed-OSS uses them). */
  private objectLiteral(node: Node, environment: Environment): RV {
    const map = new Map<unknown, RV>();
    for (const [k, val] of node.value as [unknown, unknown][]) {
      const key = this.evaluate(k, environment);
      if (key.type !== 'StringValue' && key.type !== 'IntegerValue') throw new Error(`Object keys must be strings or integers: got ${key.type}`);
      map.set(key.value, this.evaluate(val, environment));
    }
    return kit.object(map);
  }

  evaluateMemberExpression(expr: Node, environment: Environment): RV {
    const object = this.evaluate(expr.object, environment);
    const propNode = expr.property as Node;
    if (expr.computed && propNode.type === 'SliceExpression') return base.evaluateSliceExpression.call(this, object, propNode, environment);
    const property = expr.computed ? this.evaluate(propNode, environment)
      : kit.from(propNode.type === 'IntegerLiteral' ? propNode.value : String(propNode.value));
    if (property.type === 'StringValue') {
      const m = extensionMethod(kit, object, property.value as string);
      if (m) return m;
    }
    if (object.type === 'ObjectValue' && property.type === 'IntegerValue') {
      return (object.value as Map<unknown, RV>).get(property.value) ?? kit.undefined();
    }
    return base.evaluateMemberExpression.call(this, { type: 'MemberExpression', object: pre(object), property: pre(property), computed: true }, environment);
  }

  applyFilter(operand: RV, filterNode: Node, environment: Environment): RV {
    if (filterNode.type === 'Identifier') {
      const r = extensionFilter(kit, operand, filterNode.value as string);
      if (r) return r;
    }
    return base.applyFilter.call(this, operand, filterNode, environment);
  }
}

const PAD = (n: number, w = 2) => String(n).padStart(w, '0');
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** Python's strftime for the directives chat templates use (local time, C locale). */
export function strftime(d: Date, format: string): string {
  return format.replace(/%([a-zA-Z%-])(\w?)/g, (whole, c: string, next: string) => {
    if (c === '-') { // %-d, %-m, %-H: no zero padding (glibc extension used by some templates)
      const map: Record<string, number> = { d: d.getDate(), m: d.getMonth() + 1, H: d.getHours(), M: d.getMinutes(), I: d.getHours() % 12 || 12 };
      return next in map ? String(map[next]) : whole;
    }
    const out: Record<string, string> = {
      d: PAD(d.getDate()), m: PAD(d.getMonth() + 1), Y: String(d.getFullYear()), y: PAD(d.getFullYear() % 100),
      H: PAD(d.getHours()), I: PAD(d.getHours() % 12 || 12), M: PAD(d.getMinutes()), S: PAD(d.getSeconds()),
      p: d.getHours() < 12 ? 'AM' : 'PM', A: DAYS[d.getDay()]!, a: DAYS[d.getDay()]!.slice(0, 3),
      B: MONTHS[d.getMonth()]!, b: MONTHS[d.getMonth()]!.slice(0, 3), j: PAD(dayOfYear(d), 3), '%': '%',
    };
    return c in out ? out[c]! + next : whole;
  });
}

function dayOfYear(d: Date): number {
  return Math.floor((Date.UTC(d.getFullYear(), d.getMonth(), d.getDate()) - Date.UTC(d.getFullYear(), 0, 0)) / 86_400_000);
}

function boundedRange(maxItems: number) {
  return (start: number, stop?: number, step = 1): number[] => {
    if (stop === undefined) { stop = start; start = 0; }
    if (step === 0) throw new Error('range() arg 3 must not be zero');
    const n = Math.max(0, Math.ceil((stop - start) / step));
    if (n > maxItems) throw new LimitError(`range() of ${n} items exceeds the limit of ${maxItems}`);
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push(start + i * step);
    return out;
  };
}

const parsedCache = new Map<string, Program>();
const PARSED_CACHE_SIZE = 32;

/** Parses (cached by source text; most servers use one or two templates). */
export function parseTemplate(source: string): Program {
  let p = parsedCache.get(source);
  if (p) return p;
  try {
    p = new Template(source).parsed;
  } catch (e) {
    const line = locateParseError(source, parses);
    throw new TemplateError(`chat template does not parse${atLine(line)}: ${(e as Error).message}`, line);
  }
  if (parsedCache.size >= PARSED_CACHE_SIZE) parsedCache.delete(parsedCache.keys().next().value as string);
  parsedCache.set(source, p);
  return p;
}

function parses(text: string): boolean {
  try {
    void new Template(text).parsed;
    return true;
  } catch {
    return false;
  }
}

const atLine = (line: number | null) => (line ? ` (template line ${line})` : '');

/** First 1-based line of `source` containing `needle`, for error messages. */
function lineOf(source: string, needle: string): number | null {
  if (!needle) return null;
  const at = source.indexOf(needle);
  return at < 0 ? null : source.slice(0, at).split('\n').length;
}

function run(program: Program, vars: Record<string, unknown>, limits: RenderLimits, now: () => Date): string {
  const env = new Environment();
  for (const [k, v] of [['false', false], ['true', true], ['none', null], ['False', false], ['True', true], ['None', null]] as const) env.set(k, v);
  env.set('raise_exception', (message: unknown) => { throw new TemplateRaise(String(message)); });
  env.set('range', boundedRange(limits.maxItems));
  env.set('strftime_now', (format: unknown) => strftime(now(), String(format)));
  for (const [k, v] of Object.entries(vars)) if (v !== undefined) env.set(k, v);
  return String(new BoundedInterpreter(env, Date.now() + limits.timeMs, limits).run(program).value);
}

/** Line of the tag whose evaluation fails, found by rendering a marked copy (error path only). */
function locateRenderError(source: string, vars: Record<string, unknown>, limits: RenderLimits, now: () => Date): number | null {
  const tags = scanTags(source);
  if (!Array.isArray(tags)) return null;
  let line: number | null = null;
  const marker = (n: unknown) => { line = Number(n); return ''; };
  try {
    run(new Template(instrumentLines(source, tags)).parsed, { ...vars, [LINE_MARKER]: marker }, limits, now);
  } catch {
    return line;
  }
  return null; // the marked copy rendered: the failure depends on whitespace, no line to blame
}

/** Renders `source` with `vars` under `limits`; every failure is a TemplateError. */
export function renderBounded(source: string, vars: Record<string, unknown>, limits: RenderLimits = DEFAULT_RENDER_LIMITS, now: () => Date = () => new Date()): string {
  const program = parseTemplate(source);
  try {
    return run(program, vars, limits, now);
  } catch (e) {
    if (e instanceof TemplateRaise) {
      // The author's message is usually a literal in the template: name its line.
      const line = lineOf(source, e.message) ?? locateRenderError(source, vars, limits, now);
      throw new TemplateError(`chat template raised an exception${atLine(line)}: ${e.message}`, line);
    }
    if (e instanceof LimitError) throw new TemplateError(e.message);
    const line = locateRenderError(source, vars, limits, now);
    throw new TemplateError(`chat template render failed${atLine(line)}: ${(e as Error).message ?? String(e)}`, line);
  }
}
