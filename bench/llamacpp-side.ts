// The llama.cpp side of the benchmark, through node-llama-cpp (installed apart in test/peer, ESM-only,
// so it is loaded with a dynamic import of its file URL). Only the few calls used here are typed.
//
// NOTE(llamacpp-side): contexts on one model: `single` (1 sequence) for prompt and single-stream decode,
// `multi` (`streams` sequences, only when streams > 1) for the aggregate measurement, where node-llama-cpp
// batches the concurrent sequences into shared llama_decode calls. Both use the requested thread count as their
// minimum, so llama.cpp never silently runs on fewer threads than tokenmill.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fullSampling, logitBiasEntries, type DecodeResult, type Sampling, type Side } from './side.js';
import { rng, secondsSince } from './stats.js';

type Token = number;

interface NlcSequence {
  clearHistory(): Promise<void>;
  evaluate(tokens: Token[], options?: Record<string, unknown>): AsyncGenerator<Token, void, void | Token | Token[]>;
  evaluateWithoutGeneratingNewTokens(tokens: Token[]): Promise<void>;
  dispose(): void;
}
interface NlcContext {
  getSequence(): NlcSequence;
  dispose(): Promise<void>;
}
interface NlcModel {
  readonly tokenizer: unknown;
  createContext(options: Record<string, unknown>): Promise<NlcContext>;
  dispose(): Promise<void>;
}
interface NlcLlama {
  loadModel(options: { modelPath: string; gpuLayers: number }): Promise<NlcModel>;
  dispose(): Promise<void>;
}
interface NlcTokenBias {
  set(token: Token, bias: { logit: number }): NlcTokenBias;
}
interface NlcModule {
  getLlama(options: Record<string, unknown>): Promise<NlcLlama>;
  TokenBias: new (tokenizer: unknown) => NlcTokenBias;
  readonly version?: string;
}

export interface LlamacppSideOptions {
  threads: number;
  streams: number;
  contextSize: number;
  batchSize: number;
  vocabSize: number;
  /** The shared-prefix row: its concurrent sequences and the longest prompt (system prompt + question). */
  prefixStreams?: number;
  prefixContext?: number;
}

/** test/peer: node-llama-cpp and its prebuilt linux-x64 llama.cpp, installed apart from the main lockfile. */
export function defaultPeerDir(repoRoot: string): string {
  return path.join(repoRoot, 'test', 'peer');
}

/** Installs the peer (node-llama-cpp with its prebuilt linux-x64 llama.cpp) when missing, as the test setup does. */
function peerEntry(peerDir: string): string {
  const entry = path.join(peerDir, 'node_modules', 'node-llama-cpp', 'dist', 'index.js');
  if (!existsSync(path.join(peerDir, 'node_modules', '@node-llama-cpp', 'linux-x64', 'package.json')) || !existsSync(entry)) {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const r = spawnSync(npm, ['install', '--omit=optional', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: peerDir, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`installing node-llama-cpp in ${peerDir} failed (exit ${r.status})`);
  }
  return entry;
}

const ggmlCpuBuild = /^libggml-cpu-([\w-]+)\.so$/;

/**
 * --llamacpp-cpu VARIANT: a copy of the peer's install under workDir whose prebuilt llama.cpp carries only the
 * ggml CPU build VARIANT (libggml-cpu-VARIANT.so), so ggml loads that one whatever else the CPU could run — e.g.
 * `haswell`, the AVX2 build an AVX2-only CPU would load, beside `TOKENMILL_ISA=avx2` on a machine with AVX-512.
 * Returns the copy's directory (a peer directory for LlamacppSide.open).
 */
export function peerWithGgmlCpu(peerDir: string, variant: string, workDir: string): string {
  peerEntry(peerDir);
  const bins = path.join('node_modules', '@node-llama-cpp', 'linux-x64', 'bins', 'linux-x64');
  const builds = readdirSync(path.join(peerDir, bins)).flatMap((f) => ggmlCpuBuild.exec(f)?.[1] ?? []).sort();
  if (!builds.includes(variant)) throw new Error(`--llamacpp-cpu ${variant}: node-llama-cpp has no such CPU build (it has ${builds.join(', ')})`);
  const copy = path.join(workDir, `peer-ggml-cpu-${variant}`);
  rmSync(copy, { recursive: true, force: true });
  cpSync(path.join(peerDir, 'node_modules'), path.join(copy, 'node_modules'), {
    recursive: true,
    filter: (src) => ggmlCpuBuild.exec(path.basename(src))?.[1] !== undefined ? path.basename(src) === `libggml-cpu-${variant}.so` : true,
  });
  return copy;
}

export async function peerVersion(peerDir: string): Promise<string> {
  const pkg = path.join(peerDir, 'node_modules', 'node-llama-cpp', 'package.json');
  return existsSync(pkg) ? (JSON.parse((await import('node:fs')).readFileSync(pkg, 'utf8')) as { version: string }).version : 'unknown';
}

export class LlamacppSide implements Side {
  readonly name = 'llamacpp' as const;

  private constructor(
    private readonly llama: NlcLlama,
    private readonly model: NlcModel,
    private readonly single: NlcContext,
    private readonly multi: NlcContext | undefined,
    private readonly singleSeq: NlcSequence,
    // Taken once: a disposed sequence's id returns to the context only asynchronously.
    private readonly multiSeqs: NlcSequence[],
    private readonly bias: NlcTokenBias,
    private readonly o: LlamacppSideOptions,
  ) {}

  private prefix: { context: NlcContext; seqs: NlcSequence[] } | undefined;

  /** peerDir: where node-llama-cpp is installed (defaultPeerDir, or peerWithGgmlCpu's copy). */
  static async open(peerDir: string, modelPath: string, o: LlamacppSideOptions): Promise<LlamacppSide> {
    const nlc = (await import(pathToFileURL(peerEntry(peerDir)).href)) as NlcModule;
    const llama = await nlc.getLlama({ gpu: false, build: 'never', maxThreads: o.threads, logLevel: 'error', progressLogs: false });
    const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
    const threads = { ideal: o.threads, min: o.threads };
    const single = await model.createContext({ contextSize: o.contextSize, sequences: 1, batchSize: o.batchSize, threads, flashAttention: true });
    const multi = o.streams > 1
      ? await model.createContext({ contextSize: o.contextSize, sequences: o.streams, batchSize: o.batchSize, threads, flashAttention: true })
      : undefined;
    const bias = new nlc.TokenBias(model.tokenizer);
    for (const [t, b] of logitBiasEntries(o.vocabSize, rng(99))) bias.set(t, { logit: b });
    const multiSeqs = multi ? Array.from({ length: o.streams }, () => multi.getSequence()) : [];
    return new LlamacppSide(llama, model, single, multi, single.getSequence(), multiSeqs, bias, o);
  }

  async prefill(prompt: number[]): Promise<number> {
    await this.singleSeq.clearHistory();
    const t0 = process.hrtime.bigint();
    await this.singleSeq.evaluateWithoutGeneratingNewTokens(prompt);
    return secondsSince(t0);
  }

  private options(sampling: Sampling, history: number[]): Record<string, unknown> {
    if (sampling === 'greedy') return { temperature: 0 };
    const { temperature, topK, topP, minP, repetitionPenalty, frequencyPenalty, presencePenalty, seed } = fullSampling;
    return {
      temperature, topK, topP, minP, seed,
      // vLLM's penalties see the whole prompt + output; give llama.cpp the same history.
      repeatPenalty: { punishTokens: () => history, maxPunishTokens: 4096, penalty: repetitionPenalty, frequencyPenalty, presencePenalty },
      tokenBias: this.bias,
    };
  }

  private static async run(seq: NlcSequence, prompt: number[], n: number, options: Record<string, unknown>, history: number[]): Promise<{ first: bigint; last: bigint; count: number }> {
    let first = 0n, last = 0n, count = 0;
    for await (const token of seq.evaluate(prompt, options)) {
      history.push(token);
      if (count === 0) first = process.hrtime.bigint();
      last = process.hrtime.bigint();
      if (++count >= n) break;
    }
    return { first, last, count };
  }

  async decode(prompt: number[], n: number, sampling: Sampling): Promise<DecodeResult> {
    await this.singleSeq.clearHistory();
    const history = [...prompt];
    const r = await LlamacppSide.run(this.singleSeq, prompt, n, this.options(sampling, history), history);
    if (r.count < 2) throw new Error('llama.cpp decode produced too few tokens to time');
    return { tokens: r.count - 1, seconds: Number(r.last - r.first) / 1e9 };
  }

  async aggregate(prompts: number[][], n: number): Promise<DecodeResult> {
    if (prompts.length > this.multiSeqs.length) throw new Error(`${prompts.length} streams asked, the context has ${this.multiSeqs.length} sequences`);
    const seqs = this.multiSeqs.slice(0, prompts.length);
    await Promise.all(seqs.map((s) => s.clearHistory()));
    const t0 = process.hrtime.bigint();
    const runs = await Promise.all(seqs.map((s, i) => LlamacppSide.run(s, prompts[i]!, n, { temperature: 0 }, [])));
    const seconds = secondsSince(t0);
    return { tokens: runs.reduce((a, r) => a + r.count, 0), seconds };
  }

  async sharedPrefix(system: number[], questions: number[][]): Promise<number> {
    // llama.cpp has no way (through node-llama-cpp) to let one sequence reuse another's KV: each sequence
    // evaluates its whole prompt; node-llama-cpp batches the concurrent sequences into shared decodes.
    if (!this.o.prefixStreams || !this.o.prefixContext) throw new Error('llama.cpp side opened without the shared-prefix options');
    if (!this.prefix) {
      const threads = { ideal: this.o.threads, min: this.o.threads };
      const context = await this.model.createContext({
        contextSize: this.o.prefixContext, sequences: this.o.prefixStreams, batchSize: this.o.batchSize, threads, flashAttention: true,
      });
      this.prefix = { context, seqs: Array.from({ length: this.o.prefixStreams! }, () => context.getSequence()) };
    }
    if (questions.length > this.prefix.seqs.length) throw new Error(`${questions.length} requests asked, the context has ${this.prefix.seqs.length} sequences`);
    const seqs = this.prefix.seqs.slice(0, questions.length);
    await Promise.all(seqs.map((s) => s.clearHistory()));
    const t0 = process.hrtime.bigint();
    const firsts = await Promise.all(seqs.map(async (s, i) => {
      const r = await LlamacppSide.run(s, [...system, ...questions[i]!], 1, { temperature: 0 }, []);
      if (r.count < 1) throw new Error('llama.cpp shared-prefix sequence produced no token');
      return Number(r.first - t0) / 1e9;
    }));
    return Math.max(...firsts);
  }

  async close(): Promise<void> {
    if (this.prefix) {
      for (const s of this.prefix.seqs) s.dispose();
      await this.prefix.context.dispose();
    }
    this.singleSeq.dispose();
    for (const s of this.multiSeqs) s.dispose();
    await this.single.dispose();
    await this.multi?.dispose();
    await this.model.dispose();
    await this.llama.dispose();
  }
}
