'use strict';
// Worker-thread bootstrap for running lib/ from its TypeScript sources (tests): .ts files are compiled
// on load with TypeScript's transpileModule (CommonJS, as tsconfig.json builds dist/), and the
// sources' `./x.js` imports resolve to `./x.ts`. Compiled text is cached in the OS temp folder by
// file, mtime, size and TypeScript version, so a replacement worker (one terminated at a limit) starts
// without loading the compiler again. The built package never uses this file.
const crypto = require('node:crypto');
const fs = require('node:fs');
const Module = require('node:module');
const os = require('node:os');
const path = require('node:path');
const { workerData } = require('node:worker_threads');

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (parent && parent.filename && parent.filename.endsWith('.ts') && request.startsWith('.') && request.endsWith('.js')) {
    const source = path.resolve(path.dirname(parent.filename), `${request.slice(0, -3)}.ts`);
    if (fs.existsSync(source)) return source;
  }
  return resolveFilename.call(this, request, parent, ...rest);
};

const cacheDir = path.join(os.tmpdir(), 'tokenmill-ts-worker-cache');
const tsVersion = require('typescript/package.json').version;
let ts = null;

function compile(filename) {
  const st = fs.statSync(filename);
  const key = crypto.createHash('sha256').update(`${tsVersion}\0${filename}\0${st.mtimeMs}\0${st.size}`).digest('hex').slice(0, 32);
  const cached = path.join(cacheDir, `${key}.js`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch {
    // not cached yet
  }
  ts ??= require('typescript');
  const compilerOptions = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true, sourceMap: false };
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), { compilerOptions, fileName: filename });
  fs.mkdirSync(cacheDir, { recursive: true });
  // Written under a unique name and renamed: a concurrent worker never reads a partial file.
  const tmp = `${cached}.${process.pid}.${crypto.randomUUID()}`;
  fs.writeFileSync(tmp, outputText);
  fs.renameSync(tmp, cached);
  return outputText;
}

Module._extensions['.ts'] = (module, filename) => module._compile(compile(filename), filename);

require(workerData.entry);
