// `tokenmill serve`'s last-resort handler (lib/server/last-resort.ts): an exception thrown from a timer
// callback and a promise rejection nobody handles — both outside any request — are logged with the API key
// redacted and counted in /metrics, and the server keeps answering (health, chat).
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stories260K } from '../helpers/shared.js';
import { startServer, type RunningServer } from './server-helpers.js';
import { metricValues, postChat } from './server-probe.js';

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop('SIGKILL');
});

const secret = 'sk-last-resort-test-4711';
const auth = { authorization: `Bearer ${secret}` };
const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Once upon a time' }], chat_template: '{{ messages[0].content }}', max_tokens: 8 });

/** [exceptions, rejections] caught so far (the family's samples are written in that order). */
async function uncaught(base: string): Promise<number[]> {
  return metricValues(await (await fetch(`${base}/metrics`)).text(), 'tokenmill:uncaught_errors_total');
}

describe('e2e last-resort handler', () => {
  it('an exception from a timer and an unhandled rejection: logged without the key, counted, the server keeps serving', async () => {
    const inject = path.join(__dirname, 'inject-uncaught.cjs');
    const s = await startServer(['--model', stories260K, '--served-model-name', 'm', '--api-key', secret], {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${inject}`.trim(),
      TOKENMILL_TEST_SECRET: secret,
    });
    servers.push(s);
    const deadline = Date.now() + 10_000;
    while ((await uncaught(s.base)).some((n) => n < 1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await uncaught(s.base)).toEqual([1, 1]);
    expect(s.child.exitCode).toBeNull();
    expect((await fetch(`${s.base}/health`)).status).toBe(200);
    const chat = await postChat(s.base, body, auth);
    expect(chat.status).toBe(200);
    expect(s.stderr()).toContain('injected from a timer callback');
    expect(s.stderr()).toContain('injected unhandled rejection');
    expect(s.stderr()).toContain('Bearer [redacted]');
    expect(s.stderr()).not.toContain(secret);
  }, 60_000);
});
