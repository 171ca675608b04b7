// Loaded into `tokenmill serve` with NODE_OPTIONS=--require (server-last-resort.test.ts): once the server
// prints its listening line, throws from a timer callback and leaves a promise rejection unhandled —
// places outside any request's try. The messages carry the test's API key to check it is redacted.
'use strict';
const secret = process.env.TOKENMILL_TEST_SECRET ?? '';
const write = process.stdout.write.bind(process.stdout);
let armed = false;
process.stdout.write = (chunk, ...rest) => {
  if (!armed && String(chunk).includes('tokenmill listening on')) {
    armed = true;
    setTimeout(() => {
      throw new Error(`injected from a timer callback (key ${secret}, Authorization: Bearer ${secret})`);
    }, 20);
    setTimeout(() => {
      void Promise.reject(new Error(`injected unhandled rejection (key ${secret})`));
    }, 40);
  }
  return write(chunk, ...rest);
};
