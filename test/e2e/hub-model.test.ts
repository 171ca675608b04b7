// `--model hf:<org>/<repo>` through the real CLI: the model is pulled from a local stand-in of the hub
// (HF_ENDPOINT) into $TOKENMILL_CACHE, then loaded and run; the same output as the local file gives.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildSynthModel } from '../../bench/synth-model.js';
import { startFakeHub, type FakeHub } from '../helpers/fake-hub.js';
import { splitWriter } from '../helpers/gguf-split.js';
import { stories260K } from '../helpers/shared.js';
import { repoRoot } from './server-helpers.js';

let hub: FakeHub;
let cache: string;
beforeAll(async () => {
  hub = await startFakeHub();
  hub.repos.set('karpathy/stories260K-GGUF', { files: [{ path: 'stories260K-F32.gguf', data: new Uint8Array(readFileSync(stories260K)) }] });
  cache = mkdtempSync(path.join(os.tmpdir(), 'tokenmill-hub-cli-'));
});
afterAll(async () => {
  await hub.close();
  rmSync(cache, { recursive: true, force: true });
});

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'tokenmill.cjs'), ...args], {
      cwd: repoRoot, env: { ...process.env, HF_ENDPOINT: hub.endpoint, TOKENMILL_CACHE: cache, HF_TOKEN: '' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '', stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test('generate --model hf:… pulls into the cache and generates what the local file generates', async () => {
  const args = ['--prompt', 'Once upon a time', '--max-tokens', '16', '--threads', '1'];
  const remote = await cli(['generate', '--model', 'hf:karpathy/stories260K-GGUF:F32', ...args]);
  expect(remote.code, remote.stderr).toBe(0);
  expect(remote.stderr).toMatch(/downloading karpathy\/stories260K-GGUF\/stories260K-F32.gguf/);
  const local = await cli(['generate', '--model', stories260K, ...args]);
  expect(local.code, local.stderr).toBe(0);
  expect(remote.stdout).toBe(local.stdout);
  expect(remote.stdout.length).toBeGreaterThan(10);
  // pull finds the verified copy and prints its path.
  const pulled = await cli(['pull', 'hf:karpathy/stories260K-GGUF', '--json']);
  expect(pulled.code, pulled.stderr).toBe(0);
  const out = JSON.parse(pulled.stdout) as { files: string[]; downloadedBytes: number };
  expect(out.downloadedBytes).toBe(0);
  expect(out.files).toEqual([path.join(cache, 'hub', 'karpathy', 'stories260K-GGUF', 'main', 'stories260K-F32.gguf')]);
});

test('a split model (three shards) pulls whole, loads from its first shard and generates what the merged file does', async () => {
  const synth = buildSynthModel({ arch: 'llama', type: 'Q8_0', nEmbd: 64, nHead: 4, nHeadKv: 2, nFf: 128, nLayer: 2, nCtx: 128, seed: 3 });
  const shards = splitWriter(synth.writer, [4, 4, synth.writer.tensors.length - 8]);
  hub.repos.set('org/split-GGUF', { files: shards.map((w, i) => ({ path: `synth-Q8_0-0000${i + 1}-of-00003.gguf`, data: w.toBytes() })) });
  const whole = path.join(cache, 'synth-whole.gguf');
  await synth.writer.writeFile(whole);
  const args = ['--prompt', 'Once upon a time', '--max-tokens', '12', '--threads', '1', '--temperature', '0'];
  const remote = await cli(['generate', '--model', 'hf:org/split-GGUF:Q8_0', ...args]);
  expect(remote.code, remote.stderr).toBe(0);
  expect(remote.stderr).toMatch(/synth-Q8_0-00003-of-00003\.gguf/);
  const local = await cli(['generate', '--model', whole, ...args]);
  expect(local.code, local.stderr).toBe(0);
  expect(remote.stdout).toBe(local.stdout);
  expect(remote.stdout.length).toBeGreaterThan(5);
});

test('pull errors: unknown repo, no matching quantisation (exit 1, one clear line)', async () => {
  const missing = await cli(['pull', 'hf:nobody/nothing']);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/tokenmill: model nobody\/nothing@main: not found on the hub \(404\)/);
  const noQuant = await cli(['pull', 'hf:karpathy/stories260K-GGUF:Q4_K_M']);
  expect(noQuant.code).toBe(1);
  expect(noQuant.stderr).toMatch(/no Q4_K_M GGUF file \(available: F32\)/);
});
