// Facts about the machine the engine runs on, for benchmarks and diagnostics.
import { native } from '../native/load.js';

/** The kernel level chosen for this CPU: 'avx512+amx', 'avx512', 'avx2' or 'baseline' (TOKENMILL_ISA caps it). */
export function kernelLevel(): string {
  return native().cpuIsa();
}

export interface ReadBandwidthOptions {
  /** Buffer size; far larger than the caches (default 1 GiB). */
  bytes?: number;
  /** Threads reading at once (default 2). */
  threads?: number;
  /** Timed passes; the best counts (default 5). */
  reps?: number;
}

/**
 * The memory read bandwidth in bytes/s that `threads` threads reach streaming through a large buffer: the
 * ceiling of a decode step, which reads every weight once. Runs on a libuv worker for a second or two.
 */
export async function measureReadBandwidth(options: ReadBandwidthOptions = {}): Promise<number> {
  return await native().measureReadBandwidth(options.bytes ?? 2 ** 30, options.threads ?? 2, options.reps ?? 5);
}
