'use strict';
// `npm install` hook: use a matching prebuild when one exists and loads; otherwise compile the addon
// with node-gyp against Node's own headers (scripts/node-gyp.cjs). TOKENMILL_FORCE_BUILD=1 always compiles.
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');
const { runNodeGyp } = require('./node-gyp.cjs');

const root = path.resolve(__dirname, '..');
const prebuild = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`, 'tokenmill.node');

function prebuildLoads() {
  if (process.env.TOKENMILL_FORCE_BUILD === '1' || !fs.existsSync(prebuild)) return false;
  const probe = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(prebuild)})`], { stdio: 'ignore' });
  return probe.status === 0;
}

if (prebuildLoads()) {
  console.log(`tokenmill: using prebuild ${path.relative(root, prebuild)}`);
  process.exit(0);
}
const result = runNodeGyp(['rebuild', '-j', '2'], { cwd: root });
process.exit(result.status ?? 1);
