// Every malformed GGUF variant must make Model.load reject with the native error code and a message
// that names the file and the specific problem (test/helpers/gguf-malformed.ts lists the variants).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { Model } from '../../lib/index.js';
import { malformedVariants } from '../helpers/gguf-malformed.js';
import { legacyV1, stories260K } from '../helpers/shared.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tm-gguf-malformed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function loadError(file: string): Promise<{ code: unknown; message: string }> {
  try {
    const m = await Model.load(file);
    m.dispose();
  } catch (e) {
    const err = e as Error & { code?: unknown };
    expect(err).toBeInstanceOf(Error);
    return { code: err.code, message: err.message };
  }
  throw new Error(`${file} loaded without error`);
}

describe('malformed GGUF files', () => {
  const variants = malformedVariants(stories260K);

  test('there are at least 30 variants with distinct names', () => {
    expect(variants.length).toBeGreaterThanOrEqual(30);
    expect(new Set(variants.map((v) => v.name)).size).toBe(variants.length);
  });

  for (const v of variants) {
    test(v.name, async () => {
      const file = path.join(dir, `${v.name}.gguf`);
      writeFileSync(file, v.bytes);
      const err = await loadError(file);
      expect(err.code).toBe(v.code);
      expect(err.message).toContain(file);
      expect(err.message).toContain(v.message);
    });
  }

  test('legacy v1 file', async () => {
    const err = await loadError(legacyV1);
    expect(err.code).toBe('gguf_unsupported');
    expect(err.message).toContain(legacyV1);
    expect(err.message).toContain('unsupported GGUF version 1');
  });

  test('missing file is an io error', async () => {
    const file = path.join(dir, 'does-not-exist.gguf');
    const err = await loadError(file);
    expect(err.code).toBe('io');
    expect(err.message).toContain(file);
  });
});
