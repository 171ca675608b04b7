// Split GGUF files (llama.cpp's gguf-split layout): a synthetic model written whole and split into three
// shards loads from its first shard, lists every tensor, and computes bit-identical logits; a missing,
// misnumbered or foreign shard, or a later shard given first, is an error naming the file.
import { copyFileSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildSynthModel } from '../../bench/synth-model.js';
import { Model } from '../../lib/index.js';
import { shardName, splitWriter, writeShards } from '../helpers/gguf-split.js';
import { gv } from '../helpers/gguf-writer.js';

let dir: string;
const synth = buildSynthModel({ arch: 'qwen2', type: 'Q8_0', nEmbd: 64, nHead: 4, nHeadKv: 2, nFf: 128, nLayer: 2, nCtx: 128, seed: 7 });
const total = synth.writer.tensors.length;
// Uneven shards; the first holds no tensor at all, as gguf-split's --no-tensor-first-split writes it.
const counts = [0, 5, total - 5];
let whole: string;
let shards: string[];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tokenmill-split-'));
  whole = path.join(dir, 'whole.gguf');
  await synth.writer.writeFile(whole);
  shards = await writeShards(synth.writer, counts, path.join(dir, 'model'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('split GGUF models', () => {
  test('loaded from the first shard: every tensor, and the same logits bit for bit as the whole file', async () => {
    const a = await Model.load(whole);
    const b = await Model.load(shards[0]!);
    try {
      expect(b.info.tensors.map((t) => t.name)).toEqual(a.info.tensors.map((t) => t.name));
      expect(b.info.hparams).toEqual(a.info.hparams);
      const tokens = a.tokenize('Once upon a time there was a cat').slice(0, 8);
      expect(b.tokenize('Once upon a time there was a cat').slice(0, 8)).toEqual(tokens);
      const la = await a.evaluate(tokens, { threads: 1 });
      const lb = await b.evaluate(tokens, { threads: 1 });
      expect(lb.length).toBe(tokens.length * synth.nVocab);
      expect(Buffer.from(lb.buffer, lb.byteOffset, lb.byteLength).equals(Buffer.from(la.buffer, la.byteOffset, la.byteLength))).toBe(true);
    } finally {
      a.dispose();
      b.dispose();
    }
  });

  test('a missing shard is an io error naming it', async () => {
    const sub = mkdtempSync(path.join(dir, 'missing-'));
    const prefix = path.join(sub, 'model');
    const paths = await writeShards(synth.writer, counts, prefix);
    unlinkSync(paths[2]!);
    await expect(Model.load(paths[0]!)).rejects.toMatchObject({ code: 'io', message: expect.stringContaining('shard 3 of 3') });
  });

  test('a later shard given first is refused, pointing at the first', async () => {
    await expect(Model.load(shards[1]!)).rejects.toMatchObject({ code: 'gguf_invalid', message: expect.stringMatching(/is shard 2 of 3 .*pass the first one \(00001-of-00003\.gguf\)/) });
  });

  test('a shard of another split, or misnumbered, is refused naming it', async () => {
    const sub = mkdtempSync(path.join(dir, 'foreign-'));
    const prefix = path.join(sub, 'model');
    await writeShards(synth.writer, counts, prefix);
    // Shard 3 replaced by shard 2 of a two-way split of the same model.
    const two = await writeShards(synth.writer, [5, total - 5], path.join(sub, 'other'));
    copyFileSync(two[1]!, shardName(prefix, 2, 3));
    await expect(Model.load(shardName(prefix, 0, 3))).rejects.toMatchObject({
      code: 'gguf_invalid', message: expect.stringMatching(/model-00003-of-00003\.gguf: is not shard 3 of 3 \(it says split\.no 1, split\.count 2\)/),
    });
  });

  test('shards that do not hold split.tensors.count tensors, or hold one twice, are refused', async () => {
    const sub = mkdtempSync(path.join(dir, 'count-'));
    const prefix = path.join(sub, 'model');
    const parts = splitWriter(synth.writer, counts);
    parts[0]!.set('split.tensors.count', gv.i32(total + 1));
    await Promise.all(parts.map((w, i) => w.writeFile(shardName(prefix, i, 3))));
    await expect(Model.load(shardName(prefix, 0, 3))).rejects.toMatchObject({ code: 'gguf_invalid', message: expect.stringContaining(`split.tensors.count is ${total + 1} but the 3 shards hold ${total} tensors`) });

    // Shard 3 also carries the last tensor of shard 2.
    const dup = splitWriter(synth.writer, counts);
    const t = synth.writer.tensors[4]!;
    dup[2]!.addTensor(t.name, t.type, t.ne, t.data);
    const dprefix = path.join(sub, 'dup');
    await Promise.all(dup.map((w, i) => w.writeFile(shardName(dprefix, i, 3))));
    await expect(Model.load(shardName(dprefix, 0, 3))).rejects.toMatchObject({ code: 'gguf_invalid', message: expect.stringContaining(`dup-00003-of-00003.gguf: tensor '${t.name}' is also in an earlier shard`) });
  });

  test('a first shard whose name does not follow the pattern cannot find its siblings', async () => {
    const odd = path.join(dir, 'renamed.gguf');
    copyFileSync(shards[0]!, odd);
    await expect(Model.load(odd)).rejects.toMatchObject({ code: 'gguf_invalid', message: expect.stringContaining("does not end in '-00001-of-00003.gguf'") });
  });
});
