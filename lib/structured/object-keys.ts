// NOTE(structured/object-keys): the content of a JSON object key that is NOT one of the declared
// property names, so additional properties cannot repeat a declared key. Built from a trie of the
// names: at each node the key either continues along a declared name, leaves the trie with any other
// character (after which anything goes), or ends there if no declared name ends at that node.
// Equivalent spellings through escapes (\u0061 for "a") are not recognised as the same key.
import { charSet, complement, union, type CodeRange } from './char-set.js';
import { gbnfCharSet, gbnfLiteral, primary } from './gbnf-text.js';

interface TrieNode {
  end: boolean;
  children: Map<number, TrieNode>;
}

/** Expression for the key text between the quotes, or null when a name needs escapes (then use any string). */
export function otherKeyExpression(names: string[], charRule: string): string | null {
  const root: TrieNode = { end: false, children: new Map() };
  for (const name of names) {
    const encoded = JSON.stringify(name).slice(1, -1);
    if (encoded.includes('\\')) return null;
    let node = root;
    for (const ch of encoded) {
      const cp = ch.codePointAt(0)!;
      let next = node.children.get(cp);
      if (!next) {
        next = { end: false, children: new Map() };
        node.children.set(cp, next);
      }
      node = next;
    }
    node.end = true;
  }
  return continuation(root, charRule);
}

const NEVER_RAW: CodeRange[] = [[0x00, 0x1f], [0x22, 0x22], [0x5c, 0x5c], [0x7f, 0x7f]];
const ESCAPE = '"\\\\" ( ["\\\\/bfnrt] | "u" [0-9a-fA-F]{4} )';

function continuation(node: TrieNode, charRule: string): string {
  const options: string[] = [];
  const cps = [...node.children.keys()].sort((a, b) => a - b);
  for (const cp of cps) {
    options.push(`${gbnfLiteral(String.fromCodePoint(cp))} ${primary(continuation(node.children.get(cp)!, charRule))}`);
  }
  const leave = gbnfCharSet(complement(union(charSet(NEVER_RAW), charSet(cps.map((c) => [c, c] as const)))));
  options.push(`( ${leave} | ${ESCAPE} ) ${charRule}*`);
  const body = options.join(' | ');
  return node.end ? `( ${body} )` : `( ${body} )?`;
}
