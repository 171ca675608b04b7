// `tokenmill pull hf:<org>/<repo>[:<quant>]`: downloads a GGUF model from the Hugging Face hub into the
// cache (see lib/hub) and prints where it is.
import { cacheRoot } from '../hub/hub-cache.js';
import { pull } from '../hub/pull.js';
import { progressReporter } from './progress.js';

export const pullUsage = `usage: tokenmill pull hf:<org>/<repo>[:<quant>] [--cache-dir DIR] [--json]
       tokenmill pull hf:<org>/<repo>/<file.gguf>
  Downloads a GGUF model (every shard of a split one) from the Hugging Face hub into the cache,
  resuming an interrupted download and checking each file's size and sha256. Without a quantisation
  the repo's Q4_K_M file is taken (else its only GGUF file).
  --cache-dir DIR  default $TOKENMILL_CACHE, else \${XDG_CACHE_HOME:-~/.cache}/tokenmill
  environment: HF_TOKEN (gated or private repos), HF_ENDPOINT (another hub)
`;

export async function pullCommand(args: string[]): Promise<number> {
  if (args.includes('--help')) {
    process.stdout.write(pullUsage);
    return 0;
  }
  let cacheDir: string | undefined;
  let json = false;
  const refs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--json') json = true;
    else if (a === '--cache-dir' && args[i + 1]) cacheDir = args[++i];
    else if (a.startsWith('--')) {
      process.stderr.write(`tokenmill pull: unknown flag ${a}\n${pullUsage}`);
      return 1;
    } else refs.push(a);
  }
  if (refs.length !== 1) {
    process.stderr.write(`tokenmill pull: expected one hf:<org>/<repo>[:<quant>]\n${pullUsage}`);
    return 1;
  }
  const result = await pull(refs[0]!, {
    cacheDir: cacheDir ?? cacheRoot(),
    onProgress: progressReporter(),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  if (json) console.log(JSON.stringify({ repo: result.ref.repo, revision: result.ref.revision, files: result.files, downloadedBytes: result.bytes }));
  else for (const f of result.files) console.log(f);
  return 0;
}
