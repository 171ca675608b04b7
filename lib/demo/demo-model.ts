// NOTE(demo/demo-model): the built-in demo model `tokenmill serve` runs without --model. It is made
// here, by our own GGUF writer, from a fixed seed: a 2-layer llama with random F16 weights (its text is
// meaningless), a byte-level BPE vocabulary (the 256 GPT-2 byte tokens, a few merges) with ChatML's
// special tokens, and a ChatML chat template, so a fresh install answers chat requests with no files
// from elsewhere. The same seed gives the same file on every machine.
import fs from 'node:fs';
import path from 'node:path';
import { GGUFWriter, gv } from '../gguf/writer.js';
import { makeRng, randomTensorData } from '../gguf/weights.js';

export const DEMO_MODEL_NAME = 'demo';

/** models/demo.gguf in the package root (lib/demo and dist/demo are both two levels below it). */
export function demoModelPath(): string {
  return path.resolve(__dirname, '..', '..', 'models', `${DEMO_MODEL_NAME}.gguf`);
}

export const CHATML_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

const TOKEN_NORMAL = 1;
const TOKEN_CONTROL = 3;
const WORDS = ['the', 'and', 'you', 'hello', 'world', 'what', 'is', 'it', 'tokenmill', 'model', 'demo'];

/** GPT-2's bytes_to_unicode: every byte as one printable character. */
function byteChars(): string[] {
  const keep = new Set<number>();
  for (let b = 33; b <= 126; b++) keep.add(b);
  for (let b = 161; b <= 172; b++) keep.add(b);
  for (let b = 174; b <= 255; b++) keep.add(b);
  const out: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) out.push(keep.has(b) ? String.fromCodePoint(b) : String.fromCodePoint(256 + extra++));
  return out;
}

function vocabulary(): { tokens: string[]; types: number[]; merges: string[]; specials: Record<string, number> } {
  const tokens = byteChars();
  const known = new Set(tokens);
  const merges: string[] = [];
  // Each word merges left to right from 'Ġ' + its first letter, so every merge's parts exist before it.
  for (const word of WORDS) {
    let left = 'Ġ';
    for (const ch of word) {
      const next = left + ch;
      if (!known.has(next)) {
        merges.push(`${left} ${ch}`);
        known.add(next);
        tokens.push(next);
      }
      left = next;
    }
  }
  const types = tokens.map(() => TOKEN_NORMAL);
  const specials: Record<string, number> = {};
  for (const s of ['<|endoftext|>', '<|im_start|>', '<|im_end|>']) {
    specials[s] = tokens.length;
    tokens.push(s);
    types.push(TOKEN_CONTROL);
  }
  return { tokens, types, merges, specials };
}

/** The demo model as GGUF bytes (deterministic). */
export function buildDemoModel(): Uint8Array {
  const nEmbd = 64, nLayer = 2, nHead = 4, nHeadKv = 2, nFf = 128, nCtx = 2048;
  const headDim = nEmbd / nHead;
  const rng = makeRng(20260101);
  const w = new GGUFWriter();
  w.set('general.architecture', gv.string('llama'));
  w.set('general.name', gv.string('tokenmill demo (random weights)'));
  w.set('general.file_type', gv.u32(1));
  w.set('llama.context_length', gv.u32(nCtx));
  w.set('llama.embedding_length', gv.u32(nEmbd));
  w.set('llama.block_count', gv.u32(nLayer));
  w.set('llama.feed_forward_length', gv.u32(nFf));
  w.set('llama.attention.head_count', gv.u32(nHead));
  w.set('llama.attention.head_count_kv', gv.u32(nHeadKv));
  w.set('llama.attention.layer_norm_rms_epsilon', gv.f32(1e-5));
  w.set('llama.rope.freq_base', gv.f32(10000));
  w.set('llama.rope.dimension_count', gv.u32(headDim));
  const v = vocabulary();
  w.set('tokenizer.ggml.model', gv.string('gpt2'));
  w.set('tokenizer.ggml.pre', gv.string('gpt-2'));
  w.set('tokenizer.ggml.tokens', gv.array('string', v.tokens));
  w.set('tokenizer.ggml.token_type', gv.array('i32', v.types));
  w.set('tokenizer.ggml.merges', gv.array('string', v.merges));
  w.set('tokenizer.ggml.bos_token_id', gv.u32(v.specials['<|endoftext|>']!));
  w.set('tokenizer.ggml.eos_token_id', gv.u32(v.specials['<|im_end|>']!));
  w.set('tokenizer.ggml.padding_token_id', gv.u32(v.specials['<|endoftext|>']!));
  w.set('tokenizer.ggml.add_bos_token', gv.bool(false));
  w.set('tokenizer.ggml.add_eos_token', gv.bool(false));
  w.set('tokenizer.chat_template', gv.string(CHATML_TEMPLATE));

  const nVocab = v.tokens.length;
  const matrix = (name: string, nIn: number, nOut: number): void => {
    w.addTensor(name, 'f16', [nIn, nOut], randomTensorData('f16', [nIn, nOut], rng, 1 / Math.sqrt(nIn)));
  };
  const ones = (name: string, n: number): void => {
    w.addTensor(name, 'f32', [n], new Uint8Array(new Float32Array(n).fill(1).buffer));
  };
  matrix('token_embd.weight', nEmbd, nVocab);
  for (let il = 0; il < nLayer; il++) {
    const p = `blk.${il}.`;
    ones(`${p}attn_norm.weight`, nEmbd);
    matrix(`${p}attn_q.weight`, nEmbd, nHead * headDim);
    matrix(`${p}attn_k.weight`, nEmbd, nHeadKv * headDim);
    matrix(`${p}attn_v.weight`, nEmbd, nHeadKv * headDim);
    matrix(`${p}attn_output.weight`, nHead * headDim, nEmbd);
    ones(`${p}ffn_norm.weight`, nEmbd);
    matrix(`${p}ffn_gate.weight`, nEmbd, nFf);
    matrix(`${p}ffn_up.weight`, nEmbd, nFf);
    matrix(`${p}ffn_down.weight`, nFf, nEmbd);
  }
  ones('output_norm.weight', nEmbd);
  matrix('output.weight', nEmbd, nVocab);
  return w.toBytes();
}

/** Writes the demo model to `file` (default demoModelPath()) atomically; returns the path. */
export function writeDemoModel(file: string = demoModelPath()): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, buildDemoModel());
  fs.renameSync(tmp, file);
  return file;
}
