// NOTE(server/metrics): Prometheus text exposition (format 0.0.4) with vLLM's metric names (docs/metrics.md),
// labelled model_name. Gauges and the engine counters are read from engine.stats() at scrape time;
// request outcomes and latency histograms are observed by the HTTP layer. Histogram buckets are
// cumulative with a +Inf bucket equal to _count, as Prometheus requires.

import type { EngineStats } from '../engine/engine.js';

/** The engine counters a scrape reads (an embedder's engine may report only these). */
export type EngineStatsLike = Pick<EngineStats, 'running' | 'waiting' | 'kvCacheUsage' | 'kvBlocksTotal' | 'kvBlocksFree' | 'prefixCacheQueries' | 'prefixCacheHits' | 'preemptions' | 'promptTokens' | 'generationTokens'>;

const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
const E2E_BUCKETS = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];

export class Histogram {
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(readonly buckets: readonly number[]) {
    this.counts = new Array<number>(buckets.length).fill(0);
  }
  observe(v: number): void {
    this.sum += v;
    this.count += 1;
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]!) this.counts[i]! += 1;
  }
}

export const FINISH_REASONS = ['stop', 'length', 'abort', 'error', 'repetition'] as const;

/** What the HTTP layer observes for one served model. */
export class ModelMetrics {
  readonly ttft = new Histogram(TTFT_BUCKETS);
  readonly itl = new Histogram(ITL_BUCKETS);
  readonly e2e = new Histogram(E2E_BUCKETS);
  readonly success = new Map<string, number>(FINISH_REASONS.map((r) => [r, 0]));

  finished(reason: string): void {
    // tool_calls is a "stop" to the engine; anything unknown counts as its own label.
    const key = reason === 'tool_calls' ? 'stop' : reason;
    this.success.set(key, (this.success.get(key) ?? 0) + 1);
  }
}

export interface MetricsSource {
  id: string;
  metrics: ModelMetrics;
  stats(): EngineStatsLike | null;
  blockSize: number;
}

const esc = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const num = (v: number): string => (Number.isFinite(v) ? String(v) : v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN');

/** Renders every model's metrics as one Prometheus text document. */
export function renderMetrics(sources: readonly MetricsSource[]): string {
  const out: string[] = [];
  const stats = sources.map((s) => ({ s, st: s.stats() }));
  const family = (name: string, type: string, help: string, lines: (src: MetricsSource, st: EngineStatsLike | null, label: string) => string[]): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const { s, st } of stats) out.push(...lines(s, st, `model_name="${esc(s.id)}"`));
  };
  const gauge = (name: string, help: string, pick: (st: EngineStatsLike) => number): void =>
    family(name, 'gauge', help, (_s, st, l) => (st ? [`${name}{${l}} ${num(pick(st))}`] : []));
  const counter = (name: string, help: string, pick: (st: EngineStatsLike) => number): void =>
    family(name, 'counter', help, (_s, st, l) => (st ? [`${name}{${l}} ${num(pick(st))}`] : []));
  const histogram = (name: string, help: string, pick: (m: ModelMetrics) => Histogram): void =>
    family(name, 'histogram', help, (s, _st, l) => {
      const h = pick(s.metrics);
      const lines = h.buckets.map((b, i) => `${name}_bucket{${l},le="${num(b)}"} ${h.counts[i]}`);
      lines.push(`${name}_bucket{${l},le="+Inf"} ${h.count}`, `${name}_sum{${l}} ${num(h.sum)}`, `${name}_count{${l}} ${h.count}`);
      return lines;
    });

  gauge('vllm:num_requests_running', 'Number of requests in model execution batches.', (st) => st.running);
  gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.', (st) => st.waiting);
  gauge('vllm:kv_cache_usage_perc', 'KV-cache usage. 1 means 100 percent usage.', (st) => st.kvCacheUsage);
  counter('vllm:prompt_tokens_total', 'Number of prefill tokens processed.', (st) => st.promptTokens);
  counter('vllm:generation_tokens_total', 'Number of generation tokens processed.', (st) => st.generationTokens);
  family('vllm:request_success_total', 'counter', 'Count of successfully processed requests.', (s, _st, l) =>
    [...s.metrics.success].map(([reason, n]) => `vllm:request_success_total{${l},finished_reason="${esc(reason)}"} ${n}`));
  counter('vllm:num_preemptions_total', 'Cumulative number of preemptions from the engine.', (st) => st.preemptions);
  counter('vllm:prefix_cache_queries_total', 'Prefix cache queries, in terms of number of queried tokens.', (st) => st.prefixCacheQueries);
  counter('vllm:prefix_cache_hits_total', 'Prefix cache hits, in terms of number of cached tokens.', (st) => st.prefixCacheHits);
  histogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', (m) => m.ttft);
  histogram('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', (m) => m.itl);
  histogram('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', (m) => m.e2e);
  family('vllm:cache_config_info', 'gauge', 'Information of the LLMEngine CacheConfig.', (s, st, l) =>
    st ? [`vllm:cache_config_info{${l},block_size="${s.blockSize}",num_gpu_blocks="${st.kvBlocksTotal}"} 1`] : []);
  return `${out.join('\n')}\n`;
}
