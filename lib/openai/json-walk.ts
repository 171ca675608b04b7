// Sizes of request-supplied JSON values, for the request limits (request-limits.ts, chat-input.ts).
// Iterative, since a hostile value may nest deeper than the stack; arrays are walked by index and typed
// arrays (the token-id fields, token-id-fields.ts) not at all, so a list of a million ids is never
// copied by Object.values.

/**
 * Nesting depth of a JSON value: a scalar is 0, [] and {} (and a typed array) are 1. With `stopAbove`,
 * the walk ends as soon as a depth above it is seen and returns that depth.
 */
export function nestingDepth(value: unknown, stopAbove = Number.POSITIVE_INFINITY): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) max = depth;
    if (max > stopAbove) return max;
    if (ArrayBuffer.isView(v)) continue;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) if (v[i] !== null && typeof v[i] === 'object') stack.push([v[i], depth + 1]);
    } else {
      for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return max;
}

/** How many JSON values (objects, arrays, scalars) a value holds. */
export function jsonValueCount(value: unknown): number {
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    n += 1;
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) stack.push(v[i]);
    else for (const child of Object.values(v)) stack.push(child);
  }
  return n;
}
