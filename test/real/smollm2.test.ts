// SmolLM2-135M-Instruct Q4_1 (llama architecture, tied embeddings, ChatML template): chat parity with llama.cpp.
import { defineChatParity } from './chat-parity.js';

defineChatParity({ model: 'smollm2-135m-instruct-q4_1' });
