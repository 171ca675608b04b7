// Our GGUF writer and metadata reader: round trips of every value type and nested arrays, tensors of
// every supported type at aligned offsets, and copying tokenizer metadata out of a real GGUF.
import { describe, expect, test } from 'vitest';
import { readGGUFMetadata, readGGUFMetadataFile, copyTokenizerMetadata } from '../helpers/gguf-reader.js';
import {
  GGUFWriter, gv, makeRng, randomTensorData, tensorByteSize, tensorTypes, f32ToF16Bits, f32ToBf16Bits,
  type TensorTypeName,
} from '../helpers/gguf-writer.js';
import { stories260K } from '../helpers/shared.js';

describe('gguf writer', () => {
  test('metadata of every value type round-trips, nested arrays included', () => {
    const w = new GGUFWriter(64);
    w.set('t.u8', gv.u8(250)).set('t.i8', gv.i8(-5)).set('t.u16', gv.u16(65000)).set('t.i16', gv.i16(-300));
    w.set('t.u32', gv.u32(4294967295)).set('t.i32', gv.i32(-7)).set('t.u64', gv.u64(1n << 62n));
    w.set('t.i64', gv.i64(-(1n << 40n))).set('t.f32', gv.f32(1.5)).set('t.f64', gv.f64(Math.PI));
    w.set('t.bool', gv.bool(true)).set('t.str', gv.string('héllo'));
    w.set('t.arr', gv.array('i32', [1, -2, 3]));
    w.set('t.nested', gv.arrayOf([gv.array('string', ['a', 'b']), gv.array('string', [])]));
    const f = readGGUFMetadata(w.toBytes());
    expect(f.version).toBe(3);
    const get = (k: string) => f.metadata.get(k);
    expect(get('general.alignment')).toEqual(gv.u32(64));
    expect(get('t.u8')).toEqual(gv.u8(250));
    expect(get('t.i8')).toEqual(gv.i8(-5));
    expect(get('t.u16')).toEqual(gv.u16(65000));
    expect(get('t.i16')).toEqual(gv.i16(-300));
    expect(get('t.u32')).toEqual(gv.u32(4294967295));
    expect(get('t.i32')).toEqual(gv.i32(-7));
    expect(get('t.u64')).toEqual(gv.u64(1n << 62n));
    expect(get('t.i64')).toEqual(gv.i64(-(1n << 40n)));
    expect(get('t.f32')).toEqual(gv.f32(1.5));
    expect(get('t.f64')).toEqual(gv.f64(Math.PI));
    expect(get('t.bool')).toEqual(gv.bool(true));
    expect(get('t.str')).toEqual(gv.string('héllo'));
    expect(get('t.arr')).toEqual(gv.array('i32', [1, -2, 3]));
    expect(get('t.nested')).toEqual(gv.arrayOf([gv.array('string', ['a', 'b']), gv.array('string', [])]));
  });

  test('tensors of every supported type land at aligned offsets with their bytes', () => {
    const rng = makeRng(1);
    const w = new GGUFWriter();
    const types = Object.keys(tensorTypes) as TensorTypeName[];
    const datas = types.map((t) => randomTensorData(t, [256, 3], rng));
    types.forEach((t, i) => w.addTensor(`w.${t}`, t, [256, 3], datas[i]!));
    const bytes = w.toBytes();
    const f = readGGUFMetadata(bytes);
    expect(f.dataOffset % 32).toBe(0);
    types.forEach((t, i) => {
      const info = f.tensors[i]!;
      expect(info.name).toBe(`w.${t}`);
      expect(info.typeId).toBe(tensorTypes[t].id);
      expect(info.ne).toEqual([256n, 3n]);
      expect(Number(info.offset) % 32).toBe(0);
      const start = f.dataOffset + Number(info.offset);
      expect(bytes.subarray(start, start + datas[i]!.length)).toEqual(datas[i]);
      expect(datas[i]!.length).toBe(tensorByteSize(t, [256, 3]));
    });
    expect(() => w.addTensor('bad', 'q4_k', [128], new Uint8Array(72))).toThrow(/multiple of 256/);
  });

  test('half and bfloat16 conversions', () => {
    expect(f32ToF16Bits(1)).toBe(0x3c00);
    expect(f32ToF16Bits(-2)).toBe(0xc000);
    expect(f32ToF16Bits(65504)).toBe(0x7bff);
    expect(f32ToF16Bits(1e6)).toBe(0x7c00);
    expect(f32ToF16Bits(5.960464477539063e-8)).toBe(0x0001);
    expect(f32ToBf16Bits(1)).toBe(0x3f80);
    expect(f32ToBf16Bits(-0.5)).toBe(0xbf00);
  });

  test('tokenizer metadata copies out of stories260K', () => {
    const w = new GGUFWriter();
    const keys = copyTokenizerMetadata(stories260K, w);
    expect(keys).toContain('tokenizer.ggml.tokens');
    expect(keys).toContain('tokenizer.ggml.model');
    const back = readGGUFMetadata(w.toBytes());
    const src = readGGUFMetadataFile(stories260K);
    for (const k of keys) expect(back.metadata.get(k)).toEqual(src.metadata.get(k));
    const tokens = back.metadata.get('tokenizer.ggml.tokens');
    expect(tokens?.type === 'array' ? tokens.elems.length : 0).toBe(512);
  });
});
