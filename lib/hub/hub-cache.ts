// Where pulled models live: $TOKENMILL_CACHE, else $XDG_CACHE_HOME/tokenmill, else ~/.cache/tokenmill;
// hub files under hub/<org>/<repo>/<revision>/<path in the repo>, each with a `<file>.sha256` sidecar
// written after its verification (so a cached file is not hashed again on every start).
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { HubRef } from './hub-ref.js';

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TOKENMILL_CACHE) return path.resolve(env.TOKENMILL_CACHE);
  const base = env.XDG_CACHE_HOME ? path.resolve(env.XDG_CACHE_HOME) : path.join(os.homedir(), '.cache');
  return path.join(base, 'tokenmill');
}

export function repoDir(root: string, ref: HubRef): string {
  return path.join(root, 'hub', ...ref.repo.split('/'), ref.revision.replace(/\//g, '--'));
}

export interface Verified {
  sha256: string;
  size: number;
}

export async function readVerified(file: string): Promise<Verified | undefined> {
  try {
    const [text, stat] = await Promise.all([fsp.readFile(`${file}.sha256`, 'utf8'), fsp.stat(file)]);
    const v = JSON.parse(text) as Verified;
    return v.size === stat.size ? v : undefined;
  } catch {
    return undefined;
  }
}

export async function writeVerified(file: string, v: Verified): Promise<void> {
  await fsp.writeFile(`${file}.sha256`, JSON.stringify(v) + '\n');
}
