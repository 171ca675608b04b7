// NOTE(server/serve-flags): `tokenmill serve` flags (docs/cli.md#tokenmill-serve, vLLM's names). One table
// drives parsing and the help text; values are checked here so a typo stops the start-up with a message
// naming the flag.
import { keysFileWarning, keysFromEnv, readKeysFile } from './auth.js';
import type { LogLevel } from './types.js';

export interface ServeFlags {
  models: string[];
  servedModelNames: string[];
  host: string | null;
  port: number;
  apiKeys: string[];
  /** Set when the key file is readable or writable by others. */
  apiKeysFileWarning: string | null;
  dataDir: string;
  chatTemplate: string | null;
  schedulingPolicy: 'fcfs' | 'priority';
  maxModelLen?: number;
  maxNumSeqs: number;
  maxNumBatchedTokens?: number;
  kvCacheMemory?: number;
  enablePrefixCaching: boolean;
  maxLogprobs: number;
  seed?: number;
  threads?: number;
  device: 'cpu' | 'cuda' | 'auto';
  toolCallParser?: string;
  reasoningParser?: string;
  maxQueue?: number;
  rateLimitRequests?: number;
  rateLimitTokens?: number;
  maxRequestBytes: number;
  drainTimeout: number;
  requestTimeout: number;
  logLevel: LogLevel;
}

type Kind = 'string' | 'int' | 'bytes' | 'seconds' | 'flag';
const FLAGS: Record<string, { kind: Kind; help: string; repeat?: boolean; choices?: string[] }> = {
  '--model': { kind: 'string', repeat: true, help: 'GGUF file, or hf:<org>/<repo>[:<quant>] pulled from the Hugging Face hub, to serve (repeatable; default: the built-in demo model)' },
  '--served-model-name': { kind: 'string', repeat: true, help: 'API name, one per --model (default: file name without .gguf)' },
  '--host': { kind: 'string', help: 'bind address (default 127.0.0.1)' },
  '--port': { kind: 'int', help: 'port (default 8000)' },
  '--api-key': { kind: 'string', repeat: true, help: 'bearer key (repeatable; also TOKENMILL_API_KEY, comma-separated)' },
  '--api-keys-file': { kind: 'string', help: 'file with one key per line (# comments)' },
  '--data-dir': { kind: 'string', help: 'database directory (default ./tokenmill-data)' },
  '--chat-template': { kind: 'string', help: 'Jinja chat template file used when a request brings none' },
  '--scheduling-policy': { kind: 'string', choices: ['fcfs', 'priority'], help: 'fcfs (default) or priority' },
  '--max-model-len': { kind: 'int', help: 'context length (default: the model\'s)' },
  '--max-num-seqs': { kind: 'int', help: 'concurrent sequences per step (default 64)' },
  '--max-num-batched-tokens': { kind: 'int', help: 'tokens per engine step' },
  '--kv-cache-memory': { kind: 'bytes', help: 'KV cache size in bytes (accepts 512MiB, 2GiB)' },
  '--enable-prefix-caching': { kind: 'flag', help: 'reuse cached prompt prefixes (default on)' },
  '--no-enable-prefix-caching': { kind: 'flag', help: 'turn prefix caching off' },
  '--max-logprobs': { kind: 'int', help: 'largest top_logprobs a request may ask (default 20)' },
  '--seed': { kind: 'int', help: 'engine-wide seed: requests without a seed draw theirs from it (default: random)' },
  '--threads': { kind: 'int', help: 'CPU threads (default: all cores)' },
  '--device': { kind: 'string', choices: ['cpu', 'cuda', 'auto'], help: 'cpu, cuda or auto (default auto)' },
  '--tool-call-parser': { kind: 'string', help: 'tool-call parser (default: detected from the template)' },
  '--reasoning-parser': { kind: 'string', help: 'reasoning parser (default: detected from the template)' },
  '--max-queue': { kind: 'int', help: 'waiting requests per model before 503 (default unlimited)' },
  '--rate-limit-requests': { kind: 'int', help: 'requests per minute per API key before 429 (default unlimited)' },
  '--rate-limit-tokens': { kind: 'int', help: 'prompt + completion tokens per minute per API key before 429 (default unlimited)' },
  '--max-request-bytes': { kind: 'bytes', help: 'largest request body (default 8MiB)' },
  '--drain-timeout': { kind: 'seconds', help: 'seconds running requests get on SIGTERM/SIGINT (default 30)' },
  '--request-timeout': { kind: 'seconds', help: 'seconds a client has to send a whole request, headers and body (default 300); slower ones get 408' },
  '--log-level': { kind: 'string', choices: ['debug', 'info', 'warning', 'error'], help: 'debug, info (default), warning, error' },
};

export const serveHelp = `usage: tokenmill serve [options]\n\n${Object.entries(FLAGS)
  .map(([name, f]) => `  ${`${name}${f.kind === 'flag' ? '' : ' V'}`.padEnd(30)}${f.help}`)
  .join('\n')}\n`;

export class FlagError extends Error {}

/** Parses "512MiB", "2GiB", "1.5GB", "4096" into bytes. */
export function parseBytes(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(i?)b?$/i.exec(text.trim());
  if (!m) throw new FlagError(`expected a size such as 4096, 512MiB or 2GiB but got '${text}'`);
  const power = ' kmgt'.indexOf((m[2] || ' ').toLowerCase());
  const base = m[3] ? 1024 : 1000;
  return Math.round(Number(m[1]) * base ** power);
}

function parseInt10(flag: string, text: string): number {
  if (!/^-?\d+$/.test(text)) throw new FlagError(`${flag}: expected an integer but got '${text}'`);
  return Number(text);
}

export function parseServeFlags(args: readonly string[], env: NodeJS.ProcessEnv = process.env): ServeFlags {
  const values = new Map<string, string[]>();
  for (let i = 0; i < args.length; i++) {
    let arg = args[i]!;
    let value: string | undefined;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const spec = FLAGS[arg];
    if (!spec) throw new FlagError(`unknown option '${arg}'`);
    if (spec.kind === 'flag') {
      if (value !== undefined) throw new FlagError(`${arg} takes no value`);
      values.set(arg, ['']);
      continue;
    }
    if (value === undefined) {
      value = args[++i];
      if (value === undefined) throw new FlagError(`${arg} needs a value`);
    }
    if (spec.choices && !spec.choices.includes(value)) throw new FlagError(`${arg}: expected one of ${spec.choices.join(', ')} but got '${value}'`);
    if (!spec.repeat && values.has(arg)) throw new FlagError(`${arg} given twice`);
    values.set(arg, [...(values.get(arg) ?? []), value]);
  }
  const one = (f: string): string | undefined => values.get(f)?.[0];
  const int = (f: string): number | undefined => (one(f) === undefined ? undefined : parseInt10(f, one(f)!));
  const bytes = (f: string): number | undefined => {
    const v = one(f);
    if (v === undefined) return undefined;
    try {
      return parseBytes(v);
    } catch (e) {
      throw new FlagError(`${f}: ${(e as Error).message}`);
    }
  };
  const models = values.get('--model') ?? [];
  const names = values.get('--served-model-name') ?? [];
  if (names.length > 0 && names.length !== Math.max(models.length, 1)) {
    throw new FlagError(`--served-model-name: give one name per --model (${Math.max(models.length, 1)}), got ${names.length}`);
  }
  if (values.has('--enable-prefix-caching') && values.has('--no-enable-prefix-caching')) {
    throw new FlagError('--enable-prefix-caching and --no-enable-prefix-caching contradict each other');
  }
  const apiKeys = [...(values.get('--api-key') ?? []), ...keysFromEnv(env.TOKENMILL_API_KEY)];
  const keysFile = one('--api-keys-file');
  let apiKeysFileWarning: string | null = null;
  if (keysFile !== undefined) {
    try {
      apiKeys.push(...readKeysFile(keysFile));
      apiKeysFileWarning = keysFileWarning(keysFile);
    } catch (e) {
      throw new FlagError(`--api-keys-file: cannot read ${keysFile}: ${(e as Error).message}`);
    }
  }
  const port = int('--port') ?? 8000;
  if (port < 0 || port > 65535) throw new FlagError(`--port: expected 0-65535 but got ${port}`);
  const seconds = (f: string, fallback: number, min: number): number => {
    const text = one(f);
    const v = text === undefined ? fallback : Number(text);
    if (!Number.isFinite(v) || v < min) throw new FlagError(`${f}: expected seconds${min > 0 ? ' above 0' : ''} but got '${text}'`);
    return v;
  };
  const drainTimeout = seconds('--drain-timeout', 30, 0);
  const requestTimeout = seconds('--request-timeout', 300, Number.MIN_VALUE);
  for (const f of ['--max-num-seqs', '--max-num-batched-tokens', '--max-model-len', '--threads', '--max-queue', '--rate-limit-requests', '--rate-limit-tokens']) {
    const v = int(f);
    if (v !== undefined && v < 1) throw new FlagError(`${f}: expected a positive integer but got ${v}`);
  }
  return {
    models,
    servedModelNames: names,
    host: one('--host') ?? null,
    port,
    apiKeys,
    apiKeysFileWarning,
    dataDir: one('--data-dir') ?? './tokenmill-data',
    chatTemplate: one('--chat-template') ?? null,
    schedulingPolicy: (one('--scheduling-policy') ?? 'fcfs') as 'fcfs' | 'priority',
    maxModelLen: int('--max-model-len'),
    maxNumSeqs: int('--max-num-seqs') ?? 64,
    maxNumBatchedTokens: int('--max-num-batched-tokens'),
    kvCacheMemory: bytes('--kv-cache-memory'),
    enablePrefixCaching: !values.has('--no-enable-prefix-caching'),
    maxLogprobs: int('--max-logprobs') ?? 20,
    seed: int('--seed'),
    threads: int('--threads'),
    device: (one('--device') ?? 'auto') as 'cpu' | 'cuda' | 'auto',
    toolCallParser: one('--tool-call-parser'),
    reasoningParser: one('--reasoning-parser'),
    maxQueue: int('--max-queue'),
    rateLimitRequests: int('--rate-limit-requests'),
    rateLimitTokens: int('--rate-limit-tokens'),
    maxRequestBytes: bytes('--max-request-bytes') ?? 8 * 1024 * 1024,
    drainTimeout,
    requestTimeout,
    logLevel: (one('--log-level') ?? 'info') as LogLevel,
  };
}
