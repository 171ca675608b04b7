// Which addon variant runs a model (lib/native/device.ts), with fake loaders: the CUDA variant missing or
// failing to load, loaded without a usable GPU, and with one.
import { describe, expect, it } from 'vitest';

import { cudaMemoryLimit, resolveDevice, type DeviceDeps } from '../../lib/native/device.js';
import type { NativeAddon, NativeCudaDevice, NativeCudaProbe } from '../../lib/native/types.js';

const h100: NativeCudaDevice = { index: 0, name: 'NVIDIA H100', computeCapability: '9.0', totalBytes: 80 * 2 ** 30, freeBytes: 79 * 2 ** 30, usable: true };

function fakeAddon(variant: 'cpu' | 'cuda', probe?: NativeCudaProbe): NativeAddon {
  return { variant, cpuIsa: () => 'avx2', ...(probe ? { cudaProbe: () => probe } : {}) } as unknown as NativeAddon;
}

// Deps whose CUDA loader returns `cuda` (or throws it when it is an Error); records log lines and loads.
function deps(cuda: NativeAddon | Error): DeviceDeps & { lines: string[]; cudaLoads: number } {
  const d = {
    lines: [] as string[],
    cudaLoads: 0,
    loadCpu: () => fakeAddon('cpu'),
    loadCuda: () => {
      d.cudaLoads++;
      if (cuda instanceof Error) throw cuda;
      return cuda;
    },
    log: (line: string) => d.lines.push(line),
  };
  return d;
}

const noDriver: NativeCudaProbe = {
  runtimeVersion: 13000,
  driverVersion: 0,
  devices: [],
  error: 'cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version',
};
const withGpu: NativeCudaProbe = { runtimeVersion: 13000, driverVersion: 13000, devices: [h100], error: null };

describe('resolveDevice', () => {
  it("'cpu' never looks at the CUDA variant and logs nothing", () => {
    const d = deps(fakeAddon('cuda', withGpu));
    const s = resolveDevice('cpu', d);
    expect([s.device, s.description, s.fallbackReason, s.cudaDevice]).toEqual(['cpu', 'cpu (avx2)', null, null]);
    expect([d.cudaLoads, d.lines]).toEqual([0, []]);
  });

  it("'auto' without a CUDA variant runs on the CPU and logs one line saying why", () => {
    const d = deps(new Error('no CUDA variant of the addon is built (tried a, b)'));
    const s = resolveDevice('auto', d);
    expect(s.device).toBe('cpu');
    expect(s.fallbackReason).toBe('no CUDA variant of the addon is built (tried a, b)');
    expect(d.lines).toEqual(['tokenmill: device auto: running on the CPU because no CUDA variant of the addon is built (tried a, b)']);
  });

  it("'auto' with the CUDA variant but no driver names the runtime's error", () => {
    const d = deps(fakeAddon('cuda', noDriver));
    const s = resolveDevice('auto', d);
    expect(s.device).toBe('cpu');
    expect(d.lines).toHaveLength(1);
    expect(d.lines[0]).toBe(
      'tokenmill: device auto: running on the CPU because the CUDA variant (runtime 13000, no CUDA driver) found no usable GPU: ' +
        'cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version',
    );
  });

  it("'auto' when no device is usable (too old) falls back with the probe's reason", () => {
    const old = { ...h100, name: 'Tesla T4', computeCapability: '7.5', usable: false };
    const d = deps(fakeAddon('cuda', { runtimeVersion: 13000, driverVersion: 13020, devices: [old], error: 'device 0 (Tesla T4) has compute capability 7.5, below 8.0' }));
    expect(resolveDevice('auto', d).fallbackReason).toBe(
      'the CUDA variant (runtime 13000, driver 13020) found no usable GPU: device 0 (Tesla T4) has compute capability 7.5, below 8.0',
    );
  });

  it("'cuda' without a usable GPU is an error with code device_unavailable, not a fallback", () => {
    const d = deps(fakeAddon('cuda', noDriver));
    expect(() => resolveDevice('cuda', d)).toThrow(
      expect.objectContaining({ code: 'device_unavailable', message: expect.stringMatching(/^device cuda is not available: the CUDA variant .*cudaErrorInsufficientDriver/) }),
    );
    expect(d.lines).toEqual([]);
  });

  it("'cuda' when the CUDA variant fails to load reports the loader's message", () => {
    const d = deps(new Error('the CUDA variant /x/tokenmill-cuda.node failed to load: libcuda.so.1: cannot open shared object file'));
    expect(() => resolveDevice('cuda', d)).toThrow('device cuda is not available: the CUDA variant /x/tokenmill-cuda.node failed to load: libcuda.so.1');
  });

  it('refuses a CUDA loader that hands back the CPU variant', () => {
    expect(() => resolveDevice('cuda', deps(fakeAddon('cpu')))).toThrow("the addon loaded as the CUDA variant is the 'cpu' variant");
  });

  it("'cuda' and 'auto' with a usable GPU choose the CUDA variant and say which GPU", () => {
    for (const request of ['cuda', 'auto'] as const) {
      const cuda = fakeAddon('cuda', withGpu);
      const d = deps(cuda);
      const s = resolveDevice(request, d);
      expect(s.addon).toBe(cuda);
      expect([s.device, s.fallbackReason, s.cudaDevice]).toEqual(['cuda', null, h100]);
      expect(s.description).toBe('cuda:0 NVIDIA H100 (compute 9.0, 79.00 GiB free of 80.00 GiB; the forward pass still runs on the CPU kernels)');
      expect(d.lines).toEqual([]);
    }
  });

  it('takes the first usable GPU', () => {
    const old = { ...h100, index: 0, name: 'Tesla T4', computeCapability: '7.5', usable: false };
    const s = resolveDevice('cuda', deps(fakeAddon('cuda', { ...withGpu, devices: [old, { ...h100, index: 1 }] })));
    expect(s.cudaDevice?.index).toBe(1);
  });

  it('rejects an unknown device with code invalid_argument', () => {
    expect(() => resolveDevice('tpu' as 'cpu', deps(fakeAddon('cpu')))).toThrow(
      expect.objectContaining({ code: 'invalid_argument', message: 'device must be one of cpu, cuda, auto but got "tpu"' }),
    );
  });
});

describe('cudaMemoryLimit', () => {
  it("is the GPU's free memory probed again, 0 once the GPU is no longer usable", () => {
    let free = 10 * 2 ** 30;
    let usable = true;
    const addon = { variant: 'cuda', cpuIsa: () => 'avx2', cudaProbe: () => ({ ...withGpu, devices: [{ ...h100, freeBytes: free, usable }] }) } as unknown as NativeAddon;
    const selection = resolveDevice('cuda', deps(addon));
    expect(cudaMemoryLimit(selection)).toEqual({ bytes: 10 * 2 ** 30, source: 'free memory of cuda:0 NVIDIA H100' });
    free = 2 ** 30;
    expect(cudaMemoryLimit(selection).bytes).toBe(2 ** 30);
    usable = false;
    expect(cudaMemoryLimit(selection).bytes).toBe(0);
  });

  it('refuses a CPU selection', () => {
    expect(() => cudaMemoryLimit(resolveDevice('cpu', deps(fakeAddon('cpu'))))).toThrow(expect.objectContaining({ code: 'internal' }));
  });
});
