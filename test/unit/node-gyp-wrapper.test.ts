// scripts/node-gyp.cjs: our native builds name Node's own header folder when nothing else does, so
// node-gyp never tries to download headers (there is no network at install time).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, test } from 'vitest';

const require = createRequire(__filename);
const wrapper = require('../../scripts/node-gyp.cjs') as {
  nodePrefixWithHeaders(): string | null;
  withNodedir(args: string[], env?: Record<string, string | undefined>): string[];
};

describe('scripts/node-gyp.cjs', () => {
  test("finds the running Node's prefix when it ships the headers", () => {
    const prefix = path.resolve(path.dirname(process.execPath), '..');
    const shipped = existsSync(path.join(prefix, 'include', 'node', 'node_api.h'));
    expect(wrapper.nodePrefixWithHeaders()).toBe(shipped ? prefix : null);
  });

  test('adds --nodedir only when neither the arguments nor npm name a header folder', () => {
    const prefix = wrapper.nodePrefixWithHeaders();
    expect(wrapper.withNodedir(['rebuild', '-j', '2'], {})).toEqual(
      prefix ? ['rebuild', '-j', '2', `--nodedir=${prefix}`] : ['rebuild', '-j', '2'],
    );
    expect(wrapper.withNodedir(['configure', '--nodedir=/opt/node'], {})).toEqual(['configure', '--nodedir=/opt/node']);
    expect(wrapper.withNodedir(['configure', '--nodedir', '/opt/node'], {})).toEqual(['configure', '--nodedir', '/opt/node']);
    expect(wrapper.withNodedir(['configure'], { npm_config_nodedir: '/opt/node' })).toEqual(['configure']);
  });
});
