'use strict';
// A light client in its own process (so the test process's own work — building and sending megabyte
// attack bodies — cannot delay what it observes): it keeps a stream running on the server (requests of
// maxTokens back to back) and polls /health every 10 ms until it reads a line on stdin, then prints
// {maxGap, chunks, healthMax, polls, ownDelayMax} as JSON. It prints `streaming` on a line first, once
// the first chunk arrived, so the test starts its attack on a running stream. ownDelayMax is this process's own
// event-loop delay: how much of what it saw was the machine, not the server.
const { monitorEventLoopDelay } = require('node:perf_hooks');

const [base, key, maxTokens] = process.argv.slice(2);
let running = true;
process.stdin.once('data', () => { running = false; });
const own = monitorEventLoopDelay({ resolution: 10 });
own.enable();

// A server that stalls may close a kept-alive connection just as it is reused (its keep-alive timer
// fires late); the request is then sent again, and the time counts from the first try.
async function fetchRetrying(url, init) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (error) {
      if (attempt >= 5) throw error;
    }
  }
}

async function streams() {
  let maxGap = 0;
  let chunks = 0;
  for (let seed = 0; running; seed++) {
    const res = await fetchRetrying(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Once upon a time' }], chat_template: "{{ messages[0]['content'] }}", stream: true, max_tokens: Number(maxTokens), ignore_eos: true, temperature: 1, seed }),
    });
    if (res.status !== 200) throw new Error(`stream request answered ${res.status}: ${await res.text()}`);
    const reader = res.body.getReader();
    let last = 0;
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      const now = performance.now();
      if (chunks === 0) process.stdout.write('streaming\n');
      if (last !== 0) maxGap = Math.max(maxGap, now - last);
      last = now;
      chunks += 1;
    }
  }
  return { maxGap, chunks };
}

async function health() {
  let max = 0;
  let polls = 0;
  while (running) {
    const t = performance.now();
    const r = await fetchRetrying(`${base}/health`);
    await r.text();
    if (r.status !== 200) throw new Error(`/health answered ${r.status}`);
    max = Math.max(max, performance.now() - t);
    polls += 1;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { healthMax: max, polls };
}

Promise.all([streams(), health()]).then(([s, h]) => {
  own.disable();
  process.stdout.write(`${JSON.stringify({ ...s, ...h, ownDelayMax: own.max / 1e6 })}\n`);
}, (error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exitCode = 1;
});
