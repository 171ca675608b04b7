// Resolves a hub reference to local GGUF files, downloading what the cache lacks: the repo's file list
// (sizes and sha256 from the hub's model API), the files the reference picks, each downloaded with resume
// and verification. Offline with a complete cached copy, the cached files are used (with a warning).
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { cacheRoot, readVerified, repoDir, writeVerified } from './hub-cache.js';
import { hubError, hubGet, HubHttpError } from './hub-http.js';
import { parseHubRef, type HubRef } from './hub-ref.js';
import { downloadFile, sha256File } from './download.js';
import { pickFiles, type RepoFile } from './pick-files.js';

export interface PullOptions {
  /** The hub (default $HF_ENDPOINT or https://huggingface.co). */
  endpoint?: string;
  /** Default $HF_TOKEN. */
  token?: string;
  cacheDir?: string;
  signal?: AbortSignal;
  /** Progress of each file: its repo path, bytes so far, total. */
  onProgress?: (file: string, done: number, total: number) => void;
  log?: (line: string) => void;
  retryDelayMs?: number;
}

export interface PullResult {
  ref: HubRef;
  /** Local paths, shards in order; the first is what a loader opens. */
  files: string[];
  bytes: number;
}

interface Sibling {
  rfilename: string;
  size?: number;
  lfs?: { sha256?: string; size?: number };
}

async function listRepo(ref: HubRef, endpoint: string, token: string | undefined, signal?: AbortSignal): Promise<RepoFile[]> {
  const url = `${endpoint}/api/models/${ref.repo}/revision/${encodeURIComponent(ref.revision)}?blobs=true`;
  const res = await hubGet({ url, tokenOrigin: new URL(endpoint).origin, ...(token ? { token } : {}), ...(signal ? { signal } : {}) });
  if (res.status !== 200) throw await hubError(res, `model ${ref.repo}@${ref.revision}`, Boolean(token));
  const body = (await res.json()) as { siblings?: Sibling[] };
  if (!Array.isArray(body.siblings)) throw new HubHttpError(`model ${ref.repo}: the hub's answer lists no files`, 200, 'hub_error');
  return body.siblings.map((s) => {
    const size = s.lfs?.size ?? s.size;
    if (typeof size !== 'number') return { path: s.rfilename, size: -1 };
    return { path: s.rfilename, size, ...(s.lfs?.sha256 ? { sha256: s.lfs.sha256 } : {}) };
  });
}

/** The verified files of a repo's cache folder, as a listing pickFiles can choose from (offline use). */
async function cachedListing(dir: string): Promise<RepoFile[]> {
  let names: string[];
  try {
    names = (await fsp.readdir(dir, { recursive: true })).map(String).filter((n) => n.endsWith('.gguf'));
  } catch {
    return [];
  }
  const out: RepoFile[] = [];
  for (const n of names) {
    const v = await readVerified(path.join(dir, n));
    if (v) out.push({ path: n.split(path.sep).join('/'), size: v.size, sha256: v.sha256 });
  }
  return out;
}

export async function pull(spec: string | HubRef, o: PullOptions = {}): Promise<PullResult> {
  const ref = typeof spec === 'string' ? parseHubRef(spec) : spec;
  const endpoint = (o.endpoint ?? process.env.HF_ENDPOINT ?? 'https://huggingface.co').replace(/\/+$/, '');
  const token = o.token ?? process.env.HF_TOKEN ?? undefined;
  const dir = repoDir(o.cacheDir ?? cacheRoot(), ref);
  let listing: RepoFile[];
  try {
    listing = await listRepo(ref, endpoint, token, o.signal);
  } catch (error) {
    // No answer from the hub at all (offline): a complete verified cached copy still serves. A refusal
    // (401, 404) is final and is not papered over by an old copy.
    if (error instanceof HubHttpError || o.signal?.aborted) throw error;
    const cached = await cachedListing(dir);
    let picked: RepoFile[] = [];
    try {
      picked = pickFiles(ref, cached);
    } catch {
      throw error;
    }
    o.log?.(`tokenmill: the hub is unreachable (${(error as Error).message}); using the cached copy of ${ref.repo}`);
    return { ref, files: picked.map((f) => path.join(dir, ...f.path.split('/'))), bytes: 0 };
  }
  const picked = pickFiles(ref, listing);
  const files: string[] = [];
  let bytes = 0;
  for (const f of picked) {
    if (f.size < 0) throw new HubHttpError(`${ref.repo}/${f.path}: the hub lists no size for it`, 200, 'hub_error');
    const dest = path.join(dir, ...f.path.split('/'));
    files.push(dest);
    const known = await readVerified(dest);
    if (known && known.size === f.size && (!f.sha256 || known.sha256 === f.sha256)) continue;
    await fsp.mkdir(path.dirname(dest), { recursive: true });
    const url = `${endpoint}/${ref.repo}/resolve/${encodeURIComponent(ref.revision)}/${f.path.split('/').map(encodeURIComponent).join('/')}`;
    o.log?.(`tokenmill: downloading ${ref.repo}/${f.path} (${(f.size / 1e6).toFixed(1)} MB)`);
    await downloadFile(
      { url, dest, size: f.size, ...(f.sha256 ? { sha256: f.sha256 } : {}) },
      {
        tokenOrigin: new URL(endpoint).origin, ...(token ? { token } : {}), ...(o.signal ? { signal: o.signal } : {}),
        onProgress: (done, total) => o.onProgress?.(f.path, done, total),
        ...(o.retryDelayMs !== undefined ? { retryDelayMs: o.retryDelayMs } : {}),
      },
    );
    await writeVerified(dest, { sha256: f.sha256 ?? (await sha256File(dest)), size: f.size });
    bytes += f.size;
  }
  return { ref, files, bytes };
}
