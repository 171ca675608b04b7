#!/usr/bin/env node
'use strict';
// Brings a compiled addon up to date with the C++ sources before a script that loads it (npm run bench):
// an addon built before a pull lacks what the newer TypeScript calls, and fails far from the cause
// ("measureReadBandwidth is not a function"). An existing node-gyp build folder is rebuilt
// incrementally (seconds when nothing changed), keeping its configuration; an install that uses a
// prebuild has no build folder and is left as it is. When the source lists changed since the folder was
// configured (binding.gyp or native/sources.json newer than its Makefile: files added, moved or removed),
// the folder is configured again first, with the same `build_tests` setting, because the old Makefile
// still names the old files.
const fs = require('node:fs');
const path = require('node:path');
const { runNodeGyp } = require('./node-gyp.cjs');

const root = path.resolve(__dirname, '..');
const makefile = path.join(root, 'build', 'Makefile');
if (!fs.existsSync(makefile)) {
  console.log('tokenmill: no node-gyp build folder (prebuilt addon); nothing to refresh');
  process.exit(0);
}

function run(args) {
  const result = runNodeGyp(args, { cwd: root });
  if (result.error) console.error(`node-gyp: ${result.error.message}`);
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const configuredAt = fs.statSync(makefile).mtimeMs;
const listsChanged = ['binding.gyp', path.join('native', 'sources.json')]
  .some((f) => fs.statSync(path.join(root, f)).mtimeMs > configuredAt);
if (listsChanged) {
  const config = path.join(root, 'build', 'config.gypi');
  const withTests = fs.existsSync(config) && /"build_tests":\s*"1"/.test(fs.readFileSync(config, 'utf8'));
  console.log('tokenmill: the native source lists changed since build/ was configured; configuring again');
  run(['configure', ...(withTests ? ['--build_tests=1'] : [])]);
}
run(['build', '-j', '2']);
