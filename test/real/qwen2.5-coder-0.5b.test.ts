// Qwen2.5-Coder-0.5B-Instruct (qwen2: attention biases, GQA 14/2; Q5_0 with Q8_0, Q4_K and Q6_K rows):
// chat parity with llama.cpp through the file's own tool-calling ChatML template.
import { defineChatParity } from './chat-parity.js';

defineChatParity({ model: 'qwen2.5-coder-0.5b-q4' });
