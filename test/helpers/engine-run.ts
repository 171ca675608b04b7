// Helpers for engine tests: collect a generation, make deterministic prompts.
import type { Engine, GenerateEvent, GenerateRequest } from '../../lib/index.js';

export interface Collected {
  tokens: number[];
  text: string;
  events: GenerateEvent[];
  last: GenerateEvent;
}

export async function collect(engine: Engine, request: GenerateRequest, signal?: AbortSignal): Promise<Collected> {
  const events: GenerateEvent[] = [];
  for await (const ev of engine.generate(request, { signal })) events.push(ev);
  const last = events[events.length - 1];
  if (!last) throw new Error('generation produced no events');
  return { tokens: events.flatMap((e) => e.tokenIds), text: events.map((e) => e.text).join(''), events, last };
}

// Tokens of each of a request's n choices, from its events.
export function tokensByChoice(events: GenerateEvent[], n: number): number[][] {
  const out = Array.from({ length: n }, () => [] as number[]);
  for (const ev of events) out[ev.index]!.push(...ev.tokenIds);
  return out;
}

// Deterministic pseudo-random prompts over a vocabulary (token 0..2 are special in stories260K: skip them).
export function prompts(count: number, minLen: number, maxLen: number, vocab: number, seed = 1): number[][] {
  let s = seed >>> 0;
  const next = (): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s;
  };
  return Array.from({ length: count }, () => {
    const len = minLen + (next() % (maxLen - minLen + 1));
    return [1, ...Array.from({ length: len - 1 }, () => 3 + (next() % (vocab - 3)))];
  });
}

// Polls a condition no event reports (a prompt in the middle of its prefill sends nothing). Anything a
// record reports needs no wait: the engine hands a record over only after the stats show its effect.
export async function waitFor(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 2));
  }
}
