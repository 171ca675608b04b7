// An idle engine costs no CPU: the kernel pool's workers spin only briefly after a job (~100 µs) and then
// sleep on a condition variable, and the engine thread waits for its inbox. Measured as this process's
// own CPU time, so load from other processes on the machine does not disturb it.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { Engine, Model } from '../../lib/index.js';
import { stories260K } from '../helpers/shared.js';

let model: Model;
let engine: Engine;
beforeAll(async () => {
  model = await Model.load(stories260K);
  engine = await Engine.create(model, { threads: 2 });
});
afterAll(async () => {
  await engine.close();
  model.dispose();
});

test('after a request the engine and its 2-thread pool use no CPU while idle', async () => {
  const prompt = model.tokenize('Once upon a time', { addSpecial: true });
  let n = 0;
  for await (const ev of engine.generate({ promptTokens: prompt, maxTokens: 16, temperature: 0 })) n += ev.tokenIds.length;
  expect(n).toBe(16);
  await new Promise((r) => setTimeout(r, 20));
  const before = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, 500));
  const used = process.cpuUsage(before);
  const wall = performance.now() - t0;
  const cpuMs = (used.user + used.system) / 1000;
  // One spinning worker would burn ~500 ms of CPU here; allow a little for the event loop and the GC.
  console.log(`idle engine: ${cpuMs.toFixed(1)} ms of CPU in ${wall.toFixed(0)} ms`);
  expect(cpuMs, `${cpuMs.toFixed(1)} ms of CPU in ${wall.toFixed(0)} ms idle`).toBeLessThan(60);
});
