// A --model value as the CLI takes it: a GGUF path, or hf:<org>/<repo>[:<quant>], pulled into the cache
// first. Split models download whole, but the loader opens single files only.
import { progressReporter } from '../cli/progress.js';
import { isHubRef } from './hub-ref.js';
import { pull } from './pull.js';

export class SplitModelError extends Error {
  readonly code = 'gguf_unsupported';
}

export async function resolveModelPath(spec: string, log: (line: string) => void): Promise<string> {
  if (!isHubRef(spec)) return spec;
  const result = await pull(spec, { onProgress: progressReporter(), log });
  if (result.files.length > 1) {
    throw new SplitModelError(`${spec} is split into ${result.files.length} files (downloaded to ${result.files[0]} …); ` +
      'loading split GGUF files is not supported yet: merge them into one file (llama.cpp: llama-gguf-split --merge) and pass its path');
  }
  return result.files[0]!;
}
