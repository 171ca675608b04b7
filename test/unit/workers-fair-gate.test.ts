// FairGate: a client never holds more than its share of the slots, the others are served first, waiting
// work starts in FIFO order as slots free, too much waiting is refused with 429/503 and Retry-After, and
// waiting work whose signal aborts leaves the line without ever starting.
import { describe, expect, it } from 'vitest';
import { OverloadedError } from '../../lib/engine/errors.js';
import { FairGate } from '../../lib/workers/fair-gate.js';

const limits = { slots: 2, perClient: 1, waitingPerClient: 2, waitingTotal: 3, retryAfterSeconds: 2 };
const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(() => { done = true; }, () => { done = true; });
  await new Promise((r) => setImmediate(r));
  return done;
};

describe('FairGate', () => {
  it('one client holds at most perClient slots; another client takes the free one at once', async () => {
    const gate = new FairGate(limits, 'work');
    const a1 = await gate.acquire('a');
    const a2 = gate.acquire('a');
    expect(await settled(a2)).toBe(false);
    const b1 = await gate.acquire('b');
    expect(gate.stats()).toEqual({ running: 2, waiting: 1, refused: 0 });
    a1();
    a1(); // a second release changes nothing
    expect(await settled(a2)).toBe(true);
    expect(gate.stats()).toEqual({ running: 2, waiting: 0, refused: 0 });
    b1();
    (await a2)();
    expect(gate.stats()).toEqual({ running: 0, waiting: 0, refused: 0 });
  });

  it('a waiter blocked by its own cap does not hold back a later client\'s waiter (FIFO among eligible ones)', async () => {
    const gate = new FairGate(limits, 'work');
    const a = await gate.acquire('a');
    const b = await gate.acquire('b');
    const order: string[] = [];
    const a2 = gate.acquire('a').then((r) => { order.push('a2'); return r; });
    const c = gate.acquire('c').then((r) => { order.push('c'); return r; });
    b(); // a2 is still capped (a holds one): c goes first
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['c']);
    a();
    await a2;
    expect(order).toEqual(['c', 'a2']);
    (await c)();
    (await a2)();
  });

  it('refuses with 429 past waitingPerClient and 503 past waitingTotal, with Retry-After', async () => {
    const gate = new FairGate(limits, 'template work');
    await gate.acquire('a');
    await gate.acquire('b');
    void gate.acquire('a');
    void gate.acquire('a');
    const e429 = await gate.acquire('a').catch((e: unknown) => e);
    expect(e429).toBeInstanceOf(OverloadedError);
    expect(e429).toMatchObject({ status: 429, retryAfterSeconds: 2 });
    expect((e429 as Error).message).toMatch(/2 of this client's requests are already waiting for template work/);
    void gate.acquire('c');
    const e503 = await gate.acquire('d').catch((e: unknown) => e);
    expect(e503).toMatchObject({ status: 503, retryAfterSeconds: 2 });
    expect(gate.stats()).toEqual({ running: 2, waiting: 3, refused: 2 });
  });

  it('a waiter whose signal aborts leaves the line at once, never starts, and frees its place for others', async () => {
    const gate = new FairGate(limits, 'work');
    const a = await gate.acquire('a');
    const b = await gate.acquire('b');
    const ac = new AbortController();
    let started = false;
    const gone = gate.acquire('a', ac.signal).then((r) => { started = true; return r; });
    const c = gate.acquire('c');
    expect(gate.stats()).toEqual({ running: 2, waiting: 2, refused: 0 });
    ac.abort();
    await expect(gone).rejects.toMatchObject({ name: 'AbortError' });
    expect(gate.stats()).toEqual({ running: 2, waiting: 1, refused: 0 });
    // Its client's waiting count went back down too: two more of a's may wait again.
    const a3 = gate.acquire('a');
    const a4 = gate.acquire('a');
    expect(await settled(a4)).toBe(false);
    a();
    b();
    (await c)();
    (await a3)();
    (await a4)();
    expect(started).toBe(false);
    expect(gate.stats()).toEqual({ running: 0, waiting: 0, refused: 0 });
  });

  it('an already aborted signal: refused at once when the work would wait, started when a slot is free', async () => {
    const gate = new FairGate(limits, 'work');
    const reason = new Error('client left');
    const aborted = AbortSignal.abort(reason);
    const a = await gate.acquire('a', aborted);
    await expect(gate.acquire('a', aborted)).rejects.toBe(reason);
    expect(gate.stats()).toEqual({ running: 1, waiting: 0, refused: 0 });
    a();
  });
});
