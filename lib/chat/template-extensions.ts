// NOTE(chat/template-extensions): Python/Jinja behaviour real chat templates rely on that
// @huggingface/jinja 0.5 lacks, added to the interpreter without forking it: list methods
// (append/pop/insert/extend — Kimi-K2), str.format (Hunyuan), `|string` on dicts as Python's repr
// (Apriel), `|min`/`|max` on lists (MiniCPM5), and dict literals with integer keys plus integer
// subscripts on dicts (Seed-OSS). Runtime-value classes are not exported by the library, so they are
// taken from values an Environment creates (`Environment.set` returns the converted runtime value).

/** A runtime value of the interpreter, as far as we touch it. */
export interface RV { type: string; value: unknown }
export interface JinjaEnv { set(name: string, value: unknown): unknown }
type FnImpl = (args: RV[], scope: unknown) => RV;

export interface RuntimeKit {
  /** JS value → runtime value (the library's own conversion). */
  from(v: unknown): RV;
  fn(impl: FnImpl): RV;
  object(map: Map<unknown, RV>): RV;
  array(items: RV[]): RV;
  undefined(): RV;
}

export function makeRuntimeKit(EnvironmentCtor: new () => JinjaEnv): RuntimeKit {
  // Environment.set declares (a second set of one name throws), so each conversion gets a scratch scope.
  const from = (v: unknown) => new EnvironmentCtor().set('v', v) as RV;
  const FunctionCtor = (from(() => null) as object).constructor as new (impl: FnImpl) => RV;
  const ObjectCtor = (from({}) as object).constructor as new (m: Map<unknown, RV>) => RV;
  const ArrayCtor = (from([]) as object).constructor as new (items: RV[]) => RV;
  const undef = from(undefined);
  return { from, fn: (impl) => new FunctionCtor(impl), object: (m) => new ObjectCtor(m), array: (items) => new ArrayCtor(items), undefined: () => undef };
}

/** Python repr of a runtime value (str(dict) in a template prints this). */
export function pyRepr(v: RV): string {
  switch (v.type) {
    case 'StringValue': return `'${String(v.value).replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
    case 'BooleanValue': return v.value ? 'True' : 'False';
    case 'NullValue': case 'UndefinedValue': return 'None';
    case 'ArrayValue': return `[${(v.value as RV[]).map(pyRepr).join(', ')}]`;
    case 'TupleValue': return `(${(v.value as RV[]).map(pyRepr).join(', ')})`;
    case 'ObjectValue': case 'KeywordArgumentsValue':
      return `{${[...(v.value as Map<unknown, RV>).entries()].map(([k, x]) => `${typeof k === 'string' ? pyRepr({ type: 'StringValue', value: k }) : String(k)}: ${pyRepr(x)}`).join(', ')}}`;
    default: return String(v.value);
  }
}

/** A method of a list or str that the library does not provide, or null. */
export function extensionMethod(kit: RuntimeKit, object: RV, name: string): RV | null {
  if (object.type === 'ArrayValue') {
    const items = object.value as RV[];
    switch (name) {
      case 'append': return kit.fn(([x]) => { items.push(x ?? kit.from(null)); return kit.from(null); });
      case 'extend': return kit.fn(([xs]) => { items.push(...((xs?.value as RV[] | undefined) ?? [])); return kit.from(null); });
      case 'insert': return kit.fn(([i, x]) => { items.splice(Number(i?.value ?? 0), 0, x ?? kit.from(null)); return kit.from(null); });
      case 'pop': return kit.fn(([i]) => {
        if (items.length === 0) throw new Error('pop from empty list');
        const at = i === undefined ? items.length - 1 : (Number(i.value) + items.length) % items.length;
        return items.splice(at, 1)[0]!;
      });
      default: return null;
    }
  }
  if (object.type === 'StringValue' && name === 'format') {
    const s = String(object.value);
    return kit.fn((args) => {
      let next = 0;
      const named = args.find((a) => a.type === 'KeywordArgumentsValue')?.value as Map<string, RV> | undefined;
      const out = s.replace(/\{(\w*)\}/g, (_m, key: string) => {
        const v = key === '' ? args[next++] : /^\d+$/.test(key) ? args[Number(key)] : named?.get(key);
        if (v === undefined) throw new Error(`str.format: no value for {${key}}`);
        return v.type === 'StringValue' ? String(v.value) : pyRepr(v);
      });
      return kit.from(out);
    });
  }
  return null;
}

/** Filters the library lacks for these operand types, or null to let the library handle it. */
export function extensionFilter(kit: RuntimeKit, operand: RV, name: string): RV | null {
  if (name === 'string' && (operand.type === 'ObjectValue' || operand.type === 'KeywordArgumentsValue')) {
    return kit.from(pyRepr(operand));
  }
  if (name === 'dictsort' && operand.type === 'ObjectValue' && [...(operand.value as Map<unknown, RV>).keys()].some((k) => typeof k === 'number')) {
    // Integer keys (our extension): Python sorts them numerically.
    const entries = [...(operand.value as Map<unknown, RV>).entries()].sort(([a], [b]) => (a as number) - (b as number));
    return kit.array(entries.map(([k, v]) => kit.array([kit.from(k), v])));
  }
  if ((name === 'min' || name === 'max') && operand.type === 'ArrayValue') {
    const items = operand.value as RV[];
    if (items.length === 0) return kit.undefined();
    const better = name === 'min' ? (a: RV, b: RV) => (b.value as number) < (a.value as number) : (a: RV, b: RV) => (b.value as number) > (a.value as number);
    return items.reduce((best, x) => (better(best, x) ? x : best));
  }
  return null;
}
