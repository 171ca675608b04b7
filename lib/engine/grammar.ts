// Grammar: a GBNF grammar compiled for one model's vocabulary (native/grammar/README.md describes the
// dialect). Pass it as GenerateRequest.grammar to constrain a request's output; one compiled grammar may
// serve any number of requests at once (each choice keeps its own matching state).
import { native } from '../native/load.js';
import type { NativeGrammar } from '../native/types.js';
import { fromNative, InvalidArgumentError } from './errors.js';
import type { Model } from './model.js';

export class Grammar {
  /** The GBNF text it was compiled from. */
  readonly text: string;
  readonly #native: NativeGrammar;

  private constructor(handle: NativeGrammar, text: string) {
    this.#native = handle;
    this.text = text;
  }

  /**
   * Compiles GBNF text for `model`'s vocabulary. Throws GrammarError (code 'grammar_invalid', with the
   * 1-based line and column) when the text does not parse or names an undefined rule, lacks `root`, or
   * is left-recursive.
   */
  static compile(model: Model, text: string): Grammar {
    if (typeof text !== 'string') {
      throw new InvalidArgumentError(`Expected a string for grammar but received ${text === null ? 'null' : typeof text}`, 'invalid_argument', 400);
    }
    try {
      return new Grammar(native().compileGrammar(model.handle, text), text);
    } catch (error) {
      throw fromNative(error);
    }
  }

  /** @internal the addon handle, for requests. */
  get handle(): NativeGrammar {
    return this.#native;
  }
}
