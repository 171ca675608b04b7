'use strict';
// Where the compiled addon lives. Plain JS (no compile step) so the install script can use it before any
// TypeScript is built. Search order (docs/native-boundary.md#loading-the-addon):
//   1. $TOKENMILL_NATIVE (an explicit path to a .node file)
//   2. prebuilds/<platform>-<arch>/tokenmill.node (prebuildify --napi names it after the package)
//   3. build/Release/tokenmill.node, then build/Debug/tokenmill.node (node-gyp)
// 2 and 3 go through `bindings` with an explicit try list. On failure one error lists every path tried.
// The CUDA variant (CMakeLists.txt, optional) is found the same way under its own name: $TOKENMILL_NATIVE_CUDA,
// prebuilds/<platform>-<arch>/tokenmill-cuda.node, build-cuda/Release/tokenmill-cuda.node. Whether it is
// used is lib/native/device.ts's choice.
const fs = require('node:fs');
const path = require('node:path');

const packageRoot = path.resolve(__dirname, '..', '..');
const platformArch = `${process.platform}-${process.arch}`;

// `bindings` replaces each element of a try path by the option of that name, else uses it literally.
const bindingsOptions = { bindings: 'tokenmill.node', module_root: packageRoot, platformArch };
const bindingsTry = [
  ['module_root', 'prebuilds', 'platformArch', 'bindings'],
  ['module_root', 'build', 'Release', 'bindings'],
  ['module_root', 'build', 'Debug', 'bindings'],
];

function candidatePaths() {
  const fromTry = bindingsTry.map((parts) => path.join(...parts.map((p) => bindingsOptions[p] ?? p)));
  return process.env.TOKENMILL_NATIVE ? [path.resolve(process.env.TOKENMILL_NATIVE), ...fromTry] : fromTry;
}

function loadError(tried, cause) {
  const err = new Error(
    `tokenmill: could not load the native addon for ${platformArch} (node ${process.versions.node}, napi ${process.versions.napi}).\n` +
      `Paths tried:\n${tried.map((p) => `  - ${p}${fs.existsSync(p) ? ' (exists but failed to load)' : ''}`).join('\n')}\n` +
      (cause ? `Cause: ${cause.message}\n` : '') +
      'Run `npm run build:native` to compile it, or `npm run prebuild` to make a prebuild.',
  );
  err.code = 'native_not_found';
  if (cause) err.cause = cause;
  return err;
}

function loadAddon() {
  const tried = candidatePaths();
  try {
    if (process.env.TOKENMILL_NATIVE) {
      if (!fs.existsSync(tried[0])) throw loadError(tried, new Error('TOKENMILL_NATIVE points to a missing file'));
      return require(tried[0]);
    }
    return require('bindings')({ ...bindingsOptions, try: bindingsTry });
  } catch (error) {
    if (error && error.code === 'native_not_found') throw error;
    throw loadError(tried, /Could not locate the bindings file/.test(String(error && error.message)) ? null : error);
  }
}

function cudaCandidatePaths() {
  const paths = [
    path.join(packageRoot, 'prebuilds', platformArch, 'tokenmill-cuda.node'),
    path.join(packageRoot, 'build-cuda', 'Release', 'tokenmill-cuda.node'),
  ];
  return process.env.TOKENMILL_NATIVE_CUDA ? [path.resolve(process.env.TOKENMILL_NATIVE_CUDA)] : paths;
}

// Loads the CUDA variant, or throws an error with code 'cuda_variant_unavailable' whose message says why:
// none is built (every path tried), or the first one found failed to load (the loader's message, e.g. a
// missing shared library).
function loadCudaAddon() {
  const tried = cudaCandidatePaths();
  const found = tried.find((p) => fs.existsSync(p));
  const unavailable = (message, cause) => {
    const err = new Error(message);
    err.code = 'cuda_variant_unavailable';
    if (cause) err.cause = cause;
    return err;
  };
  if (!found) {
    throw unavailable(`no CUDA variant of the addon is built (tried ${tried.join(', ')}; \`npm run build:cuda\` builds one)`);
  }
  try {
    return require(found);
  } catch (error) {
    throw unavailable(`the CUDA variant ${found} failed to load: ${String(error && error.message).split('\n')[0]}`, error);
  }
}

module.exports = { loadAddon, loadCudaAddon, candidatePaths, cudaCandidatePaths, packageRoot };
