'use strict';
// Preloaded (NODE_OPTIONS=--require) into every Node process of `npm run test:cpu-haswell`. qemu-user
// emulates one process and does not follow exec: a child started with process.execPath (vitest's forked
// workers, the logits test's capped-level child, the e2e servers) would run natively, on the host's
// AVX-512. Pointing process.execPath at the script's qemu wrapper makes those children emulated too.
const wrapper = process.env.TOKENMILL_QEMU_NODE;
if (!wrapper) throw new Error('test/haswell/exec-path.cjs is preloaded by scripts/test-cpu-haswell.mjs, which sets TOKENMILL_QEMU_NODE');
process.execPath = wrapper;
