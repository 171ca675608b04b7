// The loader's search order and its one error listing every path tried
// (docs/native-boundary.md#loading-the-addon).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const locate = path.resolve(__dirname, '..', '..', 'lib', 'native', 'locate.cjs');

function load(env: Record<string, string>): { status: number | null; out: string } {
  const code = `try { require(${JSON.stringify(locate)}).loadAddon(); console.log('loaded'); } catch (e) { console.log(e.code); console.log(e.message); process.exit(3); }`;
  const r = spawnSync(process.execPath, ['-e', code], { env: { ...process.env, ...env }, encoding: 'utf8' });
  return { status: r.status, out: r.stdout };
}

describe('native addon loader', () => {
  it('lists every path it tried, prebuilds first, when TOKENMILL_NATIVE points nowhere', () => {
    const { status, out } = load({ TOKENMILL_NATIVE: '/nonexistent/tokenmill.node' });
    expect(status).toBe(3);
    expect(out).toContain('native_not_found');
    const tried = out.split('\n').filter((l) => l.startsWith('  - ')).map((l) => l.slice(4));
    expect(tried[0]).toBe('/nonexistent/tokenmill.node');
    expect(tried[1]).toMatch(/prebuilds\/linux-x64\/tokenmill\.node$/);
    expect(tried[2]).toMatch(/build\/Release\/tokenmill\.node/);
    expect(tried[3]).toMatch(/build\/Debug\/tokenmill\.node$/);
  });

  it('loads the built addon through the try list', () => {
    const { status, out } = load({});
    expect(out.trim()).toBe('loaded');
    expect(status).toBe(0);
  });
});
