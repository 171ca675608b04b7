#!/usr/bin/env node
// npm run fuzz:http — schemathesis (PyPI) against a real `tokenmill serve` on stories260K, driven by the
// server's own /openapi.json: every operation with generated valid and invalid requests, every check
// (no 5xx, status codes, content types and response bodies as declared). Loopback only; bounded by
// --max-examples. One check is left out: positive_data_acceptance expects every schema-valid body to
// be accepted, but the cross-field rules (422: stream_options without stream, empty allowed_token_ids …)
// and the semantic checks (400: an empty prompt, the context length) have no JSON Schema form. Needs schemathesis on PATH or in $TOKENMILL_SCHEMATHESIS (pip install schemathesis);
// the model comes from ../shared or $TOKENMILL_SHARED. Exits with schemathesis's status.
// Options: --max-examples N (default 30), any further arguments go to `schemathesis run`.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const shared = process.env.TOKENMILL_SHARED ? path.resolve(process.env.TOKENMILL_SHARED) : path.resolve(root, '..', 'shared');
const model = path.join(shared, 'models', 'stories260K.gguf');
const schemathesis = process.env.TOKENMILL_SCHEMATHESIS ?? 'schemathesis';

function fail(message) {
  process.stderr.write(`fuzz:http: ${message}\n`);
  process.exit(2);
}

if (!fs.existsSync(model)) fail(`the model ${model} is missing (set TOKENMILL_SHARED)`);
if (spawnSync(schemathesis, ['--version'], { stdio: 'ignore' }).status !== 0) {
  fail(`schemathesis not found (${schemathesis}); install it with: python3 -m venv .venv && .venv/bin/pip install schemathesis, then TOKENMILL_SCHEMATHESIS=.venv/bin/schemathesis`);
}

const args = process.argv.slice(2);
let maxExamples = '30';
const at = args.indexOf('--max-examples');
if (at >= 0) maxExamples = args.splice(at, 2)[1] ?? maxExamples;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-fuzz-http-'));
const template = path.join(tmp, 'template.jinja');
fs.writeFileSync(template, '{% for m in messages %}{{ m.content }}{% endfor %}');
const key = 'sk-fuzz-http';
const server = spawn(process.execPath, [path.join(root, 'bin', 'tokenmill.cjs'), 'serve', '--model', model, '--served-model-name', 'stories',
  '--port', '0', '--data-dir', path.join(tmp, 'data'), '--api-key', key, '--chat-template', template, '--max-model-len', '128',
  '--threads', '1', '--log-level', 'error'], { stdio: ['ignore', 'pipe', 'inherit'] });
const stop = () => {
  if (server.exitCode === null) server.kill('SIGTERM');
  fs.rmSync(tmp, { recursive: true, force: true });
};
process.on('exit', stop);

let out = '';
server.stdout.on('data', (b) => {
  out += b.toString();
  const m = /tokenmill listening on (http:\/\/\S+)/.exec(out);
  if (!m || server.started) return;
  server.started = true;
  const base = m[1];
  process.stdout.write(`fuzz:http: tokenmill at ${base}; schemathesis with --max-examples ${maxExamples}\n`);
  const run = spawn(schemathesis, ['run', `${base}/openapi.json`, '--url', base, '-H', `Authorization: Bearer ${key}`,
    '--checks', 'all', '--exclude-checks', 'positive_data_acceptance', '--max-examples', maxExamples, '--workers', '1', ...args],
  // schemathesis keeps its cache (.schemathesis/) in the working directory: the run's temporary one.
  { stdio: 'inherit', cwd: tmp });
  run.on('exit', (code) => {
    stop();
    process.exit(code ?? 1);
  });
});
server.on('exit', (code) => {
  if (!server.started) fail(`the server exited with ${code} before listening`);
});
