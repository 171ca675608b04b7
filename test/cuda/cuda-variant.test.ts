// The CUDA variant (build-cuda/Release/tokenmill-cuda.node, `npm run build:cuda`): what it exports, that
// its probe answers instead of crashing (on a machine without a GPU or driver it says why), that device
// selection follows the probe, and that the variant runs the same engine as the CPU addon. Run by
// `npm run test:cuda`; the device kernels are checked by tokenmill_cuda_tests.
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { Engine } from '../../lib/engine/engine.js';
import { Model } from '../../lib/engine/model.js';
import { selectDevice } from '../../lib/native/device.js';
import { native } from '../../lib/native/load.js';
import type { NativeAddon, NativeModel } from '../../lib/native/types.js';
import { stories260K } from '../helpers/shared.js';

const variantPath = path.resolve(__dirname, '..', '..', 'build-cuda', 'Release', 'tokenmill-cuda.node');
const cuda = createRequire(__filename)(variantPath) as NativeAddon;
const probe = cuda.cudaProbe!();

// Greedy tokens of one request through an addon's own engine (no device selection involved).
async function greedy(addon: NativeAddon, model: NativeModel, prompt: Int32Array): Promise<number[]> {
  const tokens: number[] = [];
  let wake: () => void = () => {};
  const engine = await addon.createEngine(model, { kvCacheMemory: 1 << 20, maxNumSeqs: 1 }, () => wake());
  engine.submit({ id: 1, promptTokens: prompt, maxTokens: 24, temperature: 0 });
  for (let done = false; !done; ) {
    await new Promise<void>((resolve) => {
      wake = resolve;
      setTimeout(resolve, 50);
    });
    for (const rec of engine.drain()) {
      tokens.push(...rec.tokens);
      done ||= rec.done === true;
    }
  }
  await engine.close();
  return tokens;
}

describe('the CUDA variant', () => {
  it('is the CUDA variant, with sm_80 and sm_90 device code and compute_90 PTX', () => {
    expect(cuda.variant).toBe('cuda');
    expect(cuda.cudaArchitectures).toBe('sm_80, sm_90 (+ PTX compute_90)');
    expect(cuda.version).toBe(native().version);
  });

  it('probes without throwing: either a usable GPU or the reason there is none', () => {
    expect(probe.runtimeVersion).toBeGreaterThanOrEqual(13000);
    if (probe.error === null) {
      expect(probe.devices.some((d) => d.usable && Number(d.computeCapability) >= 8)).toBe(true);
    } else {
      expect(probe.devices.every((d) => !d.usable)).toBe(true);
      expect(probe.error).toMatch(/^(cuda\w+: |no CUDA device|device \d)/);
    }
  });

  it("'auto' follows the probe: the GPU when one is usable, else the CPU addon", () => {
    const s = selectDevice('auto');
    expect(s.device).toBe(probe.error === null ? 'cuda' : 'cpu');
    if (probe.error !== null) expect(s.fallbackReason).toContain(probe.error);
  });

  it('runs the same engine as the CPU addon (greedy tokens of stories260K)', async () => {
    const prompt = Int32Array.from([1, 403, 261, 378]);
    const fromCpu = await native().loadModel(stories260K, {});
    const fromCuda = await cuda.loadModel(stories260K, {});
    const tokens = await greedy(cuda, fromCuda, prompt);
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens).toEqual(await greedy(native(), fromCpu, prompt));
    fromCpu.dispose();
    fromCuda.dispose();
  });

  it('Model.load with device cuda: on the GPU (with the fit check), or device_unavailable naming the probe\'s reason', async () => {
    if (probe.error === null) {
      const model = await Model.load(stories260K, { device: 'cuda' });
      expect(model.deviceDescription).toMatch(/^cuda:\d /);
      const engine = await Engine.create(model, { kvCacheMemory: 1 << 20 });
      await engine.close();
      // The fit check against the GPU's free memory refuses an engine larger than it, with the numbers.
      const gpu = probe.devices.find((d) => d.usable)!;
      await expect(Engine.create(model, { kvCacheMemory: gpu.freeBytes * 2 })).rejects.toMatchObject({
        code: 'out_of_memory',
        message: expect.stringContaining(`(free memory of cuda:${gpu.index} ${gpu.name})`),
      });
      model.dispose();
    } else {
      await expect(Model.load(stories260K, { device: 'cuda' })).rejects.toMatchObject({ code: 'device_unavailable', message: expect.stringContaining(probe.error) });
    }
  });
});
