// Every numeric field at the edges of what the engine honours, through the real server (two models on
// stories260K): inside → 200, past the edge → 400 naming the field (or the schema's 422), never a 500,
// and the server idle and healthy afterwards. Includes the reproducers: n = 2^31-1 ran the
// process out of heap, n = 65536 and temperature ≥ 65536, top_p 1e-300, repetition_penalty 1e±300
// answered 500, and an omitted model with two models served was answered by the first.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stories260K } from '../helpers/shared.js';
import { startServer, type RunningServer } from './server-helpers.js';
import { expectIdle, postChat } from './server-probe.js';

let dataDir: string;
let server: RunningServer;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-ranges-'));
  server = await startServer(['--model', stories260K, '--model', stories260K, '--served-model-name', 'a', '--served-model-name', 'b', '--data-dir', dataDir]);
});
afterAll(async () => {
  await server?.stop('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const base = { model: 'a', messages: [{ role: 'user', content: 'Once upon a time' }], chat_template: '{{ messages[0].content }}', max_tokens: 2 };
const chat = (patch: Record<string, unknown>) => postChat(server.base, JSON.stringify({ ...base, ...patch }));

type Expect = 200 | 400 | 422;
const cases: [string, Record<string, unknown>, Expect, string?][] = [
  // the reproducers
  ['n = 2^31-1 (was: out of heap in new ChoiceRun)', { n: 2147483647, max_tokens: 4 }, 400, 'n'],
  ['n = 65536 (was: 500)', { n: 65536 }, 400, 'n'],
  ['temperature 65536 (was: 500)', { temperature: 65536 }, 400, 'temperature'],
  ['temperature 1e300', { temperature: 1e300 }, 400, 'temperature'],
  ['temperature 2^31', { temperature: 2 ** 31 }, 400, 'temperature'],
  ['temperature 2^53', { temperature: 2 ** 53 }, 400, 'temperature'],
  ['top_p 1e-300 (was: 500)', { top_p: 1e-300 }, 200],
  ['repetition_penalty 1e-300 (was: 500)', { repetition_penalty: 1e-300 }, 400, 'repetition_penalty'],
  ['repetition_penalty 1e300 (was: 500)', { repetition_penalty: 1e300 }, 400, 'repetition_penalty'],
  // the edges of every checked field
  ['temperature 0', { temperature: 0 }, 200],
  ['temperature 2', { temperature: 2 }, 200],
  ['temperature just over 2', { temperature: 2.000001 }, 400, 'temperature'],
  ['temperature -0.1', { temperature: -0.1 }, 422, 'temperature'],
  ['top_p 1', { top_p: 1 }, 200],
  ['top_p 0', { top_p: 0 }, 422, 'top_p'],
  ['min_p 1e-300', { min_p: 1e-300 }, 200],
  ['min_p 1', { min_p: 1 }, 200],
  ['min_p 1.01', { min_p: 1.01 }, 422, 'min_p'],
  ['repetition_penalty 1e-30', { repetition_penalty: 1e-30 }, 200],
  ['repetition_penalty 1e30', { repetition_penalty: 1e30 }, 200],
  ['repetition_penalty 1e-31', { repetition_penalty: 1e-31 }, 400, 'repetition_penalty'],
  ['repetition_penalty 0', { repetition_penalty: 0 }, 422, 'repetition_penalty'],
  ['frequency_penalty -2', { frequency_penalty: -2 }, 200],
  ['presence_penalty 2', { presence_penalty: 2 }, 200],
  ['frequency_penalty 1e-300', { frequency_penalty: 1e-300 }, 200],
  ['presence_penalty 2.5', { presence_penalty: 2.5 }, 422, 'presence_penalty'],
  ['length_penalty 1e30 (beam)', { use_beam_search: true, n: 2, length_penalty: 1e30 }, 200],
  ['length_penalty -1e30 (beam)', { use_beam_search: true, n: 2, length_penalty: -1e30 }, 200],
  ['length_penalty 1e300 (beam)', { use_beam_search: true, n: 2, length_penalty: 1e300 }, 400, 'length_penalty'],
  ['n = --max-num-seqs (64)', { n: 64, temperature: 1 }, 200],
  ['n = 65', { n: 65, temperature: 1 }, 400, 'n'],
  ['beam width 65', { use_beam_search: true, n: 65 }, 400, 'n'],
  ['top_k 2^31-1', { top_k: 2147483647 }, 200],
  ['top_k 2^53', { top_k: 2 ** 53 }, 200],
  ['seed int64 max', { seed: 9223372036854775807 }, 200],
  ['seed int64 min', { seed: -9223372036854775808 }, 200],
  ['seed past int64', { seed: 1e19 }, 422, 'seed'],
  ['repetition_detection sizes 2^53', { repetition_detection: { max_pattern_size: 2 ** 53, min_count: 2 ** 53 } }, 200],
  ['min_tokens 2^53 over max_tokens', { min_tokens: 2 ** 53 }, 422],
  ['max_tokens 2^31-1', { max_tokens: 2147483647 }, 400, 'max_tokens'],
  ['truncate_prompt_tokens int64 max', { truncate_prompt_tokens: 9223372036854775807 }, 400, 'truncate_prompt_tokens'],
  ['top_logprobs 20', { logprobs: true, top_logprobs: 20 }, 200],
  ['top_logprobs 21', { logprobs: true, top_logprobs: 21 }, 422],
  ['prompt_logprobs 2^53', { prompt_logprobs: 2 ** 53 }, 422],
];

describe('e2e: numeric fields at and past the engine\'s ranges', () => {
  it.each(cases)('%s', async (_name, patch, status, param) => {
    const r = await chat(patch);
    expect(r.status, r.body).toBe(status);
    const body = JSON.parse(r.body);
    if (status === 400) expect(body.error.param).toBe(param);
    if (status === 422 && param) expect(body.detail.some((d: { loc: unknown[] }) => d.loc.includes(param)), r.body).toBe(true);
    if (status === 200) expect(body.choices.length).toBe(patch.n ?? 1);
  });

  it('the vLLM wording names the field, its range and the value as Python prints it', async () => {
    const r = await chat({ temperature: 65536 });
    expect(JSON.parse(r.body).error.message).toBe('temperature must be in [0, 2], got 65536.0.');
    const s = await chat({ temperature: 1e300, stream: true });
    expect(s.status).toBe(400);
    expect(JSON.parse(s.body).error.message).toBe('temperature must be in [0, 2], got 1e+300.');
  });

  it('model omitted or null while two models are served → 400 naming model; each model by name → 200', async () => {
    for (const model of [undefined, null, '']) {
      const r = await postChat(server.base, JSON.stringify({ ...base, model }));
      expect(r.status, r.body).toBe(400);
      expect(JSON.parse(r.body).error).toMatchObject({ param: 'model', type: 'BadRequestError' });
      expect(JSON.parse(r.body).error.message).toContain('a, b');
    }
    for (const model of ['a', 'b']) expect((await chat({ model })).status).toBe(200);
  });

  it('afterwards: no request running or waiting, every KV block free, /health ok', async () => {
    await expectIdle(server.base);
  });
});
