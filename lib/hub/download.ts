// One file from the hub into the cache: resumed with an HTTP range after a cut connection or an
// interrupted earlier run (the bytes so far wait in `<file>.part`), checked against the size and sha256
// the hub lists, and only then renamed into place — a file in the cache is always a verified one.
import { createHash } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import { hubError, hubGet, HubHttpError } from './hub-http.js';

export interface DownloadTarget {
  url: string;
  dest: string;
  size: number;
  sha256?: string;
}

export interface DownloadOptions {
  token?: string;
  tokenOrigin: string;
  signal?: AbortSignal;
  /** Called as bytes arrive: bytes on disk so far and the total. */
  onProgress?: (done: number, total: number) => void;
  /** Attempts after a cut connection before giving up (each resumes where the last stopped). */
  retries?: number;
  /** Delay before the first retry, doubled each time (tests make it small). */
  retryDelayMs?: number;
}

export class ChecksumError extends Error {
  readonly code = 'checksum_mismatch';
}

async function fileSize(file: string): Promise<number> {
  try {
    return (await fsp.stat(file)).size;
  } catch {
    return 0;
  }
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Appends the response body to `part` from offset `have`; returns the bytes on disk afterwards. */
async function appendBody(res: Response, part: string, have: number, total: number, onProgress?: (d: number, t: number) => void): Promise<number> {
  const handle = await fsp.open(part, have === 0 ? 'w' : 'a');
  let done = have;
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      await handle.write(chunk);
      done += chunk.byteLength;
      if (done > total) throw new ChecksumError(`the download is longer than the ${total} bytes the hub lists`);
      onProgress?.(done, total);
    }
  } finally {
    await handle.close();
  }
  return done;
}

export async function downloadFile(t: DownloadTarget, o: DownloadOptions): Promise<void> {
  const part = `${t.dest}.part`;
  let have = await fileSize(part);
  if (have > t.size) {
    await fsp.rm(part, { force: true });
    have = 0;
  }
  const retries = o.retries ?? 5;
  let delay = o.retryDelayMs ?? 500;
  for (let attempt = 0; have < t.size; attempt++) {
    try {
      const res = await hubGet({
        url: t.url, tokenOrigin: o.tokenOrigin, ...(o.token ? { token: o.token } : {}), ...(o.signal ? { signal: o.signal } : {}),
        headers: have > 0 ? { range: `bytes=${have}-` } : {},
      });
      if (res.status === 200) {
        have = 0;  // the server sent the whole file (no range support): start over
      } else if (res.status === 206) {
        const start = Number(/bytes (\d+)-/.exec(res.headers.get('content-range') ?? '')?.[1]);
        if (start !== have) {
          await res.body?.cancel();
          throw new HubHttpError(`asked for bytes from ${have}, the server sent from ${res.headers.get('content-range')}`, 206, 'hub_error');
        }
      } else {
        throw await hubError(res, `downloading ${t.url}`, Boolean(o.token));
      }
      have = await appendBody(res, part, have, t.size, o.onProgress);
      if (have < t.size) throw new Error(`connection closed after ${have} of ${t.size} bytes`);
    } catch (error) {
      // A refusal (401/404…) or a corrupt stream will not get better by retrying; a cut connection will.
      if (error instanceof HubHttpError || error instanceof ChecksumError || o.signal?.aborted || attempt >= retries) throw error;
      have = await fileSize(part);
      await new Promise((r) => setTimeout(r, delay));
      delay *= 2;
    }
  }
  if (t.sha256) {
    const got = await sha256File(part);
    if (got !== t.sha256.toLowerCase()) {
      await fsp.rm(part, { force: true });
      throw new ChecksumError(`${t.dest}: sha256 ${got} does not match the hub's ${t.sha256}; the download was discarded`);
    }
  }
  await fsp.rename(part, t.dest);
}
