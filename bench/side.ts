// What the harness asks of each implementation. Both sides time the same things the same way, so
// each ratio compares like with like:
//   prefill    wall time of processing one prompt (tokenmill: submit → first token of a 1-token
//              generation; llama.cpp: evaluateWithoutGeneratingNewTokens), prompt tokens / seconds;
//   decode     one stream, greedy: time from the first generated token to the last, (n - 1) / seconds
//              (so the prompt and the first sample are outside the window);
//   aggregate  `streams` concurrent streams, greedy, each `n` tokens after a short prompt: all generated
//              tokens / wall time from the first submit to the last token (includes the small prompts);
//   shared prefix  `questions.length` concurrent requests, each the same long system prompt followed by
//              its own short question: wall time from the first submit until every request has its
//              first token. tokenmill computes the shared blocks once (prefix caching on for this row);
//              llama.cpp, through node-llama-cpp, evaluates each sequence's whole prompt.

export type Sampling = 'greedy' | 'full';

/** All sampling processors on (fixed values, identical on both sides where both have the processor). */
export const fullSampling = {
  temperature: 0.8,
  topK: 40,
  topP: 0.95,
  minP: 0.05,
  repetitionPenalty: 1.1,
  frequencyPenalty: 0.5,
  presencePenalty: 0.5,
  /** Number of logit-bias entries (random token ids, bias in [-5, 5]). */
  logitBiasEntries: 16,
  seed: 1234,
} as const;

export interface DecodeResult {
  /** Tokens generated inside the timed window. */
  tokens: number;
  seconds: number;
}

export interface Side {
  readonly name: 'tokenmill' | 'llamacpp';
  /** Seconds to process `prompt` (the prompt is never a prefix of an earlier one). */
  prefill(prompt: number[]): Promise<number>;
  /** Single-stream decode of `n` tokens after `prompt` with the given sampling. */
  decode(prompt: number[], n: number, sampling: Sampling): Promise<DecodeResult>;
  /** Concurrent greedy decode, one stream per prompt, `n` tokens each. */
  aggregate(prompts: number[][], n: number): Promise<DecodeResult>;
  /** Seconds until each of the concurrent requests `system ++ question` has produced its first token. */
  sharedPrefix(system: number[], questions: number[][]): Promise<number>;
  close(): Promise<void>;
}

/** Logit-bias entries used by the 'full' sampling setting: deterministic per vocabulary size. */
export function logitBiasEntries(vocabSize: number, r: () => number): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < fullSampling.logitBiasEntries; i++) {
    out.push([Math.floor(r() * vocabSize), Math.round((r() * 10 - 5) * 100) / 100]);
  }
  return out;
}
