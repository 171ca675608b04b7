// Security of the HTTP layer: per-key rate limits (429 + Retry-After, keys independent, tokens charged
// after the request), keys never in a log line, the key file permission warning, and the key check
// comparing every configured key.
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatInput } from '../../lib/openai/chat-input.js';
import { KeyChecker, keysFileWarning } from '../../lib/server/auth.js';
import { RateLimiter } from '../../lib/server/rate-limit.js';
import { createServer, type TokenmillServer } from '../../lib/server/server.js';
import type { ChatEngineLike, ServerOptions } from '../../lib/server/types.js';

/** Answers every chat with 7 prompt + 2 completion tokens; `fail` requests throw. */
class UsageEngine implements ChatEngineLike {
  readonly maxModelLen = 64;
  readonly model = { info: { path: '/models/u.gguf' } };
  stats() {
    return { running: 0, waiting: 0, kvCacheUsage: 0, kvBlocksTotal: 8, kvBlocksFree: 8, prefixCacheQueries: 0, prefixCacheHits: 0, preemptions: 0, promptTokens: 0, generationTokens: 0 };
  }
  async chat(input: ChatInput) {
    if ((input.request as { fail?: boolean }).fail) throw new Error('engine exploded');
    return {
      id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'u',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
    } as never;
  }
  async *chatStream(): AsyncGenerator<never> {
    throw new Error('not used');
  }
}

const KEYS = ['sk-alpha-secret-1', 'sk-beta-secret-2'];
const servers: TokenmillServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.drain(1000);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function start(extra: Partial<ServerOptions>) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-sec-'));
  dirs.push(dataDir);
  const logged: string[] = [];
  const server = createServer({ models: [{ id: 'u', engine: new UsageEngine() }], dataDir, apiKeys: KEYS, logLevel: 'debug', log: (_l, m) => logged.push(m), ...extra });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  await server.ready;
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, logged };
}

const chat = (base: string, key: string, extra: Record<string, unknown> = {}) =>
  fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'u', messages: [{ role: 'user', content: 'x' }], ...extra }),
  });

describe('rate limits', () => {
  it('a bucket per key: a minute\'s worth at once, then the rate; Retry-After says when', () => {
    let now = 0;
    const rl = new RateLimiter({ requestsPerMinute: 3 }, () => now);
    expect([rl.admit('a'), rl.admit('a'), rl.admit('a')]).toEqual([null, null, null]);
    expect(rl.admit('a')).toEqual({ limit: 'requests', perMinute: 3, retryAfterSeconds: 20 });
    expect(rl.admit('b')).toBeNull();
    now = 19_000;
    expect(rl.admit('a')?.retryAfterSeconds).toBe(1);
    now = 20_000;
    expect(rl.admit('a')).toBeNull();
    expect(rl.admit('a')?.limit).toBe('requests');
  });

  it('tokens are charged after the request; a key in debt waits until it is repaid', () => {
    let now = 0;
    const rl = new RateLimiter({ tokensPerMinute: 600 }, () => now);
    expect(rl.admit('a')).toBeNull();
    rl.charge('a', 900);
    expect(rl.admit('a')).toEqual({ limit: 'tokens', perMinute: 600, retryAfterSeconds: 30 });
    now = 30_000;
    expect(rl.admit('a')).toBeNull();
  });

  it('over HTTP: 429 RateLimitError with Retry-After per key; the other key is unaffected; tokens per minute', async () => {
    const { base } = await start({ rateLimitRequests: 2 });
    expect((await chat(base, KEYS[0]!)).status).toBe(200);
    expect((await chat(base, KEYS[0]!)).status).toBe(200);
    const refused = await chat(base, KEYS[0]!);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(29);
    expect(await refused.json()).toEqual({ error: { message: expect.stringMatching(/^Rate limit reached for this API key: 2 requests per minute \(--rate-limit-requests\)\. Try again in \d+ s\.$/), type: 'RateLimitError', param: null, code: 429 } });
    expect((await chat(base, KEYS[1]!)).status).toBe(200);
    expect((await chat(base, 'sk-wrong')).status).toBe(401);

    const t = await start({ rateLimitTokens: 10 });
    expect((await chat(t.base, KEYS[0]!)).status).toBe(200); // 9 tokens: 1 left
    expect((await chat(t.base, KEYS[0]!)).status).toBe(200); // admitted with 1 left, then 8 in debt
    const over = await chat(t.base, KEYS[0]!);
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBe('48');
    expect(((await over.json()) as { error: { message: string } }).error.message).toContain('10 tokens per minute (--rate-limit-tokens)');
  });
});

describe('keys', () => {
  it('no log line carries a key or an Authorization header, at debug level, for good, wrong and failing requests', async () => {
    const { base, logged } = await start({});
    await chat(base, KEYS[0]!);
    await chat(base, KEYS[1]!, { fail: true });
    await chat(base, `${KEYS[0]}x`);
    await chat(base, KEYS[1]!, { unknown_field: 1 });
    expect(logged.some((l) => l.includes('engine exploded'))).toBe(true);
    for (const line of logged) {
      for (const k of KEYS) expect(line).not.toContain(k);
      expect(line.toLowerCase()).not.toContain('bearer');
    }
  });

  it('identifies the caller by the key\'s place, never the key; every configured key is compared', () => {
    const k = new KeyChecker(KEYS);
    expect(k.identify(`Bearer ${KEYS[1]}`)).toBe('key-2');
    expect(k.identify(`bearer   ${KEYS[0]}  `)).toBe('key-1');
    expect(k.identify('Bearer sk-alpha-secret')).toBeNull();
    expect(k.identify(KEYS[0])).toBeNull();
    expect(new KeyChecker([]).identify(undefined)).toBe('open');
  });

  it('a key file readable by others warns; mode 600 does not', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-keys-'));
    dirs.push(dir);
    const file = path.join(dir, 'keys');
    fs.writeFileSync(file, 'sk-1\n');
    fs.chmodSync(file, 0o644);
    expect(keysFileWarning(file, 'linux')).toBe(`--api-keys-file ${file} is accessible to other users (mode 0644); run chmod 600 on it`);
    fs.chmodSync(file, 0o600);
    expect(keysFileWarning(file, 'linux')).toBeNull();
    fs.chmodSync(file, 0o640);
    expect(keysFileWarning(file, 'linux')).toContain('mode 0640');
    expect(keysFileWarning(file, 'win32')).toBeNull();
  });
});
