#!/usr/bin/env node
'use strict';
// node-gyp with Node's own headers. There is no network at install time on the machines this project
// is built on, and npm there names no header folder: plain node-gyp would then try to download the
// headers for this Node version and fail. When neither `--nodedir` nor npm_config_nodedir says where
// the headers are and Node's own prefix ships them (<prefix>/include/node, as the official tarballs and
// distribution packages do), this passes `--nodedir=<prefix>`; otherwise node-gyp runs unchanged.
//   node scripts/node-gyp.cjs <node-gyp arguments…>
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

function nodePrefixWithHeaders() {
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h')) ? prefix : null;
}

// The arguments node-gyp should run with: `args` plus --nodedir when nothing names a header folder.
function withNodedir(args, env = process.env) {
  const named = args.some((a) => a === '--nodedir' || a.startsWith('--nodedir=')) || Boolean(env.npm_config_nodedir);
  const prefix = named ? null : nodePrefixWithHeaders();
  return prefix ? [...args, `--nodedir=${prefix}`] : args;
}

function runNodeGyp(args, options = {}) {
  const nodeGyp = require.resolve('node-gyp/bin/node-gyp.js');
  return spawnSync(process.execPath, [nodeGyp, ...withNodedir(args)], { stdio: 'inherit', ...options });
}

module.exports = { nodePrefixWithHeaders, withNodedir, runNodeGyp };

if (require.main === module) {
  const result = runNodeGyp(process.argv.slice(2));
  if (result.error) console.error(`node-gyp: ${result.error.message}`);
  process.exit(result.status ?? 1);
}
