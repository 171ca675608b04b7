// A local stand-in for the Hugging Face hub's model API and resolve endpoint, for the pull tests: repos of
// files held in memory, `resolve` redirecting to a storage server on another origin (as the hub redirects
// to its CDN), HTTP ranges, gated repos, and faults on demand (a connection cut mid-file, a wrong sha256).
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeFile {
  path: string;
  data: Uint8Array;
  /** Listed instead of the real sha256 (a corrupt upload). */
  listedSha256?: string;
}

export interface FakeRepo {
  files: FakeFile[];
  /** Answer 401 unless the request carries this bearer token. */
  token?: string;
}

export interface FakeHub {
  endpoint: string;
  repos: Map<string, FakeRepo>;
  /** Cut the connection after this many bytes on the next download of a file (once per entry). */
  cutAfter: Map<string, number>;
  /** Every storage request: its path, Range header and whether it carried an Authorization header. */
  storageLog: { path: string; range?: string; authorization: boolean }[];
  close(): Promise<void>;
}

const sha256 = (d: Uint8Array): string => createHash('sha256').update(d).digest('hex');

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

export async function startFakeHub(): Promise<FakeHub> {
  const repos = new Map<string, FakeRepo>();
  const cutAfter = new Map<string, number>();
  const storageLog: FakeHub['storageLog'] = [];
  const findFile = (repo: string, file: string): FakeFile | undefined => repos.get(repo)?.files.find((f) => f.path === file);

  const storage = http.createServer((req, res) => {
    const m = /^\/blob\/([^/]+\/[^/]+)\/(.+)$/.exec(decodeURI(req.url ?? ''));
    storageLog.push({ path: req.url ?? '', ...(req.headers.range ? { range: req.headers.range } : {}), authorization: Boolean(req.headers.authorization) });
    const f = m ? findFile(m[1]!, m[2]!) : undefined;
    if (!f) {
      res.writeHead(404).end('no such blob');
      return;
    }
    let start = 0;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (range) start = Number(range[1]);
    const body = f.data.subarray(start);
    const key = `${m![1]}/${f.path}`;
    const cut = cutAfter.get(key);
    res.writeHead(range ? 206 : 200, {
      'content-length': String(body.byteLength),
      ...(range ? { 'content-range': `bytes ${start}-${f.data.byteLength - 1}/${f.data.byteLength}` } : {}),
    });
    if (cut !== undefined && cut < body.byteLength) {
      cutAfter.delete(key);
      res.write(body.subarray(0, cut), () => res.destroy());
      return;
    }
    res.end(body);
  });
  const storageBase = await listen(storage);

  const hub = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://hub');
    const api = /^\/api\/models\/([^/]+\/[^/]+)\/revision\/([^/]+)$/.exec(url.pathname);
    const resolve = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(decodeURIComponent(url.pathname));
    const repoName = api?.[1] ?? resolve?.[1];
    const repo = repoName ? repos.get(repoName) : undefined;
    if (!repo) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Repository not found' }));
      return;
    }
    if (repo.token && req.headers.authorization !== `Bearer ${repo.token}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Access to this model is restricted' }));
      return;
    }
    if (api) {
      const siblings = repo.files.map((f) => ({ rfilename: f.path, size: f.data.byteLength, lfs: { sha256: f.listedSha256 ?? sha256(f.data), size: f.data.byteLength } }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: repoName, siblings }));
      return;
    }
    const f = findFile(repoName!, resolve![3]!);
    if (!f) {
      res.writeHead(404).end('Entry not found');
      return;
    }
    res.writeHead(302, { location: `${storageBase}/blob/${repoName}/${encodeURI(f.path)}` }).end();
  });
  const endpoint = await listen(hub);
  return {
    endpoint, repos, cutAfter, storageLog,
    close: () => new Promise<void>((r) => hub.close(() => storage.close(() => r()))),
  };
}
