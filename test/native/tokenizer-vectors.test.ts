// Every shared tokenizer vector (../shared/models/vocab/*.gguf.inp/.out, llama.cpp's own expected
// output) through the addon: vocab-only load, tokenize(text, {addSpecial: false, parseSpecial: false}).
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { Model } from '../../lib/index.js';
import { vocabFiles, vocabVectors } from '../helpers/vocab-vectors.js';

describe('tokenizer vectors (llama.cpp expected ids)', () => {
  test('there are vocabularies to test', () => {
    expect(vocabFiles.length).toBeGreaterThanOrEqual(10);
  });
  for (const file of vocabFiles) {
    test(path.basename(file), async () => {
      const model = await Model.load(file, { vocabOnly: true });
      try {
        const vectors = vocabVectors(file);
        expect(vectors.length).toBeGreaterThan(10);
        const failures = vectors
          .map((v) => ({ text: v.text, want: v.ids, got: model.tokenize(v.text, { addSpecial: false, parseSpecial: false }) }))
          .filter((r) => JSON.stringify(r.want) !== JSON.stringify(r.got));
        expect(failures.map((f) => JSON.stringify(f))).toEqual([]);
      } finally {
        model.dispose();
      }
    });
  }
});
