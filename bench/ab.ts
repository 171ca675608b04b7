// Interleaved A/B repetitions and their comparison, shared by the main model's rows and the real models'.
//
// NOTE(ab): every repetition measures each side back to back, alternating which goes first, so slow drifts of
// the machine (thermal, other load) hit both alike. A row runs `reps.min` repetitions and adds more, up to
// `reps.max`, only while some side's spread ((max - min) / median) exceeds `reps.spread`: a quiet machine gets
// a short run, a noisy one more samples. The repetitions a row ran are in its values (table and JSON).
import type { Comparison } from './report.js';
import type { Side } from './side.js';
import { series } from './stats.js';
import type { Timeline } from './timeline.js';

export interface Reps {
  min: number;
  max: number;
  /** Relative spread below which no further repetition is run. */
  spread: number;
}

/** Exactly n repetitions. */
export const fixedReps = (n: number): Reps => ({ min: n, max: n, spread: 0 });

function spread(xs: readonly number[]): number {
  const s = series([...xs]);
  return (s.max - s.min) / Math.abs(s.median);
}

/** Runs `what` for every side per repetition; the time each side spends goes to the timeline as `row/side`. */
export async function measure(tl: Timeline, row: string, sides: readonly Side[], reps: Reps,
  what: (side: Side, rep: number) => Promise<number>): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>(sides.map((s) => [s.name, []]));
  for (let rep = 0; rep < reps.max; rep++) {
    if (rep >= reps.min && [...out.values()].every((v) => spread(v) <= reps.spread)) break;
    const order = rep % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) out.get(side.name)!.push(await tl.time(`${row}/${side.name}`, () => what(side, rep)));
  }
  return out;
}

export function compare(label: string, unit: string, values: Map<string, number[]>, lowerIsBetter = false): Comparison {
  const tm = values.get('tokenmill'), ll = values.get('llamacpp');
  const c: Comparison = { label, unit };
  if (tm) c.tokenmill = series(tm);
  if (ll) c.llamacpp = series(ll);
  if (c.tokenmill && c.llamacpp) c.ratio = lowerIsBetter ? c.llamacpp.median / c.tokenmill.median : c.tokenmill.median / c.llamacpp.median;
  return c;
}
