// Qwen2.5-Coder-1.5B-Instruct Q4_K_M (qwen2; Q4_K and Q6_K): chat parity with llama.cpp. About 1.1 GB, so it
// runs in `npm run test:real-large`, not in `npm test`.
import { defineChatParity } from '../real/chat-parity.js';

defineChatParity({ model: 'qwen2.5-coder-1.5b-q4' });
