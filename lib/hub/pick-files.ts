// Which of a repo's files make the model a hub reference asks for: one GGUF file, or every shard of a
// split one (`name-00001-of-00003.gguf`), chosen by quantisation the way llama.cpp's `-hf` does.
import type { HubRef } from './hub-ref.js';

export interface RepoFile {
  path: string;
  size: number;
  /** The LFS object's sha256 (hex), when the hub reports one. */
  sha256?: string;
}

export class NoMatchingFileError extends Error {
  readonly code = 'not_found';
}

const shardPattern = /-(\d{5})-of-(\d{5})\.gguf$/i;
// Files that are not the language model itself (vision projectors, imatrix data).
const auxiliary = /(^|\/)(mmproj|imatrix)[^/]*$/i;

/** The quantisation named in a GGUF file name (Q4_K_M, IQ4_XS, Q8_0, F16, BF16 …), upper-cased. */
export function quantOf(file: string): string | undefined {
  const base = file.split('/').pop()!.replace(shardPattern, '.gguf');
  const m = /(?:^|[-._])((?:IQ|Q)\d(?:_[A-Z0-9]+)*|BF16|F16|F32)(?=\.gguf$|[-._])/i.exec(base);
  return m?.[1]?.toUpperCase();
}

/** Groups a split file's shards; a single file is its own group. */
function groupOf(file: string): string {
  return file.replace(shardPattern, '.gguf');
}

export function pickFiles(ref: HubRef, files: readonly RepoFile[]): RepoFile[] {
  const ggufs = files.filter((f) => f.path.toLowerCase().endsWith('.gguf') && !auxiliary.test(f.path));
  let chosen: string | undefined;
  if (ref.file) {
    const hit = ggufs.find((f) => f.path === ref.file);
    if (!hit) throw new NoMatchingFileError(`${ref.repo} has no file ${ref.file}${listing(ggufs)}`);
    chosen = groupOf(hit.path);
  } else {
    const groups = [...new Set(ggufs.map((f) => groupOf(f.path)))];
    if (groups.length === 0) throw new NoMatchingFileError(`${ref.repo} holds no GGUF file`);
    const wanted = ref.quant?.toUpperCase();
    // Without a quantisation: Q4_K_M as llama.cpp picks, else the only file, else the first in name order.
    const byQuant = (q: string): string | undefined => groups.find((g) => quantOf(g) === q);
    chosen = wanted ? byQuant(wanted) : byQuant('Q4_K_M') ?? (groups.length === 1 ? groups[0] : [...groups].sort()[0]);
    if (!chosen) throw new NoMatchingFileError(`${ref.repo} has no ${ref.quant} GGUF file${listing(ggufs)}`);
  }
  const shards = ggufs.filter((f) => groupOf(f.path) === chosen).sort((a, b) => a.path.localeCompare(b.path));
  const m = shardPattern.exec(shards[0]!.path);
  if (m) {
    const total = Number(m[2]);
    if (shards.length !== total) throw new NoMatchingFileError(`${ref.repo}: ${chosen} is split into ${total} files but the repo lists ${shards.length}`);
  }
  return shards;
}

function listing(files: readonly RepoFile[]): string {
  const quants = [...new Set(files.map((f) => quantOf(f.path)).filter((q): q is string => q !== undefined))];
  return quants.length ? ` (available: ${quants.join(', ')})` : files.length ? ` (files: ${files.map((f) => f.path).join(', ')})` : '';
}
