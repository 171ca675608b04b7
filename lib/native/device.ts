// NOTE(native/device): which variant of the addon runs a model. 'cpu' is the CPU addon (binding.gyp).
// 'cuda' is the CUDA variant (CMakeLists.txt), used only when it loads and its cudaProbe() finds a usable
// GPU; otherwise 'cuda' is an error (code device_unavailable) saying why. 'auto' takes the CUDA variant
// when 'cuda' would succeed and else the CPU addon, logging one line with the reason. The choice is made
// once per process for each request and reused, so the line is logged once. A model is bound to the
// variant that loaded it: its handles only work with that addon.
import { createRequire } from 'node:module';

import { native } from './load.js';
import type { NativeAddon, NativeCudaDevice } from './types.js';

export type DeviceRequest = 'cpu' | 'cuda' | 'auto';
export type Device = 'cpu' | 'cuda';

export const DEVICE_REQUESTS: readonly DeviceRequest[] = ['cpu', 'cuda', 'auto'];

export interface DeviceSelection {
  device: Device;
  addon: NativeAddon;
  /** One line for logs and `tokenmill inspect`: "cuda:0 NVIDIA H100 (compute 9.0, 79.10 GiB free)", "cpu (avx512)". */
  description: string;
  /** With 'auto' on the CPU: why the CUDA variant was not used. */
  fallbackReason: string | null;
  /** The GPU, when device is 'cuda'. */
  cudaDevice: NativeCudaDevice | null;
}

export interface DeviceDeps {
  loadCpu(): NativeAddon;
  /** Throws (with the reason as its message) when no CUDA variant can be loaded. */
  loadCuda(): NativeAddon;
  log(line: string): void;
}

// Errors carry a `.code` like the addon's, so lib/engine/errors.ts maps them the same way.
function codedError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(2)} GiB`;
}

function cpuSelection(addon: NativeAddon, fallbackReason: string | null): DeviceSelection {
  return { device: 'cpu', addon, description: `cpu (${addon.cpuIsa()})`, fallbackReason, cudaDevice: null };
}

// The CUDA variant and its first usable GPU, or the reason there is none.
function tryCuda(deps: DeviceDeps): { addon: NativeAddon; gpu: NativeCudaDevice } | { reason: string } {
  let addon: NativeAddon;
  try {
    addon = deps.loadCuda();
  } catch (error) {
    return { reason: error instanceof Error ? error.message : String(error) };
  }
  if (addon.variant !== 'cuda' || typeof addon.cudaProbe !== 'function') {
    return { reason: `the addon loaded as the CUDA variant is the '${String(addon.variant)}' variant` };
  }
  const probe = addon.cudaProbe();
  const gpu = probe.devices.find((d) => d.usable);
  if (probe.error !== null || !gpu) {
    const driver = probe.driverVersion === 0 ? 'no CUDA driver' : `driver ${probe.driverVersion}`;
    return { reason: `the CUDA variant (runtime ${probe.runtimeVersion}, ${driver}) found no usable GPU: ${probe.error ?? 'none usable'}` };
  }
  return { addon, gpu };
}

/** Chooses the variant for `request` with injectable loaders (tests); selectDevice() is the real one. */
export function resolveDevice(request: DeviceRequest, deps: DeviceDeps): DeviceSelection {
  if (!DEVICE_REQUESTS.includes(request)) {
    throw codedError('invalid_argument', `device must be one of ${DEVICE_REQUESTS.join(', ')} but got ${JSON.stringify(request)}`);
  }
  if (request === 'cpu') return cpuSelection(deps.loadCpu(), null);
  const cuda = tryCuda(deps);
  if ('reason' in cuda) {
    if (request === 'cuda') throw codedError('device_unavailable', `device cuda is not available: ${cuda.reason}`);
    deps.log(`tokenmill: device auto: running on the CPU because ${cuda.reason}`);
    return cpuSelection(deps.loadCpu(), cuda.reason);
  }
  const { addon, gpu } = cuda;
  return {
    device: 'cuda',
    addon,
    // Until llama_forward runs the device kernels the CUDA variant computes on the CPU; the line says so
    // wherever it is shown (inspect, serve), so nobody reads it as GPU execution (docs/cuda.md#state).
    description: `cuda:${gpu.index} ${gpu.name} (compute ${gpu.computeCapability}, ${gib(gpu.freeBytes)} free of ${gib(gpu.totalBytes)}; the forward pass still runs on the CPU kernels)`,
    fallbackReason: null,
    cudaDevice: gpu,
  };
}

/**
 * The free memory of a CUDA selection's GPU now (probed again: other processes allocate too), as a limit
 * for Engine.create's fit check; 0 when the GPU is no longer usable.
 */
export function cudaMemoryLimit(selection: DeviceSelection): { bytes: number; source: string } {
  const gpu = selection.cudaDevice;
  if (!gpu || !selection.addon.cudaProbe) throw codedError('internal', 'cudaMemoryLimit needs a CUDA selection');
  const now = selection.addon.cudaProbe().devices.find((d) => d.index === gpu.index);
  return { bytes: now?.usable ? now.freeBytes : 0, source: `free memory of cuda:${gpu.index} ${gpu.name}` };
}

const locate = createRequire(__filename)('../../lib/native/locate.cjs') as { loadCudaAddon(): NativeAddon };

const realDeps: DeviceDeps = {
  loadCpu: native,
  loadCuda: () => locate.loadCudaAddon(),
  log: (line) => process.stderr.write(`${line}\n`),
};

const selections = new Map<DeviceRequest, DeviceSelection>();

/** The variant for `request`, chosen once per process (an error is not remembered: the next call retries). */
export function selectDevice(request: DeviceRequest): DeviceSelection {
  let selection = selections.get(request);
  if (!selection) {
    selection = resolveDevice(request, realDeps);
    selections.set(request, selection);
  }
  return selection;
}
