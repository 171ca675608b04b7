// Built-in small vocabularies for synthetic models: a SentencePiece-style one ('spm': llama tokenizer with
// <0xXX> byte fallback) and a GPT-2 byte-level BPE one ('bpe'). Both are a few hundred tokens so that the
// output matrix stays tiny; both load in tokenmill and in llama.cpp (which needs the byte tokens for its
// newline token and, for BPE, a merges array).
import { gv, type GGUFWriter } from '../test/helpers/gguf-writer.js';

// llama.cpp token types (llama_token_type): what each vocabulary entry is.
const TOKEN_NORMAL = 1, TOKEN_UNKNOWN = 2, TOKEN_CONTROL = 3, TOKEN_BYTE = 6;

// Common English words; SPM pieces get the '▁' word-start marker, BPE tokens the 'Ġ' one.
const WORDS = [
  'the', 'and', 'a', 'to', 'of', 'in', 'is', 'was', 'he', 'she', 'it', 'that', 'on', 'for', 'with', 'as',
  'they', 'at', 'one', 'day', 'time', 'upon', 'once', 'there', 'little', 'girl', 'boy', 'named', 'tom',
  'lily', 'big', 'dog', 'cat', 'happy', 'play', 'friends', 'best', 'were', 'had', 'said', 'saw', 'went',
  'hello', 'world', 'you', 'are', 'how', 'what',
];

export type BuiltinVocab = 'spm' | 'bpe';

// Writes the tokenizer.* metadata of a built-in vocabulary into `w`; returns the vocabulary size.
export function writeBuiltinVocab(w: GGUFWriter, kind: BuiltinVocab): number {
  return kind === 'spm' ? writeSpm(w) : writeBpe(w);
}

function writeSpm(w: GGUFWriter): number {
  const tokens: string[] = ['<unk>', '<s>', '</s>'];
  const types: number[] = [TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_CONTROL];
  const scores: number[] = [0, 0, 0];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(TOKEN_BYTE);
    scores.push(0);
  }
  // Pieces: '▁', single letters, then whole words and their '▁'-prefixed forms. A piece's score is its
  // merge priority (higher merges first): longer pieces win.
  const pieces = new Set<string>(['▁']);
  for (let c = 97; c <= 122; c++) pieces.add(String.fromCharCode(c));
  for (const word of WORDS) {
    for (let i = 2; i <= word.length; i++) pieces.add(word.slice(0, i));
    pieces.add('▁' + word);
  }
  for (const p of pieces) {
    tokens.push(p);
    types.push(TOKEN_NORMAL);
    scores.push(-1000 + [...p].length * 10 - tokens.length * 1e-3);
  }
  w.set('tokenizer.ggml.model', gv.string('llama'));
  w.set('tokenizer.ggml.tokens', gv.array('string', tokens));
  w.set('tokenizer.ggml.scores', gv.array('f32', scores));
  w.set('tokenizer.ggml.token_type', gv.array('i32', types));
  w.set('tokenizer.ggml.bos_token_id', gv.u32(1));
  w.set('tokenizer.ggml.eos_token_id', gv.u32(2));
  w.set('tokenizer.ggml.unknown_token_id', gv.u32(0));
  w.set('tokenizer.ggml.add_bos_token', gv.bool(true));
  w.set('tokenizer.ggml.add_eos_token', gv.bool(false));
  return tokens.length;
}

// GPT-2's byte → printable character map (bytes_to_unicode).
function byteChars(): string[] {
  const keep: number[] = [];
  for (let b = 33; b <= 126; b++) keep.push(b);
  for (let b = 161; b <= 172; b++) keep.push(b);
  for (let b = 174; b <= 255; b++) keep.push(b);
  const out: string[] = new Array(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    out[b] = keep.includes(b) ? String.fromCodePoint(b) : String.fromCodePoint(256 + extra++);
  }
  return out;
}

function writeBpe(w: GGUFWriter): number {
  const chars = byteChars();
  const tokens: string[] = [...chars];
  const types: number[] = tokens.map(() => TOKEN_NORMAL);
  const known = new Set(tokens);
  const merges: string[] = [];
  // Each word merges left to right ('Ġ' + first letter, then one letter at a time), so every prefix is
  // a token and every merge's parts exist before it.
  for (const word of WORDS) {
    let left = 'Ġ' + word[0]!;
    if (!known.has(left)) {
      merges.push(`Ġ ${word[0]}`);
      known.add(left);
      tokens.push(left);
      types.push(TOKEN_NORMAL);
    }
    for (const ch of word.slice(1)) {
      const next = left + ch;
      if (!known.has(next)) {
        merges.push(`${left} ${ch}`);
        known.add(next);
        tokens.push(next);
        types.push(TOKEN_NORMAL);
      }
      left = next;
    }
  }
  const eot = tokens.length;
  tokens.push('<|endoftext|>');
  types.push(TOKEN_CONTROL);
  w.set('tokenizer.ggml.model', gv.string('gpt2'));
  w.set('tokenizer.ggml.pre', gv.string('gpt-2'));
  w.set('tokenizer.ggml.tokens', gv.array('string', tokens));
  w.set('tokenizer.ggml.token_type', gv.array('i32', types));
  w.set('tokenizer.ggml.merges', gv.array('string', merges));
  w.set('tokenizer.ggml.bos_token_id', gv.u32(eot));
  w.set('tokenizer.ggml.eos_token_id', gv.u32(eot));
  w.set('tokenizer.ggml.add_bos_token', gv.bool(false));
  w.set('tokenizer.ggml.add_eos_token', gv.bool(false));
  return tokens.length;
}
