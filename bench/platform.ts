// The machine a bench run measured: its CPU, tokenmill's kernel level, llama.cpp's CPU variant and the
// read bandwidth of a fresh buffer. A figure belongs to the CPU it was measured on.
import { createRequire } from 'node:module';
import path from 'node:path';
import { kernelLevel, measureReadBandwidth } from 'tokenmill';

export interface Platform {
  cpu: string;
  /** The CPU's SIMD features that decide kernel levels (AVX2, AVX-512 subsets, AMX). */
  features: string[];
  kernelLevel: string;
  /** The ggml CPU backend node-llama-cpp loaded (e.g. haswell, zen4, sapphirerapids), once its side is open. */
  llamacppVariant?: string;
  /**
   * One reading at the start of the run: the best read bandwidth over a fresh 1 GiB buffer with the
   * benchmark's thread count, GB/s. Context only: the decode limits are read from each model's own weights
   * beside every decode repetition (decode-limit.ts), since the shared host's bandwidth drifts within minutes.
   */
  readBandwidthGBs: number;
}

export async function describePlatform(repoRoot: string, threads: number): Promise<Platform> {
  const { cpuInfo } = createRequire(__filename)(path.join(repoRoot, 'scripts', 'print-platform.cjs')) as {
    cpuInfo(): { model: string; flags: string[] };
  };
  const cpu = cpuInfo();
  const bandwidth = (await measureReadBandwidth({ threads })) / 1e9;
  return { cpu: cpu.model, features: cpu.flags, kernelLevel: kernelLevel(), readBandwidthGBs: bandwidth };
}
