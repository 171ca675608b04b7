// Command-line options of `npm run bench` and the workload sizes they select.
import os from 'node:os';
import path from 'node:path';
import { fixedReps, type Reps } from './ab.js';
import type { HttpWorkload } from './http-bench.js';
import type { RealWorkload } from './real-models.js';

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
  /** Repetitions of each main-model row (interleaved between the two implementations; see ab.ts). */
  reps: Reps;
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
  /** The real-model rows (prompt and decode per model). */
  real: RealWorkload;
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
  /** --skip-real-models: leave out the real-model rows (otherwise a missing model fails the run). */
  skipRealModels: boolean;
  workload: Workload;
  http: HttpWorkload;
  /** --llamacpp-cpu VARIANT: the only ggml CPU build llama.cpp may load (run.ts loads it from peerWithGgmlCpu's copy). */
  llamacppCpu: string | undefined;
}

// Sized so the whole default run (real models and HTTP included) stays under 10 minutes on 2 cores; the
// timeline printed after the table shows where the time goes. Rows repeat 2-3 times (ab.ts: more only while
// the spread exceeds 5 %).
const fullWorkload: Workload = {
  promptTokens: 512, decodeTokens: 64, streams: 16, aggregateTokens: 32, shortPromptTokens: 16, reps: { min: 2, max: 3, spread: 0.05 },
  samplingTokens: 128, samplingReps: 11, samplingPromptTokens: 64,
  prefixStreams: 16, prefixSystemTokens: 1000, prefixQuestionTokens: 20, prefixReps: 1,
  real: { promptTokens: 256, decodeTokens: 32, shortPromptTokens: 16, reps: { min: 2, max: 3, spread: 0.05 } },
};
const quickWorkload: Workload = {
  promptTokens: 512, decodeTokens: 32, streams: 16, aggregateTokens: 16, shortPromptTokens: 16, reps: fixedReps(2),
  samplingTokens: 64, samplingReps: 2, samplingPromptTokens: 64,
  prefixStreams: 16, prefixSystemTokens: 1000, prefixQuestionTokens: 20, prefixReps: 1,
  real: { promptTokens: 64, decodeTokens: 16, shortPromptTokens: 16, reps: fixedReps(1) },
};

const fullHttp: HttpWorkload = { rateRequests: 1000, rateClients: 32, ttftClients: 16, ttftTokens: 16, ttftRounds: 3 };
const quickHttp: HttpWorkload = { rateRequests: 300, rateClients: 32, ttftClients: 16, ttftTokens: 16, ttftRounds: 2 };

export const usage = `usage: npm run bench -- [--quick] [--threads N] [--only tokenmill|llamacpp] [--reps N]
                       [--prefix-reps N] [--skip-sampling] [--skip-real-models] [--http | --skip-http]
                       [--cache-dir DIR]
  --quick          small synthetic model and fewer repetitions (a smoke run, not a measurement)
  --threads N      threads for both implementations (default 2)
  --only X         measure one implementation (no ratios)
  --reps N         exactly N repetitions per measurement (default: 2, up to 3 while the spread
                   between repetitions exceeds 5 %; quick 2)
  --prefix-reps N  repetitions of the shared-prefix TTFT row (default 1: llama.cpp's side evaluates
                   16 x 1,020 prompt tokens per repetition, minutes on 2 cores)
  --skip-sampling  leave out the sampling-cost measurement
  --skip-real-models  leave out the real-model rows (Qwen2.5-Coder-1.5B Q4_K_M, SmolLM2-135M Q4_1);
                   without it a model missing from the cache fails the run (npm run fetch-models)
  --http           only the HTTP benchmarks (tokenmill serve on 127.0.0.1; absolute numbers, no peer)
  --skip-http      leave out the HTTP benchmarks
  --cache-dir DIR  where synthetic models are kept (default $TOKENMILL_BENCH_CACHE or <tmp>/tokenmill-bench)
  --llamacpp-cpu VARIANT
                   llama.cpp loads only this ggml CPU build of node-llama-cpp's (haswell, zen4, ...; a copy
                   of test/peer under the cache dir carries only it); with TOKENMILL_ISA=avx2 and haswell,
                   both sides run the AVX2 code an AVX2-only CPU would`;

export class UsageError extends Error {}

function positiveInt(flag: string, v: string | undefined): number {
  const n = Number(v);
  if (v === undefined || !Number.isSafeInteger(n) || n <= 0) throw new UsageError(`${flag} expects a positive integer, got ${v}`);
  return n;
}

export function parseOptions(argv: readonly string[], repoRoot: string): BenchOptions {
  let quick = false, threads = 2, only: Only = 'both', reps: number | undefined, prefixReps: number | undefined, skipSampling = false, httpOnly = false, skipHttp = false;
  let skipRealModels = false;
  let llamacppCpu: string | undefined;
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
      case '--skip-real-models': skipRealModels = true; break;
      case '--http': case '--http-only': httpOnly = true; break;
      case '--skip-http': skipHttp = true; break;
      case '--llamacpp-cpu': { const v = value(); if (!v || !/^[\w-]+$/.test(v)) throw new UsageError(`--llamacpp-cpu expects a ggml CPU build name, got ${v}`); llamacppCpu = v; break; }
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
  if (reps !== undefined) {
    workload.reps = fixedReps(reps);
    workload.real = { ...workload.real, reps: fixedReps(reps) };
    workload.samplingReps = http.ttftRounds = reps;
  }
  if (prefixReps !== undefined) workload.prefixReps = prefixReps;
  return { quick, threads, only, cacheDir, resultsDir: path.join(repoRoot, 'bench', 'results'), skipSampling, httpOnly, skipHttp, skipRealModels, workload, http, llamacppCpu };
}
