// `npm run bench`: tokenmill against llama.cpp (node-llama-cpp) on the same synthetic model in the same
// process, interleaved A/B, medians and ratios (tokenmill / llama.cpp; above 1 means tokenmill is faster).
// Never part of the test suite: the numbers mean something only on an otherwise idle machine.
//
// NOTE(bench): each row runs interleaved repetitions (ab.ts: both implementations back to back, alternating
// which goes first; 2-3 repetitions, more only while the spread is large). Every repetition uses a fresh
// random prompt (no prefix-cache reuse on either side), and both sides get one untimed warm-up (page in the
// mapped weights, first allocations) before anything is timed. Each model is loaded once per engine and
// every row on it reuses that load; the timeline after the table says where the run's time went.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compare, fixedReps, measure } from './ab.js';
import { DecodeLimitReadings, type DecodeLimit } from './decode-limit.js';
import { measureHttp, type HttpResult } from './http-bench.js';
import { ensureModel } from './model-cache.js';
import { parseOptions, usage, UsageError, type BenchOptions } from './options.js';
import { locateRealModels, measureRealModels, type RealModelResult } from './real-models.js';
import { printTable, type BenchResult, type Comparison, type SamplingRow } from './report.js';
import { defaultPeerDir, LlamacppSide, peerVersion, peerWithGgmlCpu } from './llamacpp-side.js';
import { mappedGgmlCpuVariant } from './ggml-cpu-variant.js';
import { describePlatform, type Platform } from './platform.js';
import { measureSampling } from './sampling-cost.js';
import type { Side } from './side.js';
import { randomPrompt } from './stats.js';
import { TokenmillSide } from './tokenmill-side.js';
import type { SynthModelOptions } from './synth-model.js';
import { Timeline } from './timeline.js';

const log = (s: string): void => console.error(s);

function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'tokenmill') return dir;
    if (path.dirname(dir) === dir) throw new Error(`no tokenmill package.json above ${start}`);
  }
}

function mainModel(quick: boolean, vocab: string): { name: string; options: SynthModelOptions } {
  // TinyLlama-1.1B's shape; --quick is a quarter-width, 4-layer model of the same layout (8:1 GQA, Q8_0).
  return quick
    ? { name: 'quick-llama-512x4-q8_0', options: { arch: 'llama', type: 'Q8_0', nEmbd: 512, nLayer: 4, nHead: 8, nHeadKv: 1, nFf: 1408, nCtx: 2048, vocab, seed: 1 } }
    : { name: 'tinyllama-2048x22-q8_0', options: { arch: 'llama', type: 'Q8_0', nEmbd: 2048, nLayer: 22, nHead: 32, nHeadKv: 4, nFf: 5632, nCtx: 2048, vocab, seed: 1 } };
}

interface SideFacts {
  /** The decode row's limit, read beside its repetitions (absent without the tokenmill side). */
  decodeLimit?: DecodeLimit;
  llamacppVariant?: string;
}

/** The A/B part: tokenmill and/or llama.cpp on the main model; `sides` is closed by the caller on error. */
async function compareSides(tl: Timeline, opts: BenchOptions, peerDir: string, modelPath: string, sides: Side[], facts: SideFacts): Promise<Comparison[]> {
  const w = opts.workload;
  const contextSize = Math.max(w.promptTokens, w.shortPromptTokens + Math.max(w.decodeTokens, w.aggregateTokens)) + 64;
  const prefix = { prefixStreams: w.prefixStreams, prefixContext: w.prefixSystemTokens + w.prefixQuestionTokens + 16 };
  if (opts.only !== 'llamacpp') {
    const side = await tl.time('main/load/tokenmill', () => TokenmillSide.open(modelPath, { threads: opts.threads, maxSeqs: w.streams, maxModelLen: contextSize, batchTokens: w.promptTokens, ...prefix }));
    sides.push(side);
  }
  if (opts.only !== 'tokenmill') {
    sides.push(await tl.time('main/load/llamacpp', () => LlamacppSide.open(peerDir, modelPath, { threads: opts.threads, streams: w.streams, contextSize, batchSize: w.promptTokens, vocabSize: 32000, ...prefix })));
    facts.llamacppVariant = mappedGgmlCpuVariant();
  }
  const bos = 1;
  let seed = 1000;
  log('warm-up ...');
  for (const s of sides) {
    await tl.time(`main/warm-up/${s.name}`, async () => {
      await s.prefill(randomPrompt(w.promptTokens, 32000, bos, seed++));
      await s.decode(randomPrompt(w.shortPromptTokens, 32000, bos, seed++), 4, 'greedy');
    });
  }

  log(`prompt processing: ${w.promptTokens}-token prompt x ${w.reps.min}-${w.reps.max} ...`);
  const prefill = await measure(tl, 'main/prompt', sides, w.reps, async (s) => w.promptTokens / (await s.prefill(randomPrompt(w.promptTokens, 32000, bos, seed++))));
  log(`single-stream decode: ${w.decodeTokens} tokens x ${w.reps.min}-${w.reps.max}, the weights read after each ...`);
  const readings = new DecodeLimitReadings();
  const decode = await measure(tl, 'main/decode', sides, w.reps, async (s, rep) => {
    const r = await s.decode(randomPrompt(w.shortPromptTokens, 32000, bos, seed++), w.decodeTokens, 'greedy');
    if (s instanceof TokenmillSide) await readings.take(s, rep);
    return r.tokens / r.seconds;
  });
  const limit = readings.limit(decode);
  if (limit) facts.decodeLimit = limit;
  log(`aggregate decode: ${w.streams} streams x ${w.aggregateTokens} tokens x ${w.reps.min}-${w.reps.max} ...`);
  const aggregate = await measure(tl, 'main/aggregate', sides, w.reps, async (s) => {
    const prompts = Array.from({ length: w.streams }, () => randomPrompt(w.shortPromptTokens, 32000, bos, seed++));
    const r = await s.aggregate(prompts, w.aggregateTokens);
    if (r.tokens !== w.streams * w.aggregateTokens) throw new Error(`${s.name}: ${r.tokens} tokens generated, expected ${w.streams * w.aggregateTokens}`);
    return r.tokens / r.seconds;
  });
  log(`shared-prefix TTFT: ${w.prefixStreams} requests x (${w.prefixSystemTokens} shared + ${w.prefixQuestionTokens} own tokens) x ${w.prefixReps} ...`);
  const shared = await measure(tl, 'main/shared-prefix', sides, fixedReps(w.prefixReps), async (s) => {
    const system = randomPrompt(w.prefixSystemTokens, 32000, bos, seed++);
    const questions = Array.from({ length: w.prefixStreams }, () => randomPrompt(w.prefixQuestionTokens, 32000, null, seed++));
    return s.sharedPrefix(system, questions);
  });
  const comparisons = [
    compare(`prompt tok/s (${w.promptTokens}-token prompt)`, 'tok/s', prefill),
    compare(`decode tok/s (1 stream, ${w.decodeTokens} tokens)`, 'tok/s', decode),
    compare(`aggregate decode tok/s (${w.streams} streams x ${w.aggregateTokens})`, 'tok/s', aggregate),
    // Seconds: lower is better, so the ratio is llama.cpp / tokenmill (above 1 still means tokenmill is faster).
    compare(`shared-prefix TTFT s (${w.prefixStreams} x ${w.prefixSystemTokens}+${w.prefixQuestionTokens}), lower is better`, 's', shared, true),
  ];
  await tl.time('main/close', async () => { for (const s of sides) await s.close(); });
  sides.length = 0;
  return comparisons;
}

async function run(tl: Timeline, opts: BenchOptions, repoRoot: string): Promise<BenchResult> {
  const sharedDir = process.env.TOKENMILL_SHARED ? path.resolve(process.env.TOKENMILL_SHARED) : path.resolve(repoRoot, '..', 'shared');
  const spmVocab = path.join(sharedDir, 'models', 'vocab', 'ggml-vocab-llama-spm.gguf');
  const qwenVocab = path.join(sharedDir, 'models', 'vocab', 'ggml-vocab-qwen2.gguf');
  for (const f of [spmVocab, qwenVocab]) if (!existsSync(f)) throw new Error(`${f} not found (set TOKENMILL_SHARED)`);
  const w = opts.workload;
  // Before anything slow runs: a missing real model fails the run at once, naming the fetch command.
  const wantReal = !opts.httpOnly && !opts.skipRealModels;
  const realFiles = wantReal ? await locateRealModels(repoRoot) : [];
  let peerDir = defaultPeerDir(repoRoot);
  if (opts.llamacppCpu && opts.only !== 'tokenmill') {
    peerDir = peerWithGgmlCpu(peerDir, opts.llamacppCpu, opts.cacheDir);
    log(`--llamacpp-cpu ${opts.llamacppCpu}: llama.cpp from ${peerDir}, with only that ggml CPU build`);
  }
  const loadBefore = os.loadavg()[0]!;
  if (loadBefore > 0.5) log(`warning: 1-minute load average is ${loadBefore.toFixed(2)} before the run; the machine is not idle`);

  log(`measuring read bandwidth with ${opts.threads} threads ...`);
  const platform: Platform = await tl.time('bandwidth', () => describePlatform(repoRoot, opts.threads));
  log(`${platform.cpu}: kernels ${platform.kernelLevel}, read bandwidth ${platform.readBandwidthGBs.toFixed(1)} GB/s`);

  const spec = mainModel(opts.quick, spmVocab);
  const cached = await tl.time('main/synth-model', () => ensureModel(opts.cacheDir, spec.name, spec.options, 32000, log));
  log(`model ${cached.path} (${(cached.bytes / 1e9).toFixed(2)} GB${cached.reused ? ', reused' : ''}); threads ${opts.threads}`);

  const sides: Side[] = [];
  try {
    let comparisons: Comparison[] = [];
    let realModels: RealModelResult[] = [];
    const sampling: SamplingRow[] = [];
    const facts: SideFacts = {};
    if (!opts.httpOnly) {
      comparisons = await compareSides(tl, opts, peerDir, cached.path, sides, facts);
      const stepSeconds: Record<string, number> = {};
      const dc = comparisons[1]!;
      if (dc.tokenmill) stepSeconds.tokenmill = 1 / dc.tokenmill.median;
      if (dc.llamacpp) stepSeconds.llamacpp = 1 / dc.llamacpp.median;
      if (wantReal) {
        realModels = await measureRealModels({ peerDir, threads: opts.threads, only: opts.only, workload: w.real, tl, log }, realFiles);
      }
      if (!opts.skipSampling) {
        for (const [vocabPath, nVocab] of [[spmVocab, 32000], [qwenVocab, 151936]] as const) {
          sampling.push(await tl.time(`sampling/v${nVocab}`, () => measureSampling({ opts, peerDir, vocabPath, nVocab, stepSeconds, log })));
        }
      }
    }
    let http: HttpResult | undefined;
    if (!opts.skipHttp && opts.only !== 'llamacpp') {
      const tinyModelPath = path.join(sharedDir, 'models', 'stories260K.gguf');
      if (!existsSync(tinyModelPath)) throw new Error(`${tinyModelPath} not found (set TOKENMILL_SHARED)`);
      http = await tl.time('http', () => measureHttp({ repoRoot, tinyModelPath, mainModelPath: cached.path, mainModelName: spec.name, threads: opts.threads, workload: opts.http, log }));
    }
    return {
      date: new Date().toISOString(),
      commit: gitCommit(repoRoot),
      quick: opts.quick,
      threads: opts.threads,
      workload: w,
      machine: {
        cpu: os.cpus()[0]?.model ?? 'unknown', cpus: os.cpus().length, node: process.version, platform: `${process.platform}-${process.arch}`,
        loadavgBefore: loadBefore, loadavgAfter: os.loadavg()[0]!,
      },
      platform: { ...platform, ...(facts.llamacppVariant ? { llamacppVariant: facts.llamacppVariant } : {}) },
      ...(facts.decodeLimit ? { decodeLimit: facts.decodeLimit } : {}),
      peer: { package: 'node-llama-cpp', version: await peerVersion(peerDir) },
      model: { name: spec.name, path: cached.path, bytes: cached.bytes, options: { ...spec.options, vocab: path.basename(spmVocab) } },
      comparisons,
      realModels,
      sampling,
      ...(http ? { http } : {}),
    };
  } finally {
    for (const s of sides) await s.close().catch(() => undefined);
  }
}

function gitCommit(repoRoot: string): string {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: repoRoot, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head} (dirty)` : head;
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<number> {
  const repoRoot = findRepoRoot(__dirname);
  let opts: BenchOptions;
  try {
    opts = parseOptions(process.argv.slice(2), repoRoot);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (error.message) console.error(error.message);
    console.error(usage);
    return error.message ? 2 : 0;
  }
  if (opts.quick) log('--quick: a smoke run on a small model with few repetitions; the numbers are not a measurement');
  const tl = new Timeline(log);
  const result = await run(tl, opts, repoRoot);
  result.timeline = { totalSeconds: tl.total(), entries: tl.entries };
  printTable(result);
  mkdirSync(opts.resultsDir, { recursive: true });
  const file = path.join(opts.resultsDir, `${result.date.replace(/[:.]/g, '-')}${opts.quick ? '-quick' : ''}.json`);
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  console.log(`\nresults written to ${path.relative(process.cwd(), file)}`);
  return 0;
}

main().then((code) => { process.exitCode = code; }, (error: unknown) => {
  console.error(error instanceof Error ? error.stack ?? error.message : error);
  process.exitCode = 1;
});
