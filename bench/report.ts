// The benchmark's result shape (written as JSON) and its printed table.
import type { Workload } from './options.js';
import { fmt, type Series } from './stats.js';

export interface Comparison {
  label: string;
  unit: string;
  tokenmill?: Series;
  llamacpp?: Series;
  /** tokenmill median / llama.cpp median (above 1: tokenmill is faster). */
  ratio?: number;
}

export interface SamplingSide {
  greedyUsPerToken: number;
  fullUsPerToken: number;
  /** What all processors add per token over greedy, in µs (median difference; may be slightly negative in noise). */
  costUs: number;
  /** costUs as a fraction of one main-model decode step of the same implementation. */
  fractionOfDecodeStep?: number;
  greedyRuns: number[];
  fullRuns: number[];
}

export interface SamplingRow {
  vocab: number;
  tokenmill?: SamplingSide;
  llamacpp?: SamplingSide;
}

export interface BenchResult {
  date: string;
  commit: string;
  quick: boolean;
  threads: number;
  workload: Workload;
  machine: { cpu: string; cpus: number; node: string; platform: string; loadavgBefore: number; loadavgAfter: number };
  peer: { package: string; version: string };
  model: { name: string; path: string; bytes: number; options: object };
  comparisons: Comparison[];
  sampling: SamplingRow[];
}

const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length));
const lpad = (s: string, n: number): string => (s.length >= n ? s : ' '.repeat(n - s.length) + s);

function cell(s: Series | undefined): string {
  return s ? `${fmt(s.median)} [${fmt(s.min)}-${fmt(s.max)}]` : '-';
}

export function printTable(r: BenchResult): void {
  const out: string[] = [];
  out.push(`tokenmill vs llama.cpp (node-llama-cpp ${r.peer.version}) — ${r.model.name}, ${(r.model.bytes / 1e9).toFixed(2)} GB, ` +
    `${r.threads} threads, ${r.workload.reps} reps${r.quick ? ' (QUICK smoke run)' : ''}`);
  out.push(`${r.machine.cpu} (${r.machine.cpus} cpus), node ${r.machine.node}, commit ${r.commit}`);
  out.push(`1-minute load average before/after: ${fmt(r.machine.loadavgBefore, 2)} / ${fmt(r.machine.loadavgAfter, 2)} (the run itself adds up to ${r.threads})`);
  out.push('');
  const w = [46, 26, 26, 10];
  out.push(pad('metric (median [min-max])', w[0]!) + lpad('tokenmill', w[1]!) + lpad('llama.cpp', w[2]!) + lpad('ratio', w[3]!));
  for (const c of r.comparisons) {
    out.push(pad(c.label, w[0]!) + lpad(cell(c.tokenmill), w[1]!) + lpad(cell(c.llamacpp), w[2]!) + lpad(c.ratio === undefined ? '-' : fmt(c.ratio, 2), w[3]!));
  }
  if (r.sampling.length > 0) {
    out.push('');
    out.push('sampling cost, all processors on (full - greedy, µs/token; share of one decode step of the model above)');
    for (const s of r.sampling) {
      const side = (x: SamplingSide | undefined): string =>
        x ? `${fmt(x.costUs)} µs (${x.fractionOfDecodeStep === undefined ? '-' : fmt(x.fractionOfDecodeStep * 100, 2) + '%'})` : '-';
      const ratio = s.tokenmill && s.llamacpp ? fmt(s.tokenmill.costUs / s.llamacpp.costUs, 2) : '-';
      out.push(pad(`  vocab ${s.vocab}`, w[0]!) + lpad(side(s.tokenmill), w[1]!) + lpad(side(s.llamacpp), w[2]!) + lpad(ratio, w[3]!));
      const base = (x: SamplingSide | undefined): string => (x ? `${fmt(x.greedyUsPerToken)} / ${fmt(x.fullUsPerToken)}` : '-');
      out.push(pad('    tiny-model step greedy / full, µs', w[0]!) + lpad(base(s.tokenmill), w[1]!) + lpad(base(s.llamacpp), w[2]!));
    }
    out.push('  (sampling ratio is tokenmill cost / llama.cpp cost: below 1 means tokenmill samples faster)');
  }
  out.push('');
  out.push('ratios are tokenmill / llama.cpp medians: above 1 means tokenmill is faster');
  console.log(out.join('\n'));
}
