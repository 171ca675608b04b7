// NOTE(structured/choice-grammar): structured_outputs.choice: the output is exactly one of the strings,
// nothing before or after it (vLLM's choice semantics).
import { structuredError } from './error.js';
import { gbnfAlternatives, gbnfLiteral } from './gbnf-text.js';
import { RuleSet } from './rule-set.js';

/** A grammar matching exactly one of `choices`. pre: a non-empty array of strings. */
export function choiceGrammar(choices: readonly string[]): string {
  if (!Array.isArray(choices) || choices.length === 0) throw structuredError(`Choice '${JSON.stringify(choices ?? null)}' cannot be an empty list`);
  const bad = choices.findIndex((c) => typeof c !== 'string');
  if (bad >= 0) throw structuredError(`Choice ${bad} must be a string, got ${JSON.stringify(choices[bad])}`);
  const rules = new RuleSet();
  // The empty choice is the empty match, which makes the whole alternation optional.
  rules.add('root', gbnfAlternatives(choices.map((c) => (c === '' ? null : gbnfLiteral(c)))) ?? '""');
  return rules.toText();
}
