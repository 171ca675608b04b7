// A small loopback HTTP client for the HTTP benchmarks: node:http with one keep-alive agent, JSON POSTs
// timed end to end, and SSE streams timed to their first token.
//
// NOTE(http-client): every client of a run shares one Agent with maxSockets = the number of concurrent
// clients and keepAlive on, so after the first request of each client no connection set-up is timed.
import http from 'node:http';

export interface Endpoint {
  host: string;
  port: number;
}

export function keepAliveAgent(maxSockets: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
}

function post(ep: Endpoint, agent: http.Agent, path: string, body: unknown, onResponse: (res: http.IncomingMessage) => void, onError: (e: Error) => void): void {
  const data = Buffer.from(JSON.stringify(body));
  const req = http.request({
    host: ep.host, port: ep.port, path, method: 'POST', agent,
    headers: { 'Content-Type': 'application/json', 'Content-Length': data.length },
  }, onResponse);
  req.on('error', onError);
  req.end(data);
}

/** POSTs `body` as JSON and resolves with the parsed JSON reply; a non-200 status rejects with the body. */
export function postJson(ep: Endpoint, agent: http.Agent, path: string, body: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    post(ep, agent, path, body, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`));
        try {
          resolve(JSON.parse(text));
        } catch (e) {
          reject(e as Error);
        }
      });
    }, reject);
  });
}

export interface StreamTiming {
  /** Seconds from sending the request to the first chunk that carries generated text (or finishes the choice). */
  ttft: number;
  /** Seconds from sending the request to the end of the stream. */
  total: number;
  chunks: number;
}

/**
 * POSTs a streaming chat request and times it. The first chunk (role only, empty content) is not a
 * token, so TTFT is the first chunk with non-empty `delta.content` or a `finish_reason`.
 */
export function postStream(ep: Endpoint, agent: http.Agent, path: string, body: unknown): Promise<StreamTiming> {
  const t0 = process.hrtime.bigint();
  const since = (): number => Number(process.hrtime.bigint() - t0) / 1e9;
  return new Promise((resolve, reject) => {
    post(ep, agent, path, body, (res) => {
      if (res.statusCode !== 200) {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => reject(new Error(`HTTP ${res.statusCode}: ${Buffer.concat(chunks).toString('utf8').slice(0, 300)}`)));
        return;
      }
      let buf = '', ttft = NaN, chunks = 0, done = false, failed: Error | null = null;
      res.setEncoding('utf8');
      res.on('data', (s: string) => {
        buf += s;
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const event = buf.slice(0, i);
          buf = buf.slice(i + 2);
          for (const line of event.split('\n')) {
            if (!line.startsWith('data:')) continue;
            const payload = line.slice(5).trim();
            if (payload === '[DONE]') { done = true; continue; }
            const msg = JSON.parse(payload) as { error?: { message: string }; choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[] };
            if (msg.error) { failed = new Error(`stream error: ${msg.error.message}`); continue; }
            chunks++;
            const c = msg.choices?.[0];
            if (Number.isNaN(ttft) && c && ((c.delta?.content ?? '') !== '' || c.finish_reason)) ttft = since();
          }
        }
      });
      res.on('error', reject);
      res.on('end', () => {
        if (failed) return reject(failed);
        if (!done || Number.isNaN(ttft)) return reject(new Error('stream ended without a token or without [DONE]'));
        resolve({ ttft, total: since(), chunks });
      });
    }, reject);
  });
}

/** The q-quantile (0..1) of `xs` by linear interpolation between order statistics. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q, lo = Math.floor(pos), hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

/** Runs `total` jobs with `concurrency` workers, each taking the next job index when its last one is done. */
export async function runPool<T>(total: number, concurrency: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array<T>(total);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) {
      const i = next++;
      out[i] = await job(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  return out;
}
