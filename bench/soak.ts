// npm run soak — a bounded soak of a real `tokenmill serve` (loopback only): 64 concurrent streaming
// clients (each with its own API key) with random parameters (n, logprobs, stop, priority, cache_salt, structured outputs), 10 %
// of them aborting at a random point and 5 % sending malformed requests, for --minutes per model.
// Reports requests by status, p50/p99 time to first token and inter-token latency, the server's RSS
// over time, the KV cache at the end, the server's event-loop delay and the machine's load average. Exits 1
// on any 5xx (or 5xx stream event), a crash, a hang (30 s without progress, judged per the priority
// contract: see the note on the hang rule below), RSS still growing over the last third of the run, or KV
// blocks still used after the clients stopped.
//
// Usage: npm run soak -- [--minutes 10] [--clients 64] [--model stories|tinyllama|PATH]... [--seed N]
//   [--max-num-batched-tokens N] (the server's step budget: on a slow machine a smaller one keeps each
//   step, and so the time between a stream's tokens, well under the 30 s hang limit)
//   Default models: stories260K (../shared or $TOKENMILL_SHARED) and a synthetic TinyLlama-shape model
//   (llama 2048x22, Q8_0, random weights; written once to the bench cache, like npm run bench).
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeRng } from '../lib/gguf/weights.js';
import { ensureModel } from './model-cache.js';

interface Options { minutes: number; clients: number; models: string[]; seed: number; cacheDir: string; batchedTokens: number | null }

function parseArgs(argv: string[]): Options {
  const o: Options = { minutes: 10, clients: 64, models: [], seed: Date.now() % 2 ** 31, cacheDir: process.env.TOKENMILL_BENCH_CACHE ?? path.join(os.tmpdir(), 'tokenmill-bench'), batchedTokens: null };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--minutes': o.minutes = Number(v); i++; break;
      case '--clients': o.clients = Number(v); i++; break;
      case '--model': o.models.push(v!); i++; break;
      case '--seed': o.seed = Number(v); i++; break;
      case '--max-num-batched-tokens': o.batchedTokens = Number(v); i++; break;
      case '--cache-dir': o.cacheDir = path.resolve(v!); i++; break;
      default: throw new Error(`soak: unknown option ${argv[i]}`);
    }
  }
  if (!(o.minutes > 0) || !(o.clients >= 1)) throw new Error('soak: --minutes and --clients must be positive');
  if (o.models.length === 0) o.models = ['stories', 'tinyllama'];
  return o;
}

const repoRoot = path.resolve(__dirname, '..', '..');
const shared = process.env.TOKENMILL_SHARED ? path.resolve(process.env.TOKENMILL_SHARED) : path.resolve(repoRoot, '..', 'shared');
const HANG_MS = 30_000;

async function modelPath(name: string, o: Options): Promise<string> {
  if (name === 'stories') return path.join(shared, 'models', 'stories260K.gguf');
  if (name === 'tinyllama') {
    const vocab = path.join(shared, 'models', 'vocab', 'ggml-vocab-llama-spm.gguf');
    const spec = { arch: 'llama', type: 'Q8_0', nEmbd: 2048, nLayer: 22, nHead: 32, nHeadKv: 4, nFf: 5632, nCtx: 2048, vocab, seed: 1 } as const;
    return (await ensureModel(o.cacheDir, 'tinyllama-2048x22-q8_0', spec, 32000, (s) => console.error(s))).path;
  }
  return path.resolve(name);
}

interface Server { child: ChildProcess; base: string; stderr: () => string }

async function startServer(model: string, dataDir: string, template: string, keysFile: string, extra: string[]): Promise<Server> {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'tokenmill.cjs'), 'serve', '--model', model, '--served-model-name', 'm', '--port', '0',
    '--data-dir', dataDir, '--chat-template', template, '--scheduling-policy', 'priority', '--max-model-len', '512', '--log-level', 'warning',
    '--api-keys-file', keysFile, ...extra],
  { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /tokenmill listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the server exited with ${code} before listening:\n${err}`)));
  });
  return { child, base, stderr: () => err };
}

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const percentile = (xs: number[], p: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

interface Tally { status: Map<string, number>; refusals: Map<string, number>; ttft: number[]; itl: number[]; failures: string[]; starved: number; longestWait: number }

const MALFORMED = ['{"messages": [', '{"model":"m","messages":"hi"}', '{"model":"m","messages":[{"role":"user","content":"x"}],"n":0}',
  '{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":"hot"}', '{"model":"m","messages":[{"role":"user","content":"x"}],"top_p":1e-300,"max_tokens":1e10}'];

function request(r: () => number): { body: string; priority: number } {
  const n = r() < 0.3 ? 1 + Math.floor(r() * 4) : 1;
  const body: Record<string, unknown> = {
    model: 'm', stream: true, stream_options: { include_usage: true },
    messages: [{ role: 'user', content: `Once upon a time ${Math.floor(r() * 1000)} ${'there was a story '.repeat(Math.floor(r() * 8))}` }],
    max_tokens: 1 + Math.floor(r() * 64), temperature: 0.5 + r(), n,
  };
  if (r() < 0.3) Object.assign(body, { logprobs: true, top_logprobs: Math.floor(r() * 5) });
  if (r() < 0.2) body.stop = ['.', ' the'];
  if (r() < 0.1) body.priority = Math.floor(r() * 3) - 1;
  if (r() < 0.3) body.cache_salt = `tenant-${Math.floor(r() * 4)}`;
  if (r() < 0.1) body.structured_outputs = r() < 0.5 ? { choice: ['yes', 'no', 'maybe'] } : { regex: '[a-z ]{1,20}' };
  if (r() < 0.1) body.seed = Math.floor(r() * 1000);
  return { body: JSON.stringify(body), priority: (body.priority as number | undefined) ?? 0 };
}

// NOTE(soak hang rule): the server runs --scheduling-policy priority, which is strict (as vLLM's): a
// waiting request never overtakes one of a lower priority value, and a running one may be preempted for
// it and wait again. Under the soak's sustained overload a priority-1 request can therefore wait for as
// long as more urgent requests keep coming — queued, not hung; and any request waits for a free slot
// (--max-num-seqs) while the requests admitted before it run to their end, which on a slow model takes
// minutes. So "30 s without progress" is judged the way the contract orders the work:
// - the server as a whole: while any request is outstanding, some stream must receive a chunk every 30 s;
// - a stream that has started: its clock runs while no outstanding request is more urgent (lower
//   priority value) — only more urgent work may keep it waiting (preempted);
// - a stream still waiting for its first chunk: its clock runs while it is first in the contract's order
//   (priority, then arrival) among the waiting streams and the server reports no running request — with
//   a slot free, the first in line must be admitted; and it has hung when a request not more urgent
//   that arrived 30 s or more after it got its first chunk and it still has none 10 s later (the queue
//   order was broken: the slack covers requests whose preparation — render, tokenization — took longer
//   than another's, the grace requests admitted in the same step whose chunks arrive in either order);
//   response headers count as a chunk (the server sends them with the first one);
// - a malformed body: its clock always runs (the HTTP layer answers it without the scheduler).
// Each clock restarts at every chunk. Waits the contract excuses are counted and reported (how many
// passed 30 s, the longest), not failed.
interface Outstanding {
  priority: number;
  arrival: number;
  arrivedAt: number;
  malformed: boolean;
  started: boolean;
  idleMs: number;
  waitedSince: number;
  hang: (why: string) => void;
  /** When a later request started first; a hang if this one still has nothing OVERTAKE_GRACE_MS later. */
  overtaken?: { at: number; why: string };
}

/** Requests admitted in the same engine step reach the client in any order: the grace before an overtake counts. */
const OVERTAKE_GRACE_MS = 10_000;

class Watchdog {
  readonly live = new Set<Outstanding>();
  lastChunk = performance.now();
  /** vllm:num_requests_running at the latest /metrics sample (the soak's 5 s sampler sets it). */
  serverRunning = 0;
  #arrivals = 0;
  #timer: NodeJS.Timeout;
  #stalled = false;

  constructor(private readonly t: Tally, tickMs = 1000) {
    let last = performance.now();
    this.#timer = setInterval(() => {
      const now = performance.now();
      this.tick(now - last, now);
      last = now;
    }, tickMs);
  }

  add(priority: number, malformed: boolean, hang: (why: string) => void): Outstanding {
    const now = performance.now();
    const o: Outstanding = { priority, arrival: this.#arrivals++, arrivedAt: now, malformed, started: false, idleMs: 0, waitedSince: now, hang };
    this.live.add(o);
    return o;
  }

  progress(o: Outstanding): void {
    const now = performance.now();
    this.#record(o, now);
    if (!o.started) {
      for (const x of [...this.live]) {
        if (x === o || x.started || x.malformed || x.priority > o.priority || o.arrivedAt - x.arrivedAt < HANG_MS) continue;
        x.overtaken ??= { at: now, why: `overtaken by a priority ${o.priority} request that arrived ${((o.arrivedAt - x.arrivedAt) / 1000).toFixed(0)} s after it` };
      }
    }
    o.started = true;
    o.idleMs = 0;
    o.waitedSince = now;
    this.lastChunk = now;
  }

  done(o: Outstanding): void {
    // A request the watchdog ended as hung is already gone (and failed); it is not an excused wait.
    if (this.live.delete(o)) this.#record(o, performance.now());
  }

  #record(o: Outstanding, now: number): void {
    const waited = now - o.waitedSince;
    if (waited > HANG_MS) this.t.starved += 1;
    this.t.longestWait = Math.max(this.t.longestWait, waited);
  }

  #hung(o: Outstanding, why: string): void {
    this.live.delete(o);
    o.hang(why);
  }

  tick(dtMs: number, now: number): void {
    if (this.live.size === 0) this.lastChunk = now;
    else if (now - this.lastChunk > HANG_MS && !this.#stalled) {
      this.#stalled = true;
      this.t.failures.push(`the server made no progress for ${HANG_MS / 1000} s with ${this.live.size} requests outstanding`);
    }
    if (now - this.lastChunk <= HANG_MS) this.#stalled = false;
    let minPriority = Infinity;
    let firstWaiting: Outstanding | null = null;
    for (const o of this.live) {
      if (o.malformed) continue;
      minPriority = Math.min(minPriority, o.priority);
      if (!o.started && (!firstWaiting || o.priority < firstWaiting.priority || (o.priority === firstWaiting.priority && o.arrival < firstWaiting.arrival))) firstWaiting = o;
    }
    for (const o of [...this.live]) {
      if (!o.started && o.overtaken && now - o.overtaken.at > OVERTAKE_GRACE_MS) {
        this.#hung(o, o.overtaken.why);
        continue;
      }
      const watched = o.malformed || (o.started ? o.priority <= minPriority : o === firstWaiting && this.serverRunning === 0);
      if (!watched) continue;
      o.idleMs += dtMs;
      if (o.idleMs > HANG_MS) {
        this.#hung(o, o.malformed ? 'no answer' : o.started ? 'no chunk while nothing more urgent was outstanding' : 'first in line with no request running');
      }
    }
  }

  close(): void {
    clearInterval(this.#timer);
  }
}

// node:http, not fetch: fetch (undici) gives up on a response whose headers take over 300 s, and under
// the soak's overload a queued stream (the server sends headers with its first chunk) can wait longer.
const agent = new http.Agent({ keepAlive: true });

/** POSTs `body`; resolves with the response once its headers arrived (no client-side time limit). */
function post(url: string, body: string, key: string, signal: AbortSignal): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${key}` },
    }, (res) => {
      response = res;
      resolve(res);
    });
    let response: http.IncomingMessage | null = null;
    // Destroyed without an error (an error would land on the pooled socket, which nobody listens to): the
    // caller knows from its signal's reason why its request or read failed.
    const onAbort = (): void => {
      if (response) response.destroy();
      else req.destroy();
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    req.once('close', () => signal.removeEventListener('abort', onAbort));
    req.on('error', reject);
    req.end(body);
  });
}

async function readAll(res: http.IncomingMessage): Promise<string> {
  res.setEncoding('utf8');
  let text = '';
  for await (const piece of res as AsyncIterable<string>) text += piece;
  return text;
}

async function client(base: string, key: string, r: () => number, until: number, t: Tally, dog: Watchdog): Promise<void> {
  const count = (k: string) => t.status.set(k, (t.status.get(k) ?? 0) + 1);
  while (Date.now() < until) {
    const malformed = r() < 0.05;
    const abortAfter = !malformed && r() < 0.1 ? 1 + Math.floor(r() * 6) : -1;
    const controller = new AbortController();
    const started = performance.now();
    const { body, priority } = malformed ? { body: MALFORMED[Math.floor(r() * MALFORMED.length)]!, priority: 0 } : request(r);
    let phase = 'waiting for the first chunk';
    let hangWhy = '';
    const watch = dog.add(priority, malformed, (why) => {
      hangWhy = why;
      controller.abort(new Error('hang'));
    });
    try {
      const res = await post(`${base}/v1/chat/completions`, body, key, controller.signal);
      const status = res.statusCode ?? 0;
      count(String(status));
      if (status !== 200) {
        const text = await readAll(res);
        if (status >= 500) t.failures.push(`${status}: ${text.slice(0, 200)}`);
        else {
          // What the 4xx answers said (the malformed bodies' 422s, and any 400 the random parameters earn).
          const why = `${status} ${(/"message":"([^"]{0,120})/.exec(text)?.[1] ?? /"msg":"([^"]{0,120})/.exec(text)?.[1] ?? text.slice(0, 120))}`;
          t.refusals.set(why, (t.refusals.get(why) ?? 0) + 1);
        }
        continue;
      }
      // The server sends a stream's headers with its first chunk: they are progress.
      dog.progress(watch);
      phase = 'streaming';
      res.setEncoding('utf8');
      let chunks = 0;
      let last = 0;
      let text = '';
      for await (const piece of res as AsyncIterable<string>) {
        dog.progress(watch);
        text += piece;
        const now = performance.now();
        if (last === 0) t.ttft.push(now - started);
        else t.itl.push(now - last);
        last = now;
        if (++chunks === abortAfter) {
          count('aborted');
          controller.abort();
          break;
        }
      }
      if (abortAfter < 0 || chunks < abortAfter) {
        if (!text.trimEnd().endsWith('data: [DONE]')) t.failures.push('a stream ended without [DONE]');
        for (const m of text.matchAll(/data: (\{"error".*)/g)) {
          if ((JSON.parse(m[1]!) as { error: { code: number } }).error.code >= 500) t.failures.push(`in-stream ${m[1]!.slice(0, 200)}`);
        }
      }
    } catch (e) {
      const reason: unknown = controller.signal.reason;
      const aborted = controller.signal.aborted;
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const message = reason instanceof Error && reason.message === 'hang' ? 'hang' : `${(e as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}`;
      if (message === 'hang') t.failures.push(`hang ${phase} (priority ${priority}; ${hangWhy}): ${body.slice(0, 300)}`);
      else if (!aborted) t.failures.push(`client error: ${message}`);
      controller.abort();
    } finally {
      dog.done(watch);
    }
  }
}

/** Least-squares growth of `ys` over the span of `xs` (same units as ys). */
function fittedGrowth(points: readonly [number, number][]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  return sxx === 0 ? 0 : (sxy / sxx) * (points[n - 1]![0] - points[0]![0]);
}

async function soakOne(name: string, o: Options): Promise<boolean> {
  const file = await modelPath(name, o);
  if (!existsSync(file)) throw new Error(`soak: model ${file} not found`);
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'tm-soak-'));
  const template = path.join(tmp, 'template.jinja');
  writeFileSync(template, '{% for m in messages %}{{ m.content }}{% endfor %}');
  // Each client has its own API key, so the server sees 64 clients (its per-client shares of the worker
  // pool and tokenize gate apply to each), not one loopback address.
  const keys = Array.from({ length: o.clients }, (_, i) => `sk-soak-${o.seed}-${i}`);
  const keysFile = path.join(tmp, 'keys');
  writeFileSync(keysFile, `${keys.join('\n')}\n`, { mode: 0o600 });
  const server = await startServer(file, path.join(tmp, 'data'), template, keysFile, o.batchedTokens === null ? [] : ['--max-num-batched-tokens', String(o.batchedTokens)]);
  const t: Tally = { status: new Map(), refusals: new Map(), ttft: [], itl: [], failures: [], starved: 0, longestWait: 0 };
  const loadBefore = os.loadavg();
  const rss: [number, number][] = [];
  const loads: number[] = [];
  const t0 = Date.now();
  const until = t0 + o.minutes * 60_000;
  // The server's event-loop delay, one window per scrape (/metrics reports p50/p99/max since the last one).
  const loop: { p50: number; p99: number; max: number }[] = [];
  const dog = new Watchdog(t);
  const sampler = setInterval(() => {
    if (server.child.exitCode !== null) return;
    rss.push([(Date.now() - t0) / 1000, rssBytes(server.child.pid!)]);
    loads.push(os.loadavg()[0]!);
    void fetch(`${server.base}/metrics`).then((r) => r.text()).then((m) => {
      dog.serverRunning = metric(m, 'vllm:num_requests_running');
      loop.push({ p50: metric(m, 'tokenmill:event_loop_delay_p50_seconds'), p99: metric(m, 'tokenmill:event_loop_delay_p99_seconds'), max: metric(m, 'tokenmill:event_loop_delay_max_seconds') });
    }, () => undefined);
  }, 5000);
  let crashed = false;
  const onExit = (code: number | null, signal: string | null): void => {
    crashed = true;
    t.failures.push(`the server exited (${code ?? signal}):\n${server.stderr().slice(-2000)}`);
  };
  server.child.once('exit', onExit);
  console.log(`soak ${name}: ${o.clients} clients for ${o.minutes} min against ${server.base} (seed ${o.seed}${o.batchedTokens === null ? '' : `, --max-num-batched-tokens ${o.batchedTokens}`})`);
  await Promise.all(Array.from({ length: o.clients }, (_, i) => client(server.base, keys[i]!, makeRng(o.seed * 1000 + i), until, t, dog)));
  dog.close();
  clearInterval(sampler);
  const loadAfter = os.loadavg();

  // Every client stopped: the engine must drain to idle with every KV block free.
  let idle = false;
  let blocks = '';
  for (const deadline = Date.now() + HANG_MS; !crashed && Date.now() < deadline;) {
    const m = await (await fetch(`${server.base}/metrics`)).text();
    const running = metric(m, 'vllm:num_requests_running');
    const waiting = metric(m, 'vllm:num_requests_waiting');
    const usage = metric(m, 'vllm:kv_cache_usage_perc');
    const total = Number(/num_gpu_blocks="(\d+)"/.exec(m)?.[1] ?? NaN);
    blocks = `running ${running}, waiting ${waiting}, KV usage ${usage} (${Math.round(total * (1 - usage))} of ${total} blocks free), ${metric(m, 'vllm:num_preemptions_total')} preemptions in the run`;
    if (running === 0 && waiting === 0 && usage === 0) {
      idle = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  if (!idle) t.failures.push(`not idle ${HANG_MS / 1000} s after the clients stopped: ${blocks}`);

  // RSS must plateau: over the last third of the sampled run the fitted growth may not exceed 5 % of its mean.
  const mb = (b: number) => (b / 2 ** 20).toFixed(0);
  // (Sampling goes on until the last client's request ended, which on a slow model is minutes past --minutes.)
  const span = rss.length > 0 ? rss[rss.length - 1]![0] : 0;
  const lastThird = rss.filter(([s]) => s >= (2 / 3) * span);
  const lastMean = lastThird.reduce((a, [, b]) => a + b, 0) / Math.max(1, lastThird.length);
  const growth = fittedGrowth(lastThird);
  if (lastThird.length >= 6 && growth > 0.05 * lastMean) t.failures.push(`RSS still growing: +${mb(growth)} MiB over the last third (mean ${mb(lastMean)} MiB)`);
  else if (lastThird.length < 6) t.failures.push(`too few RSS samples in the last third (${lastThird.length}) to judge a plateau: run longer`);

  const total = [...t.status.values()].reduce((a, b) => a + b, 0);
  console.log(`soak ${name}: ${total} requests in ${((Date.now() - t0) / 1000).toFixed(0)} s; by status ${JSON.stringify(Object.fromEntries(t.status))}`);
  const refusals = [...t.refusals].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([why, n]) => `${n}× ${why}`);
  console.log(`soak ${name}: 4xx answers, most frequent first: ${refusals.join(' | ') || 'none'}`);
  console.log(`soak ${name}: TTFT p50 ${percentile(t.ttft, 50).toFixed(1)} ms, p99 ${percentile(t.ttft, 99).toFixed(1)} ms; inter-token p50 ${percentile(t.itl, 50).toFixed(1)} ms, p99 ${percentile(t.itl, 99).toFixed(1)} ms`);
  console.log(`soak ${name}: RSS MiB over time ${rss.filter((_, i) => i % Math.max(1, Math.floor(rss.length / 12)) === 0).map(([s, b]) => `${s.toFixed(0)}s:${mb(b)}`).join(' ')}; last third: mean ${mb(lastMean)}, fitted growth ${growth >= 0 ? '+' : ''}${mb(growth)} MiB (limit 5 %)`);
  console.log(`soak ${name}: waits over ${HANG_MS / 1000} s the contract excused (more urgent work outstanding, or no free slot): ${t.starved}, longest wait for a chunk ${(t.longestWait / 1000).toFixed(1)} s`);
  console.log(`soak ${name}: 1-minute load average ${loadBefore[0]!.toFixed(2)} at the start, mean ${(loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length)).toFixed(2)} during, ${loadAfter[0]!.toFixed(2)} at the end (${os.cpus().length} CPUs)`);
  const ms = (v: number) => (v * 1000).toFixed(1);
  console.log(`soak ${name}: event-loop delay over ${loop.length} windows of 5 s: median p50 ${ms(percentile(loop.map((l) => l.p50), 50))} ms, worst p99 ${ms(Math.max(0, ...loop.map((l) => l.p99)))} ms, max ${ms(Math.max(0, ...loop.map((l) => l.max)))} ms`);
  console.log(`soak ${name}: at the end ${blocks}`);
  for (const f of t.failures.slice(0, 20)) console.log(`soak ${name}: FAIL ${f}`);
  if (t.failures.length > 20) console.log(`soak ${name}: … ${t.failures.length - 20} more failures`);
  server.child.off('exit', onExit);
  server.child.kill('SIGTERM');
  await new Promise((r) => server.child.once('exit', r).once('error', r));
  rmSync(tmp, { recursive: true, force: true });
  return t.failures.length === 0;
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  let ok = true;
  for (const m of o.models) ok = (await soakOne(m, o)) && ok;
  console.log(ok ? 'soak: passed' : 'soak: FAILED');
  process.exit(ok ? 0 : 1);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
