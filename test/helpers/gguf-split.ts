// Splits a GGUF writer's model into shards the way llama.cpp's gguf-split does: shard 1 carries all the
// metadata, every shard carries split.no (0-based), split.count and split.tensors.count, and the tensors are
// dealt out in order. Written as `<prefix>-0000i-of-0000n.gguf`; returns the paths, first shard first.
import { GGUFWriter, gv } from './gguf-writer.js';

export function shardName(prefix: string, index: number, count: number): string {
  const pad = (n: number) => String(n).padStart(5, '0');
  return `${prefix}-${pad(index + 1)}-of-${pad(count)}.gguf`;
}

/** The shards' writers: `counts[i]` tensors go to shard i (all of them together must be every tensor). */
export function splitWriter(whole: GGUFWriter, counts: readonly number[]): GGUFWriter[] {
  const total = whole.tensors.length;
  if (counts.reduce((a, b) => a + b, 0) !== total) throw new Error(`split: counts ${counts.join('+')} do not add up to ${total} tensors`);
  let next = 0;
  return counts.map((n, i) => {
    const w = new GGUFWriter(whole.alignment);
    if (i === 0) for (const [k, v] of whole.metadata) w.set(k, v);
    w.set('split.no', gv.u16(i)).set('split.count', gv.u16(counts.length)).set('split.tensors.count', gv.i32(total));
    for (const t of whole.tensors.slice(next, next + n)) w.addTensor(t.name, t.type, t.ne, t.data);
    next += n;
    return w;
  });
}

export async function writeShards(whole: GGUFWriter, counts: readonly number[], prefix: string): Promise<string[]> {
  const shards = splitWriter(whole, counts);
  const paths = shards.map((_, i) => shardName(prefix, i, shards.length));
  await Promise.all(shards.map((w, i) => w.writeFile(paths[i]!)));
  return paths;
}
