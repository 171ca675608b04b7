// Detokenizer through the addon on every shared vocabulary except bert-bge: round trips
// detokenize(tokenize(s)) == s, skipSpecialTokens, and equality with llama.cpp's detokenize on the
// same ids (node-llama-cpp, vocab-only load).
//
// Documented differences:
//   - llama.cpp cleans tokenization spaces (" ?" → "?", " 's" → "'s", …) for the vocabularies whose
//     tokenizer_clean_spaces it sets (gpt-2, llama-bpe, starcoder, falcon, …); tokenmill follows vLLM's
//     detokenizer, which returns the text as it was. We compare clean(ours) with llama.cpp's text there.
//   - Some byte-level vocabularies (falcon, starcoder) lack tokens for a few bytes (e.g. 0xF2 lead bytes of
//     plane-9+ code points), so tokenize drops them on both sides; such a string cannot round-trip, and we
//     accept a lossy round trip only when llama.cpp's detokenize of the same ids is identical.
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { Model } from '../../lib/index.js';
import { peerLoadModel } from '../helpers/peer.js';
import { randomTexts } from '../helpers/random-text.js';
import { vocabFiles, vocabVectors } from '../helpers/vocab-vectors.js';

// HF's clean_up_tokenization (what llama.cpp's clean_spaces does on the rendered text).
function cleanSpaces(s: string): string {
  return s.replaceAll(' .', '.').replaceAll(' ?', '?').replaceAll(' !', '!').replaceAll(' ,', ',')
    .replaceAll(" ' ", "'").replaceAll(" n't", "n't").replaceAll(" 'm", "'m").replaceAll(" 's", "'s")
    .replaceAll(" 've", "'ve").replaceAll(" 're", "'re");
}

describe('detokenizer', () => {
  for (const file of vocabFiles) {
    const name = path.basename(file);
    test(name, async () => {
      const model = await Model.load(file, { vocabOnly: true });
      const peer = await peerLoadModel(file, { vocabOnly: true });
      try {
        const texts = [...vocabVectors(file).map((v) => v.text), ...randomTexts(100, name.length * 31 + 7)]
          .filter((t) => t.length > 0);
        const roundTrip: string[] = [];
        const vsPeer: string[] = [];
        let lossy = 0, cleaned = 0;
        for (const text of texts) {
          const ids = model.tokenize(text, { addSpecial: false, parseSpecial: false });
          const back = model.detokenize(ids);
          const theirs = peer.detokenize(ids, false);
          if (back !== text) {
            if (back === theirs) lossy++;
            else roundTrip.push(JSON.stringify({ text, ids, back }));
          }
          if (back !== theirs) {
            if (cleanSpaces(back) === theirs) cleaned++;
            else vsPeer.push(JSON.stringify({ text, ids, ours: back, llamaCpp: theirs }));
          }
        }
        console.log(`${name}: ${texts.length} strings, ${lossy} lossy on both sides (bytes missing from the vocab), ` +
          `${cleaned} equal to llama.cpp only after its space clean-up`);
        // Special tokens: BOS/EOS render as their text unless skipSpecialTokens; llama.cpp's
        // detokenize(ids, true) renders them too.
        const special: string[] = [];
        for (const id of [model.info.bosTokenId, model.info.eosTokenId]) {
          if (id === null) continue;
          const ids = [id, ...model.tokenize('Hello world', { addSpecial: false }), id];
          const skipped = model.detokenize(ids, { skipSpecialTokens: true });
          const plain = model.detokenize(ids.slice(1, -1));
          if (skipped !== plain) special.push(JSON.stringify({ ids, skipped, plain }));
          const kept = model.detokenize(ids, { skipSpecialTokens: false });
          const theirs = peer.detokenize(ids, true);
          if (kept !== theirs) special.push(JSON.stringify({ ids, kept, llamaCpp: theirs }));
        }
        if (roundTrip.length + vsPeer.length + special.length > 0) {
          console.log(`${name}: ${roundTrip.length}/${texts.length} round trip, ${vsPeer.length} vs llama.cpp, ` +
            `${special.length} special\n${[...roundTrip.slice(0, 5), ...vsPeer.slice(0, 5), ...special].join('\n')}`);
        }
        expect(roundTrip.slice(0, 5), 'round trip').toEqual([]);
        expect(vsPeer.slice(0, 5), 'vs llama.cpp').toEqual([]);
        expect(special, 'special tokens').toEqual([]);
      } finally {
        await peer.dispose();
        model.dispose();
      }
    });
  }
});
