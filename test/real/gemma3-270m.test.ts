// Gemma 3 270M Q4_K_M (gemma3: sliding-window and global layers, q/k norms, post-norms, GELU FFN, embedding
// scale, tied embeddings, SPM vocabulary of 262144): chat parity with llama.cpp.
//
// The PyPI package holds the BASE model (google/gemma-3-270m, not -it) and its file has no chat template, so
// the conversations go through the Gemma turn format (<start_of_turn>user … <end_of_turn>) of the Gemma 2 it
// template in ../shared/templates, which rejects system messages: those are folded into the first user turn,
// as Gemma 3's own template does.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { templatesDir } from '../helpers/shared.js';
import { defineChatParity } from './chat-parity.js';

defineChatParity({
  model: 'gemma3-270m-q4_k_m',
  fallbackTemplate: readFileSync(path.join(templatesDir, 'google-gemma-2-2b-it.jinja'), 'utf8'),
  foldSystem: true,
});
