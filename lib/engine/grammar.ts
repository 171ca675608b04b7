// Grammar: a GBNF grammar compiled for one model's vocabulary (native/grammar/README.md describes the
// dialect). Pass it as GenerateRequest.grammar to constrain a request's output; one compiled grammar may
// serve any number of requests at once (each choice keeps its own matching state).
//
// NOTE(engine/grammar): compiling runs on a libuv worker (the first grammar of a vocabulary builds its
// byte trie), so compile() returns a Promise and never blocks the event loop. Compiled grammars are
// immutable, so each model keeps the last GRAMMAR_CACHE_SIZE of them by text (an LRU of promises:
// concurrent compiles of one text share one native compile; a failed compile is not kept).
import type { NativeAddon, NativeGrammar, NativeModel } from '../native/types.js';
import { fromNative, InvalidArgumentError } from './errors.js';

/** How many compiled grammars each model keeps (by text) for repeated response_format schemas. */
export const GRAMMAR_CACHE_SIZE = 32;

/** What Grammar.compile needs of a model: its addon handle and its grammar cache. */
export interface GrammarHost {
  readonly handle: NativeModel;
  /** @internal the addon variant that owns handle */
  readonly addon: NativeAddon;
  /** @internal */
  readonly grammarCache: GrammarCache;
}

export class Grammar {
  /** The GBNF text it was compiled from. */
  readonly text: string;
  readonly #native: NativeGrammar;

  private constructor(handle: NativeGrammar, text: string) {
    this.#native = handle;
    this.text = text;
  }

  /**
   * Compiles GBNF text for `model`'s vocabulary off the JS thread. Rejects with GrammarError (code
   * 'grammar_invalid', with the 1-based line and column) when the text does not parse or names an
   * undefined rule, lacks `root`, or is left-recursive. The same text compiled again for the same model
   * resolves to the same (cached, immutable) Grammar while it is among the model's last 32.
   */
  static compile(model: GrammarHost, text: string): Promise<Grammar> {
    if (typeof text !== 'string') {
      return Promise.reject(new InvalidArgumentError(`Expected a string for grammar but received ${text === null ? 'null' : typeof text}`, 'invalid_argument', 400));
    }
    const cache = model.grammarCache;
    const hit = cache.get(text);
    if (hit) return hit;
    const pending = Grammar.#compileNative(model, text);
    cache.set(text, pending);
    // Only successes stay: a failed text is forgotten (if it is still the entry) once it settles.
    pending.catch(() => cache.delete(text, pending));
    return pending;
  }

  static async #compileNative(model: GrammarHost, text: string): Promise<Grammar> {
    const callSite = new Error();
    try {
      return new Grammar(await model.addon.compileGrammar(model.handle, text), text);
    } catch (error) {
      throw fromNative(error, callSite);
    }
  }

  /** @internal the addon handle, for requests. */
  get handle(): NativeGrammar {
    return this.#native;
  }
}

/** @internal An LRU of compile promises keyed by grammar text (one per model). */
export class GrammarCache {
  readonly #entries = new Map<string, Promise<Grammar>>();
  readonly capacity: number;

  constructor(capacity = GRAMMAR_CACHE_SIZE) {
    this.capacity = capacity;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(text: string): Promise<Grammar> | undefined {
    const hit = this.#entries.get(text);
    if (hit) {
      // Map keeps insertion order: re-inserting makes this the most recently used entry.
      this.#entries.delete(text);
      this.#entries.set(text, hit);
    }
    return hit;
  }

  set(text: string, value: Promise<Grammar>): void {
    this.#entries.delete(text);
    this.#entries.set(text, value);
    while (this.#entries.size > this.capacity) {
      this.#entries.delete(this.#entries.keys().next().value as string);
    }
  }

  /** Removes `text` only while it still maps to `value` (a newer compile of it stays). */
  delete(text: string, value: Promise<Grammar>): void {
    if (this.#entries.get(text) === value) this.#entries.delete(text);
  }

  clear(): void {
    this.#entries.clear();
  }
}
