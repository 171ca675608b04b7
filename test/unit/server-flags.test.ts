import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FlagError, parseBytes, parseServeFlags } from '../../lib/server/serve-flags.js';

describe('server: serve flags', () => {
  it('has the defaults of docs/cli.md#tokenmill-serve', () => {
    const f = parseServeFlags([], {});
    expect(f).toMatchObject({ models: [], host: null, port: 8000, apiKeys: [], dataDir: './tokenmill-data', schedulingPolicy: 'fcfs', maxNumSeqs: 64, enablePrefixCaching: true, maxLogprobs: 20, device: 'auto', maxRequestBytes: 8 * 1024 * 1024, drainTimeout: 30, requestTimeout: 300, logLevel: 'info' });
  });

  it('--request-timeout takes positive seconds', () => {
    expect(parseServeFlags(['--request-timeout', '2.5'], {}).requestTimeout).toBe(2.5);
    expect(() => parseServeFlags(['--request-timeout', '0'], {})).toThrow(/--request-timeout: expected seconds above 0/);
    expect(() => parseServeFlags(['--drain-timeout', 'x'], {})).toThrow(/--drain-timeout: expected seconds but got 'x'/);
  });

  it('parses repeated models and names, sizes, --flag=value, and keys from flag, env and file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-flags-'));
    const keys = path.join(dir, 'keys');
    fs.writeFileSync(keys, '# team keys\nsk-file-1\n\n  sk-file-2  # old\n');
    const f = parseServeFlags(['--model', 'a.gguf', '--model=b.gguf', '--served-model-name', 'a', '--served-model-name', 'b', '--kv-cache-memory', '512MiB',
      '--max-request-bytes=1KiB', '--api-key', 'sk-flag', '--api-keys-file', keys, '--no-enable-prefix-caching', '--scheduling-policy', 'priority', '--port', '0'], { TOKENMILL_API_KEY: 'sk-env-1, sk-env-2' });
    expect(f.models).toEqual(['a.gguf', 'b.gguf']);
    expect(f.servedModelNames).toEqual(['a', 'b']);
    expect(f.kvCacheMemory).toBe(512 * 1024 * 1024);
    expect(f.maxRequestBytes).toBe(1024);
    expect(f.apiKeys).toEqual(['sk-flag', 'sk-env-1', 'sk-env-2', 'sk-file-1', 'sk-file-2']);
    expect(f.enablePrefixCaching).toBe(false);
    expect(f.schedulingPolicy).toBe('priority');
    expect(f.port).toBe(0);
    fs.rmSync(dir, { recursive: true });
  });

  it('names the flag in every error', () => {
    const bad: [string[], RegExp][] = [
      [['--bogus'], /unknown option '--bogus'/],
      [['--port'], /--port needs a value/],
      [['--port', 'x'], /--port: expected an integer/],
      [['--port', '70000'], /--port/],
      [['--device', 'tpu'], /--device: expected one of cpu, cuda, auto/],
      [['--kv-cache-memory', 'lots'], /--kv-cache-memory/],
      [['--model', 'a', '--served-model-name', 'x', '--served-model-name', 'y'], /--served-model-name/],
      [['--enable-prefix-caching', '--no-enable-prefix-caching'], /contradict/],
      [['--max-num-seqs', '0'], /--max-num-seqs/],
      [['--host', 'a', '--host', 'b'], /--host given twice/],
    ];
    for (const [args, re] of bad) {
      expect(() => parseServeFlags(args, {}), args.join(' ')).toThrow(FlagError);
      expect(() => parseServeFlags(args, {}), args.join(' ')).toThrow(re);
    }
  });

  it('parses byte sizes', () => {
    expect(parseBytes('4096')).toBe(4096);
    expect(parseBytes('2GiB')).toBe(2 * 1024 ** 3);
    expect(parseBytes('1.5GB')).toBe(1.5e9);
    expect(parseBytes('8mib')).toBe(8 * 1024 ** 2);
    expect(() => parseBytes('-1')).toThrow();
  });
});
