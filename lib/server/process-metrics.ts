// NOTE(server/process-metrics): the process-level families of /metrics, beside the per-model vLLM ones:
// the event loop's delay (perf_hooks.monitorEventLoopDelay; p50/p99/max over the window since the
// previous scrape, so a scrape shows the recent stalls, not the start-up), and the gates of
// request-controlled work (docs/architecture.md): the work pool that renders templates and converts
// schemas, and the native tokenize gate; and the errors `tokenmill serve` caught outside any request.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { IntervalHistogram } from 'node:perf_hooks';
import type { GateStats } from '../workers/fair-gate.js';
import type { WorkPoolStats } from '../workers/work-pool.js';
import type { UncaughtKind } from './last-resort.js';

export class EventLoopDelay {
  readonly #h: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });

  constructor() {
    this.#h.enable();
  }

  /** Delay percentiles (seconds) since the previous call; starts a new window. */
  take(): { p50: number; p99: number; max: number } {
    const h = this.#h;
    const out = h.count === 0 ? { p50: 0, p99: 0, max: 0 } : { p50: h.percentile(50) / 1e9, p99: h.percentile(99) / 1e9, max: h.max / 1e9 };
    h.reset();
    return out;
  }

  close(): void {
    this.#h.disable();
  }
}

export interface ProcessMetricsSource {
  loop: EventLoopDelay;
  workPool: WorkPoolStats;
  tokenize: GateStats;
  uncaught: Readonly<Record<UncaughtKind, number>>;
}

export function renderProcessMetrics(src: ProcessMetricsSource): string {
  const out: string[] = [];
  const one = (name: string, type: 'gauge' | 'counter', help: string, lines: string[]): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines);
  };
  const loop = src.loop.take();
  one('tokenmill:event_loop_delay_p50_seconds', 'gauge', 'Median event-loop delay since the previous scrape.', [`tokenmill:event_loop_delay_p50_seconds ${loop.p50}`]);
  one('tokenmill:event_loop_delay_p99_seconds', 'gauge', '99th percentile event-loop delay since the previous scrape.', [`tokenmill:event_loop_delay_p99_seconds ${loop.p99}`]);
  one('tokenmill:event_loop_delay_max_seconds', 'gauge', 'Largest event-loop delay since the previous scrape.', [`tokenmill:event_loop_delay_max_seconds ${loop.max}`]);
  const w = src.workPool;
  one('tokenmill:work_pool_workers', 'gauge', 'Worker threads for template rendering and schema conversion.', [`tokenmill:work_pool_workers ${w.workers}`]);
  one('tokenmill:work_pool_running', 'gauge', 'Template/schema tasks running on a worker.', [`tokenmill:work_pool_running ${w.running}`]);
  one('tokenmill:work_pool_waiting', 'gauge', 'Template/schema tasks waiting for a worker.', [`tokenmill:work_pool_waiting ${w.waiting}`]);
  one('tokenmill:work_pool_refused_total', 'counter', 'Template/schema tasks refused (429/503) because too many were waiting.', [`tokenmill:work_pool_refused_total ${w.refused}`]);
  one('tokenmill:work_pool_terminated_total', 'counter', 'Workers terminated because a task hit its time or memory limit.', [
    `tokenmill:work_pool_terminated_total{limit="time"} ${w.terminatedTime}`,
    `tokenmill:work_pool_terminated_total{limit="memory"} ${w.terminatedMemory}`,
  ]);
  const t = src.tokenize;
  one('tokenmill:tokenize_running', 'gauge', 'Long tokenizations running on libuv threads.', [`tokenmill:tokenize_running ${t.running}`]);
  one('tokenmill:tokenize_waiting', 'gauge', 'Long tokenizations waiting for a thread.', [`tokenmill:tokenize_waiting ${t.waiting}`]);
  one('tokenmill:tokenize_refused_total', 'counter', 'Long tokenizations refused (429/503) because too many were waiting.', [`tokenmill:tokenize_refused_total ${t.refused}`]);
  one('tokenmill:uncaught_errors_total', 'counter', 'Exceptions and rejections that escaped request handling, caught by tokenmill serve (the server kept serving).', [
    `tokenmill:uncaught_errors_total{kind="exception"} ${src.uncaught.exception}`,
    `tokenmill:uncaught_errors_total{kind="rejection"} ${src.uncaught.rejection}`,
  ]);
  return `${out.join('\n')}\n`;
}
