import { describe, expect, it } from 'vitest';
import {
  NO_CHAT_TEMPLATE_MESSAGE, renderChatTemplate, templateMessages, TemplateError,
} from '../../lib/chat/template.js';
import { renderBounded, strftime } from '../../lib/chat/template-sandbox.js';

const SIMPLE = "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>\n{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}";

describe('chat template: variables and semantics', () => {
  it('passes messages, tools, documents, bos/eos, reasoning_effort and spreads chat_template_kwargs', () => {
    const tpl = '{{ bos_token }}|{{ eos_token }}|{{ tools[0].function.name }}|{{ documents[0].title }}|{{ reasoning_effort }}|{{ enable_thinking }}|{{ custom }}';
    const out = renderChatTemplate({
      template: tpl, messages: [{ role: 'user', content: 'x' }], bosToken: '<s>', eosToken: '</s>',
      tools: [{ type: 'function', function: { name: 'f' } }], documents: [{ title: 'Doc', text: 't' }], reasoningEffort: 'high',
      chatTemplateKwargs: { enable_thinking: false, custom: 7 },
    });
    expect(out).toBe('<s>|</s>|f|Doc|high|false|7');
  });

  it('normalises messages: text parts joined by newline, arguments parsed, null content → "", empty tool_calls dropped', () => {
    const msgs = templateMessages([
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{"x": 1}' } }] },
      { role: 'assistant', content: 'y', tool_calls: [] },
      { role: 'assistant', content: 'z', reasoning_content: 'r' },
    ]);
    expect(msgs[0]).toEqual({ role: 'user', content: 'a\nb' });
    expect(msgs[1]).toEqual({ role: 'assistant', content: '', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: { x: 1 } } }] });
    expect(msgs[2]).toEqual({ role: 'assistant', content: 'y' });
    expect(msgs[3]).toEqual({ role: 'assistant', content: 'z', reasoning: 'r', reasoning_content: 'r' });
    const tojson = renderChatTemplate({ template: '{{ messages[0].tool_calls[0].function.arguments | tojson }}', messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{"x": [1, 2]}' } }] }] });
    expect(tojson).toBe('{"x": [1, 2]}');
  });

  it('add_generation_prompt and continue_final_message', () => {
    const msgs = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'The answer is' }];
    expect(renderChatTemplate({ template: SIMPLE, messages: msgs })).toBe('<user>hi</user>\n<assistant>The answer is</assistant>\n<assistant>');
    expect(renderChatTemplate({ template: SIMPLE, messages: msgs, addGenerationPrompt: false }))
      .toBe('<user>hi</user>\n<assistant>The answer is</assistant>\n');
    expect(renderChatTemplate({ template: SIMPLE, messages: msgs, addGenerationPrompt: false, continueFinalMessage: true }))
      .toBe('<user>hi</user>\n<assistant>The answer is');
    // Trailing whitespace of the final message is kept when the template keeps it...
    expect(renderChatTemplate({ template: SIMPLE, messages: [{ role: 'assistant', content: 'Sure: ' }], addGenerationPrompt: false, continueFinalMessage: true }))
      .toBe('<assistant>Sure: ');
    // ...and cut after the stripped text when the template trims it.
    expect(renderChatTemplate({ template: '{{ messages[0].content | trim }}<end>', messages: [{ role: 'assistant', content: ' Sure: ' }], addGenerationPrompt: false, continueFinalMessage: true }))
      .toBe('Sure:');
    expect(() => renderChatTemplate({ template: SIMPLE, messages: msgs, continueFinalMessage: true }))
      .toThrow('Cannot set both `continue_final_message` and `add_generation_prompt` to True.');
    expect(() => renderChatTemplate({ template: '{{ "nothing" }}', messages: msgs, addGenerationPrompt: false, continueFinalMessage: true }))
      .toThrow(/final message does not appear/);
  });

  it('missing template → the documented 400 message (docs/http-api.md#chat-template)', () => {
    try {
      renderChatTemplate({ template: null, messages: [] });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(TemplateError);
      expect((e as TemplateError).status).toBe(400);
      expect((e as TemplateError).message).toBe(NO_CHAT_TEMPLATE_MESSAGE);
    }
  });

});

describe('chat template: sandbox', () => {
  it('raise_exception is a 400 TemplateError naming the template line', () => {
    const tpl = 'line one\n{% if messages | length == 0 %}\n{{ raise_exception("need at least one message") }}\n{% endif %}';
    try {
      renderChatTemplate({ template: tpl, messages: [] });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(TemplateError);
      expect((e as TemplateError).status).toBe(400);
      expect((e as TemplateError).line).toBe(3);
      expect((e as TemplateError).message).toBe('chat template raised an exception (template line 3): need at least one message');
    }
  });

  const lineOfError = (source: string, vars: Record<string, unknown> = {}): number | null => {
    try {
      renderBounded(source, vars);
    } catch (e) {
      expect(e).toBeInstanceOf(TemplateError);
      const err = e as TemplateError;
      if (err.line !== null) expect(err.message).toContain(`(template line ${err.line})`);
      return err.line;
    }
    throw new Error('the template rendered');
  };

  it('render errors name the line of the failing tag (loops, elif tests, macros, computed raise messages)', () => {
    const messages = [{ role: 'user', content: 'hi' }, { role: 'robot', content: 'x' }];
    expect(lineOfError('a\n{% for m in messages %}\n{{- m.content | no_such_filter }}\n{% endfor %}', { messages })).toBe(3);
    expect(lineOfError('{% if false %}\nx\n{% elif 1 + none %}\ny{% endif %}')).toBe(3);
    expect(lineOfError('{% macro f(x) %}\n{{ x | no_such_filter }}\n{% endmacro %}\n{{ f(none) }}')).toBe(2);
    expect(lineOfError('{% for m in messages %}{% if m.role not in ["user"] %}\n{{ raise_exception("Unknown role: " ~ m.role) }}{% endif %}{% endfor %}', { messages })).toBe(2);
    // Tags inside strings and comments do not shift the count.
    expect(lineOfError('{# {{ #}\n{{ "%}" }}\n{{ 1 + none }}')).toBe(3);
  });

  it('parse errors name the line: a bad tag, an unclosed tag, an unclosed or stray block', () => {
    expect(lineOfError('ok\n{{ x }}\n{% if x == %}y{% endif %}')).toBe(3);
    expect(lineOfError('ok\n\n{{ x ')).toBe(3);
    expect(lineOfError('{% for m in messages %}\n{% if m %}\nx\n{% endfor %}')).toBe(4);
    expect(lineOfError('a\n{% if x %}b')).toBe(2);
    expect(lineOfError('a\nb\n{% endif %}')).toBe(3);
  });

  it('syntax and runtime errors are TemplateErrors', () => {
    expect(() => renderBounded('{% for x in %}', {})).toThrow(TemplateError);
    expect(() => renderBounded('{{ 1 + none }}', {})).toThrow(/chat template render failed/);
  });

  it('a runaway loop hits the time limit; a doubling string hits the size limit; a huge range is refused', () => {
    const t0 = Date.now();
    expect(() => renderBounded('{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}', {}, { timeMs: 200, maxChars: 1e6, maxItems: 1e6 }))
      .toThrow(/time limit of 200 ms/);
    expect(Date.now() - t0).toBeLessThan(5000); // generous: the CI machine is shared
    expect(() => renderBounded('{% set ns = namespace(s="x") %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}', {}, { timeMs: 5000, maxChars: 1 << 20, maxItems: 1e6 }))
      .toThrow(/size limit of 1048576 characters/);
    expect(() => renderBounded('{% for i in range(1000000000) %}{% endfor %}', {})).toThrow(/exceeds the limit/);
    expect(() => renderBounded('{% for i in range(2000) %}ab{% endfor %}', {}, { timeMs: 5000, maxChars: 1000, maxItems: 1e6 })).toThrow(/size limit/);
  });

  it('strftime_now and strftime', () => {
    const d = new Date(2024, 6, 26, 9, 5, 3);
    expect(strftime(d, '%d %b %Y')).toBe('26 Jul 2024');
    expect(strftime(d, '%Y-%m-%d %H:%M:%S %A %B %-d %j %%')).toBe('2024-07-26 09:05:03 Friday July 26 208 %');
    expect(renderBounded('{{ strftime_now("%d %B %Y") }}', {}, undefined, () => d)).toBe('26 July 2024');
  });

  it('extensions real templates need: list methods, str.format, |string on dicts, |min/|max, int dict keys, tuple unpacking', () => {
    expect(renderBounded('{% set q = namespace(ids=[]) %}{% set _ = q.ids.append("a") %}{% set _ = q.ids.append("b") %}{{ q.ids.pop(0) }}{{ q.ids | length }}', {})).toBe('a1');
    expect(renderBounded("{{ 'x{}y{}'.format(1, 'z') }}|{{ '{0}-{0}'.format('k') }}", {})).toBe('x1yz|k-k');
    expect(renderBounded('{{ d | string }}', { d: { a: 'x', b: [1, true, null] } })).toBe("{'a': 'x', 'b': [1, True, None]}");
    expect(renderBounded('{{ [3, 1, 2] | min }}{{ [3, 1, 2] | max }}', {})).toBe('13');
    expect(renderBounded('{% set m = {0: "a", 512: "b", 64: "c"} %}{% for k, v in m | dictsort %}{{ k }}{{ v }},{% endfor %}{{ m[512] }}', {})).toBe('0a,64c,512b,b');
    expect(renderBounded('{% for a, b in [("x", "X"), ("y", "Y")] %}{{ a }}{{ b }}{% endfor %}', {})).toBe('xXyY');
    expect(renderBounded('{{ "abc".upper() }}{{ [1,2,3][1:] | length }}', {})).toBe('ABC2');
  });
});
