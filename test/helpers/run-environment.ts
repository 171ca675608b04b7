// Where a test run happened: the CPU, the kernel level tokenmill's dispatch chose there and the llama.cpp
// CPU build the parity peer loaded. Parity tolerances depend on both code paths, so a red run must say which
// ones it compared. The global setup prints the line once per run and hands the peer's build to the test
// files (inject('peerCpuBuild')); CI scripts can reuse runEnvironment().
import os from 'node:os';
import { native } from '../../lib/native/load.js';
import { peerCpuBuild, type PeerCpuBuild } from './peer.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** null when node-llama-cpp could not be loaded (the run environment line says why). */
    peerCpuBuild: PeerCpuBuild | null;
  }
}

const firstLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0]!;

export async function runEnvironment(): Promise<{ line: string; peer: PeerCpuBuild | null }> {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  let kernels: string;
  try {
    kernels = native().cpuIsa();
    if (process.env.TOKENMILL_ISA) kernels += ` (capped by TOKENMILL_ISA=${process.env.TOKENMILL_ISA})`;
  } catch (error) {
    kernels = `unavailable (${firstLine(error)})`;
  }
  let peer: PeerCpuBuild | null = null;
  let peerText: string;
  try {
    peer = await peerCpuBuild();
    peerText = `${peer.variant}${peer.amx ? ' (AMX: F16 and quantized matmuls take ggml-cpu/amx)' : ''}`;
  } catch (error) {
    peerText = `unavailable (${firstLine(error)})`;
  }
  return { line: `run environment: CPU ${cpu}; tokenmill kernel level ${kernels}; node-llama-cpp CPU variant ${peerText}`, peer };
}
