// The shared tokenizer test vectors (llama.cpp's test-tokenizer-0 format): `<vocab>.gguf.inp` holds
// strings separated by "\n__ggml_vocab_test__\n", `<vocab>.gguf.out` one line of token ids per string,
// tokenized with add_special = false, parse_special = false. bert-bge (WordPiece) is not supported.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { vocabDir } from './shared.js';

export const vocabFiles: string[] = readdirSync(vocabDir)
  .filter((f) => f.endsWith('.gguf') && !f.includes('bert-bge'))
  .sort()
  .map((f) => path.join(vocabDir, f));

export interface VocabVector { text: string; ids: number[] }

export function vocabVectors(vocabPath: string): VocabVector[] {
  const SEP = '\n__ggml_vocab_test__\n';
  const inp = readFileSync(vocabPath + '.inp', 'utf8');
  const texts = inp.split(SEP);
  if (texts[texts.length - 1] === '') texts.pop();
  const lines = readFileSync(vocabPath + '.out', 'utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines.length !== texts.length) throw new Error(`${vocabPath}: ${texts.length} inputs but ${lines.length} outputs`);
  return texts.map((text, i) => ({ text, ids: lines[i]!.trim() === '' ? [] : lines[i]!.trim().split(/\s+/).map(Number) }));
}
