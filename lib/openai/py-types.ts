// NOTE(openai/py-types): every schema here carries the pydantic v2 error *type* it must report, so the
// zod issue → FastAPI `detail[]` mapping in validate.ts is a table lookup, not guesswork. A marker
// message "py:<type>" on a zod check names that type; range checks use zod's own too_small/too_big.
import { z } from 'zod';

/** Largest/smallest int64 as JS numbers (doubles: ±2^63, the nearest representable values). */
export const INT64_MAX = 9223372036854775807;
export const INT64_MIN = -9223372036854775808;

export const py_int = () =>
  z.number({ error: () => 'py:int_type' }).refine((v) => Number.isInteger(v), { message: 'py:int_from_float' });
export const py_float = () =>
  z.number({ error: () => 'py:float_type' }).refine((v) => Number.isFinite(v), { message: 'py:finite_number' });
export const py_str = () => z.string({ error: () => 'py:string_type' });
export const py_bool = () => z.boolean({ error: () => 'py:bool_type' });
export const py_list = <T extends z.ZodType>(item: T) => z.array(item, { error: () => 'py:list_type' });
export const py_dict = () => z.record(z.string(), z.unknown(), { error: () => 'py:dict_type' });

/** A union whose branch failures are reported per branch, pydantic style: loc gets the branch tag. */
export function py_union<const T extends readonly [z.ZodType, z.ZodType, ...z.ZodType[]]>(
  tags: readonly string[],
  options: T,
) {
  return z.union(options, { error: () => `py:union:${tags.join('|')}` });
}

/** A Literal[...] with pydantic's "Input should be 'a', 'b' or 'c'" message. */
export function py_literal<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: () => `py:literal_error:${JSON.stringify(values)}` });
}

/** An object that, like vLLM's models (extra="allow"), keeps unknown keys. */
export function py_object<T extends z.ZodRawShape>(shape: T) {
  return z.looseObject(shape, { error: () => 'py:dict_type' });
}
