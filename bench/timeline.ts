// Where a bench run's wall time went: every model load, warm-up and row, per engine, in the order run.
// The run must fit in 10 minutes on a 2-core machine; this is how a slow row is found (printed after the
// table and kept in the JSON).
export interface TimelineEntry {
  /** What ran, e.g. 'main/decode/llamacpp' or 'load/tokenmill'. */
  what: string;
  seconds: number;
}

export class Timeline {
  readonly entries: TimelineEntry[] = [];
  private readonly t0 = process.hrtime.bigint();

  /** `log` gets one line per timed piece as it ends (so a run cut short still shows where it was). */
  constructor(private readonly log: (s: string) => void) {}

  /** Adds `seconds` to the entry `what` (created on first use, so interleaved repetitions sum up). */
  add(what: string, seconds: number): void {
    const e = this.entries.find((x) => x.what === what);
    if (e) e.seconds += seconds;
    else this.entries.push({ what, seconds });
  }

  async time<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const t = process.hrtime.bigint();
    try {
      return await fn();
    } finally {
      const seconds = Number(process.hrtime.bigint() - t) / 1e9;
      this.add(what, seconds);
      this.log(`  [${this.total().toFixed(0)} s] ${what}: ${seconds.toFixed(1)} s`);
    }
  }

  /** Seconds since the timeline was created (the whole run). */
  total(): number {
    return Number(process.hrtime.bigint() - this.t0) / 1e9;
  }
}
