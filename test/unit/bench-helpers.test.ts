// The benchmark harness's pure parts (options, statistics, prompts, model cache, the repetition policy, the
// real-model lookup). No timing here: the benchmark itself only runs as `npm run bench`.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { compare, measure } from '../../bench/ab.js';
import { DecodeLimitReadings } from '../../bench/decode-limit.js';
import { defaultPeerDir, peerWithGgmlCpu } from '../../bench/llamacpp-side.js';
import { ensureModel, estimateBytes } from '../../bench/model-cache.js';
import { parseOptions, UsageError } from '../../bench/options.js';
import { locateRealModels } from '../../bench/real-models.js';
import { fullSampling, logitBiasEntries, type Side } from '../../bench/side.js';
import { median, randomPrompt, rng, series } from '../../bench/stats.js';
import type { SynthModelOptions } from '../../bench/synth-model.js';
import { Timeline } from '../../bench/timeline.js';
import type { TokenmillSide } from '../../bench/tokenmill-side.js';

describe('bench options', () => {
  it('defaults to 2 threads, both implementations and the full workload', () => {
    const o = parseOptions([], '/repo');
    expect(o.threads).toBe(2);
    expect(o.only).toBe('both');
    expect(o.quick).toBe(false);
    expect(o.workload.promptTokens).toBe(512);
    expect(o.workload.streams).toBe(16);
    expect(o.workload.reps).toEqual({ min: 2, max: 3, spread: 0.05 });
    expect(o.skipRealModels).toBe(false);
    expect(o.resultsDir).toBe(path.join('/repo', 'bench', 'results'));
    expect(parseOptions(['--skip-real-models'], '/repo').skipRealModels).toBe(true);
  });

  it('reads --quick, --threads N, --threads=N, --only, --reps and --cache-dir', () => {
    const o = parseOptions(['--quick', '--threads', '4', '--only', 'llamacpp', '--reps=3', '--cache-dir', '/x/y'], '/repo');
    expect(o.quick).toBe(true);
    expect(o.threads).toBe(4);
    expect(o.only).toBe('llamacpp');
    expect(o.workload.reps).toEqual({ min: 3, max: 3, spread: 0 });
    expect(o.workload.real.reps).toEqual({ min: 3, max: 3, spread: 0 });
    expect(o.workload.samplingReps).toBe(3);
    expect(o.cacheDir).toBe('/x/y');
    expect(o.workload.decodeTokens).toBeLessThan(parseOptions([], '/repo').workload.decodeTokens);
    expect(parseOptions(['--threads=3'], '/repo').threads).toBe(3);
  });

  it('rejects bad values and unknown flags', () => {
    for (const argv of [['--threads', '0'], ['--threads'], ['--only', 'vllm'], ['--reps', '1.5'], ['--fast'], ['--llamacpp-cpu'], ['--llamacpp-cpu', '../x']]) {
      expect(() => parseOptions(argv, '/repo')).toThrow(UsageError);
    }
  });

  it('llama.cpp from test/peer, or with --llamacpp-cpu a named ggml CPU build only', () => {
    const o = parseOptions([], '/repo');
    expect(defaultPeerDir('/repo')).toBe(path.join('/repo', 'test', 'peer'));
    expect(o.llamacppCpu).toBeUndefined();
    expect(parseOptions(['--llamacpp-cpu', 'haswell'], '/repo').llamacppCpu).toBe('haswell');
  });

  it('the peer copy for --llamacpp-cpu carries that ggml CPU build and no other, and refuses one the package lacks', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tm-peer-'));
    try {
      const peer = path.join(dir, 'peer');
      const bins = path.join('node_modules', '@node-llama-cpp', 'linux-x64', 'bins', 'linux-x64');
      mkdirSync(path.join(peer, bins), { recursive: true });
      mkdirSync(path.join(peer, 'node_modules', 'node-llama-cpp', 'dist'), { recursive: true });
      writeFileSync(path.join(peer, 'node_modules', 'node-llama-cpp', 'dist', 'index.js'), '');
      writeFileSync(path.join(peer, 'node_modules', '@node-llama-cpp', 'linux-x64', 'package.json'), '{}');
      for (const f of ['libggml-base.so', 'libggml-cpu-haswell.so', 'libggml-cpu-zen4.so', 'libggml-cpu-x64.so', 'llama-addon.node']) {
        writeFileSync(path.join(peer, bins, f), f);
      }
      const copy = peerWithGgmlCpu(peer, 'haswell', path.join(dir, 'work'));
      expect(readdirSync(path.join(copy, bins)).sort()).toEqual(['libggml-base.so', 'libggml-cpu-haswell.so', 'llama-addon.node']);
      expect(existsSync(path.join(copy, 'node_modules', 'node-llama-cpp', 'dist', 'index.js'))).toBe(true);
      expect(() => peerWithGgmlCpu(peer, 'sapphirerapids', path.join(dir, 'work'))).toThrow(/no such CPU build \(it has haswell, x64, zen4\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('bench statistics and prompts', () => {
  it('median of odd and even counts, unsorted input left alone', () => {
    const xs = [5, 1, 3];
    expect(median(xs)).toBe(3);
    expect(xs).toEqual([5, 1, 3]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
    expect(series([2, 9, 4])).toEqual({ values: [2, 9, 4], median: 4, min: 2, max: 9 });
  });

  it('random prompts: BOS first, deterministic per seed, ids inside the vocabulary away from its edges', () => {
    const a = randomPrompt(512, 32000, 1, 7);
    expect(a).toHaveLength(512);
    expect(a[0]).toBe(1);
    expect(randomPrompt(512, 32000, 1, 7)).toEqual(a);
    expect(randomPrompt(512, 32000, 1, 8)).not.toEqual(a);
    for (const t of a.slice(1)) {
      expect(t).toBeGreaterThanOrEqual(259);
      expect(t).toBeLessThan(32000 * 0.95);
    }
    const b = randomPrompt(64, 151936, null, 1);
    expect(b).toHaveLength(64);
    expect(Math.max(...b)).toBeLessThan(151643); // below Qwen2's added tokens
  });

  it('logit-bias entries: the configured count, ids in range, biases in [-5, 5]', () => {
    const e = logitBiasEntries(151936, rng(3));
    expect(e).toHaveLength(fullSampling.logitBiasEntries);
    for (const [t, b] of e) {
      expect(Number.isInteger(t) && t >= 0 && t < 151936).toBe(true);
      expect(Math.abs(b)).toBeLessThanOrEqual(5);
    }
  });
});

describe('bench repetitions and comparison', () => {
  // A fake side whose successive measurements are the given values.
  const fake = (name: 'tokenmill' | 'llamacpp', values: number[]): Side & { calls: number } => {
    const side = {
      name, calls: 0,
      prefill: async () => values[side.calls++]!,
      decode: async () => ({ tokens: 1, seconds: 1 }),
      aggregate: async () => ({ tokens: 1, seconds: 1 }),
      sharedPrefix: async () => 1,
      close: async () => undefined,
    };
    return side;
  };

  it('stops at the minimum when both spreads are small, runs up to the maximum while one is large', async () => {
    const tl = new Timeline(() => undefined);
    const reps = { min: 2, max: 4, spread: 0.05 };
    const quiet = [fake('tokenmill', [10, 10.2, 99, 99]), fake('llamacpp', [5, 5.1, 99, 99])];
    const q = await measure(tl, 'row', quiet, reps, (s) => s.prefill([]));
    expect(q.get('tokenmill')).toEqual([10, 10.2]);
    expect(q.get('llamacpp')).toEqual([5, 5.1]);
    const noisy = [fake('tokenmill', [10, 10.1, 10, 10]), fake('llamacpp', [5, 8, 6, 6.1])];
    const n = await measure(tl, 'row', noisy, reps, (s) => s.prefill([]));
    expect(n.get('llamacpp')).toHaveLength(4);
    expect(n.get('tokenmill')).toHaveLength(4);
    expect(tl.entries.map((e) => e.what)).toEqual(['row/tokenmill', 'row/llamacpp']);
    const c = compare('x', 'tok/s', q);
    expect(c.ratio).toBeCloseTo(10.1 / 5.05, 10);
    expect(compare('s', 's', q, true).ratio).toBeCloseTo(5.05 / 10.1, 10);
  });
});

describe('bench decode limit', () => {
  // A side whose weight readings are scripted: 1 GB per step, read at the given GB/s in turn.
  const scripted = (gbs: number[]): TokenmillSide => {
    let i = 0;
    return { readWeights: () => Promise.resolve({ gbs: gbs[i++]!, bytes: 1e9 }) } as unknown as TokenmillSide;
  };

  it('divides each repetition by the limit read beside it and takes the median share', async () => {
    const side = scripted([30, 60, 40]);
    const readings = new DecodeLimitReadings();
    for (let rep = 0; rep < 3; rep++) await readings.take(side, rep);
    // Limits 30, 60 and 40 tok/s; tokenmill's shares 0.9, 0.5, 0.75 and llama.cpp's 0.5, 0.25, 0.5.
    const limit = readings.limit(new Map([['tokenmill', [27, 30, 30]], ['llamacpp', [15, 15, 20]]]))!;
    expect(limit.weightBytes).toBe(1e9);
    expect(limit.readingsGBs).toEqual([30, 60, 40]);
    expect(limit.tokPerSecond).toBe(40);
    expect(limit.share.tokenmill).toBeCloseTo(0.75, 12);
    expect(limit.share.llamacpp).toBeCloseTo(0.5, 12);
  });

  it('gives no limit without readings, and no share for a side that did not run', async () => {
    expect(new DecodeLimitReadings().limit(new Map([['llamacpp', [20]]]))).toBeUndefined();
    const readings = new DecodeLimitReadings();
    await readings.take(scripted([50]), 0);
    const limit = readings.limit(new Map([['tokenmill', [45]]]))!;
    expect(limit.share).toEqual({ tokenmill: 0.9 });
  });
});

describe('bench real models', () => {
  const saved = process.env.TOKENMILL_MODELS_CACHE;
  afterEach(() => {
    if (saved === undefined) delete process.env.TOKENMILL_MODELS_CACHE;
    else process.env.TOKENMILL_MODELS_CACHE = saved;
  });

  it('a model missing from the cache fails with the command that fetches it and the flag that skips it', async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'tm-bench-models-'));
    process.env.TOKENMILL_MODELS_CACHE = empty;
    try {
      await expect(locateRealModels(path.resolve(__dirname, '..', '..'))).rejects.toThrow(
        /qwen2\.5-coder-1\.5b-q4 is not in the models cache.*npm run fetch-models -- --model qwen2\.5-coder-1\.5b-q4.*--skip-real-models/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('bench model cache', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tm-bench-cache-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const small: SynthModelOptions = { arch: 'llama', type: 'Q8_0', nEmbd: 64, nLayer: 2, nHead: 2, nHeadKv: 1, nFf: 128, nCtx: 256, seed: 1 };

  it('writes once, reuses while the parameters match, rewrites when they change or the sidecar is stale', async () => {
    const log: string[] = [];
    const first = await ensureModel(dir, 'm', small, 450, (s) => log.push(s));
    expect(first.reused).toBe(false);
    const again = await ensureModel(dir, 'm', small, 450, (s) => log.push(s));
    expect(again).toMatchObject({ path: first.path, bytes: first.bytes, reused: true });
    const reseeded = await ensureModel(dir, 'm', { ...small, seed: 2 }, 450, (s) => log.push(s));
    expect(reseeded.reused).toBe(false);
    writeFileSync(path.join(dir, 'm.json'), '{"params":"other","bytes":1}\n');
    expect((await ensureModel(dir, 'm', { ...small, seed: 2 }, 450, (s) => log.push(s))).reused).toBe(false);
    expect(log.filter((l) => l.startsWith('writing'))).toHaveLength(3);
  });

  it('size estimate matches the written weights; TinyLlama shape is about 1.18 GB', async () => {
    const wide: SynthModelOptions = { ...small, nEmbd: 256, nHead: 4, nHeadKv: 1, nFf: 704 };
    const m = await ensureModel(dir, 'w', wide, 450, () => undefined);
    const est = estimateBytes(wide, 450);
    // The estimate adds 8 MB of metadata slack; the weights themselves must agree.
    expect(est - 8 * 1024 * 1024).toBeLessThanOrEqual(m.bytes);
    expect(m.bytes - (est - 8 * 1024 * 1024)).toBeLessThan(64 * 1024);
    const tiny = { arch: 'llama', type: 'Q8_0', nEmbd: 2048, nLayer: 22, nHead: 32, nHeadKv: 4, nFf: 5632, nCtx: 2048, seed: 1 } as const;
    expect(estimateBytes(tiny, 32000) / 1e9).toBeCloseTo(1.177, 2);
  });
});
