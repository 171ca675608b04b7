// NOTE(server/auth): keys are compared in constant time: both the presented key and every configured key
// are SHA-256 hashed (equal lengths) and compared with timingSafeEqual against all keys, without an early
// exit. No key configured means open mode. Keys and Authorization headers are never logged.
import { createHash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';

const hash = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

export class KeyChecker {
  #hashes: Buffer[];
  constructor(keys: readonly string[]) {
    this.#hashes = keys.filter((k) => k.length > 0).map(hash);
  }

  get open(): boolean {
    return this.#hashes.length === 0;
  }

  /** True when open, or the header is `Bearer <configured key>` (scheme case-insensitive). */
  check(authorization: string | undefined): boolean {
    return this.identify(authorization) !== null;
  }

  /**
   * Who is calling, without naming the key: `key-<n>` (n = the key's 1-based place in the configured
   * list) for a configured key, `open` on an open server, null when the header names no configured key.
   */
  identify(authorization: string | undefined): string | null {
    if (this.open) return 'open';
    if (!authorization) return null;
    const m = /^\s*(\S+)\s+(.+?)\s*$/.exec(authorization);
    if (!m || m[1]!.toLowerCase() !== 'bearer') return null;
    const presented = hash(m[2]!);
    let found = -1;
    // Every configured key is compared, matched or not, so the time does not depend on which matched.
    this.#hashes.forEach((h, i) => {
      if (timingSafeEqual(presented, h) && found < 0) found = i;
    });
    return found < 0 ? null : `key-${found + 1}`;
  }
}

/** Keys from an --api-keys-file: one per line, `#` starts a comment, blank lines skipped. */
export function readKeysFile(file: string): string[] {
  return fs
    .readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line.length > 0);
}

/**
 * A warning when the key file can be read or written by users other than its owner (any group/other
 * permission bit), or null. POSIX permissions only: Windows reports no such bits.
 */
export function keysFileWarning(file: string, platform: NodeJS.Platform = process.platform): string | null {
  if (platform === 'win32') return null;
  const mode = fs.statSync(file).mode & 0o777;
  if ((mode & 0o077) === 0) return null;
  return `--api-keys-file ${file} is accessible to other users (mode ${mode.toString(8).padStart(4, '0')}); run chmod 600 on it`;
}

/** Keys from TOKENMILL_API_KEY (comma-separated). */
export function keysFromEnv(value: string | undefined): string[] {
  return (value ?? '').split(',').map((k) => k.trim()).filter((k) => k.length > 0);
}

export interface Project {
  team: string;
  project: string;
}

/**
 * Parses `OpenAI-Project: <team>/<project>`: absent → default/default; null when malformed (no slash,
 * an empty part, over 128 characters, control characters).
 */
export function parseProject(header: string | string[] | undefined): Project | null {
  if (header === undefined) return { team: 'default', project: 'default' };
  if (Array.isArray(header)) return null;
  if (header.length > 128 || /[\u0000-\u001f\u007f]/.test(header)) return null;
  const slash = header.indexOf('/');
  if (slash < 0) return null;
  const team = header.slice(0, slash).trim();
  const project = header.slice(slash + 1).trim();
  if (team.length === 0 || project.length === 0) return null;
  return { team, project };
}
