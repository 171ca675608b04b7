// The machine a bench run measured: its CPU, tokenmill's kernel level, llama.cpp's CPU variant and the
// read bandwidth that bounds decode. A figure belongs to the CPU it was measured on.
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
   * The decode limits' bandwidth: the highest of readBandwidthSamplesGBs. The shared host's bandwidth
   * drifts by 15 % and more within a run (29.6 GB/s at the start of one run whose decode row then read
   * 39 GB/s), so one reading at the start let a decode row pass 100 % of its "limit".
   */
  readBandwidthGBs: number;
  /** Each reading (best read bandwidth over a 1 GiB buffer, the benchmark's thread count), GB/s, in run order. */
  readBandwidthSamplesGBs: number[];
}

/** One read-bandwidth reading with `threads` threads, GB/s. */
export async function sampleReadBandwidth(threads: number): Promise<number> {
  return (await measureReadBandwidth({ threads })) / 1e9;
}

/** The platform with one more bandwidth reading, its limit bandwidth the highest so far. */
export function withBandwidthSample(p: Platform, gbs: number): Platform {
  const samples = [...p.readBandwidthSamplesGBs, gbs];
  return { ...p, readBandwidthSamplesGBs: samples, readBandwidthGBs: Math.max(...samples) };
}

export async function describePlatform(repoRoot: string, threads: number): Promise<Platform> {
  const { cpuInfo } = createRequire(__filename)(path.join(repoRoot, 'scripts', 'print-platform.cjs')) as {
    cpuInfo(): { model: string; flags: string[] };
  };
  const cpu = cpuInfo();
  const bandwidth = await sampleReadBandwidth(threads);
  return { cpu: cpu.model, features: cpu.flags, kernelLevel: kernelLevel(), readBandwidthGBs: bandwidth, readBandwidthSamplesGBs: [bandwidth] };
}
