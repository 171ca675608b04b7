// NOTE(structured/int-range): a GBNF expression for the decimal integers in [min, max] (either bound may be
// open), written without leading zeros and without "-0". Digit strings of equal length are split at the
// first differing digit (lower edge, full middle band, upper edge), so the size grows with the number of
// digits, not with the width of the range. Open upper ends allow up to 16 digits, like the plain
// integer rule.
import { gbnfAlternatives, gbnfLiteral, gbnfRepeat, gbnfSequence, primary } from './gbnf-text.js';

const MAX_OPEN_DIGITS = 16;

/** Integers min..max as one expression. pre: min <= max when both are given. */
export function intRangeExpression(min: bigint | undefined, max: bigint | undefined): string {
  if (min !== undefined && max !== undefined && min > max) throw new Error('intRangeExpression: min > max');
  const options: string[] = [];
  // Negative part: "-" and a magnitude in [max(1, -max), -min].
  if (min === undefined || min < 0n) {
    const lo = max === undefined || max >= 0n ? 1n : -max;
    const hi = min === undefined ? undefined : -min;
    options.push(`"-" ${primary(naturalRange(lo, hi))}`);
  }
  if (max === undefined || max >= 0n) {
    const lo = min === undefined || min < 0n ? 0n : min;
    options.push(naturalRange(lo, max));
  }
  return gbnfAlternatives(options)!;
}

// Non-negative integers lo..hi (hi undefined = no upper bound). pre: 0 <= lo <= hi.
function naturalRange(lo: bigint, hi: bigint | undefined): string {
  const loDigits = lo.toString().length;
  const hiDigits = hi === undefined ? loDigits : hi.toString().length;
  const options: string[] = [];
  for (let n = loDigits; n <= hiDigits; n++) {
    const a = n === loDigits ? lo : 10n ** BigInt(n - 1);
    const b = hi !== undefined && n === hiDigits ? hi : 10n ** BigInt(n) - 1n;
    options.push(sameLength(a.toString(), b.toString()));
  }
  if (hi === undefined) {
    // Every number with more digits than lo is above it.
    const more = gbnfRepeat('[0-9]', loDigits, Math.max(loDigits, MAX_OPEN_DIGITS - 1));
    options.push(`[1-9] ${more}`);
  }
  return gbnfAlternatives(options)!;
}

function digitClass(lo: number, hi: number): string {
  return lo === hi ? gbnfLiteral(String(lo)) : `[${lo}-${hi}]`;
}

function anyDigits(n: number): string | null {
  return gbnfRepeat('[0-9]', n, n);
}

// Digit strings from a to b, both of the same length. pre: a <= b numerically, a.length === b.length.
function sameLength(a: string, b: string): string {
  if (a === b) return gbnfLiteral(a);
  const n = a.length;
  const a0 = Number(a[0]);
  const b0 = Number(b[0]);
  const aRest = a.slice(1);
  const bRest = b.slice(1);
  if (a0 === b0) return gbnfSequence([gbnfLiteral(a[0]!), sameLength(aRest, bRest)])!;
  const lowFull = /^0*$/.test(aRest);
  const highFull = /^9*$/.test(bRest);
  const options: string[] = [];
  let first = a0;
  let last = b0;
  if (!lowFull) {
    options.push(gbnfSequence([gbnfLiteral(a[0]!), sameLength(aRest, '9'.repeat(n - 1))])!);
    first = a0 + 1;
  }
  if (!highFull) last = b0 - 1;
  if (first <= last) options.push(gbnfSequence([digitClass(first, last), anyDigits(n - 1)])!);
  if (!highFull) options.push(gbnfSequence([gbnfLiteral(b[0]!), sameLength('0'.repeat(n - 1), bRest)])!);
  return gbnfAlternatives(options)!;
}
