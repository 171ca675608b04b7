// Malformed GGUF variants for error-path tests: each is a small valid file (written with our writer)
// or a copy of stories260K.gguf with one thing broken, plus the tm error code and the message text the
// reader must report. The loader prefixes messages with the file's path.
import { readFileSync } from 'node:fs';
import { ByteSink, GGUFWriter, gv, valueTypeIds, writeValue, type GGUFValue } from './gguf-writer.js';

export interface MalformedVariant {
  name: string;
  bytes: Uint8Array;
  code: 'gguf_invalid' | 'gguf_unsupported' | 'io';
  message: string;    // must appear in the error message
}

const E = 'gguf_invalid';
const U = 'gguf_unsupported';
const TWO_60 = 1n << 60n;
const TWO_63 = 1n << 63n;

// The valid base: two tensors, a: f32 [8, 2] at 0 (64 bytes), b: q8_0 [32, 1] at 64 (34 bytes).
export function baseWriter(): GGUFWriter {
  const w = new GGUFWriter();
  w.set('general.architecture', gv.string('llama'));
  w.set('general.alignment', gv.u32(32));
  w.set('test.nested', gv.arrayOf([gv.array('u8', [1, 2]), gv.array('u8', [3])]));
  w.addTensor('a', 'f32', [8, 2], new Uint8Array(64));
  w.addTensor('b', 'q8_0', [32, 1], new Uint8Array(34));
  return w;
}

// One serialized metadata entry (key may be raw bytes, e.g. invalid UTF-8).
function kv(key: string | Uint8Array, value: GGUFValue): Uint8Array {
  const out = new ByteSink().string(key).u32(valueTypeIds[value.type]);
  writeValue(out, value);
  return out.toBytes();
}

function rawKv(build: (s: ByteSink) => void): Uint8Array {
  const s = new ByteSink();
  build(s);
  return s.toBytes();
}

function withU64(bytes: Uint8Array, at: number, v: bigint): Uint8Array {
  const copy = bytes.slice();
  new DataView(copy.buffer).setBigUint64(at, v, true);
  return copy;
}

function find(bytes: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= bytes.length; i++) {
    for (let k = 0; k < needle.length; k++) if (bytes[i + k] !== needle[k]) continue outer;
    return i;
  }
  throw new Error('needle not found');
}

// The byte offset of tensor `name`'s info (its name length field) in a file written by baseWriter().
function tensorInfoAt(bytes: Uint8Array, name: string): number {
  return find(bytes, new ByteSink().string(name).u32(2).toBytes());
}

export function malformedVariants(stories260KPath: string): MalformedVariant[] {
  const v: MalformedVariant[] = [];
  const add = (name: string, bytes: Uint8Array, code: MalformedVariant['code'], message: string) =>
    v.push({ name, bytes, code, message });
  const base = () => baseWriter();
  const valid = base().toBytes();
  const enc = new TextEncoder();

  // ---- header
  add('empty', new Uint8Array(0), E, 'file is empty');
  add('short', enc.encode('GGU'), E, 'too short for the GGUF magic');
  add('bad-magic', base().toBytes({ magic: enc.encode('GGML') }), E, 'bad magic 0x47474d4c');
  add('big-endian-magic', base().toBytes({ magic: enc.encode('FUGG') }), U, 'big-endian GGUF files are not supported');
  add('big-endian-version', base().toBytes({ version: 0x03000000 }), U, 'big-endian GGUF files are not supported');
  add('version-1', base().toBytes({ version: 1 }), U, 'unsupported GGUF version 1');
  add('version-4', base().toBytes({ version: 4 }), U, 'unsupported GGUF version 4');
  add('version-0', base().toBytes({ version: 0 }), U, 'unsupported GGUF version 0');
  add('truncated-header', valid.subarray(0, 12), E, 'truncated: tensor count needs 8 bytes at offset 8');
  add('n-kv-2^60', base().toBytes({ nKv: TWO_60 }), E, 'metadata count 1152921504606846976 cannot fit');
  add('n-tensors-2^40', base().toBytes({ nTensors: 1n << 40n }), E, 'tensor count 1099511627776 cannot fit');
  add('n-tensors-one-more', base().toBytes({ nTensors: 3n }), E, 'tensor #2');

  // ---- metadata
  const extra = (name: string, raw: Uint8Array, code: MalformedVariant['code'], message: string) =>
    add(name, base().toBytes({ extraKvBytes: [raw] }), code, message);
  extra('key-length-2^63', rawKv((s) => s.u64(TWO_63)), E, 'metadata entry #3: key length 9223372036854775808 exceeds');
  extra('string-length-2^63', rawKv((s) => s.string('x.s').u32(8).u64(TWO_63)), E,
    "metadata key 'x.s': string value length 9223372036854775808 exceeds");
  extra('array-count-2^60', rawKv((s) => s.string('x.a').u32(9).u32(4).u64(TWO_60)), E,
    "metadata key 'x.a': array count 1152921504606846976 of u32");
  extra('string-array-count-2^60', rawKv((s) => s.string('x.a').u32(9).u32(8).u64(TWO_60)), E,
    'array count 1152921504606846976 of string');
  extra('value-type-13', rawKv((s) => s.string('x.t').u32(13).u32(0)), E, "metadata key 'x.t': unknown value type 13");
  extra('elem-type-99', rawKv((s) => s.string('x.e').u32(9).u32(99).u64(1).u32(0)), E,
    "metadata key 'x.e': unknown array element type 99");
  extra('duplicate-key', kv('general.architecture', gv.string('qwen2')), E,
    "metadata key 'general.architecture': duplicate key");
  extra('empty-key', kv('', gv.u32(1)), E, "key '' is empty");
  extra('key-invalid-utf8', kv(new Uint8Array([0x62, 0x61, 0x64, 0xc3, 0x28]), gv.u32(1)), E,
    "key 'bad\\xc3(' is not valid UTF-8");
  extra('key-with-nul', kv(new Uint8Array([0x61, 0x00, 0x62]), gv.u32(1)), E, 'contains a NUL byte');
  extra('bool-2', rawKv((s) => s.string('x.b').u32(7).u8(2)), E, "metadata key 'x.b': bool value 2 is not 0 or 1");
  extra('arrays-nested-12-deep', rawKv((s) => {
    s.string('x.deep').u32(9);
    for (let k = 0; k < 12; k++) s.u32(9).u64(1);
    s.u32(0).u64(0);
  }), E, 'arrays nested deeper than 8 levels');
  const archAt = find(valid, enc.encode('llama'));
  add('truncated-in-value', valid.subarray(0, archAt + 2), E,
    "metadata key 'general.architecture': string value length 5 exceeds");
  const withAlign = (value: GGUFValue) => {
    const w = base();
    w.set('general.alignment', value);
    return w.toBytes();
  };
  add('alignment-48', withAlign(gv.u32(48)), E, 'alignment 48 is not a power of two');
  add('alignment-0', withAlign(gv.u32(0)), E, 'alignment 0 is not a power of two');
  add('alignment-string', withAlign(gv.string('32')), E,
    "metadata key 'general.alignment': has type string, expected a positive integer");

  // ---- tensor infos
  const dims = (d: bigint[]) => base().toBytes({ tensorDims: { a: d } });
  add('n-dims-5', dims([8n, 2n, 1n, 1n, 1n]), E, "tensor 'a': n_dims 5 is out of range (expected 1..4)");
  add('n-dims-0', dims([]), E, "tensor 'a': n_dims 0 is out of range");
  add('dim-0', dims([8n, 0n]), E, "tensor 'a': dimension 1 is 0");
  add('dim-2^63', dims([TWO_63, 1n]), E, "tensor 'a': dimension 0 is 9223372036854775808");
  add('dims-product-overflow', dims([1n << 32n, 1n << 32n]), E, "tensor 'a': element count of the dimensions overflows int64");
  add('bytes-overflow', dims([1n << 62n]), E, "tensor 'a': byte size of [4611686018427387904] f32 overflows 64 bits");
  add('type-id-4', base().toBytes({ tensorTypeId: { a: 4 } }), U, "tensor 'a': unknown tensor type id 4");
  add('type-id-max', base().toBytes({ tensorTypeId: { a: 0xffffffff } }), U, 'unknown tensor type id 4294967295');
  add('block-size', base().toBytes({ tensorDims: { b: [16n, 2n] } }), E,
    "tensor 'b': ne[0] = 16 is not a multiple of the block size 32 of type q8_0");
  add('offset-unaligned', base().toBytes({ tensorOffset: { b: 65n } }), E,
    "tensor 'b': data offset 65 is not a multiple of the alignment 32");
  add('offset-past-end', base().toBytes({ tensorOffset: { b: 1n << 40n } }), E,
    "tensor 'b': data [1099511627776, 1099511627810) of [32, 1] q8_0 lies outside the data section");
  add('offset-near-2^64', base().toBytes({ tensorOffset: { b: (1n << 64n) - 32n } }), E, 'lies outside the data section');
  add('overlap', base().toBytes({ tensorOffset: { b: 32n } }), E, "tensor 'b': data at offset 32 overlaps tensor 'a' [0, 64)");
  add('data-truncated', valid.subarray(0, valid.length - 1), E, "tensor 'b': data [64, 98) of [32, 1] q8_0 lies outside");
  {
    const w = new GGUFWriter();
    w.set('general.architecture', gv.string('llama'));
    w.addTensor('aa', 'f32', [8, 2], new Uint8Array(64));
    w.addTensor('ab', 'f32', [8, 2], new Uint8Array(64));
    const bytes = w.toBytes();
    const at = find(bytes, new ByteSink().string('ab').toBytes());
    const dup = bytes.slice();
    dup[at + 9] = 0x61;  // "ab" -> "aa"
    add('duplicate-tensor-name', dup, E, "tensor 'aa': duplicate tensor name (also tensor #0)");
  }
  {
    const at = tensorInfoAt(valid, 'a');
    add('tensor-name-length-2^63', withU64(valid, at, TWO_63), E, 'tensor #0: tensor name length 9223372036854775808 exceeds');
    const empty = valid.slice();
    new DataView(empty.buffer).setBigUint64(at, 0n, true);  // name "" followed by the byte 'a' misparsed as n_dims
    add('tensor-name-empty', empty, E, "tensor #0: tensor name '' is empty");
    const bad = valid.slice();
    bad[at + 8] = 0xff;
    add('tensor-name-invalid-utf8', bad, E, "tensor name '\\xff' is not valid UTF-8");
    const bAt = tensorInfoAt(valid, 'b');
    add('truncated-in-tensor-info', valid.subarray(0, bAt + 23), E, "tensor 'b': truncated: dimension needs 8 bytes");
  }

  // ---- byte-patched copies of stories260K.gguf
  const stories = new Uint8Array(readFileSync(stories260KPath));
  add('stories-half', stories.subarray(0, stories.length >> 1), E, 'lies outside the data section');
  add('stories-one-byte-short', stories.subarray(0, stories.length - 1), E, "tensor 'blk.4.ffn_norm.weight'");
  add('stories-n-tensors-2^20', withU64(stories, 8, 1n << 20n), E, 'tensor count 1048576');
  add('stories-n-kv-2^60', withU64(stories, 16, TWO_60), E, 'metadata count 1152921504606846976');
  add('stories-key-length-max', withU64(stories, 24, (1n << 64n) - 1n), E, 'key length 18446744073709551615 exceeds');
  add('stories-header-only', stories.subarray(0, 30), E, 'metadata count 19 cannot fit in the 6 bytes left');
  return v;
}
