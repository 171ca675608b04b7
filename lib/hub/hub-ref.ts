// `hf:<org>/<repo>[:<quant>]` and `hf:<org>/<repo>/<path/to/file.gguf>`: a GGUF model on the Hugging Face
// hub, named the way llama.cpp's `-hf` flag names it.

export interface HubRef {
  /** `org/repo`. */
  repo: string;
  /** A quantisation to pick among the repo's GGUF files (e.g. Q4_K_M), matched case-insensitively. */
  quant?: string;
  /** An explicit file in the repo instead of a quantisation. */
  file?: string;
  revision: string;
}

export class HubRefError extends Error {
  readonly code = 'invalid_argument';
}

const namePart = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function isHubRef(spec: string): boolean {
  return spec.startsWith('hf:');
}

/** Parses `hf:org/repo[:quant]` or `hf:org/repo/file.gguf` (an optional `@revision` after the repo). */
export function parseHubRef(spec: string): HubRef {
  if (!isHubRef(spec)) throw new HubRefError(`'${spec}' is not a hub reference (expected hf:<org>/<repo>[:<quant>])`);
  let rest = spec.slice(3);
  let quant: string | undefined;
  const colon = rest.indexOf(':');
  if (colon >= 0) {
    quant = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!/^[A-Za-z0-9_.-]+$/.test(quant)) throw new HubRefError(`'${spec}': the quantisation after ':' must be a name like Q4_K_M`);
  }
  const parts = rest.split('/');
  if (parts.length < 2) throw new HubRefError(`'${spec}': expected hf:<org>/<repo>[:<quant>]`);
  let [org, repo] = [parts[0]!, parts[1]!];
  let revision = 'main';
  const at = repo.indexOf('@');
  if (at >= 0) {
    revision = repo.slice(at + 1);
    repo = repo.slice(0, at);
    if (!/^[A-Za-z0-9_.\-/]+$/.test(revision) || revision.includes('..')) throw new HubRefError(`'${spec}': bad revision '${revision}'`);
  }
  for (const p of [org, repo]) {
    if (!namePart.test(p) || p.includes('..')) throw new HubRefError(`'${spec}': '${p}' is not a valid hub name`);
  }
  const filePath = parts.slice(2).join('/');
  if (filePath) {
    if (quant !== undefined) throw new HubRefError(`'${spec}': give a file or a quantisation, not both`);
    if (!filePath.toLowerCase().endsWith('.gguf') || filePath.split('/').some((p) => !namePart.test(p) || p.includes('..'))) {
      throw new HubRefError(`'${spec}': the file must be a .gguf path inside the repo`);
    }
    return { repo: `${org}/${repo}`, file: filePath, revision };
  }
  return { repo: `${org}/${repo}`, ...(quant ? { quant } : {}), revision };
}
