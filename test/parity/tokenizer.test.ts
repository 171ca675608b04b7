// Tokenizer parity with llama.cpp (node-llama-cpp 3.22.1, vocab-only loads) on every shared vocabulary
// except bert-bge: the shared .inp strings plus 200 seeded random Unicode strings per vocabulary, with
// special-token parsing off; and, on strings containing the vocabulary's special tokens, with parsing
// on (llama.cpp's tokenize(text, true) = parse_special, no BOS) and with BOS/EOS added as the GGUF says.
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { Model } from '../../lib/index.js';
import { peerLoadModel } from '../helpers/peer.js';
import { randomTexts } from '../helpers/random-text.js';
import { vocabFiles, vocabVectors } from '../helpers/vocab-vectors.js';

// Special-token texts to splice into strings; those a vocabulary lacks are plain text there.
const SPECIALS = ['<s>', '</s>', '<unk>', '<|im_start|>', '<|im_end|>', '<|endoftext|>', '<|begin_of_text|>',
  '<|eot_id|>', '<|user|>', '<|assistant|>', '<|end|>', '<｜begin▁of▁sentence｜>'];

interface Mismatch { text: string; ours: number[]; llamaCpp: number[] }
const show = (m: Mismatch[]) => m.slice(0, 8).map((x) => JSON.stringify(x));

describe('tokenizer: tokenmill vs llama.cpp', () => {
  for (const file of vocabFiles) {
    const name = path.basename(file);
    test(name, async () => {
      const model = await Model.load(file, { vocabOnly: true });
      const peer = await peerLoadModel(file, { vocabOnly: true });
      try {
        const texts = [...vocabVectors(file).map((v) => v.text), ...randomTexts(200, name.length * 7919)];
        const plain: Mismatch[] = [];
        for (const text of texts) {
          const ours = model.tokenize(text, { addSpecial: false, parseSpecial: false });
          const llamaCpp = peer.tokenize(text, false);
          if (JSON.stringify(ours) !== JSON.stringify(llamaCpp)) plain.push({ text, ours, llamaCpp });
        }
        // Strings with special tokens spliced between random pieces.
        const pieces = randomTexts(60, 12345, 3);
        const special: Mismatch[] = [];
        const withBos: Mismatch[] = [];
        for (let i = 0; i < 40; i++) {
          const text = pieces[i]! + SPECIALS[i % SPECIALS.length]! + pieces[i + 20]! + SPECIALS[(i * 5) % SPECIALS.length]!;
          const ours = model.tokenize(text, { addSpecial: false, parseSpecial: true });
          const llamaCpp = peer.tokenize(text, true);
          if (JSON.stringify(ours) !== JSON.stringify(llamaCpp)) special.push({ text, ours, llamaCpp });
          const oursBos = model.tokenize(text, { addSpecial: true, parseSpecial: true });
          const wantBos = [
            ...(model.info.addBosToken && peer.tokens.bos !== null ? [peer.tokens.bos] : []),
            ...llamaCpp,
            ...(model.info.addEosToken && peer.tokens.eos !== null ? [peer.tokens.eos] : []),
          ];
          if (JSON.stringify(oursBos) !== JSON.stringify(wantBos)) withBos.push({ text, ours: oursBos, llamaCpp: wantBos });
        }
        if (plain.length + special.length + withBos.length > 0) {
          console.log(`${name}: ${plain.length}/${texts.length} plain, ${special.length}/40 parse-special, ` +
            `${withBos.length}/40 add-special mismatches\n${[...show(plain), ...show(special), ...show(withBos)].join('\n')}`);
        }
        expect(show(plain), 'parseSpecial false').toEqual([]);
        expect(show(special), 'parseSpecial true').toEqual([]);
        expect(show(withBos), 'addSpecial true').toEqual([]);
      } finally {
        await peer.dispose();
        model.dispose();
      }
    });
  }
});
