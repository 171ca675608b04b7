// SmolLM2-135M-Instruct Q4_1 against llama.cpp on the emulated AVX2-only CPU (npm run test:cpu-haswell):
// tokenmill's avx2 kernels, chosen by dispatch, against the haswell build ggml chose by cpuid. One of the
// five conversations of test/real/smollm2.test.ts: emulated, each takes minutes.
import { defineChatParity } from '../real/chat-parity.js';

defineChatParity({ model: 'smollm2-135m-instruct-q4_1', conversations: 1 });
