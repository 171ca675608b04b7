// A --model value as the CLI takes it: a GGUF path, or hf:<org>/<repo>[:<quant>], pulled into the cache
// first. A split model is loaded from its first shard; the loader finds the others beside it.
import { progressReporter } from '../cli/progress.js';
import { isHubRef } from './hub-ref.js';
import { pull } from './pull.js';

export async function resolveModelPath(spec: string, log: (line: string) => void): Promise<string> {
  if (!isHubRef(spec)) return spec;
  const result = await pull(spec, { onProgress: progressReporter(), log });
  return result.files[0]!;
}
