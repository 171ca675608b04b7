// NOTE(chat/tool-parser): tool calls out of generated text, for the families of
// docs/chat.md#tool-call-parsers — hermes `<tool_call>{json}</tool_call>`, Llama-3 JSON `{"name",
// "parameters"}` (optional `<|python_tag|>`, only at the start of the output, `;`-separated), Mistral
// `[TOOL_CALLS]` + JSON list or the newer `[TOOL_CALLS]name[ARGS]{json}`. One incremental parser serves
// streaming and non-streaming (the non-stream result is the stream's deltas folded), so both always agree.
// Invariant: text is emitted as content only once it cannot be the start of tool-call markup (a marker prefix
// at the end of the buffer is held back); a call's header delta {index, id, type, name, arguments: ""} goes
// out once its name is complete, then the raw argument JSON in fragments whose concatenation is exactly the
// argument value the model wrote (trailing `}`/whitespace held back until the value is complete).
// Hermes also takes the untagged form (untagged-tool-call.ts) when tools were offered: output that may be one is
// held whole, and decided at its end.
import { randomBytes } from 'node:crypto';
import type { DeltaToolCall, ResponseToolCall } from '../openai/protocol.js';
import { partialMarkerSuffix, scanValueEnd } from './json-scan.js';
import { couldBeUntagged, parseUntagged } from './untagged-tool-call.js';

export type ToolParserName = 'hermes' | 'llama3_json' | 'mistral';
export const TOOL_PARSERS: readonly ToolParserName[] = ['hermes', 'llama3_json', 'mistral'];

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** `call_` + 24 random alphanumerics. */
export function makeToolCallId(): string {
  const bytes = randomBytes(24);
  let s = 'call_';
  for (const b of bytes) s += ALNUM[b % ALNUM.length];
  return s;
}

/** Picks the parser from what the chat template renders; null when it shows no known format. */
export function detectToolParser(template: string | null | undefined): ToolParserName | null {
  if (!template) return null;
  if (template.includes('[TOOL_CALLS]')) return 'mistral';
  if (template.includes('<tool_call>')) return 'hermes';
  if (template.includes('<|python_tag|>') || (template.includes('<|start_header_id|>') && template.includes('"parameters"'))) return 'llama3_json';
  return null;
}

export interface ToolStreamDelta { content: string; toolCalls: DeltaToolCall[] }

interface CallState { index: number; id: string; name: string | null; args: string; done: boolean }

const HERMES_OPEN = '<tool_call>';
const HERMES_CLOSE = '</tool_call>';
const MISTRAL = '[TOOL_CALLS]';
const PYTHON_TAG = '<|python_tag|>';
const NAME_RE = /^\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"/;
const ARGS_RE = /"(?:arguments|parameters)"\s*:\s*/g;

/** Incremental tool-call parser: feed text deltas, get content and tool-call deltas. */
export class ToolCallStreamParser {
  private buf = '';
  private mode: 'text' | 'tools' | 'plain' = 'text';
  private readonly calls: CallState[] = [];
  /** Text of the JSON object (or `name[ARGS]…` form) of the call being parsed. */
  private obj: string | null = null;
  private objForm: 'json' | 'mistral-args' = 'json';
  private argsStart = -1;
  private emittedArgs = 0;
  /** Offered tool names while the output may still be an untagged hermes call; null once decided. */
  private untagged: ReadonlySet<string> | null;

  /** `offered`: the request's tool names, which enable the untagged hermes form. */
  constructor(readonly format: ToolParserName, offered: readonly string[] = []) {
    this.untagged = format === 'hermes' && offered.length > 0 ? new Set(offered) : null;
  }

  /** Calls parsed so far (complete or not). */
  get toolCalls(): readonly Readonly<CallState>[] { return this.calls; }

  push(text: string): ToolStreamDelta {
    this.buf += text;
    return this.run(false);
  }

  /** End of output: flush held text; an unfinished call keeps what it has. */
  finish(): ToolStreamDelta {
    return this.run(true);
  }

  private run(final: boolean): ToolStreamDelta {
    const out: ToolStreamDelta = { content: '', toolCalls: [] };
    for (let guard = 0; guard < 10_000; guard++) {
      if (!this.step(out, final)) break;
    }
    return out;
  }

  /** One parsing step; false when it needs more text. */
  private step(out: ToolStreamDelta, final: boolean): boolean {
    if (this.mode === 'plain') { out.content += this.buf; this.buf = ''; return false; }
    if (this.untagged) return this.stepUntagged(out, final);
    if (this.obj !== null) return this.stepCall(out, final);
    if (this.mode === 'text') return this.stepText(out, final);
    return this.stepBetweenCalls(out, final);
  }

  private stepText(out: ToolStreamDelta, final: boolean): boolean {
    if (this.format === 'llama3_json') {
      // Llama 3 JSON calls are recognised only at the very start of the output.
      const t = this.buf.trimStart();
      if (t.startsWith(PYTHON_TAG)) { this.buf = t.slice(PYTHON_TAG.length); this.mode = 'tools'; return true; }
      if (t.startsWith('{')) {
        if (NAME_RE.test(t)) { this.buf = t; this.mode = 'tools'; return true; }
        // Still a possible prefix of `{"name": "…"`: wait for more text.
        const undecided = !final && (/^\{\s*(?:"(?:n(?:a(?:m(?:e)?)?)?)?)?$/.test(t) || /^\{\s*"name"\s*(?::\s*(?:"(?:[^"\\]|\\.)*)?)?$/.test(t));
        if (undecided) return false;
      } else if ((t === '' || PYTHON_TAG.startsWith(t)) && !final) {
        return false;
      }
      this.mode = 'plain';
      return true;
    }
    const marker = this.format === 'hermes' ? HERMES_OPEN : MISTRAL;
    const at = this.buf.indexOf(marker);
    if (at >= 0) {
      out.content += this.buf.slice(0, at);
      this.buf = this.format === 'hermes' ? this.buf.slice(at) : this.buf.slice(at + marker.length);
      this.mode = 'tools';
      return true;
    }
    const hold = final ? 0 : partialMarkerSuffix(this.buf, marker);
    out.content += this.buf.slice(0, this.buf.length - hold);
    this.buf = this.buf.slice(this.buf.length - hold);
    return false;
  }

  /**
   * Holds the output while it may be an untagged call. Decides once it cannot be (it starts with other text,
   * or text follows the complete JSON value) or at its end, where the whole text must parse in the strict shape.
   */
  private stepUntagged(out: ToolStreamDelta, final: boolean): boolean {
    const offered = this.untagged!;
    const decidedNot = !couldBeUntagged(this.buf);
    if (!decidedNot && !final) return false;
    this.untagged = null;
    const calls = decidedNot ? null : parseUntagged(this.buf, offered);
    if (!calls) return true; // ordinary output: the tagged parser takes it from the start
    for (const c of calls) {
      const call: CallState = { index: this.calls.length, id: makeToolCallId(), name: c.name, args: c.arguments, done: true };
      this.calls.push(call);
      out.toolCalls.push({ index: call.index, id: call.id, type: 'function', function: { name: c.name, arguments: '' } });
      out.toolCalls.push({ index: call.index, function: { arguments: c.arguments } });
    }
    this.buf = '';
    this.mode = 'tools';
    return false;
  }

  /** Between calls: find the next call's start, or give trailing text back as content. */
  private stepBetweenCalls(out: ToolStreamDelta, final: boolean): boolean {
    const t = this.buf.replace(/^[\s;,]+/, '');
    if (this.format === 'hermes') {
      if (t.startsWith(HERMES_OPEN)) { this.startCall(t.slice(HERMES_OPEN.length).trimStart(), 'json'); return true; }
      if (t.startsWith(HERMES_CLOSE)) { this.buf = t.slice(HERMES_CLOSE.length); return true; }
      if (!final && (t === '' || HERMES_OPEN.startsWith(t) || HERMES_CLOSE.startsWith(t))) return false;
    } else if (this.format === 'llama3_json') {
      if (t.startsWith('{')) { this.startCall(t, 'json'); return true; }
      if (!final && t === '') return false;
    } else {
      if (!final && MISTRAL.startsWith(t)) return false; // '' or a partial marker
      let m = t;
      if (m.startsWith(MISTRAL)) m = m.slice(MISTRAL.length).trimStart();
      if (m.startsWith('[')) m = m.slice(1).trimStart(); // JSON-list form: objects follow
      if (m.startsWith(']')) { this.buf = m.slice(1); return true; }
      if (m.startsWith('{')) { this.startCall(m, 'json'); return true; }
      if (/^[A-Za-z_]/.test(m)) { this.startCall(m, 'mistral-args'); return true; }
      if (!final && m === '') return false;
    }
    // Anything else after the calls is plain text.
    this.mode = 'plain';
    return true;
  }

  private startCall(text: string, form: 'json' | 'mistral-args'): void {
    this.obj = text;
    this.objForm = form;
    this.buf = '';
    this.argsStart = -1;
    this.emittedArgs = 0;
  }

  private current(): CallState | undefined {
    const c = this.calls[this.calls.length - 1];
    return c && !c.done ? c : undefined;
  }

  private stepCall(out: ToolStreamDelta, final: boolean): boolean {
    this.obj += this.buf;
    this.buf = '';
    const obj = this.obj!;
    let call = this.current();
    if (!call) {
      const name = this.objForm === 'json' ? NAME_RE.exec(obj)?.[1] : /^([^[\s]+)\s*(?:\[CALL_ID\][^[]*)?\[ARGS\]/.exec(obj)?.[1];
      if (name === undefined) {
        if (final || this.objForm === 'json' && scanValueEnd(obj, 0) >= 0) return this.abandon(out);
        return false;
      }
      call = { index: this.calls.length, id: makeToolCallId(), name: this.objForm === 'json' ? JSON.parse(`"${name}"`) as string : name, args: '', done: false };
      this.calls.push(call);
      out.toolCalls.push({ index: call.index, id: call.id, type: 'function', function: { name: call.name!, arguments: '' } });
    }
    if (this.argsStart < 0) {
      if (this.objForm === 'mistral-args') this.argsStart = obj.indexOf('[ARGS]') + '[ARGS]'.length;
      else {
        ARGS_RE.lastIndex = 0;
        const m = ARGS_RE.exec(obj);
        if (m) this.argsStart = m.index + m[0].length;
      }
    }
    const objEnd = this.objForm === 'json' ? scanValueEnd(obj, 0) : -1;
    if (this.argsStart < 0) {
      if (objEnd < 0 && !final) return false;
      this.emitArgs(call, '{}', out); // a call without arguments
      return this.endCall(call, objEnd < 0 ? obj.length : objEnd);
    }
    const valueEnd = scanValueEnd(obj, this.argsStart);
    if (valueEnd < 0) {
      // Incomplete: emit what cannot be the wrapper's closing (trailing `}`, whitespace).
      const raw = obj.slice(this.argsStart).trimStart();
      const safe = final ? raw : raw.replace(/[\s}\]]+$/, '');
      this.emitArgs(call, safe, out);
      if (final) return this.endCall(call, obj.length);
      return false;
    }
    this.emitArgs(call, obj.slice(this.argsStart, valueEnd).trim(), out);
    if (this.objForm === 'mistral-args') return this.endCall(call, valueEnd);
    if (objEnd < 0) { if (final) return this.endCall(call, obj.length); return false; }
    return this.endCall(call, objEnd);
  }

  private emitArgs(call: CallState, full: string, out: ToolStreamDelta): void {
    if (full.length <= this.emittedArgs) return;
    const piece = full.slice(this.emittedArgs);
    this.emittedArgs = full.length;
    call.args += piece;
    out.toolCalls.push({ index: call.index, function: { arguments: piece } });
  }

  private endCall(call: CallState, end: number): boolean {
    call.done = true;
    this.buf = this.obj!.slice(end);
    this.obj = null;
    return true;
  }

  /** The markup was not a tool call after all: give its text back as content. */
  private abandon(out: ToolStreamDelta): boolean {
    out.content += (this.format === 'hermes' ? HERMES_OPEN : '') + this.obj!;
    this.obj = null;
    this.mode = 'plain';
    return true;
  }
}

export interface ExtractedToolCalls {
  content: string | null;
  toolCalls: ResponseToolCall[];
}

export interface ExtractOptions {
  /** tool_choice "none" → nothing is parsed. */
  toolChoice?: 'none' | null;
  /** parallel_tool_calls false → only the first call is kept. */
  parallelToolCalls?: boolean;
  /** Names of the request's tools; non-empty enables hermes's untagged form. */
  toolNames?: readonly string[];
}

/** Non-streaming: the whole output at once. Malformed calls leave the text as content. */
export function extractToolCalls(text: string, parser: ToolParserName | null, opts: ExtractOptions = {}): ExtractedToolCalls {
  if (!parser || opts.toolChoice === 'none') return { content: text, toolCalls: [] };
  const p = new ToolCallStreamParser(parser, opts.toolNames);
  const a = p.push(text);
  const b = p.finish();
  const calls = p.toolCalls;
  const valid = calls.length > 0 && calls.every((c) => c.name && isJson(c.args));
  if (!valid) return { content: text, toolCalls: [] };
  const content = a.content + b.content;
  const kept = opts.parallelToolCalls === false ? calls.slice(0, 1) : calls;
  return {
    content: content.trim() === '' ? null : content,
    toolCalls: kept.map((c) => ({ id: c.id, type: 'function', function: { name: c.name!, arguments: c.args } })),
  };
}

function isJson(s: string): boolean {
  try { JSON.parse(s); return true; } catch { return false; }
}

/** Streaming wrapper applying parallel_tool_calls=false (only deltas of call 0 pass). */
export class ToolCallStream {
  private readonly parser: ToolCallStreamParser | null;
  constructor(parser: ToolParserName | null, private readonly opts: ExtractOptions = {}) {
    this.parser = parser && opts.toolChoice !== 'none' ? new ToolCallStreamParser(parser, opts.toolNames) : null;
  }
  /** True once any tool call header was emitted (finish_reason becomes tool_calls). */
  get called(): boolean { return (this.parser?.toolCalls.length ?? 0) > 0; }
  push(text: string): ToolStreamDelta { return this.filter(this.parser ? this.parser.push(text) : { content: text, toolCalls: [] }); }
  finish(): ToolStreamDelta { return this.filter(this.parser ? this.parser.finish() : { content: '', toolCalls: [] }); }
  private filter(d: ToolStreamDelta): ToolStreamDelta {
    if (this.opts.parallelToolCalls !== false) return d;
    return { content: d.content, toolCalls: d.toolCalls.filter((t) => t.index === 0) };
  }
}
