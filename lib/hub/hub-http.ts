// GET against the hub with manual redirects: the token goes to the hub's own origin only, never to the
// storage host a download redirects to (a signed URL needs no token, and a token must not leak there).

export class HubHttpError extends Error {
  constructor(message: string, readonly status: number, readonly code: 'unauthorized' | 'not_found' | 'hub_error') {
    super(message);
  }
}

export interface HubRequest {
  url: string;
  /** HF_TOKEN: sent as a bearer token to `tokenOrigin` only. */
  token?: string;
  tokenOrigin: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

const maxRedirects = 10;

/** Follows redirects by hand and returns the final response (any status); the caller reads or cancels its body. */
export async function hubGet(req: HubRequest): Promise<Response> {
  let url = req.url;
  for (let hop = 0; hop <= maxRedirects; hop++) {
    const headers: Record<string, string> = { 'user-agent': 'tokenmill', ...req.headers };
    if (req.token && new URL(url).origin === req.tokenOrigin) headers.authorization = `Bearer ${req.token}`;
    const res = await fetch(url, { headers, redirect: 'manual', ...(req.signal ? { signal: req.signal } : {}) });
    if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
      await res.body?.cancel();
      url = new URL(res.headers.get('location')!, url).toString();
      continue;
    }
    return res;
  }
  throw new HubHttpError(`too many redirects fetching ${req.url}`, 0, 'hub_error');
}

/** A non-success response as an error naming what was asked for and what to do about it. */
export async function hubError(res: Response, what: string, hasToken: boolean): Promise<HubHttpError> {
  const body = (await res.text().catch(() => '')).slice(0, 300).trim();
  const detail = body ? `: ${body}` : '';
  if (res.status === 401 || res.status === 403) {
    const hint = hasToken ? 'the token in HF_TOKEN has no access to it' : 'it is gated or private: set HF_TOKEN to a token with access';
    return new HubHttpError(`${what}: the hub answered ${res.status} (${hint})${detail}`, res.status, 'unauthorized');
  }
  if (res.status === 404) return new HubHttpError(`${what}: not found on the hub (404)${detail}`, 404, 'not_found');
  return new HubHttpError(`${what}: the hub answered ${res.status}${detail}`, res.status, 'hub_error');
}
