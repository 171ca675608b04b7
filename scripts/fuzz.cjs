#!/usr/bin/env node
// npm run fuzz — libFuzzer targets for the native parsers (test/fuzz/*.cpp), built with clang under
// AddressSanitizer + UndefinedBehaviorSanitizer into build-fuzz/ (a separate build: the addon is not
// touched). Each target runs for a bounded number of iterations from its committed seed corpus
// (test/fuzz/corpus/<target>/); inputs libFuzzer finds interesting go to build-fuzz/corpus/<target>/ and
// any crashing input to build-fuzz/findings/. Exits non-zero when a target reports a finding.
// Options: --runs N (default 20000, or $TOKENMILL_FUZZ_RUNS), --only a,b (target names), --build-only.
// Vocabularies come from ../shared or $TOKENMILL_SHARED. See docs/fuzzing.md.
'use strict';
const { spawnSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const out = path.join(root, 'build-fuzz');
const shared = process.env.TOKENMILL_SHARED ? path.resolve(process.env.TOKENMILL_SHARED) : path.resolve(root, '..', 'shared');
const sources = require(path.join(root, 'native', 'sources.json'));

// Each target and the core components it links (names of native/sources.json lists; `grammar` is the
// native/grammar part of the `sample` list, which holds the parser, trie and matcher).
const grammarSources = sources.sample.filter((s) => s.startsWith('native/grammar/'));
const core = [...sources.base, ...sources.gguf, ...sources.tokenizer];
const targets = {
  gguf: [...sources.base, ...sources.gguf],
  tokenizer: core,
  'gbnf-parser': [...sources.base, ...grammarSources.filter((s) => s.endsWith('parser.cpp'))],
  'grammar-matcher': [...core, ...grammarSources],
};

const flags = ['-std=c++17', '-O1', '-g', '-fno-omit-frame-pointer', '-fsanitize=fuzzer,address,undefined',
  '-fno-sanitize-recover=undefined', '-pthread', '-I', path.join(root, 'native'), '-I', path.join(root, 'test', 'fuzz')];
// Objects are compiled without the fuzzer's main (fuzzer-no-link); the target link adds it.
const objectFlags = flags.map((f) => (f === '-fsanitize=fuzzer,address,undefined' ? '-fsanitize=fuzzer-no-link,address,undefined' : f));

function fail(message) {
  process.stderr.write(`fuzz: ${message}\n`);
  process.exit(2);
}

function findClang() {
  const candidates = process.env.TOKENMILL_CLANG ? [process.env.TOKENMILL_CLANG] : ['clang++', 'clang++-14', 'clang++-15', 'clang++-16'];
  for (const c of candidates) {
    if (spawnSync(c, ['--version'], { stdio: 'ignore' }).status === 0) return c;
  }
  return fail(`clang++ not found (tried ${candidates.join(', ')}); libFuzzer comes with clang: on Debian/Ubuntu run ` +
    '`apt-get install -y clang` (or set TOKENMILL_CLANG to a clang++ that supports -fsanitize=fuzzer)');
}

function parseArgs(argv) {
  const opts = { runs: Number(process.env.TOKENMILL_FUZZ_RUNS ?? 20000), only: Object.keys(targets), buildOnly: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--runs') opts.runs = Number(argv[++i]);
    else if (argv[i] === '--only') opts.only = String(argv[++i]).split(',');
    else if (argv[i] === '--build-only') opts.buildOnly = true;
    else fail(`unknown option ${argv[i]} (options: --runs N, --only a,b, --build-only)`);
  }
  if (!Number.isInteger(opts.runs) || opts.runs <= 0) fail('--runs needs a positive integer');
  for (const t of opts.only) if (!targets[t]) fail(`unknown target ${t} (targets: ${Object.keys(targets).join(', ')})`);
  return opts;
}

const mtime = (p) => fs.statSync(p).mtimeMs;

// The newest header under native/ and test/fuzz/: a header change rebuilds every object (no depfiles;
// the build is small).
function newestHeader() {
  let newest = 0;
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(h|hpp|cuh)$/.test(e.name)) newest = Math.max(newest, mtime(p));
    }
  };
  walk(path.join(root, 'native'));
  walk(path.join(root, 'test', 'fuzz'));
  return newest;
}

function run(cmd, args) {
  return new Promise((resolve) => {
    const child = spawn('nice', ['-n', '5', cmd, ...args], { stdio: 'inherit' });
    child.on('close', (code) => resolve(code));
  });
}

// Runs jobs two at a time (the machine is shared); rejects on the first failure.
async function pool(jobs, width) {
  let next = 0;
  let failed = null;
  const worker = async () => {
    while (next < jobs.length && !failed) {
      const job = jobs[next++];
      const code = await job.run();
      if (code !== 0) failed = job.name;
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  if (failed) fail(`build failed: ${failed}`);
}

async function build(clang, names) {
  fs.mkdirSync(path.join(out, 'obj'), { recursive: true });
  const headers = newestHeader();
  const needed = [...new Set(names.flatMap((n) => targets[n]))];
  const objectOf = (src) => path.join(out, 'obj', src.replace(/[/\\]/g, '_').replace(/\.cpp$/, '.o'));
  const stale = (target, inputs) => !fs.existsSync(target) || inputs.some((t) => t > mtime(target));
  await pool(needed.filter((src) => stale(objectOf(src), [mtime(path.join(root, src)), headers])).map((src) => ({
    name: src,
    run: () => run(clang, [...objectFlags, '-c', path.join(root, src), '-o', objectOf(src)]),
  })), 2);
  await pool(names.map((n) => {
    const exe = path.join(out, n);
    const main = path.join(root, 'test', 'fuzz', `${n}.cpp`);
    const objects = targets[n].map(objectOf);
    return { name: n, exe, main, objects };
  }).filter((t) => stale(t.exe, [mtime(t.main), headers, ...t.objects.map(mtime)])).map((t) => ({
    name: t.name,
    run: () => run(clang, [...flags, t.main, ...t.objects, '-o', t.exe]),
  })), 2);
}

function fuzz(name, runs) {
  const seeds = path.join(root, 'test', 'fuzz', 'corpus', name);
  if (!fs.existsSync(seeds) || fs.readdirSync(seeds).length === 0) fail(`the seed corpus ${seeds} is missing or empty`);
  const work = path.join(out, 'corpus', name);
  const findings = path.join(out, 'findings');
  fs.mkdirSync(work, { recursive: true });
  fs.mkdirSync(findings, { recursive: true });
  const before = new Set(fs.readdirSync(findings));
  const tmp = path.join(out, 'tmp', name);
  fs.mkdirSync(tmp, { recursive: true });
  const started = Date.now();
  // The working corpus comes first: libFuzzer adds new inputs to the first directory only, so the
  // committed seeds stay as they are.
  const res = spawnSync('nice', ['-n', '5', path.join(out, name), `-runs=${runs}`, '-max_len=4096', '-timeout=30',
    '-rss_limit_mb=4096', '-print_final_stats=1', `-artifact_prefix=${findings}/${name}-`, work, seeds], {
    cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, TOKENMILL_SHARED: shared, TMPDIR: tmp,
      UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1', ASAN_OPTIONS: 'abort_on_error=0:detect_leaks=1' },
  });
  const seconds = (Date.now() - started) / 1000;
  fs.rmSync(tmp, { recursive: true, force: true });
  const log = `${res.stdout}${res.stderr}`;
  fs.writeFileSync(path.join(out, `${name}.log`), log);
  const executed = /stat::number_of_executed_units:\s*(\d+)/.exec(log);
  const newFindings = fs.readdirSync(findings).filter((f) => !before.has(f));
  return { name, iterations: executed ? Number(executed[1]) : 0, seconds, status: res.status,
    findings: newFindings.length + (res.status !== 0 && newFindings.length === 0 ? 1 : 0), files: newFindings, log };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const clang = findClang();
  await build(clang, opts.only);
  if (opts.buildOnly) return;
  const results = [];
  for (const name of opts.only) {
    const r = fuzz(name, opts.runs);
    results.push(r);
    process.stdout.write(`${name}: ${r.iterations} iterations in ${r.seconds.toFixed(1)} s, ${r.findings} finding(s)` +
      `${r.files.length ? ` (${r.files.map((f) => path.join('build-fuzz', 'findings', f)).join(', ')})` : ''}\n`);
    if (r.findings > 0) process.stdout.write(`  log: build-fuzz/${name}.log\n${r.log.split('\n').slice(-40).join('\n')}\n`);
    else if (r.iterations < opts.runs) fail(`${name} ran ${r.iterations} of ${opts.runs} iterations (see build-fuzz/${name}.log)`);
  }
  const total = results.reduce((s, r) => s + r.findings, 0);
  process.stdout.write(`fuzz: ${results.length} target(s), ${total} finding(s)\n`);
  process.exit(total > 0 ? 1 : 0);
}

main();
