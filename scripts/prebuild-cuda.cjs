'use strict';
// The second half of `npm run prebuild`: puts the CUDA variant beside the CPU prebuild, as
// prebuilds/<platform>-<arch>/tokenmill-cuda.node (stripped like prebuildify --strip does), where
// lib/native/locate.cjs looks for it. Without nvcc it says so and packages the CPU prebuild alone, unless
// TOKENMILL_PREBUILD_CUDA=1 demands the CUDA variant (a release machine), which then fails.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const { findNvcc } = require('./build-cuda.cjs');

const root = path.resolve(__dirname, '..');

if (!findNvcc()) {
  const required = process.env.TOKENMILL_PREBUILD_CUDA === '1';
  process.stderr.write(`tokenmill prebuild: nvcc not found: ${required ? 'TOKENMILL_PREBUILD_CUDA=1 requires the CUDA variant' : 'packaging the CPU prebuild only'}\n`);
  process.exit(required ? 1 : 0);
}

const build = spawnSync(process.execPath, [path.join(__dirname, 'build-cuda.cjs')], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const dest = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`, 'tokenmill-cuda.node');
fs.mkdirSync(path.dirname(dest), { recursive: true });
fs.copyFileSync(path.join(root, 'build-cuda', 'Release', 'tokenmill-cuda.node'), dest);
if (process.platform === 'linux') {
  const strip = spawnSync(process.env.PREBUILD_STRIP_BIN || 'strip', [dest, '--strip-all'], { stdio: 'inherit' });
  if (strip.status !== 0) process.exit(strip.status ?? 1);
}
console.log(`tokenmill prebuild: ${path.relative(root, dest)} (${(fs.statSync(dest).size / 2 ** 20).toFixed(1)} MiB)`);
