// Sampling cost per token with every processor on, measured through the public generate API.
//
// NOTE(sampling-cost): the cost is isolated by difference. A tiny model (1 layer, 64 wide) with the
// vocabulary under test makes a decode step cheap apart from the output projection; the same
// single-stream generation runs with greedy sampling and with all processors on (temperature, top-k,
// top-p, min-p, repetition/frequency/presence penalties over prompt + output, 16 logit-bias entries).
// Everything else per token is identical in both runs (forward pass, detokenization, stop checks,
// delivery), so full s/token - greedy s/token is what the processors add over a plain argmax. Each
// repetition runs the two back to back (their order alternating), and the cost is the median of the
// repetitions' paired differences: the host's slow drifts (other load, its memory-bandwidth phases) move both
// runs of a pair alike, where the difference of two separate medians took them in (7 µs in one run, 34 and
// 60 µs in the next two, with no sampling code changed). It is reported in µs/token, with the range of the
// pairs, and as a fraction of one decode step of the main model (1 / median single-stream decode tok/s of
// the same implementation), i.e. the share of a TinyLlama step a fully-processed request spends sampling.
import type { BenchOptions } from './options.js';
import { ensureModel } from './model-cache.js';
import { LlamacppSide } from './llamacpp-side.js';
import type { SamplingRow, SamplingSide } from './report.js';
import type { Sampling, Side } from './side.js';
import { median, randomPrompt } from './stats.js';
import { TokenmillSide } from './tokenmill-side.js';

export interface SamplingJob {
  opts: BenchOptions;
  /** Where node-llama-cpp is installed (LlamacppSide.open). */
  peerDir: string;
  vocabPath: string;
  nVocab: number;
  /** Seconds of one decode step of the main model, per implementation. */
  stepSeconds: Record<string, number>;
  log: (s: string) => void;
}

export async function measureSampling(job: SamplingJob): Promise<SamplingRow> {
  const { opts, nVocab } = job;
  const w = opts.workload;
  const name = `sampling-llama-64x1-v${nVocab}-q8_0`;
  const model = await ensureModel(opts.cacheDir, name, {
    arch: 'llama', type: 'Q8_0', nEmbd: 64, nLayer: 1, nHead: 1, nHeadKv: 1, nFf: 128, nCtx: 2048, vocab: job.vocabPath, seed: 2,
  }, nVocab, job.log);
  job.log(`sampling cost, vocab ${nVocab}: ${w.samplingTokens} tokens x ${w.samplingReps} (greedy vs all processors) ...`);
  const contextSize = w.samplingPromptTokens + w.samplingTokens + 64;
  const sides: Side[] = [];
  try {
    if (opts.only !== 'llamacpp') {
      sides.push(await TokenmillSide.open(model.path, { threads: opts.threads, maxSeqs: 1, maxModelLen: contextSize, batchTokens: w.samplingPromptTokens }));
    }
    if (opts.only !== 'tokenmill') {
      sides.push(await LlamacppSide.open(job.peerDir, model.path, { threads: opts.threads, streams: 1, contextSize, batchSize: w.samplingPromptTokens, vocabSize: nVocab }));
    }
    // The vocabulary's BOS, if any, does not matter for timing; random ids stand in for a prompt.
    let seed = 5000;
    const perToken = new Map<string, Record<Sampling, number[]>>(sides.map((s) => [s.name, { greedy: [], full: [] }]));
    for (const s of sides) await s.decode(randomPrompt(w.samplingPromptTokens, nVocab, null, seed++), 8, 'full');
    for (let rep = 0; rep < w.samplingReps; rep++) {
      const order = rep % 2 === 0 ? sides : [...sides].reverse();
      const modes: Sampling[] = rep % 2 === 0 ? ['greedy', 'full'] : ['full', 'greedy'];
      for (const s of order) {
        for (const mode of modes) {
          const r = await s.decode(randomPrompt(w.samplingPromptTokens, nVocab, null, seed++), w.samplingTokens, mode);
          perToken.get(s.name)![mode].push(r.seconds / r.tokens);
        }
      }
    }
    const row: SamplingRow = { vocab: nVocab };
    for (const [sideName, t] of perToken) {
      const greedy = median(t.greedy), full = median(t.full);
      const pairedCostsUs = t.full.map((f, i) => (f - t.greedy[i]!) * 1e6);
      const costUs = median(pairedCostsUs);
      const step = job.stepSeconds[sideName];
      const entry: SamplingSide = {
        greedyUsPerToken: greedy * 1e6,
        fullUsPerToken: full * 1e6,
        costUs,
        pairedCostsUs,
        fractionOfDecodeStep: step ? costUs / 1e6 / step : undefined,
        greedyRuns: t.greedy.map((x) => x * 1e6),
        fullRuns: t.full.map((x) => x * 1e6),
      };
      row[sideName as 'tokenmill' | 'llamacpp'] = entry;
    }
    return row;
  } finally {
    for (const s of sides) await s.close().catch(() => undefined);
  }
}
