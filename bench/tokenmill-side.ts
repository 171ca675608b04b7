// The tokenmill side of the benchmark: the public package API only (Model, Engine.generate).
import { Engine, Model, type GenerateRequest } from 'tokenmill';
import { fullSampling, logitBiasEntries, type DecodeResult, type Sampling, type Side } from './side.js';
import { rng, secondsSince } from './stats.js';

export interface TokenmillSideOptions {
  threads: number;
  maxSeqs: number;
  maxModelLen: number;
  /** Largest prompt chunk per step; set to the prompt length so the prompt goes in one batch, as llama.cpp's batch does. */
  batchTokens: number;
  /** The shared-prefix row: its concurrent requests and the longest of them (system prompt + question). */
  prefixStreams?: number;
  prefixContext?: number;
}

export class TokenmillSide implements Side {
  readonly name = 'tokenmill' as const;

  private prefixEngine: Engine | undefined;

  private constructor(
    readonly model: Model,
    private readonly engine: Engine,
    private readonly bias: Record<string, number>,
    private readonly o: TokenmillSideOptions,
  ) {}

  static async open(modelPath: string, o: TokenmillSideOptions): Promise<TokenmillSide> {
    const model = await Model.load(modelPath);
    try {
      const engine = await Engine.create(model, {
        threads: o.threads,
        maxNumSeqs: o.maxSeqs,
        maxModelLen: o.maxModelLen,
        maxNumBatchedTokens: o.batchTokens,
        // Each repetition uses a fresh prompt anyway; off so a stray hit can never flatter a number.
        enablePrefixCaching: false,
      });
      const bias = Object.fromEntries(logitBiasEntries(model.info.vocabSize, rng(99)).map(([t, b]) => [String(t), b]));
      return new TokenmillSide(model, engine, bias, o);
    } catch (error) {
      model.dispose();
      throw error;
    }
  }

  private request(prompt: number[], n: number, sampling: Sampling): GenerateRequest {
    const base: GenerateRequest = { promptTokens: prompt, maxTokens: n, ignoreEos: true, temperature: 0 };
    if (sampling === 'greedy') return base;
    const { temperature, topK, topP, minP, repetitionPenalty, frequencyPenalty, presencePenalty, seed } = fullSampling;
    return { ...base, temperature, topK, topP, minP, repetitionPenalty, frequencyPenalty, presencePenalty, seed, logitBias: this.bias };
  }

  async prefill(prompt: number[]): Promise<number> {
    const t0 = process.hrtime.bigint();
    let seconds = NaN;
    for await (const ev of this.engine.generate(this.request(prompt, 1, 'greedy'))) {
      if (ev.tokenIds.length > 0 && Number.isNaN(seconds)) seconds = secondsSince(t0);
      if (ev.finishReason && ev.finishReason !== 'length') throw new Error(`tokenmill prefill ended with ${ev.finishReason}: ${ev.error?.message ?? ''}`);
    }
    if (Number.isNaN(seconds)) throw new Error('tokenmill prefill produced no token');
    return seconds;
  }

  async decode(prompt: number[], n: number, sampling: Sampling): Promise<DecodeResult> {
    let first: bigint | null = null;
    let last = 0n;
    let afterFirst = 0;
    for await (const ev of this.engine.generate(this.request(prompt, n, sampling))) {
      if (ev.tokenIds.length > 0) {
        // The window opens at the event that carried the first token; tokens in that event are outside it.
        if (first === null) first = process.hrtime.bigint();
        else afterFirst += ev.tokenIds.length;
        last = process.hrtime.bigint();
      }
      if (ev.finishReason && ev.finishReason !== 'length') throw new Error(`tokenmill decode ended with ${ev.finishReason}: ${ev.error?.message ?? ''}`);
    }
    if (first === null || afterFirst === 0) throw new Error('tokenmill decode produced too few events to time');
    return { tokens: afterFirst, seconds: Number(last - first) / 1e9 };
  }

  async aggregate(prompts: number[][], n: number): Promise<DecodeResult> {
    const t0 = process.hrtime.bigint();
    const counts = await Promise.all(prompts.map(async (p) => {
      let count = 0;
      for await (const ev of this.engine.generate(this.request(p, n, 'greedy'))) {
        count += ev.tokenIds.length;
        if (ev.finishReason && ev.finishReason !== 'length') throw new Error(`tokenmill stream ended with ${ev.finishReason}: ${ev.error?.message ?? ''}`);
      }
      return count;
    }));
    const seconds = secondsSince(t0);
    return { tokens: counts.reduce((a, b) => a + b, 0), seconds };
  }

  /**
   * One reading of the weights a decode step reads (model.measureWeightReadBandwidth with the side's threads):
   * GB/s, and the bytes per step (every layer's weights, the output norm and matrix; the token embeddings only
   * when they are the output matrix; the KV cache left out, small for the decode rows' short contexts).
   */
  async readWeights(): Promise<{ gbs: number; bytes: number }> {
    const r = await this.model.measureWeightReadBandwidth({ threads: this.o.threads, reps: 3 });
    return { gbs: r.bytesPerSecond / 1e9, bytes: r.bytes };
  }

  async sharedPrefix(system: number[], questions: number[][]): Promise<number> {
    // A second engine with prefix caching on: the first request computes the shared blocks, the others
    // find them cached. Every repetition brings a new system prompt, so nothing is warm from the last one.
    if (!this.o.prefixStreams || !this.o.prefixContext) throw new Error('tokenmill side opened without the shared-prefix options');
    this.prefixEngine ??= await Engine.create(this.model, {
      threads: this.o.threads,
      maxNumSeqs: this.o.prefixStreams,
      maxModelLen: this.o.prefixContext,
      maxNumBatchedTokens: this.o.batchTokens,
      enablePrefixCaching: true,
    });
    const engine = this.prefixEngine;
    const t0 = process.hrtime.bigint();
    const firsts = await Promise.all(questions.map(async (q) => {
      for await (const ev of engine.generate(this.request([...system, ...q], 1, 'greedy'))) {
        if (ev.tokenIds.length > 0) return secondsSince(t0);
        if (ev.finishReason) throw new Error(`tokenmill shared-prefix request ended with ${ev.finishReason}: ${ev.error?.message ?? ''}`);
      }
      throw new Error('tokenmill shared-prefix request produced no token');
    }));
    return Math.max(...firsts);
  }

  async close(): Promise<void> {
    await this.prefixEngine?.close();
    await this.engine.close();
    this.model.dispose();
  }
}
