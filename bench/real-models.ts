// The real-model rows: prompt and single-stream decode tok/s of tokenmill and llama.cpp on real GGUF files
// of test/real/models.json (Qwen2.5-Coder-1.5B Q4_K_M: the K-quant path most real files take; SmolLM2-135M
// Q4_1: the Q8_1 path), each decode row also as a share of its bandwidth limit (bench/decode-limit.ts).
//
// NOTE(real-models): the files come from the models cache that `npm run fetch-models` fills; the bench never
// downloads (that would not fit its time budget) and never skips a missing model silently: it fails with the
// command that fetches it, unless --skip-real-models was given. Prompts are random ids below 30,400 (valid in
// every vocabulary here; the bench times work, it reads no text), without BOS. Each model is loaded once per
// engine, warmed up once, and both rows run on that load.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { compare, measure, type Reps } from './ab.js';
import { DecodeLimitReadings, type DecodeLimit } from './decode-limit.js';
import { LlamacppSide } from './llamacpp-side.js';
import type { Only } from './options.js';
import type { Comparison } from './report.js';
import type { Side } from './side.js';
import { randomPrompt } from './stats.js';
import type { Timeline } from './timeline.js';
import { TokenmillSide } from './tokenmill-side.js';

/** The manifest entries the bench runs, in the order it runs them, with what each is. */
const realModels = [
  { name: 'qwen2.5-coder-1.5b-q4', label: 'Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Q4_K/Q6_K: Q8_K activations)' },
  { name: 'smollm2-135m-instruct-q4_1', label: 'SmolLM2-135M-Instruct Q4_1 (Q8_1 activations; Q8_0 tied embeddings)' },
] as const;

export interface RealWorkload {
  promptTokens: number;
  decodeTokens: number;
  shortPromptTokens: number;
  reps: Reps;
}

export interface RealModelResult {
  name: string;
  /** What the model is (architecture, weight types, the activation format its matmuls take). */
  label: string;
  file: string;
  bytes: number;
  /** The decode row's limit, read beside its repetitions (absent without the tokenmill side). */
  decodeLimit?: DecodeLimit;
  prompt: Comparison;
  decode: Comparison;
}

interface ManifestEntry { description: string; file: string; size: number }
interface FetchScript {
  readManifest(): { models: Record<string, ManifestEntry> };
  modelPath(entry: ManifestEntry): string;
}

/** The cached files of the real models; throws, naming the fetch command, when one is missing or truncated. */
export interface RealModelFile { name: string; label: string; entry: ManifestEntry; path: string }

export async function locateRealModels(repoRoot: string): Promise<RealModelFile[]> {
  const script = (await import(pathToFileURL(path.join(repoRoot, 'scripts', 'fetch-models.mjs')).href)) as FetchScript;
  const models = script.readManifest().models;
  return realModels.map(({ name, label }) => {
    const entry = models[name];
    if (!entry) throw new Error(`test/real/models.json has no model ${name}`);
    const file = script.modelPath(entry);
    if (!existsSync(file) || statSync(file).size !== entry.size) {
      throw new Error(`real model ${name} is not in the models cache (${file}${existsSync(file) ? ': wrong size' : ': missing'}); ` +
        `fetch it with \`npm run fetch-models -- --model ${name}\`, or run the bench with --skip-real-models`);
    }
    return { name, label, entry, path: file };
  });
}

export interface RealModelsJob {
  /** Where node-llama-cpp is installed (LlamacppSide.open). */
  peerDir: string;
  threads: number;
  only: Only;
  workload: RealWorkload;
  tl: Timeline;
  log: (s: string) => void;
}

export async function measureRealModels(job: RealModelsJob, models: RealModelFile[]): Promise<RealModelResult[]> {
  const w = job.workload;
  const contextSize = Math.max(w.promptTokens, w.shortPromptTokens + w.decodeTokens) + 64;
  const out: RealModelResult[] = [];
  let seed = 7000;
  for (const m of models) {
    const sides: Side[] = [];
    try {
      if (job.only !== 'llamacpp') {
        const side = await job.tl.time(`${m.name}/load/tokenmill`, () =>
          TokenmillSide.open(m.path, { threads: job.threads, maxSeqs: 1, maxModelLen: contextSize, batchTokens: w.promptTokens }));
        sides.push(side);
      }
      if (job.only !== 'tokenmill') {
        sides.push(await job.tl.time(`${m.name}/load/llamacpp`, () =>
          LlamacppSide.open(job.peerDir, m.path, { threads: job.threads, streams: 1, contextSize, batchSize: w.promptTokens, vocabSize: 32000 })));
      }
      for (const s of sides) {
        await job.tl.time(`${m.name}/warm-up/${s.name}`, async () => {
          await s.prefill(randomPrompt(w.promptTokens, 32000, null, seed++));
          await s.decode(randomPrompt(w.shortPromptTokens, 32000, null, seed++), 4, 'greedy');
        });
      }
      job.log(`${m.name}: prompt ${w.promptTokens} tokens, decode ${w.decodeTokens} tokens, ${w.reps.min}-${w.reps.max} reps ...`);
      const prompt = await measure(job.tl, `${m.name}/prompt`, sides, w.reps,
        async (s) => w.promptTokens / (await s.prefill(randomPrompt(w.promptTokens, 32000, null, seed++))));
      const readings = new DecodeLimitReadings();
      const decode = await measure(job.tl, `${m.name}/decode`, sides, w.reps, async (s, rep) => {
        const r = await s.decode(randomPrompt(w.shortPromptTokens, 32000, null, seed++), w.decodeTokens, 'greedy');
        if (s instanceof TokenmillSide) await readings.take(s, rep);
        return r.tokens / r.seconds;
      });
      const limit = readings.limit(decode);
      out.push({
        name: m.name, label: m.label, file: m.path, bytes: m.entry.size,
        ...(limit ? { decodeLimit: limit } : {}),
        prompt: compare(`prompt tok/s (${w.promptTokens}-token prompt)`, 'tok/s', prompt),
        decode: compare(`decode tok/s (1 stream, ${w.decodeTokens} tokens)`, 'tok/s', decode),
      });
    } finally {
      await job.tl.time(`${m.name}/close`, async () => { for (const s of sides) await s.close().catch(() => undefined); });
    }
  }
  return out;
}
