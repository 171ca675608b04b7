// Error classes and the single table from native/library error codes to classes and HTTP status.

export class TokenmillError extends Error {
  readonly code: string;
  readonly status: number;
  /** The request field the error is about (the HTTP envelope's `param`), or null. */
  readonly param: string | null;
  constructor(message: string, code: string, status: number, options?: { cause?: unknown; param?: string | null }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.status = status;
    this.param = options?.param ?? null;
  }
}

export class InvalidArgumentError extends TokenmillError {}
export class ModelLoadError extends TokenmillError {}
export class DisposedError extends TokenmillError {}
export class EngineError extends TokenmillError {}
export class InternalError extends TokenmillError {}
/** An unknown served model (404). */
export class NotFoundError extends TokenmillError {}
/**
 * Too much work of one client (429) or of the whole process (503) is already waiting for a worker;
 * `retryAfterSeconds` is when a slot can be expected to free (HTTP Retry-After).
 */
export class OverloadedError extends TokenmillError {
  constructor(message: string, status: 429 | 503, readonly retryAfterSeconds: number) {
    super(message, 'overloaded', status);
  }
}
/** A grammar (GBNF) that does not compile: `line` and `column` (1-based) say where. */
export class GrammarError extends InvalidArgumentError {
  line: number | null = null;
  column: number | null = null;
}

type ErrorClass = new (message: string, code: string, status: number, options?: { cause?: unknown; param?: string | null }) => TokenmillError;

const codeTable: Record<string, { cls: ErrorClass; status: number }> = {
  invalid_argument: { cls: InvalidArgumentError, status: 400 },
  io: { cls: ModelLoadError, status: 400 },
  gguf_invalid: { cls: ModelLoadError, status: 400 },
  gguf_unsupported: { cls: ModelLoadError, status: 400 },
  tokenizer: { cls: ModelLoadError, status: 400 },
  out_of_memory: { cls: EngineError, status: 503 },
  device_unavailable: { cls: EngineError, status: 503 },
  disposed: { cls: DisposedError, status: 400 },
  engine_fault: { cls: EngineError, status: 500 },
  internal: { cls: InternalError, status: 500 },
  not_found: { cls: NotFoundError, status: 404 },
  grammar_invalid: { cls: GrammarError, status: 400 },
};

// Turns an error thrown by the addon (an Error with a string `.code`) into the matching TokenmillError.
// `callSite`, captured before an async native call, gives the stack of the user's call.
export function fromNative(error: unknown, callSite?: Error): TokenmillError {
  if (error instanceof TokenmillError) return error;
  const e = error as { message?: unknown; code?: unknown; line?: unknown; column?: unknown };
  const code = typeof e?.code === 'string' ? e.code : 'internal';
  const message = typeof e?.message === 'string' ? e.message : String(error);
  const entry = codeTable[code] ?? { cls: InternalError, status: 500 };
  const out = new entry.cls(message, code, entry.status, { cause: error });
  if (out instanceof GrammarError) {
    out.line = typeof e.line === 'number' ? e.line : null;
    out.column = typeof e.column === 'number' ? e.column : null;
  }
  if (callSite?.stack) out.stack = `${out.name}: ${message}\n${callSite.stack.split('\n').slice(1).join('\n')}`;
  return out;
}
