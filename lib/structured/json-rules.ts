// NOTE(structured/json-rules): the fixed JSON rules (any value, strings, numbers, string formats) that
// schema grammars reference by name. Every rule for a complete JSON token ends with the whitespace rule
// `ws`, so a grammar is token (ws token)* (ws); with whitespace disabled the reference is simply left out.
// Numbers have at most 16 integer digits and 16 fraction digits (as llama.cpp bounds them) so a sampler
// cannot run on forever inside one number.
import { RuleSet } from './rule-set.js';

export const WS_RULE = 'ws';
// Bounded optional whitespace: one space, or one or two newlines and up to 20 spaces/tabs of indent.
export const DEFAULT_WS_BODY = '( " " | "\\n"{1,2} [ \\t]{0,20} )?';

// Rule bodies; `W` marks where the whitespace reference goes.
const BODIES: Record<string, string> = {
  value: 'object | array | string | number | boolean | null',
  object: '"{" W ( string ":" W value ( "," W string ":" W value )* )? "}" W',
  array: '"[" W ( value ( "," W value )* )? "]" W',
  string: '"\\"" char* "\\"" W',
  char: '[^"\\\\\\x7F\\x00-\\x1F] | "\\\\" ( ["\\\\/bfnrt] | "u" [0-9a-fA-F]{4} )',
  number: '"-"? integral-part ( "." decimal-part )? ( [eE] [+\\x2D]? decimal-part )? W',
  integer: '"-"? integral-part W',
  'integral-part': '"0" | [1-9] [0-9]{0,15}',
  'decimal-part': '[0-9]{1,16}',
  boolean: '( "true" | "false" ) W',
  null: '"null" W',
  // String formats: the content between the quotes.
  date: '[0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] )',
  time: '( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{1,9} )? ( "Z" | [+\\x2D] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] )',
  'date-time': 'date "T" time',
  uuid: '[0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12}',
  email: '[a-zA-Z0-9._%+\\x2D]+ "@" [a-zA-Z0-9\\x2D]+ ( "." [a-zA-Z0-9\\x2D]+ )+',
};

const DEPS: Record<string, string[]> = {
  value: ['object', 'array', 'string', 'number', 'boolean', 'null'],
  object: ['string', 'value'],
  array: ['value'],
  string: ['char'],
  number: ['integral-part', 'decimal-part'],
  integer: ['integral-part'],
  'date-time': ['date', 'time'],
};

/** Names only the fixed rules (and the whitespace rule) may use. */
export const FIXED_RULE_NAMES: ReadonlySet<string> = new Set([...Object.keys(BODIES), WS_RULE]);

export const STRING_FORMATS = ['date', 'time', 'date-time', 'uuid', 'email'] as const;

/** Fixed rules of one grammar, added on first use under their own names. */
export class JsonRules {
  constructor(private readonly rules: RuleSet, private readonly ws: boolean) {}

  /** The name of fixed rule `name`, adding it (and what it uses) to the grammar if needed. */
  use(name: string): string {
    const body = BODIES[name];
    if (body === undefined) throw new Error(`json-rules: no rule ${name}`);
    if (!this.rules.has(name)) {
      this.rules.addFixed(name, this.withWs(body));
      for (const dep of DEPS[name] ?? []) this.use(dep);
    }
    return name;
  }

  /** `body` with its W marks replaced by the whitespace reference (or dropped). */
  withWs(body: string): string {
    return body.replace(/ W\b/g, this.ws ? ` ${WS_RULE}` : '');
  }

  /** The whitespace reference to put after a token, with a leading space, or '' when disabled. */
  get sp(): string {
    return this.ws ? ` ${WS_RULE}` : '';
  }
}
