// Synthetic benchmark models, written once into a cache directory and reused while their parameters
// (and the writer's output format, via `formatVersion`) stay the same.
//
// NOTE(model-cache): a model file is only ever seen complete: it is written under a temporary name and
// renamed, and its sidecar <name>.json (the parameters it was written with) is written after the rename.
// A file without a matching sidecar is rewritten.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { writeSynthModel, type SynthModelOptions } from './synth-model.js';

// Bump when synth-model.ts changes what it writes for the same options.
const formatVersion = 1;

const q8Bytes = (elements: number): number => (elements / 32) * 34;

/** Estimated file size of a Q8_0 synthetic llama model (weights dominate; metadata is a few MB at most). */
export function estimateBytes(o: SynthModelOptions, nVocab: number): number {
  const headDim = o.headDim ?? o.nEmbd / o.nHead;
  const nQ = o.nHead * headDim, nKv = o.nHeadKv * headDim;
  const perLayer = q8Bytes(o.nEmbd * nQ * 2 + o.nEmbd * nKv * 2 + o.nEmbd * o.nFf * 3) + 4 * o.nEmbd * 2;
  return perLayer * o.nLayer + q8Bytes(o.nEmbd * nVocab) * (o.tiedOutput ? 1 : 2) + 8 * 1024 * 1024;
}

function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return Number(s.bavail) * Number(s.bsize);
}

export interface CachedModel {
  path: string;
  bytes: number;
  reused: boolean;
  writeSeconds: number;
}

/** Returns the path of model `name` written with `options`, writing it first when needed. */
export async function ensureModel(cacheDir: string, name: string, options: SynthModelOptions, nVocab: number, log: (s: string) => void): Promise<CachedModel> {
  mkdirSync(cacheDir, { recursive: true });
  const file = path.join(cacheDir, `${name}.gguf`);
  const sidecar = path.join(cacheDir, `${name}.json`);
  const wanted = JSON.stringify({ formatVersion, options });
  if (existsSync(file) && existsSync(sidecar)) {
    const meta = JSON.parse(readFileSync(sidecar, 'utf8')) as { params: string; bytes: number };
    const bytes = statSync(file).size;
    if (meta.params === wanted && meta.bytes === bytes) return { path: file, bytes, reused: true, writeSeconds: 0 };
  }
  rmSync(sidecar, { force: true });
  rmSync(file, { force: true });
  const need = estimateBytes(options, nVocab);
  // The writer holds the whole file in memory and writes it in one go; ask for the file plus 1 GB of slack.
  const free = freeBytes(cacheDir);
  if (free < need + 1e9) {
    throw new Error(`not enough disk space in ${cacheDir} for ${name}: need about ${(need / 1e9).toFixed(2)} GB + 1 GB slack, ` +
      `${(free / 1e9).toFixed(2)} GB free (use --cache-dir or $TOKENMILL_BENCH_CACHE)`);
  }
  log(`writing synthetic model ${name} (~${(need / 1e9).toFixed(2)} GB) to ${file} ...`);
  const t0 = Date.now();
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await writeSynthModel(tmp, options);
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
  const bytes = statSync(file).size;
  writeFileSync(sidecar, JSON.stringify({ params: wanted, bytes }) + '\n');
  const writeSeconds = (Date.now() - t0) / 1000;
  log(`  wrote ${(bytes / 1e9).toFixed(2)} GB in ${writeSeconds.toFixed(1)} s`);
  return { path: file, bytes, reused: false, writeSeconds };
}
