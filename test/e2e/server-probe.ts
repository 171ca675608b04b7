// Probes of a running server for the reliability suites: raw chat posts, and "is it idle and healthy"
// read from /health and /metrics (every request over, every KV block free).
import { expect } from 'vitest';

export interface Reply { status: number; body: string; ms: number }

export async function postChat(base: string, body: string, headers: Record<string, string> = {}, timeoutMs = 20_000): Promise<Reply> {
  const t0 = performance.now();
  const r = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await r.text();
  return { status: r.status, body: text, ms: performance.now() - t0 };
}

/** The value of every sample of `name` in the Prometheus text. */
export function metricValues(text: string, name: string): number[] {
  const out: number[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) out.push(Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

/**
 * Waits (up to `timeoutMs`) until every served model has no running or waiting request and a KV cache
 * usage of 0, then checks /health answers ok.
 */
export async function expectIdle(base: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    last = await (await fetch(`${base}/metrics`)).text();
    const busy = [
      ...metricValues(last, 'vllm:num_requests_running'),
      ...metricValues(last, 'vllm:num_requests_waiting'),
      ...metricValues(last, 'vllm:kv_cache_usage_perc'),
    ];
    if (busy.length > 0 && busy.every((v) => v === 0)) break;
    if (Date.now() > deadline) {
      expect.fail(`the server is not idle ${timeoutMs} ms after the last request:\n${last.split('\n').filter((l) => /running|waiting|kv_cache_usage/.test(l)).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const health = await fetch(`${base}/health`);
  expect(health.status).toBe(200);
}
