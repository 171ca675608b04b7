// npm run soak — a bounded soak of a real `tokenmill serve` (loopback only): 64 concurrent streaming
// clients with random parameters (n, logprobs, stop, priority, cache_salt, structured outputs), 10 %
// of them aborting at a random point and 5 % sending malformed requests, for --minutes per model.
// Reports requests by status, p50/p99 time to first token and inter-token latency, the server's RSS
// over time, and the KV cache at the end. Exits 1 on any 5xx (or 5xx stream event), a crash, a stream
// without progress for 30 s, RSS still growing in the last part of the run, or KV blocks still used
// after the clients stopped.
//
// Usage: npm run soak -- [--minutes 10] [--clients 64] [--model stories|tinyllama|PATH]... [--seed N]
//   Default models: stories260K (../shared or $TOKENMILL_SHARED) and a synthetic TinyLlama-shape model
//   (llama 2048x22, Q8_0, random weights; written once to the bench cache, like npm run bench).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeRng } from '../lib/gguf/weights.js';
import { ensureModel } from './model-cache.js';

interface Options { minutes: number; clients: number; models: string[]; seed: number; cacheDir: string }

function parseArgs(argv: string[]): Options {
  const o: Options = { minutes: 10, clients: 64, models: [], seed: Date.now() % 2 ** 31, cacheDir: process.env.TOKENMILL_BENCH_CACHE ?? path.join(os.tmpdir(), 'tokenmill-bench') };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--minutes': o.minutes = Number(v); i++; break;
      case '--clients': o.clients = Number(v); i++; break;
      case '--model': o.models.push(v!); i++; break;
      case '--seed': o.seed = Number(v); i++; break;
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

async function startServer(model: string, dataDir: string, template: string): Promise<Server> {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'tokenmill.cjs'), 'serve', '--model', model, '--served-model-name', 'm', '--port', '0',
    '--data-dir', dataDir, '--chat-template', template, '--scheduling-policy', 'priority', '--max-model-len', '512', '--log-level', 'warning'],
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

interface Tally { status: Map<string, number>; ttft: number[]; itl: number[]; failures: string[] }

const MALFORMED = ['{"messages": [', '{"model":"m","messages":"hi"}', '{"model":"m","messages":[{"role":"user","content":"x"}],"n":0}',
  '{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":"hot"}', '{"model":"m","messages":[{"role":"user","content":"x"}],"top_p":1e-300,"max_tokens":1e10}'];

function request(r: () => number): string {
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
  return JSON.stringify(body);
}

async function client(base: string, r: () => number, until: number, t: Tally): Promise<void> {
  const count = (k: string) => t.status.set(k, (t.status.get(k) ?? 0) + 1);
  while (Date.now() < until) {
    const malformed = r() < 0.05;
    const abortAfter = !malformed && r() < 0.1 ? 1 + Math.floor(r() * 6) : -1;
    const controller = new AbortController();
    const started = performance.now();
    const body = malformed ? MALFORMED[Math.floor(r() * MALFORMED.length)]! : request(r);
    let phase = 'waiting for the first chunk';
    // No answer (headers come with the first chunk) within the hang limit counts as a hang too.
    const headersTimer = setTimeout(() => controller.abort(new Error('hang')), HANG_MS);
    try {
      const res = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: controller.signal });
      clearTimeout(headersTimer);
      count(String(res.status));
      if (res.status >= 500) t.failures.push(`${res.status}: ${(await res.text()).slice(0, 200)}`);
      if (res.status !== 200) {
        await res.body?.cancel();
        continue;
      }
      phase = 'streaming';
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let chunks = 0;
      let last = 0;
      let text = '';
      for (;;) {
        let timer: NodeJS.Timeout | undefined;
        const hang = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('hang')), HANG_MS)));
        const step = await Promise.race([reader.read(), hang]).finally(() => clearTimeout(timer));
        if (step.done) break;
        text += decoder.decode(step.value, { stream: true });
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
      clearTimeout(headersTimer);
      const reason: unknown = controller.signal.reason;
      const message = reason instanceof Error && reason.message === 'hang' ? 'hang' : (e as Error).message;
      if (message === 'hang') t.failures.push(`no progress for ${HANG_MS / 1000} s ${phase}: ${body.slice(0, 300)}`);
      else if ((e as Error).name !== 'AbortError') t.failures.push(`client error: ${message}`);
      controller.abort();
    }
  }
}

async function soakOne(name: string, o: Options): Promise<boolean> {
  const file = await modelPath(name, o);
  if (!existsSync(file)) throw new Error(`soak: model ${file} not found`);
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'tm-soak-'));
  const template = path.join(tmp, 'template.jinja');
  writeFileSync(template, '{% for m in messages %}{{ m.content }}{% endfor %}');
  const server = await startServer(file, path.join(tmp, 'data'), template);
  const t: Tally = { status: new Map(), ttft: [], itl: [], failures: [] };
  const rss: [number, number][] = [];
  const t0 = Date.now();
  const until = t0 + o.minutes * 60_000;
  // The server's event-loop delay, one window per scrape (/metrics reports p50/p99/max since the last one).
  const loop: { p50: number; p99: number; max: number }[] = [];
  const sampler = setInterval(() => {
    if (server.child.exitCode !== null) return;
    rss.push([(Date.now() - t0) / 1000, rssBytes(server.child.pid!)]);
    void fetch(`${server.base}/metrics`).then((r) => r.text()).then((m) => {
      loop.push({ p50: metric(m, 'tokenmill:event_loop_delay_p50_seconds'), p99: metric(m, 'tokenmill:event_loop_delay_p99_seconds'), max: metric(m, 'tokenmill:event_loop_delay_max_seconds') });
    }, () => undefined);
  }, 5000);
  let crashed = false;
  const onExit = (code: number | null, signal: string | null): void => {
    crashed = true;
    t.failures.push(`the server exited (${code ?? signal}):\n${server.stderr().slice(-2000)}`);
  };
  server.child.once('exit', onExit);
  console.log(`soak ${name}: ${o.clients} clients for ${o.minutes} min against ${server.base} (seed ${o.seed})`);
  await Promise.all(Array.from({ length: o.clients }, (_, i) => client(server.base, makeRng(o.seed * 1000 + i), until, t)));
  clearInterval(sampler);

  // Every client stopped: the engine must drain to idle with every KV block free.
  let idle = false;
  let blocks = '';
  for (const deadline = Date.now() + HANG_MS; !crashed && Date.now() < deadline;) {
    const m = await (await fetch(`${server.base}/metrics`)).text();
    const running = metric(m, 'vllm:num_requests_running');
    const waiting = metric(m, 'vllm:num_requests_waiting');
    const usage = metric(m, 'vllm:kv_cache_usage_perc');
    blocks = `running ${running}, waiting ${waiting}, KV usage ${usage}`;
    if (running === 0 && waiting === 0 && usage === 0) {
      idle = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  if (!idle) t.failures.push(`not idle ${HANG_MS / 1000} s after the clients stopped: ${blocks}`);

  // RSS must plateau: the last quarter of the run may not sit much above the second quarter.
  const mb = (b: number) => (b / 2 ** 20).toFixed(0);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const q = (lo: number, hi: number) => mean(rss.filter(([s]) => s >= lo * o.minutes * 60 && s < hi * o.minutes * 60).map(([, b]) => b));
  const second = q(0.25, 0.5);
  const last = q(0.75, 1.01);
  if (rss.length >= 8 && last > second * 1.2 + 64 * 2 ** 20) t.failures.push(`RSS still growing: ${mb(second)} MiB in the second quarter, ${mb(last)} MiB in the last`);

  const total = [...t.status.values()].reduce((a, b) => a + b, 0);
  console.log(`soak ${name}: ${total} requests in ${((Date.now() - t0) / 1000).toFixed(0)} s; by status ${JSON.stringify(Object.fromEntries(t.status))}`);
  console.log(`soak ${name}: TTFT p50 ${percentile(t.ttft, 50).toFixed(1)} ms, p99 ${percentile(t.ttft, 99).toFixed(1)} ms; inter-token p50 ${percentile(t.itl, 50).toFixed(1)} ms, p99 ${percentile(t.itl, 99).toFixed(1)} ms`);
  console.log(`soak ${name}: RSS MiB over time ${rss.filter((_, i) => i % Math.max(1, Math.floor(rss.length / 12)) === 0).map(([s, b]) => `${s.toFixed(0)}s:${mb(b)}`).join(' ')}; second quarter ${mb(second)}, last quarter ${mb(last)}`);
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
