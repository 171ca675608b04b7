// The benchmark's result shape (written as JSON) and its printed table.
import type { DecodeLimit } from './decode-limit.js';
import type { HttpResult } from './http-bench.js';
import type { Workload } from './options.js';
import type { Platform } from './platform.js';
import type { RealModelResult } from './real-models.js';
import { fmt, type Series } from './stats.js';
import type { TimelineEntry } from './timeline.js';

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
  /** What all processors add per token over greedy, in µs: the median of pairedCostsUs (may be slightly negative in noise). */
  costUs: number;
  /** Per repetition, full minus greedy µs/token of its two back-to-back runs. */
  pairedCostsUs: number[];
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
  platform: Platform;
  /** Single-stream decode's ceiling, read beside its repetitions (absent with --only llamacpp or --http). */
  decodeLimit?: DecodeLimit;
  peer: { package: string; version: string };
  model: { name: string; path: string; bytes: number; options: object };
  comparisons: Comparison[];
  /** Prompt and decode on the real models (empty with --skip-real-models or --http). */
  realModels: RealModelResult[];
  sampling: SamplingRow[];
  /** tokenmill's HTTP server alone (absent with --skip-http or --only llamacpp). */
  http?: HttpResult;
  /** Where the run's wall time went (set once the run is over). */
  timeline?: { totalSeconds: number; entries: TimelineEntry[] };
}

const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length));
const lpad = (s: string, n: number): string => (s.length >= n ? s : ' '.repeat(n - s.length) + s);

function cell(s: Series | undefined): string {
  return s ? `${fmt(s.median)} [${fmt(s.min)}-${fmt(s.max)}] x${s.values.length}` : '-';
}

function row(out: string[], w: number[], label: string, c: Comparison): void {
  out.push(pad(label, w[0]!) + lpad(cell(c.tokenmill), w[1]!) + lpad(cell(c.llamacpp), w[2]!) + lpad(c.ratio === undefined ? '-' : fmt(c.ratio, 2), w[3]!));
}

function shareRows(out: string[], w: number[], indent: string, limit: DecodeLimit): void {
  const share = (x: number | undefined): string => (x === undefined ? '-' : `${fmt(x * 100)}%`);
  out.push(pad(`${indent}share of the bandwidth limit (median ${fmt(limit.tokPerSecond)} tok/s)`, w[0]!) + lpad(share(limit.share.tokenmill), w[1]!) + lpad(share(limit.share.llamacpp), w[2]!));
  out.push(`${indent}  (per repetition: the model's ${fmt(limit.weightBytes / 1e9, 3)} GB of weights read per decode step, read at ` +
    `${limit.readingsGBs.map((g) => fmt(g)).join(' / ')} GB/s right after each; shares are medians of per-repetition shares)`);
}

export function printTable(r: BenchResult): void {
  const out: string[] = [];
  out.push(`tokenmill vs llama.cpp (node-llama-cpp ${r.peer.version}) — ${r.model.name}, ${(r.model.bytes / 1e9).toFixed(2)} GB, ` +
    `${r.threads} threads${r.quick ? ' (QUICK smoke run)' : ''}`);
  out.push(`${r.machine.cpu} (${r.machine.cpus} cpus), node ${r.machine.node}, commit ${r.commit}`);
  const p = r.platform;
  out.push(`CPU features: ${p.features.join(' ') || 'none of note'}; tokenmill kernels ${p.kernelLevel}; ` +
    `llama.cpp CPU variant ${p.llamacppVariant ?? '-'}; read bandwidth ${fmt(p.readBandwidthGBs)} GB/s at the start ` +
    `(${r.threads} threads, a fresh 1 GiB buffer; the decode limits below are read beside each decode repetition)`);
  out.push(`1-minute load average before/after: ${fmt(r.machine.loadavgBefore, 2)} / ${fmt(r.machine.loadavgAfter, 2)} (the run itself adds up to ${r.threads})`);
  out.push('');
  const w = [50, 30, 30, 8];
  if (r.comparisons.length > 0) out.push(pad('metric (median [min-max] xreps)', w[0]!) + lpad('tokenmill', w[1]!) + lpad('llama.cpp', w[2]!) + lpad('ratio', w[3]!));
  for (const c of r.comparisons) row(out, w, c.label, c);
  const dl = r.decodeLimit;
  const decode = r.comparisons.find((c) => c.label.startsWith('decode tok/s'));
  if (dl && decode) shareRows(out, w, '  ', dl);
  for (const m of r.realModels) {
    out.push('');
    out.push(`${m.name}: ${m.label}, ${(m.bytes / 1e9).toFixed(2)} GB`);
    row(out, w, `  ${m.prompt.label}`, m.prompt);
    row(out, w, `  ${m.decode.label}`, m.decode);
    if (m.decodeLimit) shareRows(out, w, '    ', m.decodeLimit);
  }
  if (r.sampling.length > 0) {
    out.push('');
    out.push('sampling cost, all processors on (full - greedy, µs/token, median of paired repetitions; share of one decode step of the model above)');
    for (const s of r.sampling) {
      const side = (x: SamplingSide | undefined): string =>
        x ? `${fmt(x.costUs)} µs (${x.fractionOfDecodeStep === undefined ? '-' : fmt(x.fractionOfDecodeStep * 100, 2) + '%'})` : '-';
      const ratio = s.tokenmill && s.llamacpp ? fmt(s.tokenmill.costUs / s.llamacpp.costUs, 2) : '-';
      out.push(pad(`  vocab ${s.vocab}`, w[0]!) + lpad(side(s.tokenmill), w[1]!) + lpad(side(s.llamacpp), w[2]!) + lpad(ratio, w[3]!));
      const range = (x: SamplingSide | undefined): string =>
        x ? `${fmt(Math.min(...x.pairedCostsUs))} .. ${fmt(Math.max(...x.pairedCostsUs))}` : '-';
      out.push(pad(`    range of the ${s.tokenmill?.pairedCostsUs.length ?? s.llamacpp?.pairedCostsUs.length ?? 0} paired differences, µs`, w[0]!) +
        lpad(range(s.tokenmill), w[1]!) + lpad(range(s.llamacpp), w[2]!));
      const base = (x: SamplingSide | undefined): string => (x ? `${fmt(x.greedyUsPerToken)} / ${fmt(x.fullUsPerToken)}` : '-');
      out.push(pad('    tiny-model step greedy / full, µs', w[0]!) + lpad(base(s.tokenmill), w[1]!) + lpad(base(s.llamacpp), w[2]!));
    }
    out.push('  (sampling ratio is tokenmill cost / llama.cpp cost: below 1 means tokenmill samples faster)');
  }
  if (r.comparisons.length > 0) {
    out.push('');
    out.push('ratios are tokenmill / llama.cpp medians: above 1 means tokenmill is faster');
  }
  if (r.http) printHttp(out, r.http);
  if (r.timeline) printTimeline(out, r.timeline);
  console.log(out.join('\n'));
}

function printHttp(out: string[], h: HttpResult): void {
  const ms = (x: number): string => `${fmt(x, 1)} ms`;
  out.push('');
  out.push('tokenmill HTTP server over 127.0.0.1 (absolute numbers; no llama.cpp HTTP peer, so no ratio)');
  const rt = h.rate;
  out.push(`  chat completions, non-stream, max_tokens 1 (${rt.model}, ${rt.clients} clients, ${rt.requests} requests)`);
  out.push(pad('    requests/s', 46) + lpad(fmt(rt.requestsPerSecond, 1), 26));
  out.push(pad('    latency p50 / p99', 46) + lpad(`${ms(rt.latency.p50Ms)} / ${ms(rt.latency.p99Ms)}`, 26));
  const t = h.ttft;
  out.push(`  streaming, ${t.clients} concurrent clients, max_tokens ${t.maxTokens} (${t.model}, ${t.rounds} rounds, ${t.ttft.count} streams)`);
  out.push(pad('    time to first token p50 / p99', 46) + lpad(`${ms(t.ttft.p50Ms)} / ${ms(t.ttft.p99Ms)}`, 26));
  out.push(pad('    whole stream p50 / p99', 46) + lpad(`${ms(t.streamTotal.p50Ms)} / ${ms(t.streamTotal.p99Ms)}`, 26));
}

function printTimeline(out: string[], t: { totalSeconds: number; entries: TimelineEntry[] }): void {
  out.push('');
  out.push(`where the time went (wall seconds; total ${fmt(t.totalSeconds)} s)`);
  for (const e of t.entries) out.push(pad(`  ${e.what}`, 46) + lpad(fmt(e.seconds), 10));
}
