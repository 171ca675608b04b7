// NOTE(chat/template-locate): @huggingface/jinja keeps no source positions (its tokens and AST nodes
// carry none), so a failing template is located from the outside. Only the error path pays for this:
// - a parse error: the tag that does not close, else the first tag that fails to parse on its own
//   (block openers completed with their closer), else the first unbalanced block tag;
// - a render error: the template is rendered again with a marker call before every tag (and inside
//   every `elif` test, whose failure would otherwise be blamed on its `if`); the last marker reached
//   before the same failure names the line. Whitespace control may differ in the marked copy, which
//   changes output, not which expression fails.

export interface TemplateTag {
  /** 1-based line of the tag's opening brace. */
  line: number;
  /** Offsets of the tag's first and one-past-last character in the source. */
  start: number;
  end: number;
  kind: 'expression' | 'statement';
  /** Text between the delimiters with whitespace-control dashes removed, trimmed. */
  body: string;
  /** First word of a statement ('if', 'endfor', …); '' for expressions. */
  keyword: string;
}

export interface UnclosedTag { line: number; unclosed: true }

const CLOSERS: Record<string, string> = { if: 'endif', for: 'endfor', macro: 'endmacro', call: 'endcall', filter: 'endfilter', set: 'endset', generation: 'endgeneration' };

/** `{% set x %}…{% endset %}` captures a block; `{% set x = … %}` does not. */
function opensBlock(tag: TemplateTag): boolean {
  if (tag.keyword === 'set') return /^set\s+[\w.,\s]+$/.test(tag.body);
  return tag.keyword in CLOSERS;
}

function lineAt(source: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (source.charCodeAt(i) === 10) line++;
  return line;
}

/** Finds `{{ … }}` and `{% … %}` tags (skipping `{# … #}` comments and quoted strings inside tags). */
export function scanTags(source: string): TemplateTag[] | UnclosedTag {
  const tags: TemplateTag[] = [];
  let i = 0;
  for (;;) {
    const open = source.indexOf('{', i);
    if (open < 0 || open + 1 >= source.length) return tags;
    const c = source[open + 1];
    if (c === '#') {
      const close = source.indexOf('#}', open + 2);
      if (close < 0) return { line: lineAt(source, open), unclosed: true };
      i = close + 2;
      continue;
    }
    if (c !== '{' && c !== '%') { i = open + 1; continue; }
    const closer = c === '{' ? '}}' : '%}';
    let j = open + 2;
    let quote = '';
    for (; j < source.length; j++) {
      const ch = source[j]!;
      if (quote) {
        if (ch === '\\') j++;
        else if (ch === quote) quote = '';
      } else if (ch === '"' || ch === "'") quote = ch;
      else if (source.startsWith(closer, j)) break;
    }
    if (j >= source.length) return { line: lineAt(source, open), unclosed: true };
    const body = source.slice(open + 2, j).replace(/^[-+]/, '').replace(/-$/, '').trim();
    tags.push({
      line: lineAt(source, open), start: open, end: j + 2,
      kind: c === '{' ? 'expression' : 'statement', body,
      keyword: c === '{' ? '' : (/^\w+/.exec(body)?.[0] ?? ''),
    });
    i = j + 2;
  }
}

/** The tag as a template of its own that parses when the tag itself is well-formed; null to skip it. */
function standalone(tag: TemplateTag): string | null {
  if (tag.kind === 'expression') return `{{ ${tag.body} }}`;
  const k = tag.keyword;
  if (k.startsWith('end') || k === 'generation') return null;
  if (k === 'elif' || k === 'else') return `{% if true %}{% ${tag.body} %}{% endif %}`;
  if (k === 'break' || k === 'continue') return `{% for _ in [] %}{% ${tag.body} %}{% endfor %}`;
  if (opensBlock(tag)) return `{% ${tag.body} %}{% ${CLOSERS[k]} %}`;
  return `{% ${tag.body} %}`;
}

/** Line of the first unbalanced block tag (a stray closer, or the innermost opener never closed). */
function unbalancedLine(tags: TemplateTag[]): number | null {
  const stack: TemplateTag[] = [];
  for (const tag of tags) {
    const k = tag.keyword;
    if (tag.kind !== 'statement') continue;
    if (opensBlock(tag)) stack.push(tag);
    else if (k === 'elif' || k === 'else') {
      const top = stack[stack.length - 1];
      if (!top || (top.keyword !== 'if' && !(k === 'else' && top.keyword === 'for'))) return tag.line;
    } else if (k.startsWith('end')) {
      const top = stack.pop();
      if (!top || CLOSERS[top.keyword] !== k) return tag.line;
    }
  }
  return stack.length ? stack[stack.length - 1]!.line : null;
}

/** 1-based line a parse error comes from, or null when it cannot be pinned to one tag. */
export function locateParseError(source: string, parses: (text: string) => boolean): number | null {
  const tags = scanTags(source);
  if (!Array.isArray(tags)) return tags.line;
  for (const tag of tags) {
    const text = standalone(tag);
    if (text !== null && !parses(text)) return tag.line;
  }
  return unbalancedLine(tags);
}

/** Name of the marker function the instrumented copy calls; it must return a falsy, empty value. */
export const LINE_MARKER = '__tm_template_line';

/** The template with `{{ marker(line) }}` before every tag and inside every `elif` test. */
export function instrumentLines(source: string, tags: readonly TemplateTag[]): string {
  let out = '';
  let at = 0;
  for (const tag of tags) {
    out += source.slice(at, tag.start);
    const k = tag.keyword;
    const skip = tag.kind === 'statement' && (k.startsWith('end') || k === 'else' || k === 'elif');
    if (!skip) out += `{{ ${LINE_MARKER}(${tag.line}) }}`;
    const text = source.slice(tag.start, tag.end);
    out += k === 'elif' ? text.replace(/elif\s/, `elif ${LINE_MARKER}(${tag.line}) or `) : text;
    at = tag.end;
  }
  return out + source.slice(at);
}
