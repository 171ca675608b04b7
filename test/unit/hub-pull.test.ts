// tokenmill pull / --model hf:… against a local stand-in of the hub (test/helpers/fake-hub.ts): file
// choice by quantisation, split files, resume after a cut connection and after an interrupted run,
// sha256 verification, HF_TOKEN for gated repos (never sent to the storage host), clear 401/404/no-match
// errors, and the cache serving offline. Nothing here touches the internet.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { parseHubRef } from '../../lib/hub/hub-ref.js';
import { pickFiles, quantOf } from '../../lib/hub/pick-files.js';
import { pull } from '../../lib/hub/pull.js';
import { startFakeHub, type FakeHub } from '../helpers/fake-hub.js';

let hub: FakeHub;
let cacheDir: string;
const blob = (n: number): Uint8Array => new Uint8Array(randomBytes(n));
const sha = (d: Uint8Array): string => createHash('sha256').update(d).digest('hex');

beforeAll(async () => {
  hub = await startFakeHub();
});
afterAll(async () => {
  await hub.close();
});
afterEach(() => {
  hub.repos.clear();
  hub.storageLog.length = 0;
  if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
});
const fresh = (): string => (cacheDir = mkdtempSync(path.join(os.tmpdir(), 'tokenmill-hub-')));
const opts = () => ({ endpoint: hub.endpoint, cacheDir: fresh(), retryDelayMs: 5, token: '' });

describe('hub references', () => {
  test('parse', () => {
    expect(parseHubRef('hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF')).toEqual({ repo: 'Qwen/Qwen2.5-0.5B-Instruct-GGUF', revision: 'main' });
    expect(parseHubRef('hf:org/repo:q4_k_m')).toEqual({ repo: 'org/repo', quant: 'q4_k_m', revision: 'main' });
    expect(parseHubRef('hf:org/repo@v1.0/sub/model-Q8_0.gguf')).toEqual({ repo: 'org/repo', file: 'sub/model-Q8_0.gguf', revision: 'v1.0' });
    for (const bad of ['hf:', 'hf:org', 'hf:../x/y', 'hf:org/repo:Q4 K', 'hf:org/repo/../../etc/passwd.gguf', 'hf:org/repo/file.bin', 'hf:org/repo/a.gguf:Q8_0']) {
      expect(() => parseHubRef(bad), bad).toThrow(/hf:|valid|gguf|quantisation|both|revision/);
    }
  });

  test('quantisation names in file names', () => {
    expect(quantOf('qwen2.5-0.5b-instruct-q4_k_m.gguf')).toBe('Q4_K_M');
    expect(quantOf('SmolLM2-135M-Instruct.IQ4_XS.gguf')).toBe('IQ4_XS');
    expect(quantOf('model-Q8_0-00002-of-00003.gguf')).toBe('Q8_0');
    expect(quantOf('gemma-3-270m-it-BF16.gguf')).toBe('BF16');
    expect(quantOf('model.gguf')).toBeUndefined();
  });

  test('pickFiles: Q4_K_M by default, a named quantisation, every shard of a split file, auxiliary files ignored', () => {
    const files = ['m-Q8_0.gguf', 'm-Q4_K_M.gguf', 'mmproj-m-f16.gguf', 'big-Q2_K-00002-of-00002.gguf', 'big-Q2_K-00001-of-00002.gguf', 'README.md']
      .map((p) => ({ path: p, size: 1 }));
    expect(pickFiles({ repo: 'o/r', revision: 'main' }, files).map((f) => f.path)).toEqual(['m-Q4_K_M.gguf']);
    expect(pickFiles({ repo: 'o/r', quant: 'q8_0', revision: 'main' }, files).map((f) => f.path)).toEqual(['m-Q8_0.gguf']);
    expect(pickFiles({ repo: 'o/r', quant: 'Q2_K', revision: 'main' }, files).map((f) => f.path))
      .toEqual(['big-Q2_K-00001-of-00002.gguf', 'big-Q2_K-00002-of-00002.gguf']);
    expect(() => pickFiles({ repo: 'o/r', quant: 'Q5_K_S', revision: 'main' }, files)).toThrow(/no Q5_K_S GGUF file \(available: Q8_0, Q4_K_M, Q2_K\)/);
    expect(() => pickFiles({ repo: 'o/r', quant: 'Q2_K', revision: 'main' }, files.filter((f) => !f.path.startsWith('big-Q2_K-00002'))))
      .toThrow(/split into 2 files but the repo lists 1/);
  });
});

describe('pull', () => {
  test('downloads the chosen file through the storage redirect, verified, and reuses the cache', async () => {
    const data = blob(300_000);
    hub.repos.set('org/model', { files: [{ path: 'model-Q4_K_M.gguf', data }, { path: 'model-Q8_0.gguf', data: blob(10) }] });
    const o = opts();
    const seen: number[] = [];
    const r = await pull('hf:org/model', { ...o, onProgress: (_f, done) => seen.push(done) });
    expect(r.files).toHaveLength(1);
    expect(readFileSync(r.files[0]!)).toEqual(Buffer.from(data));
    expect(r.files[0]!.startsWith(path.join(o.cacheDir, 'hub', 'org', 'model', 'main'))).toBe(true);
    expect(seen.at(-1)).toBe(data.byteLength);
    expect(existsSync(`${r.files[0]}.part`)).toBe(false);
    // Again: the verified copy is used, nothing is downloaded.
    const before = hub.storageLog.length;
    const again = await pull('hf:org/model', { ...o });
    expect(again.files).toEqual(r.files);
    expect(again.bytes).toBe(0);
    expect(hub.storageLog.length).toBe(before);
  });

  test('a connection cut mid-file is resumed with an HTTP range', async () => {
    const data = blob(500_000);
    hub.repos.set('org/cut', { files: [{ path: 'm-Q4_K_M.gguf', data }] });
    hub.cutAfter.set('org/cut/m-Q4_K_M.gguf', 123_456);
    const r = await pull('hf:org/cut', opts());
    expect(sha(readFileSync(r.files[0]!))).toBe(sha(data));
    expect(hub.storageLog.map((l) => l.range)).toEqual([undefined, 'bytes=123456-']);
  });

  test('an interrupted earlier run (a .part file) continues where it stopped', async () => {
    const data = blob(200_000);
    hub.repos.set('org/part', { files: [{ path: 'm-Q4_K_M.gguf', data }] });
    const o = opts();
    const dir = path.join(o.cacheDir, 'hub', 'org', 'part', 'main');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'm-Q4_K_M.gguf.part'), data.subarray(0, 150_000));
    const r = await pull('hf:org/part', o);
    expect(sha(readFileSync(r.files[0]!))).toBe(sha(data));
    expect(hub.storageLog.map((l) => l.range)).toEqual(['bytes=150000-']);
  });

  test('a wrong checksum is an error and leaves nothing in the cache', async () => {
    hub.repos.set('org/bad', { files: [{ path: 'm-Q4_K_M.gguf', data: blob(1000), listedSha256: '0'.repeat(64) }] });
    const o = opts();
    await expect(pull('hf:org/bad', o)).rejects.toMatchObject({ code: 'checksum_mismatch', message: expect.stringMatching(/does not match/) });
    const dir = path.join(o.cacheDir, 'hub', 'org', 'bad', 'main');
    expect(existsSync(path.join(dir, 'm-Q4_K_M.gguf'))).toBe(false);
    expect(existsSync(path.join(dir, 'm-Q4_K_M.gguf.part'))).toBe(false);
  });

  test('split files: every shard, in order', async () => {
    const a = blob(1000), b = blob(2000);
    hub.repos.set('org/split', { files: [{ path: 'x-Q4_K_M-00002-of-00002.gguf', data: b }, { path: 'x-Q4_K_M-00001-of-00002.gguf', data: a }] });
    const r = await pull('hf:org/split:Q4_K_M', opts());
    expect(r.files.map((f) => path.basename(f))).toEqual(['x-Q4_K_M-00001-of-00002.gguf', 'x-Q4_K_M-00002-of-00002.gguf']);
    expect(readFileSync(r.files[1]!)).toEqual(Buffer.from(b));
  });

  test('gated repo: 401 without HF_TOKEN names it; with the token it downloads, and the token never reaches storage', async () => {
    hub.repos.set('org/gated', { token: 'hf_secret', files: [{ path: 'g-Q4_K_M.gguf', data: blob(5000) }] });
    await expect(pull('hf:org/gated', opts())).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/401.*HF_TOKEN/) });
    await expect(pull('hf:org/gated', { ...opts(), token: 'wrong' })).rejects.toMatchObject({ message: expect.stringMatching(/token in HF_TOKEN has no access/) });
    const r = await pull('hf:org/gated', { ...opts(), token: 'hf_secret' });
    expect(existsSync(r.files[0]!)).toBe(true);
    expect(hub.storageLog.length).toBeGreaterThan(0);
    expect(hub.storageLog.every((l) => !l.authorization)).toBe(true);
  });

  test('404 and no matching quantisation are clear errors', async () => {
    hub.repos.set('org/model', { files: [{ path: 'model-Q8_0.gguf', data: blob(10) }] });
    await expect(pull('hf:org/missing', opts())).rejects.toMatchObject({ code: 'not_found', message: expect.stringMatching(/org\/missing.*404/) });
    await expect(pull('hf:org/model:Q4_K_M', opts())).rejects.toMatchObject({ code: 'not_found', message: expect.stringMatching(/no Q4_K_M GGUF file \(available: Q8_0\)/) });
    await expect(pull('hf:org/model/nope.gguf', opts())).rejects.toThrow(/has no file nope.gguf/);
  });

  test('offline: a verified cached copy serves; without one the network error stands', async () => {
    const data = blob(4000);
    hub.repos.set('org/off', { files: [{ path: 'o-Q4_K_M.gguf', data }] });
    const o = opts();
    const first = await pull('hf:org/off', o);
    const lines: string[] = [];
    const offline = await pull('hf:org/off', { ...o, endpoint: 'http://127.0.0.1:9', log: (l) => lines.push(l) });
    expect(offline.files).toEqual(first.files);
    expect(lines.join('\n')).toMatch(/unreachable.*cached copy/);
    await expect(pull('hf:org/other', { ...opts(), endpoint: 'http://127.0.0.1:9' })).rejects.toThrow();
  });
});
