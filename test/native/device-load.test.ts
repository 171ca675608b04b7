// Device selection with the real loaders and the CPU addon: a CUDA variant that exists but cannot be
// loaded (here a file that is no shared object, as a .node linked against a missing libcuda would be),
// 'auto' falling back with one line, 'cuda' failing with device_unavailable, Engine.create's device check
// and `tokenmill inspect`'s device line. The CUDA variant itself is tested by `npm run test:cuda`.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

import { main } from '../../lib/cli.js';
import { Engine } from '../../lib/engine/engine.js';
import { EngineError, InvalidArgumentError } from '../../lib/engine/errors.js';
import { Model } from '../../lib/engine/model.js';
import { native } from '../../lib/native/load.js';
import { stories260K } from '../helpers/shared.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-device-'));
const broken = path.join(dir, 'tokenmill-cuda.node');
fs.writeFileSync(broken, 'this is not a shared object\n');
process.env.TOKENMILL_NATIVE_CUDA = broken;
const locate = createRequire(__filename)('../../lib/native/locate.cjs') as { loadCudaAddon(): unknown };

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function stderrLines(fn: () => Promise<unknown>): Promise<string[]> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  return fn().finally(() => spy.mockRestore()).then(() => lines);
}

describe('device selection (CPU addon, unloadable CUDA variant)', () => {
  it('loads on the CPU by default, without looking for the CUDA variant', async () => {
    const lines = await stderrLines(async () => {
      const model = await Model.load(stories260K);
      expect([model.device, model.deviceDescription]).toEqual(['cpu', `cpu (${native().cpuIsa()})`]);
      model.dispose();
    });
    expect(lines).toEqual([]);
  });

  it("'auto' falls back to the CPU with one line naming the file and the loader's error, once per process", async () => {
    const lines = await stderrLines(async () => {
      for (let i = 0; i < 2; i++) {
        const model = await Model.load(stories260K, { device: 'auto' });
        expect(model.device).toBe('cpu');
        model.dispose();
      }
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^tokenmill: device auto: running on the CPU because the CUDA variant ${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} failed to load: .*(invalid ELF header|file too short)\\n$`));
  });

  it("'cuda' rejects with device_unavailable (503) and the reason", async () => {
    const error = await Model.load(stories260K, { device: 'cuda' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({ code: 'device_unavailable', status: 503 });
    expect((error as Error).message).toMatch(/^device cuda is not available: the CUDA variant .* failed to load: /);
  });

  it('says which paths it tried when no CUDA variant exists', () => {
    process.env.TOKENMILL_NATIVE_CUDA = path.join(dir, 'missing.node');
    try {
      expect(() => locate.loadCudaAddon()).toThrow(
        expect.objectContaining({
          code: 'cuda_variant_unavailable',
          message: `no CUDA variant of the addon is built (tried ${path.join(dir, 'missing.node')}; \`npm run build:cuda\` builds one)`,
        }),
      );
    } finally {
      process.env.TOKENMILL_NATIVE_CUDA = broken;
    }
  });

  it('Engine.create refuses a device other than the model\'s and accepts the same or auto', async () => {
    const model = await Model.load(stories260K, { device: 'cpu' });
    const error = await Engine.create(model, { device: 'cuda' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ code: 'invalid_argument', param: 'device' });
    expect((error as Error).message).toBe("Engine.create: device 'cuda' was asked for but the model was loaded for 'cpu'; pass { device: 'cuda' } to Model.load");
    for (const device of ['cpu', 'auto'] as const) {
      const engine = await Engine.create(model, { device, kvCacheMemory: 1 << 20 });
      await engine.close();
    }
    model.dispose();
  });

  it('rejects an unknown device', async () => {
    await expect(Model.load(stories260K, { device: 'tpu' as 'cpu' })).rejects.toMatchObject({ code: 'invalid_argument', message: 'device must be one of cpu, cuda, auto but got "tpu"' });
  });

  it('`tokenmill inspect` prints the device that would run the model', async () => {
    const out: string[] = [];
    const spy = vi.spyOn(console, 'log').mockImplementation((line: string) => void out.push(line));
    try {
      expect(await main(['inspect', stories260K, '--device', 'cpu'])).toBe(0);
      expect(await main(['inspect', stories260K, '--json', '--device', 'cpu'])).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(out[0]).toContain(`\ndevice          cpu (${native().cpuIsa()})\n`);
    expect((JSON.parse(out[1]!) as { device: string }).device).toBe(`cpu (${native().cpuIsa()})`);
    const lines = await stderrLines(async () => expect(await main(['inspect', stories260K, '--device', 'tpu'])).toBe(1));
    expect(lines.join('')).toContain('tokenmill inspect: expected one model path; --device expects cpu, cuda or auto');
  });
});
