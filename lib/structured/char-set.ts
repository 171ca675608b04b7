// NOTE(structured/char-set): a set of Unicode code points kept as sorted, disjoint, non-adjacent
// inclusive ranges. Every operation returns a new normalised set, so sets can be shared freely.

export type CodeRange = readonly [lo: number, hi: number];
export type CharSet = readonly CodeRange[];

export const MAX_CODE_POINT = 0x10ffff;

export function charSet(ranges: Iterable<CodeRange>): CharSet {
  const sorted = [...ranges].filter(([lo, hi]) => lo <= hi).sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

export function single(cp: number): CharSet {
  return [[cp, cp]];
}

export function union(...sets: CharSet[]): CharSet {
  return charSet(sets.flat());
}

export function complement(set: CharSet): CharSet {
  const out: CodeRange[] = [];
  let next = 0;
  for (const [lo, hi] of set) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

export function intersect(a: CharSet, b: CharSet): CharSet {
  return complement(union(complement(a), complement(b)));
}

export function has(set: CharSet, cp: number): boolean {
  return set.some(([lo, hi]) => cp >= lo && cp <= hi);
}

export function isEmpty(set: CharSet): boolean {
  return set.length === 0;
}

/** The single code point of a one-element set, else undefined. */
export function onlyMember(set: CharSet): number | undefined {
  const r = set[0];
  return set.length === 1 && r && r[0] === r[1] ? r[0] : undefined;
}

// ECMAScript's class escapes (\d \w \s) and `.` (everything but line terminators).
export const DIGIT: CharSet = [[0x30, 0x39]];
export const WORD: CharSet = charSet([[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]]);
export const SPACE: CharSet = charSet([
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff],
]);
export const LINE_TERMINATORS: CharSet = charSet([[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]]);
export const DOT: CharSet = complement(LINE_TERMINATORS);
