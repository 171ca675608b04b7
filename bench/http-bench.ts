// HTTP benchmarks: tokenmill's OpenAI-compatible server over loopback. There is no llama.cpp HTTP peer
// here, so these are absolute numbers for tokenmill alone (no ratio).
//
// NOTE(http-bench): (1) request rate: non-stream chat completions with max_tokens 1 on the tiny
// stories260K model, so the numbers are dominated by the HTTP, validation, templating and scheduling
// path rather than by the model; (2) time to first token of 16 concurrent streams on the bench's main
// model, which includes each stream's prompt processing and queueing behind the other streams. Both
// start with an untimed warm-up round (connections opened, first allocations), and every timed request
// carries a distinct prompt so a prefix-cache hit cannot flatter a number.
import http from 'node:http';
import { keepAliveAgent, postJson, postStream, quantile, runPool, type Endpoint } from './http-client.js';
import { ServeProcess } from './http-server.js';
import { rng } from './stats.js';

export interface HttpWorkload {
  /** Request-rate run: this many non-stream requests from `rateClients` concurrent clients. */
  rateRequests: number;
  rateClients: number;
  /** TTFT run: `ttftClients` concurrent streams, each generating `ttftTokens`, repeated `ttftRounds` times. */
  ttftClients: number;
  ttftTokens: number;
  ttftRounds: number;
}

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface HttpResult {
  rate: { model: string; requests: number; clients: number; seconds: number; requestsPerSecond: number; latency: LatencySummary };
  ttft: { model: string; clients: number; maxTokens: number; rounds: number; ttft: LatencySummary; streamTotal: LatencySummary };
}

// A request-supplied template, so the run does not depend on the model carrying one.
const template = '{% for m in messages %}{{ m.content }}{% endfor %}';
const words = ['once', 'upon', 'a', 'time', 'there', 'was', 'little', 'girl', 'named', 'lily', 'she', 'loved', 'to', 'play', 'in', 'the', 'park', 'sun', 'tree', 'happy'];

/** A short random sentence; `seed` makes each request's prompt different. */
function sentence(seed: number, n: number): string {
  const r = rng(seed);
  return Array.from({ length: n }, () => words[Math.floor(r() * words.length)]!).join(' ');
}

function summary(seconds: readonly number[]): LatencySummary {
  return { count: seconds.length, p50Ms: quantile(seconds, 0.5) * 1e3, p99Ms: quantile(seconds, 0.99) * 1e3, maxMs: Math.max(...seconds) * 1e3 };
}

async function timeRequest(ep: Endpoint, agent: http.Agent, body: unknown): Promise<number> {
  const t0 = process.hrtime.bigint();
  const reply = await postJson(ep, agent, '/v1/chat/completions', body) as { choices?: unknown[] };
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (!Array.isArray(reply.choices) || reply.choices.length !== 1) throw new Error(`unexpected reply ${JSON.stringify(reply).slice(0, 200)}`);
  return s;
}

export interface HttpBenchArgs {
  repoRoot: string;
  /** stories260K.gguf (request rate). */
  tinyModelPath: string;
  /** The bench's main synthetic model (TTFT). */
  mainModelPath: string;
  mainModelName: string;
  threads: number;
  workload: HttpWorkload;
  log: (s: string) => void;
}

export async function measureHttp(a: HttpBenchArgs): Promise<HttpResult> {
  const w = a.workload;
  let seed = 5000;

  a.log(`http request rate: ${w.rateRequests} non-stream requests, max_tokens 1, ${w.rateClients} clients ...`);
  const rate = await withServer(a, a.tinyModelPath, 'stories260K', w.rateClients, async (ep, agent) => {
    const body = (s: number): unknown => ({
      model: 'stories260K', messages: [{ role: 'user', content: sentence(s, 12) }], max_tokens: 1, chat_template: template,
    });
    await runPool(w.rateClients * 2, w.rateClients, () => timeRequest(ep, agent, body(seed++)));
    const t0 = process.hrtime.bigint();
    const lat = await runPool(w.rateRequests, w.rateClients, () => timeRequest(ep, agent, body(seed++)));
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    return { model: 'stories260K', requests: w.rateRequests, clients: w.rateClients, seconds, requestsPerSecond: w.rateRequests / seconds, latency: summary(lat) };
  });

  a.log(`http streaming TTFT: ${w.ttftClients} streams x ${w.ttftTokens} tokens x ${w.ttftRounds} rounds on ${a.mainModelName} ...`);
  const ttft = await withServer(a, a.mainModelPath, a.mainModelName, w.ttftClients, async (ep, agent) => {
    const body = (s: number): unknown => ({
      model: a.mainModelName, messages: [{ role: 'user', content: sentence(s, 16) }], max_tokens: w.ttftTokens,
      ignore_eos: true, temperature: 0, stream: true, chat_template: template,
    });
    const round = (): Promise<{ ttft: number; total: number }[]> =>
      Promise.all(Array.from({ length: w.ttftClients }, () => postStream(ep, agent, '/v1/chat/completions', body(seed++))));
    await round();
    const firsts: number[] = [], totals: number[] = [];
    for (let r = 0; r < w.ttftRounds; r++) {
      for (const t of await round()) {
        firsts.push(t.ttft);
        totals.push(t.total);
      }
    }
    return { model: a.mainModelName, clients: w.ttftClients, maxTokens: w.ttftTokens, rounds: w.ttftRounds, ttft: summary(firsts), streamTotal: summary(totals) };
  });
  return { rate, ttft };
}

async function withServer<T>(a: HttpBenchArgs, modelPath: string, name: string, clients: number, body: (ep: Endpoint, agent: http.Agent) => Promise<T>): Promise<T> {
  const server = await ServeProcess.start(a.repoRoot, [
    '--model', modelPath, '--served-model-name', name, '--threads', String(a.threads),
    '--max-num-seqs', String(Math.max(clients, 1)), '--no-enable-prefix-caching',
  ], a.log);
  const agent = keepAliveAgent(clients);
  try {
    return await body(server.endpoint, agent);
  } finally {
    agent.destroy();
    await server.stop();
  }
}
