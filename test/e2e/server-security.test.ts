// Security through the real server (stories260K, a key, an env secret): request-supplied chat templates
// reach no file, environment variable or network address and stay inside the render limits; cache_salt
// isolation shown by the cached-token counts (no timing): a salted prefix is hit only by the same salt;
// the key never appears in the server's output.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stories260K } from '../helpers/shared.js';
import { startServer, type RunningServer } from './server-helpers.js';
import { expectIdle, postChat } from './server-probe.js';

const KEY = 'sk-security-e2e-7f3a9c';
const SECRET = 'TM_SECRET_VALUE_4b1d';
const auth = { authorization: `Bearer ${KEY}` };

let dataDir: string;
let server: RunningServer;
let secretFile: string;
let listener: http.Server;
let contacted = 0;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-security-'));
  secretFile = path.join(dataDir, 'secret.txt');
  fs.writeFileSync(secretFile, SECRET);
  listener = http.createServer((_req, res) => {
    contacted++;
    res.end(SECRET);
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  server = await startServer(['--model', stories260K, '--served-model-name', 'm', '--data-dir', dataDir, '--api-key', KEY, '--log-level', 'debug'], { TM_SECRET: SECRET });
});
afterAll(async () => {
  await server?.stop('SIGKILL');
  await new Promise((r) => listener?.close(r));
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const chat = (body: Record<string, unknown>) =>
  postChat(server.base, JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 2, temperature: 0, ...body }), auth);

describe('e2e: request chat templates are sandboxed', () => {
  it('no file, environment variable or network address is reachable from a template', async () => {
    const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/`;
    const attempts = [
      `{% include '${secretFile}' %}`, `{% import '${secretFile}' as s %}`, `{% extends '${secretFile}' %}`, `{% from '${secretFile}' import x %}`,
      `{% include '${url}' %}`, `{{ fetch('${url}') }}`, `{{ open('${secretFile}').read() }}`, `{{ require('fs').readFileSync('${secretFile}') }}`,
      "{{ range.constructor('return process.env.TM_SECRET')() }}", "{{ messages.constructor.constructor('return process.env')() }}",
      "{{ ''.constructor.constructor('return process')().env.TM_SECRET }}", '{{ process.env.TM_SECRET }}', '{{ env.TM_SECRET }}',
      '{{ environ.TM_SECRET }}', '{{ globalThis.process.env.TM_SECRET }}', '{{ cycler.__init__.__globals__.os.environ.TM_SECRET }}',
      '{{ self.__init__.__globals__ }}', '{{ messages.__proto__.constructor }}', '{{ raise_exception.constructor("return process")() }}',
      `{{ strftime_now.constructor('return require("fs").readFileSync("${secretFile}", "utf8")')() }}`,
    ];
    for (const template of attempts) {
      const r = await chat({ chat_template: template + '{{ messages[0].content }}' });
      expect([200, 400], template).toContain(r.status);
      expect(r.body, template).not.toContain(SECRET);
      expect(r.body, template).not.toMatch(/at .*\.js:\d+/);
    }
    expect(contacted).toBe(0);
  });

  it('CPU and memory stay bounded: a looping template ends at the time limit, a growing one at the size limit', async () => {
    const loop = await chat({ chat_template: '{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}' });
    expect(loop.status).toBe(400);
    expect(JSON.parse(loop.body).error.message).toContain('time limit of 2000 ms');
    expect(loop.ms).toBeLessThan(6000);
    const grow = await chat({ chat_template: "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}" });
    expect(grow.status).toBe(400);
    expect(JSON.parse(grow.body).error.message).toContain('size limit');
    const big = await chat({ chat_template: '{{ range(1000000000)|length }}' });
    expect(big.status).toBe(400);
  });
});

describe('e2e: cache_salt isolation, by cached-token counts', () => {
  it('a salted prefix is hit only by the same salt, never by another salt or by no salt', async () => {
    const content = 'Once upon a time there was a little girl who lived in a village near the forest. '.repeat(3);
    const cached = async (salt: string | null): Promise<number> => {
      const r = await chat({ messages: [{ role: 'user', content }], chat_template: '{{ messages[0].content }}', ...(salt === null ? {} : { cache_salt: salt }) });
      expect(r.status, r.body).toBe(200);
      const usage = JSON.parse(r.body).usage as { prompt_tokens: number; prompt_tokens_details?: { cached_tokens: number } | null };
      expect(usage.prompt_tokens).toBeGreaterThan(32);
      return usage.prompt_tokens_details?.cached_tokens ?? 0;
    };
    expect(await cached('tenant-a')).toBe(0);
    expect(await cached('tenant-a')).toBeGreaterThanOrEqual(32);
    expect(await cached('tenant-b')).toBe(0);
    expect(await cached(null)).toBe(0);
    expect(await cached(null)).toBeGreaterThanOrEqual(32);
    expect(await cached('tenant-b')).toBeGreaterThanOrEqual(32);
    expect(await cached('tenant-c')).toBe(0);
    await expectIdle(server.base);
  });
});

describe('e2e: the key stays out of the output', () => {
  it('stderr at debug level names no key, for good, wrong and failing requests', async () => {
    await postChat(server.base, JSON.stringify({ model: 'm', messages: [] }), auth);
    await postChat(server.base, '{}', { authorization: `Bearer ${KEY}-wrong` });
    await chat({ chat_template: '{{ raise_exception("boom") }}' });
    expect(server.stderr()).not.toContain(KEY);
    expect(server.stderr().toLowerCase()).not.toContain('bearer');
  });
});
