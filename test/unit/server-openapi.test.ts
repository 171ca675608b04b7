// GET /openapi.json: open (no key), OpenAPI 3.1, generated from the same zod schemas that validate
// requests — every request field and its bounds appear as the schema states them.
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KNOWN_REQUEST_FIELDS } from '../../lib/openai/protocol.js';
import { createServer, type TokenmillServer } from '../../lib/server/server.js';
import type { ChatEngineLike } from '../../lib/server/types.js';

const engine: ChatEngineLike = {
  maxModelLen: 64,
  model: { info: { path: '/m.gguf' } },
  stats: () => ({ running: 0, waiting: 0, kvCacheUsage: 0, kvBlocksTotal: 1, kvBlocksFree: 1, prefixCacheQueries: 0, prefixCacheHits: 0, preemptions: 0, promptTokens: 0, generationTokens: 0 }),
  chat: async () => { throw new Error('not used'); },
  chatStream: () => { throw new Error('not used'); },
};

const servers: TokenmillServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.drain(1000);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('GET /openapi.json', () => {
  it('is served without a key and describes every request field with the schema\'s bounds', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-openapi-'));
    dirs.push(dataDir);
    const server = createServer({ models: [{ id: 'm', engine }], dataDir, apiKeys: ['sk-1'], log: () => undefined });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = await fetch(`${base}/openapi.json`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const doc = (await r.json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(['/health', '/metrics', '/v1/chat/completions', '/v1/models', '/v1/preview/models/{model_id}/log']);
    const request = doc.components.schemas.ChatCompletionRequest;
    expect(Object.keys(request.properties).sort()).toEqual([...KNOWN_REQUEST_FIELDS].sort());
    expect(request.required).toEqual(['messages']);
    expect(request.properties.top_p.anyOf[0]).toMatchObject({ type: 'number', exclusiveMinimum: 0, maximum: 1 });
    expect(request.properties.frequency_penalty.anyOf[0]).toMatchObject({ minimum: -2, maximum: 2 });
    expect(Object.keys(doc.paths['/v1/chat/completions'].post.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '413', '415', '422', '429', '503']));
    expect(doc.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer' });
    expect((await fetch(`${base}/v1/models`)).status).toBe(401);
  });
});
