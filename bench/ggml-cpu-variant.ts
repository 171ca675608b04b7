// Which ggml CPU backend node-llama-cpp loaded in this process: its prebuilt package carries one
// libggml-cpu-<variant>.so per CPU family (haswell, zen4, sapphirerapids …) and ggml maps the one that
// scores best on this CPU's features. Used by the bench report and the parity tests' run header.
import { readFileSync } from 'node:fs';

/** The mapped variant, undefined before node-llama-cpp is loaded (or without /proc); throws if several are mapped. */
export function mappedGgmlCpuVariant(): string | undefined {
  let maps: string;
  try {
    maps = readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return undefined;
  }
  const variants = [...new Set([...maps.matchAll(/libggml-cpu-([\w-]+)\.so/g)].map((m) => m[1]!))];
  if (variants.length > 1) throw new Error(`more than one libggml-cpu-*.so is mapped: ${variants.join(', ')}`);
  return variants[0];
}
