// A small GGUF (v2/v3) metadata reader in TypeScript: header, metadata and tensor infos, no tensor
// data. It exists to copy metadata (e.g. a real tokenizer) into synthetic models written by
// gguf-writer.ts, and to inspect what the writer produced. Not hardened: trusted inputs only.
import { readFileSync } from 'node:fs';
import { GGUFWriter, valueTypeIds, type GGUFValue, type ValueTypeName } from './gguf-writer.js';

export interface GGUFTensorInfo {
  name: string;
  ne: bigint[];
  typeId: number;
  offset: bigint;     // relative to dataOffset
}

export interface GGUFMetadataFile {
  version: number;
  metadata: Map<string, GGUFValue>;
  tensors: GGUFTensorInfo[];
  dataOffset: number;  // absolute offset of the data section
}

const typeNames = Object.fromEntries(Object.entries(valueTypeIds).map(([k, v]) => [v, k])) as Record<number, ValueTypeName>;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

class Cursor {
  pos = 0;
  private readonly view: DataView;
  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  private take(n: number): number {
    if (this.pos + n > this.buf.length) throw new Error(`GGUF truncated at offset ${this.pos} (need ${n} bytes)`);
    const at = this.pos;
    this.pos += n;
    return at;
  }
  u8() { return this.view.getUint8(this.take(1)); }
  i8() { return this.view.getInt8(this.take(1)); }
  u16() { return this.view.getUint16(this.take(2), true); }
  i16() { return this.view.getInt16(this.take(2), true); }
  u32() { return this.view.getUint32(this.take(4), true); }
  i32() { return this.view.getInt32(this.take(4), true); }
  u64() { return this.view.getBigUint64(this.take(8), true); }
  i64() { return this.view.getBigInt64(this.take(8), true); }
  f32() { return this.view.getFloat32(this.take(4), true); }
  f64() { return this.view.getFloat64(this.take(8), true); }
  // Strings that are valid UTF-8 come back as string, others as their raw bytes (so copies are exact).
  string(): string | Uint8Array {
    const len = Number(this.u64());
    const at = this.take(len);
    const b = this.buf.subarray(at, at + len);
    try {
      return strictUtf8.decode(b);
    } catch {
      return b.slice();
    }
  }
}

function typeName(id: number): ValueTypeName {
  const name = typeNames[id];
  if (!name) throw new Error(`unknown GGUF value type ${id}`);
  return name;
}

function readValue(c: Cursor, type: ValueTypeName): GGUFValue {
  switch (type) {
    case 'u8': return { type, value: c.u8() };
    case 'i8': return { type, value: c.i8() };
    case 'u16': return { type, value: c.u16() };
    case 'i16': return { type, value: c.i16() };
    case 'u32': return { type, value: c.u32() };
    case 'i32': return { type, value: c.i32() };
    case 'f32': return { type, value: c.f32() };
    case 'f64': return { type, value: c.f64() };
    case 'u64': return { type, value: c.u64() };
    case 'i64': return { type, value: c.i64() };
    case 'bool': return { type, value: c.u8() !== 0 };
    case 'string': return { type, value: c.string() };
    case 'array': {
      const elemType = typeName(c.u32());
      const n = Number(c.u64());
      const elems: GGUFValue[] = [];
      for (let i = 0; i < n; i++) elems.push(readValue(c, elemType));
      return { type, elemType, elems };
    }
  }
}

export function readGGUFMetadata(bytes: Uint8Array): GGUFMetadataFile {
  const c = new Cursor(bytes);
  const magic = String.fromCharCode(c.u8(), c.u8(), c.u8(), c.u8());
  if (magic !== 'GGUF') throw new Error(`not a GGUF file (magic ${JSON.stringify(magic)})`);
  const version = c.u32();
  if (version !== 2 && version !== 3) throw new Error(`unsupported GGUF version ${version}`);
  const nTensors = Number(c.u64());
  const nKv = Number(c.u64());
  const metadata = new Map<string, GGUFValue>();
  for (let i = 0; i < nKv; i++) {
    const key = c.string();
    if (typeof key !== 'string') throw new Error(`metadata key #${i} is not valid UTF-8`);
    metadata.set(key, readValue(c, typeName(c.u32())));
  }
  const tensors: GGUFTensorInfo[] = [];
  for (let i = 0; i < nTensors; i++) {
    const name = c.string();
    const nDims = c.u32();
    const ne: bigint[] = [];
    for (let d = 0; d < nDims; d++) ne.push(c.u64());
    tensors.push({ name: typeof name === 'string' ? name : `#${i}`, ne, typeId: c.u32(), offset: c.u64() });
  }
  const alignEntry = metadata.get('general.alignment');
  const alignment = alignEntry && alignEntry.type !== 'array' && typeof alignEntry.value === 'number' ? alignEntry.value : 32;
  const dataOffset = Math.ceil(c.pos / alignment) * alignment;
  return { version, metadata, tensors, dataOffset };
}

export function readGGUFMetadataFile(path: string): GGUFMetadataFile {
  return readGGUFMetadata(readFileSync(path));
}

// Copies every metadata entry whose key starts with one of `prefixes` (default: the tokenizer.ggml.*
// vocabulary; add 'tokenizer.chat_template' for the template) from the GGUF at `srcPath` into `writer`.
// Returns the keys copied.
export function copyTokenizerMetadata(srcPath: string, writer: GGUFWriter, prefixes: string[] = ['tokenizer.ggml.']): string[] {
  const src = readGGUFMetadataFile(srcPath);
  const copied: string[] = [];
  for (const [key, value] of src.metadata) {
    if (prefixes.some((p) => key.startsWith(p))) {
      writer.set(key, value);
      copied.push(key);
    }
  }
  return copied;
}
