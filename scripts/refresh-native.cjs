#!/usr/bin/env node
'use strict';
// Brings a compiled addon up to date with the C++ sources before a script that loads it (npm run bench):
// an addon built before a pull lacks what the newer TypeScript calls, and fails far from the cause
// ("measureReadBandwidth is not a function"). An existing node-gyp build folder is rebuilt
// incrementally (seconds when nothing changed), keeping its configuration; an install that uses a
// prebuild has no build folder and is left as it is.
const fs = require('node:fs');
const path = require('node:path');
const { runNodeGyp } = require('./node-gyp.cjs');

const root = path.resolve(__dirname, '..');
if (!fs.existsSync(path.join(root, 'build', 'Makefile'))) {
  console.log('tokenmill: no node-gyp build folder (prebuilt addon); nothing to refresh');
  process.exit(0);
}
const result = runNodeGyp(['build', '-j', '2'], { cwd: root });
if (result.error) console.error(`node-gyp: ${result.error.message}`);
process.exit(result.status ?? 1);
