// Our GGUF v3 writer (little-endian), for synthetic test models, malformed-file tests and benchmarks.
//
// Usage:
//   const w = new GGUFWriter();                       // alignment 32 (general.alignment written if not 32)
//   w.set('general.architecture', gv.string('llama'));
//   w.set('llama.block_count', gv.u32(2));
//   w.set('tokenizer.ggml.tokens', gv.array('string', ['<unk>', 'a']));
//   w.set('test.nested', gv.arrayOf([gv.array('u8', [1, 2]), gv.array('u8', [3])]));
//   w.addTensor('token_embd.weight', 'q8_0', [64, 512], randomTensorData('q8_0', [64, 512], rng));
//   await w.writeFile(path);   // or w.toBytes()
//
// `ne` is in ggml order (ne[0] is the contiguous row length). Tensor data are written in insertion
// order, each at an offset aligned to the alignment; `toBytes({ ... })` has knobs for malformed files.
import { writeFile } from 'node:fs/promises';

// ---- value types ----------------------------------------------------------------------------------

export const valueTypeIds = {
  u8: 0, i8: 1, u16: 2, i16: 3, u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9, u64: 10, i64: 11, f64: 12,
} as const;
export type ValueTypeName = keyof typeof valueTypeIds;
export type ScalarTypeName = Exclude<ValueTypeName, 'array'>;

// A metadata value. Strings may be raw bytes (copied verbatim, e.g. tokens that are not valid UTF-8);
// 64-bit integers may be bigint. Arrays carry their element type; nested arrays have elemType 'array'.
export type GGUFValue =
  | { type: 'u8' | 'i8' | 'u16' | 'i16' | 'u32' | 'i32' | 'f32' | 'f64'; value: number }
  | { type: 'u64' | 'i64'; value: number | bigint }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string | Uint8Array }
  | { type: 'array'; elemType: ValueTypeName; elems: GGUFValue[] };

type ScalarJs<T extends ScalarTypeName> = T extends 'bool' ? boolean : T extends 'string' ? string | Uint8Array
  : T extends 'u64' | 'i64' ? number | bigint : number;

function scalar<T extends ScalarTypeName>(type: T, value: ScalarJs<T>): GGUFValue {
  return { type, value } as GGUFValue;
}

// Value constructors: gv.u32(5), gv.string('x'), gv.array('f32', [...]), gv.arrayOf([gv.array(...), ...]).
export const gv = {
  u8: (v: number) => scalar('u8', v), i8: (v: number) => scalar('i8', v),
  u16: (v: number) => scalar('u16', v), i16: (v: number) => scalar('i16', v),
  u32: (v: number) => scalar('u32', v), i32: (v: number) => scalar('i32', v),
  u64: (v: number | bigint) => scalar('u64', v), i64: (v: number | bigint) => scalar('i64', v),
  f32: (v: number) => scalar('f32', v), f64: (v: number) => scalar('f64', v),
  bool: (v: boolean) => scalar('bool', v), string: (v: string | Uint8Array) => scalar('string', v),
  array: <T extends ScalarTypeName>(elemType: T, values: ScalarJs<T>[]): GGUFValue =>
    ({ type: 'array', elemType, elems: values.map((v) => scalar(elemType, v)) }),
  arrayOf: (arrays: GGUFValue[]): GGUFValue => ({ type: 'array', elemType: 'array', elems: arrays }),
};

// ---- tensor types ---------------------------------------------------------------------------------

// ggml type ids with block geometry (elements per block, bytes per block) for the types we compute with.
export const tensorTypes = {
  f32: { id: 0, blockSize: 1, typeSize: 4 },
  f16: { id: 1, blockSize: 1, typeSize: 2 },
  q4_0: { id: 2, blockSize: 32, typeSize: 18 },
  q4_1: { id: 3, blockSize: 32, typeSize: 20 },
  q5_0: { id: 6, blockSize: 32, typeSize: 22 },
  q5_1: { id: 7, blockSize: 32, typeSize: 24 },
  q8_0: { id: 8, blockSize: 32, typeSize: 34 },
  q2_k: { id: 10, blockSize: 256, typeSize: 84 },
  q3_k: { id: 11, blockSize: 256, typeSize: 110 },
  q4_k: { id: 12, blockSize: 256, typeSize: 144 },
  q5_k: { id: 13, blockSize: 256, typeSize: 176 },
  q6_k: { id: 14, blockSize: 256, typeSize: 210 },
  iq4_nl: { id: 20, blockSize: 32, typeSize: 18 },
  iq4_xs: { id: 23, blockSize: 256, typeSize: 136 },
  bf16: { id: 30, blockSize: 1, typeSize: 2 },
} as const;
export type TensorTypeName = keyof typeof tensorTypes;

// Bytes of a tensor of `type` with dims `ne`; throws when ne[0] is not a multiple of the block size.
export function tensorByteSize(type: TensorTypeName, ne: readonly number[]): number {
  const t = tensorTypes[type];
  const n = ne.reduce((a, b) => a * b, 1);
  if ((ne[0] ?? 0) % t.blockSize !== 0) throw new Error(`ne[0]=${ne[0]} is not a multiple of ${t.blockSize} for ${type}`);
  return (n / t.blockSize) * t.typeSize;
}

// ---- byte buffer ----------------------------------------------------------------------------------

// A growable little-endian byte sink.
export class ByteSink {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.length + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): this { this.reserve(1); this.view.setUint8(this.length, v); this.length += 1; return this; }
  i8(v: number): this { this.reserve(1); this.view.setInt8(this.length, v); this.length += 1; return this; }
  u16(v: number): this { this.reserve(2); this.view.setUint16(this.length, v, true); this.length += 2; return this; }
  i16(v: number): this { this.reserve(2); this.view.setInt16(this.length, v, true); this.length += 2; return this; }
  u32(v: number): this { this.reserve(4); this.view.setUint32(this.length, v, true); this.length += 4; return this; }
  i32(v: number): this { this.reserve(4); this.view.setInt32(this.length, v, true); this.length += 4; return this; }
  u64(v: number | bigint): this {
    this.reserve(8); this.view.setBigUint64(this.length, BigInt(v), true); this.length += 8; return this;
  }
  i64(v: number | bigint): this {
    this.reserve(8); this.view.setBigInt64(this.length, BigInt(v), true); this.length += 8; return this;
  }
  f32(v: number): this { this.reserve(4); this.view.setFloat32(this.length, v, true); this.length += 4; return this; }
  f64(v: number): this { this.reserve(8); this.view.setFloat64(this.length, v, true); this.length += 8; return this; }
  bytes(b: Uint8Array): this { this.reserve(b.length); this.buf.set(b, this.length); this.length += b.length; return this; }
  // A GGUF string: u64 byte length, then the bytes (no terminator).
  string(s: string | Uint8Array): this {
    const b = typeof s === 'string' ? utf8.encode(s) : s;
    return this.u64(b.length).bytes(b);
  }
  pad(alignment: number): this {
    while (this.length % alignment !== 0) this.u8(0);
    return this;
  }
  toBytes(): Uint8Array { return this.buf.slice(0, this.length); }
}

const utf8 = new TextEncoder();

// Encodes a value's payload (not its type tag).
export function writeValue(out: ByteSink, v: GGUFValue): void {
  switch (v.type) {
    case 'u8': out.u8(v.value); break;
    case 'i8': out.i8(v.value); break;
    case 'u16': out.u16(v.value); break;
    case 'i16': out.i16(v.value); break;
    case 'u32': out.u32(v.value); break;
    case 'i32': out.i32(v.value); break;
    case 'u64': out.u64(v.value); break;
    case 'i64': out.i64(v.value); break;
    case 'f32': out.f32(v.value); break;
    case 'f64': out.f64(v.value); break;
    case 'bool': out.u8(v.value ? 1 : 0); break;
    case 'string': out.string(v.value); break;
    case 'array':
      out.u32(valueTypeIds[v.elemType]).u64(v.elems.length);
      for (const e of v.elems) {
        if (e.type !== v.elemType) throw new Error(`array of ${v.elemType} holds a ${e.type}`);
        writeValue(out, e);
      }
      break;
  }
}

// ---- the writer -----------------------------------------------------------------------------------

export interface TensorEntry {
  name: string;
  type: TensorTypeName;
  ne: number[];          // ggml order, 1..4 dims
  data: Uint8Array;      // exactly tensorByteSize(type, ne) bytes
}

// Knobs to produce deliberately broken files (malformed-file tests); all default to a valid file.
export interface WriteOverrides {
  magic?: Uint8Array;           // 4 bytes instead of "GGUF"
  version?: number;             // instead of 3
  nTensors?: bigint;            // header count instead of the real one
  nKv?: bigint;
  extraKvBytes?: Uint8Array[];             // raw serialized entries appended after the metadata (counted)
  tensorTypeId?: Record<string, number>;   // per tensor name: raw type id to write
  tensorOffset?: Record<string, bigint>;   // per tensor name: offset to write (data still laid out normally)
  tensorDims?: Record<string, bigint[]>;   // per tensor name: dims to write
}

export class GGUFWriter {
  readonly metadata = new Map<string, GGUFValue>();
  readonly tensors: TensorEntry[] = [];

  constructor(readonly alignment = 32) {
    if (alignment <= 0 || (alignment & (alignment - 1)) !== 0) throw new Error(`alignment ${alignment} is not a power of two`);
    if (alignment !== 32) this.metadata.set('general.alignment', gv.u32(alignment));
  }

  // Sets (or replaces) a metadata entry; insertion order is kept in the file.
  set(key: string, value: GGUFValue): this {
    this.metadata.set(key, value);
    return this;
  }

  addTensor(name: string, type: TensorTypeName, ne: number[], data: Uint8Array): this {
    if (ne.length < 1 || ne.length > 4) throw new Error(`tensor ${name}: ${ne.length} dims (expected 1..4)`);
    const expected = tensorByteSize(type, ne);
    if (data.length !== expected) throw new Error(`tensor ${name}: ${data.length} bytes, expected ${expected}`);
    if (this.tensors.some((t) => t.name === name)) throw new Error(`tensor ${name} added twice`);
    this.tensors.push({ name, type, ne: [...ne], data });
    return this;
  }

  toBytes(o: WriteOverrides = {}): Uint8Array {
    const out = new ByteSink();
    out.bytes(o.magic ?? utf8.encode('GGUF')).u32(o.version ?? 3);
    const extra = o.extraKvBytes ?? [];
    out.u64(o.nTensors ?? BigInt(this.tensors.length)).u64(o.nKv ?? BigInt(this.metadata.size + extra.length));
    for (const [key, value] of this.metadata) {
      out.string(key).u32(valueTypeIds[value.type]);
      writeValue(out, value);
    }
    for (const raw of extra) out.bytes(raw);
    let offset = 0;
    const offsets: number[] = [];
    for (const t of this.tensors) {
      offsets.push(offset);
      const dims = o.tensorDims?.[t.name] ?? t.ne.map(BigInt);
      out.string(t.name).u32(dims.length);
      for (const d of dims) out.u64(d);
      out.u32(o.tensorTypeId?.[t.name] ?? tensorTypes[t.type].id);
      out.u64(o.tensorOffset?.[t.name] ?? BigInt(offset));
      offset += t.data.length;
      offset += (this.alignment - (offset % this.alignment)) % this.alignment;
    }
    if (this.tensors.length > 0) out.pad(this.alignment);
    this.tensors.forEach((t, i) => {
      out.bytes(t.data);
      // Zero padding up to the next tensor's aligned offset (none after the last tensor).
      const gap = i + 1 < offsets.length ? offsets[i + 1]! - offsets[i]! - t.data.length : 0;
      for (let k = 0; k < gap; k++) out.u8(0);
    });
    return out.toBytes();
  }

  async writeFile(path: string, o: WriteOverrides = {}): Promise<void> {
    await writeFile(path, this.toBytes(o));
  }
}

export { randomTensorData, makeRng, f32ToF16Bits, f32ToBf16Bits } from './weights.js';
