'use strict';
// A child process that evaluates models with tokenmill's addon, for comparing kernel levels: the level
// (TOKENMILL_ISA) is read once per process, so each level needs a process of its own.
// Usage: TOKENMILL_ISA=<level> node evaluate-child.cjs jobs.json, where jobs.json holds
// [{ "model": path, "tokens": [ids], "out": path }]. Each job's logits (tokens × vocab, 1 thread) are
// written to `out` as raw float32 in the machine's byte order; stdout gets the kernel level used.
const fs = require('node:fs');
const { loadAddon } = require('../../lib/native/locate.cjs');

async function main() {
  const addon = loadAddon();
  const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  for (const job of jobs) {
    const model = await addon.loadModel(job.model, {});
    try {
      const logits = await model.evaluate(Int32Array.from(job.tokens), 1);
      fs.writeFileSync(job.out, Buffer.from(logits.buffer, logits.byteOffset, logits.byteLength));
    } finally {
      model.dispose();
    }
  }
  process.stdout.write(addon.cpuIsa());
}

main().catch((error) => {
  process.stderr.write(`${(error && error.stack) || error}\n`);
  process.exitCode = 1;
});
