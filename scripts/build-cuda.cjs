'use strict';
// `npm run build:cuda [-- --tests]`: builds the CUDA variant of the addon (build-cuda/Release/tokenmill-cuda.node)
// with cmake-js from CMakeLists.txt; `--tests` also builds build-cuda/Release/tokenmill_cuda_tests.
// Needs nvcc (on the PATH, or $CUDACXX) and cmake, never a GPU. Node's headers come from the running
// Node's own prefix (or npm_config_nodedir): cmake-js is pointed at them so it never downloads any.
// TOKENMILL_CUDA_ARCHS overrides the device code (CMake's list syntax, default "80-real;90-real;90-virtual").
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const { nodePrefixWithHeaders } = require('./node-gyp.cjs');

const root = path.resolve(__dirname, '..');

function fail(message) {
  process.stderr.write(`tokenmill build:cuda: ${message}\n`);
  process.exit(1);
}

function findNvcc() {
  if (process.env.CUDACXX) return fs.existsSync(process.env.CUDACXX) ? process.env.CUDACXX : null;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'nvcc');
    if (dir && fs.existsSync(candidate)) return candidate;
  }
  return null;
}

// The Node prefix whose include/node holds node_api.h (npm_config_nodedir, else Node's own prefix as
// node-gyp.cjs finds it); cmake-js reads it as npm's `nodedir` and then downloads nothing.
function nodeDir() {
  const dir = process.env.npm_config_nodedir || nodePrefixWithHeaders();
  if (!dir || !fs.existsSync(path.join(dir, 'include', 'node', 'node_api.h'))) {
    fail(`Node's headers are not in ${dir ?? "Node's prefix"}/include/node; set npm_config_nodedir to a Node prefix that has them (this build never downloads them)`);
  }
  return dir;
}

function main(argv) {
  const tests = argv.includes('--tests');
  const unknown = argv.filter((a) => a !== '--tests');
  if (unknown.length) fail(`unknown argument ${unknown.join(' ')}`);
  const nvcc = findNvcc();
  if (!nvcc) fail('nvcc was not found on the PATH (or $CUDACXX); install the CUDA toolkit to build the CUDA variant');
  const cmakeJs = require.resolve('cmake-js/bin/cmake-js');
  const common = ['--out', 'build-cuda', '--runtime', 'node', '--runtime-version', process.versions.node,
    `--CDCMAKE_CUDA_COMPILER=${nvcc}`, `--CDTM_CUDA_TESTS=${tests ? 'ON' : 'OFF'}`];
  if (process.env.TOKENMILL_CUDA_ARCHS) common.push(`--CDCMAKE_CUDA_ARCHITECTURES=${process.env.TOKENMILL_CUDA_ARCHS}`);
  const env = { ...process.env, npm_config_nodedir: nodeDir() };
  // `configure` every time so the options above reach an existing build folder's cache (cmake-js `build`
  // configures only a fresh one); the build itself stays incremental.
  for (const step of [['configure'], ['build', '--parallel', process.env.TOKENMILL_BUILD_JOBS ?? '1']]) {
    const result = spawnSync(process.execPath, [cmakeJs, ...step, ...common], { cwd: root, stdio: 'inherit', env });
    if (result.status !== 0) fail(`cmake-js ${step[0]} exited with ${result.status ?? result.signal}`);
  }
}

if (require.main === module) main(process.argv.slice(2));

module.exports = { findNvcc };
