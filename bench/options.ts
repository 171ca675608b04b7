// Command-line options of `npm run bench` and the workload sizes they select.
import os from 'node:os';
import path from 'node:path';
import type { HttpWorkload } from './http-bench.js';

export type Only = 'both' | 'tokenmill' | 'llamacpp';

export interface Workload {
  /** Prompt-processing measurement: one prompt of this many tokens. */
  promptTokens: number;
  /** Single-stream decode: tokens generated after a short prompt. */
  decodeTokens: number;
  /** Aggregate decode: this many concurrent streams, each generating `aggregateTokens`. */
  streams: number;
  aggregateTokens: number;
  /** Short prompt used by the decode measurements. */
  shortPromptTokens: number;
  /** Repetitions of each measurement (interleaved between the two implementations). */
  reps: number;
  /** Sampling-cost measurement: tokens per run, repetitions, prompt length (history for the penalties). */
  samplingTokens: number;
  samplingReps: number;
  samplingPromptTokens: number;
  /** Shared-prefix TTFT: this many concurrent requests, one system prompt of this length, each its own question. */
  prefixStreams: number;
  prefixSystemTokens: number;
  prefixQuestionTokens: number;
  /** Repetitions of the shared-prefix row (llama.cpp evaluates streams x system tokens per repetition). */
  prefixReps: number;
}

export interface BenchOptions {
  quick: boolean;
  threads: number;
  only: Only;
  cacheDir: string;
  resultsDir: string;
  skipSampling: boolean;
  /** --http: only the HTTP benchmarks; --skip-http: everything but them (the default run has both). */
  httpOnly: boolean;
  skipHttp: boolean;
  workload: Workload;
  http: HttpWorkload;
}

const fullWorkload: Workload = {
  promptTokens: 512, decodeTokens: 128, streams: 16, aggregateTokens: 64, shortPromptTokens: 16, reps: 3,
  samplingTokens: 256, samplingReps: 7, samplingPromptTokens: 64,
  prefixStreams: 16, prefixSystemTokens: 1000, prefixQuestionTokens: 20, prefixReps: 1,
};
const quickWorkload: Workload = {
  promptTokens: 512, decodeTokens: 32, streams: 16, aggregateTokens: 16, shortPromptTokens: 16, reps: 2,
  samplingTokens: 64, samplingReps: 2, samplingPromptTokens: 64,
  prefixStreams: 16, prefixSystemTokens: 1000, prefixQuestionTokens: 20, prefixReps: 1,
};

const fullHttp: HttpWorkload = { rateRequests: 2000, rateClients: 32, ttftClients: 16, ttftTokens: 16, ttftRounds: 5 };
const quickHttp: HttpWorkload = { rateRequests: 300, rateClients: 32, ttftClients: 16, ttftTokens: 16, ttftRounds: 2 };

export const usage = `usage: npm run bench -- [--quick] [--threads N] [--only tokenmill|llamacpp] [--reps N]
                       [--prefix-reps N] [--skip-sampling] [--http | --skip-http] [--cache-dir DIR]
  --quick          small synthetic model and fewer repetitions (a smoke run, not a measurement)
  --threads N      threads for both implementations (default 2)
  --only X         measure one implementation (no ratios)
  --reps N         repetitions per measurement (default 3, quick 2)
  --prefix-reps N  repetitions of the shared-prefix TTFT row (default 1: llama.cpp's side evaluates
                   16 x 1,020 prompt tokens per repetition, minutes on 2 cores)
  --skip-sampling  leave out the sampling-cost measurement
  --http           only the HTTP benchmarks (tokenmill serve on 127.0.0.1; absolute numbers, no peer)
  --skip-http      leave out the HTTP benchmarks
  --cache-dir DIR  where synthetic models are kept (default $TOKENMILL_BENCH_CACHE or <tmp>/tokenmill-bench)`;

export class UsageError extends Error {}

function positiveInt(flag: string, v: string | undefined): number {
  const n = Number(v);
  if (v === undefined || !Number.isSafeInteger(n) || n <= 0) throw new UsageError(`${flag} expects a positive integer, got ${v}`);
  return n;
}

export function parseOptions(argv: readonly string[], repoRoot: string): BenchOptions {
  let quick = false, threads = 2, only: Only = 'both', reps: number | undefined, prefixReps: number | undefined, skipSampling = false, httpOnly = false, skipHttp = false;
  let cacheDir = process.env.TOKENMILL_BENCH_CACHE ?? path.join(os.tmpdir(), 'tokenmill-bench');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case '--quick': quick = true; break;
      case '--threads': threads = positiveInt(flag, value()); break;
      case '--reps': reps = positiveInt(flag, value()); break;
      case '--prefix-reps': prefixReps = positiveInt(flag, value()); break;
      case '--skip-sampling': skipSampling = true; break;
      case '--http': case '--http-only': httpOnly = true; break;
      case '--skip-http': skipHttp = true; break;
      case '--cache-dir': { const v = value(); if (!v) throw new UsageError('--cache-dir expects a path'); cacheDir = path.resolve(v); break; }
      case '--only': {
        const v = value();
        if (v !== 'tokenmill' && v !== 'llamacpp') throw new UsageError(`--only expects tokenmill or llamacpp, got ${v}`);
        only = v;
        break;
      }
      case '--help': case '-h': throw new UsageError('');
      default: throw new UsageError(`unknown argument ${a}`);
    }
  }
  if (httpOnly && skipHttp) throw new UsageError('--http and --skip-http contradict each other');
  if (httpOnly && only === 'llamacpp') throw new UsageError('--http measures tokenmill only; --only llamacpp leaves nothing to run');
  const workload = { ...(quick ? quickWorkload : fullWorkload) };
  const http = { ...(quick ? quickHttp : fullHttp) };
  if (reps !== undefined) workload.reps = workload.samplingReps = http.ttftRounds = reps;
  if (prefixReps !== undefined) workload.prefixReps = prefixReps;
  return { quick, threads, only, cacheDir, resultsDir: path.join(repoRoot, 'bench', 'results'), skipSampling, httpOnly, skipHttp, workload, http };
}
