// Seeded random Unicode strings for tokenizer parity tests: ASCII words, runs of spaces/newlines/tabs,
// digits, punctuation, accented Latin, CJK, emoji (ZWJ sequences and skin tones included), combining
// marks, Arabic/Hebrew, and random code points from every plane (surrogates excluded).
import { makeRng } from './gguf-weights.js';

const WORDS = ['the', 'Hello', 'world', 'tokenizer', "don't", "I'm", 'café', 'naïve', 'über', 'CamelCase', 'snake_case', 'x'];
const PUNCT = [...'.,;:!?()[]{}<>"\'`~@#$%^&*-_=+/\\|'];
const ACCENTED = [...'àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿĀāĂăĄąŒœŠšŸŽžßÆ'];
const CJK = [...'日本語中文字漢字한국어テストひらがなカタカナ你好世界'];
const EMOJI = ['😀', '🦙', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', '❤️', '🇫🇷', '🧑‍💻', '✨'];
const COMBINING = ['\u0301', '\u0300', '\u0308', '\u0327', '\u20dd', '\u0338'];
const RTL = [...'مرحبا بالعالم', ...'שלום עולם'];
const WS = [' ', '  ', '   ', '\n', '\n\n', '\t', ' \n ', '\r\n', '\u00a0', '\u3000'];

export function randomCodePoint(rng: () => number): string {
  for (;;) {
    const plane = rng() < 0.7 ? 0 : Math.floor(rng() * 17);
    const cp = plane * 0x10000 + Math.floor(rng() * 0x10000);
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    return String.fromCodePoint(cp);
  }
}

// `count` strings of 1..maxParts random pieces each, reproducible from `seed`.
export function randomTexts(count: number, seed: number, maxParts = 12): string[] {
  const rng = makeRng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
  const piece = (): string => {
    switch (Math.floor(rng() * 11)) {
      case 0: case 1: return pick(WORDS);
      case 2: return pick(WS);
      case 3: return String(Math.floor(rng() * 10 ** (1 + Math.floor(rng() * 7))));
      case 4: return pick(PUNCT) + (rng() < 0.3 ? pick(PUNCT) : '');
      case 5: return pick(ACCENTED) + pick(ACCENTED);
      case 6: return pick(CJK) + pick(CJK);
      case 7: return pick(EMOJI);
      case 8: return pick(WORDS).slice(0, 2) + pick(COMBINING);
      case 9: return pick(RTL) + pick(RTL) + pick(RTL);
      default: return randomCodePoint(rng);
    }
  };
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(rng() * maxParts);
    let s = '';
    for (let k = 0; k < n; k++) s += piece();
    out.push(s);
  }
  return out;
}
