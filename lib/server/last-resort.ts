// NOTE(server/last-resort): `tokenmill serve`'s process-wide handler for an exception or a rejection that
// escaped every request's own handling (a timer callback, an event listener, a promise nobody awaited).
// Node's default is to end the process, which would cut every stream of every model for one bug; the
// server instead logs it (with configured API keys and bearer tokens redacted), counts it in /metrics
// (tokenmill:uncaught_errors_total) and keeps serving. Each request still has its own error handling
// (docs/http-api.md#errors): this only catches what escapes it. Only `tokenmill serve` installs it; a
// program that embeds createServer keeps its own process policy.

export type UncaughtKind = 'exception' | 'rejection';

const counts: Record<UncaughtKind, number> = { exception: 0, rejection: 0 };

/** How many escaped errors the installed handler caught in this process, by kind. */
export function uncaughtCounts(): Readonly<Record<UncaughtKind, number>> {
  return { ...counts };
}

/** `text` with every secret and every `Bearer <token>` replaced by `[redacted]`. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length > 0) out = out.split(s).join('[redacted]');
  return out.replace(/(bearer\s+)\S+/gi, '$1[redacted]');
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  try {
    return `a non-Error value: ${JSON.stringify(error) ?? String(error)}`;
  } catch {
    return `a non-Error value: ${String(error)}`;
  }
}

/**
 * Installs the handlers; `report` receives one log line per caught error (already redacted of
 * `secrets`). Returns the function that removes them.
 */
export function installLastResort(report: (line: string) => void, secrets: readonly string[]): () => void {
  const caught = (kind: UncaughtKind, error: unknown): void => {
    counts[kind] += 1;
    try {
      const text = redactSecrets(describe(error), secrets);
      report(`an unexpected ${kind} escaped request handling (the server keeps serving; tokenmill:uncaught_errors_total counts these): ${text}`);
    } catch {
      // A log that cannot be written (a closed stderr) must not turn a caught error into the end of the process.
    }
  };
  const onException = (error: unknown): void => caught('exception', error);
  const onRejection = (reason: unknown): void => caught('rejection', reason);
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
