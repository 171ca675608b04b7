// Model.tokenizeMany (libuv worker) gives tokenize()'s ids for every text of every shared vocabulary's
// vectors, keeps each text's own flags, and does not hold the JS thread: a timer set while a 3.4 MB
// prompt tokenizes fires long before the ids arrive.
import { describe, expect, test } from 'vitest';
import { InvalidArgumentError, Model } from '../../lib/index.js';
import { stories260K } from '../helpers/shared.js';
import { vocabFiles, vocabVectors } from '../helpers/vocab-vectors.js';

describe('Model.tokenizeMany', () => {
  test('equals tokenize() text by text on every shared vocabulary', async () => {
    expect(vocabFiles.length).toBeGreaterThanOrEqual(10);
    for (const file of vocabFiles) {
      const model = await Model.load(file, { vocabOnly: true });
      try {
        const texts = vocabVectors(file).map((v) => v.text);
        for (const flags of [{ addSpecial: false, parseSpecial: false }, { addSpecial: true, parseSpecial: true }]) {
          const many = await model.tokenizeMany(texts, flags);
          expect(many.map((ids) => Array.from(ids)), file).toEqual(texts.map((t) => model.tokenize(t, flags)));
        }
      } finally {
        model.dispose();
      }
    }
  });

  test('runs off the JS thread; bad input is an InvalidArgumentError', async () => {
    const model = await Model.load(stories260K);
    try {
      const prompt = 'Once upon a time there was a little girl. '.repeat(80_000);
      let timerAt = 0;
      const started = performance.now();
      setTimeout(() => { timerAt = performance.now() - started; }, 5);
      const [ids] = await model.tokenizeMany([prompt]);
      const doneAt = performance.now() - started;
      expect(ids!.length).toBe(model.tokenize(prompt).length);
      expect(timerAt).toBeGreaterThan(0);
      expect(timerAt).toBeLessThan(doneAt);
      expect(await model.tokenizeMany([])).toEqual([]);
      await expect(model.tokenizeMany(['ok', 3 as unknown as string])).rejects.toBeInstanceOf(InvalidArgumentError);
    } finally {
      model.dispose();
    }
    await expect(model.tokenizeMany(['x'])).rejects.toThrow(/disposed/);
  });
});
