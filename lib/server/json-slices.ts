// NOTE(server/json-slices): the JSON text of a response whose size the request controls (n choices ×
// max_tokens × top_logprobs can reach tens of MB; JSON.stringify of that holds the event loop for
// hundreds of ms) built in slices of about SLICE_MS, yielding to the event loop between them. The walk
// goes into arrays and objects until a value has fewer than LEAF_NODES nodes (one logprobs entry with
// its top_logprobs, a message) and hands that to JSON.stringify whole, so the text is JSON.stringify's:
// same key order, undefined and functions dropped from objects and written null in arrays, toJSON
// honoured.
import type { ServerResponse } from 'node:http';

const SLICE_MS = 4;
/** Text is handed on in pieces of about this many characters. */
const PIECE_CHARS = 64 * 1024;

/** Below this many nodes a value is stringified in one call (a few hundred µs at most). */
const LEAF_NODES = 2000;

/** Nodes of `v` (values and containers), counting stops at `limit`. */
function nodeCount(v: unknown, limit: number): number {
  if (v === null || typeof v !== 'object') return 1;
  let n = 1;
  for (const x of Array.isArray(v) ? v : Object.values(v)) {
    n += nodeCount(x, limit - n);
    if (n >= limit) return limit;
  }
  return n;
}

/** Yields (a pause point) after each array element and object member of the structured levels. */
function* walk(value: unknown, key: string, out: { text: string; pieces: string[] }): Generator<void> {
  let v = value as { toJSON?: (k: string) => unknown } | null | undefined;
  if (v !== null && typeof v === 'object' && typeof v.toJSON === 'function') v = v.toJSON(key) as typeof v;
  if (v === null || typeof v !== 'object' || nodeCount(v, LEAF_NODES) < LEAF_NODES) {
    out.text += JSON.stringify(v) ?? 'null';
  } else if (Array.isArray(v)) {
    out.text += '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out.text += ',';
      const item: unknown = v[i];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') out.text += 'null';
      else yield* walk(item, String(i), out);
      yield;
    }
    out.text += ']';
  } else {
    out.text += '{';
    let first = true;
    for (const [k, item] of Object.entries(v)) {
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      out.text += `${first ? '' : ','}${JSON.stringify(k)}:`;
      first = false;
      yield* walk(item, k, out);
      yield;
    }
    out.text += '}';
  }
  if (out.text.length >= PIECE_CHARS) {
    out.pieces.push(out.text);
    out.text = '';
  }
}

/** JSON.stringify(value) as pieces, computed without holding the event loop for more than ~SLICE_MS. */
export async function stringifyInSlices(value: unknown): Promise<string[]> {
  const out = { text: '', pieces: [] as string[] };
  let sliceStart = performance.now();
  for (const _ of walk(value, '', out)) {
    if (performance.now() - sliceStart >= SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
  if (out.text) out.pieces.push(out.text);
  return out.pieces;
}

/** sendJson for a body of request-controlled size: serialized in slices, sent with its Content-Length. */
export async function sendJsonInSlices(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): Promise<void> {
  const pieces = await stringifyInSlices(body);
  if (res.headersSent || res.destroyed) {
    res.end();
    return;
  }
  const length = pieces.reduce((n, p) => n + Buffer.byteLength(p), 0);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': length, ...headers });
  for (const p of pieces) res.write(p);
  res.end();
}
