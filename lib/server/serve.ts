// NOTE(server/serve): `tokenmill serve`. The server listens at once (so /health answers 503 while the
// models load) and prints `tokenmill listening on http://HOST:PORT` when every model is loaded and
// serving. Each --model gets its own engine; engines report usage through their onUsage hook to the
// server's batched recorder. An error that escapes every request's handling is logged and counted, not
// fatal (last-resort.ts). SIGTERM/SIGINT drain (stop accepting, finish running requests up to
// --drain-timeout, flush usage), close the engines, then exit 0.
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Model } from '../engine/model.js';
import { Engine } from '../openai/chat-engine.js';
import type { EngineOptions } from '../openai/chat-engine.js';
import { demoModelPath } from '../demo/demo-model.js';
import { resolveModelPath } from '../hub/model-path.js';
import { installLastResort } from './last-resort.js';
import { createServer, type TokenmillServer } from './server.js';
import { FlagError, parseServeFlags, serveHelp, type ServeFlags } from './serve-flags.js';
import type { ServedModel } from './types.js';

function say(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function loadAll(flags: ServeFlags, server: () => TokenmillServer): Promise<ServedModel[]> {
  const files = flags.models.length > 0 ? flags.models : [demoModelPath()];
  if (flags.models.length === 0) {
    if (!fs.existsSync(files[0]!)) throw new Error(`the built-in demo model is missing (${files[0]}); run \`npm run build:ts\` or pass --model`);
    say(`tokenmill: no --model given; serving the built-in demo model (tiny and random: its text is meaningless)`);
  }
  const template = flags.chatTemplate === null ? undefined : fs.readFileSync(flags.chatTemplate, 'utf8');
  const served: ServedModel[] = [];
  try {
    for (let i = 0; i < files.length; i++) {
      const file = await resolveModelPath(files[i]!, say);
      const id = flags.servedModelNames[i] ?? path.basename(file).replace(/\.gguf$/i, '');
      if (served.some((m) => m.id === id)) throw new Error(`two models are served as '${id}'; give --served-model-name for each`);
      const t0 = performance.now();
      say(`tokenmill: loading ${id} from ${file} ...`);
      const model = await Model.load(file, { device: flags.device });
      say(`tokenmill: ${id}: ${model.info.architecture ?? '?'} model, ${model.info.vocabSize} tokens vocabulary, on ${model.deviceDescription}, loaded in ${((performance.now() - t0) / 1000).toFixed(2)} s; starting its engine ...`);
      const options: EngineOptions = {
        servedModelName: id,
        maxNumSeqs: flags.maxNumSeqs,
        schedulingPolicy: flags.schedulingPolicy,
        enablePrefixCaching: flags.enablePrefixCaching,
        maxLogprobs: flags.maxLogprobs,
        onUsage: (record) => server().recordUsage(record),
      };
      if (flags.maxModelLen !== undefined) options.maxModelLen = flags.maxModelLen;
      if (flags.maxNumBatchedTokens !== undefined) options.maxNumBatchedTokens = flags.maxNumBatchedTokens;
      if (flags.kvCacheMemory !== undefined) options.kvCacheMemory = flags.kvCacheMemory;
      if (flags.threads !== undefined) options.threads = flags.threads;
      if (flags.seed !== undefined) options.seed = flags.seed;
      if (template !== undefined) options.chatTemplate = template;
      if (flags.toolCallParser !== undefined) options.toolCallParser = flags.toolCallParser as EngineOptions['toolCallParser'];
      if (flags.reasoningParser !== undefined) options.reasoningParser = flags.reasoningParser as EngineOptions['reasoningParser'];
      const engine = await Engine.create(model, options);
      served.push({ id, engine, root: file });
      say(`tokenmill: ${id}: ready (max_model_len ${engine.maxModelLen}, ${engine.kvBlocksTotal} KV blocks) in ${((performance.now() - t0) / 1000).toFixed(2)} s`);
    }
  } catch (error) {
    await Promise.all(served.map((m) => m.engine.close?.()));
    throw error;
  }
  return served;
}

export async function serve(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(serveHelp);
    return 0;
  }
  let flags: ServeFlags;
  try {
    flags = parseServeFlags(args);
  } catch (error) {
    if (!(error instanceof FlagError)) throw error;
    process.stderr.write(`tokenmill serve: ${error.message}\n${serveHelp}`);
    return 1;
  }
  const host = flags.host ?? '127.0.0.1';
  if (flags.apiKeysFileWarning) say(`tokenmill: warning: ${flags.apiKeysFileWarning}`);
  if (flags.apiKeys.length === 0) {
    say(`tokenmill: warning: no API key configured (--api-key, --api-keys-file or TOKENMILL_API_KEY): the server is open to anyone who can reach ${host}${flags.host === null ? ' (bound to 127.0.0.1 for that reason)' : ''}`);
  }

  const uninstallLastResort = installLastResort((line) => say(`tokenmill: error: ${line}`), flags.apiKeys);
  let server!: TokenmillServer;
  const loading = loadAll(flags, () => server);
  server = createServer({
    models: loading,
    apiKeys: flags.apiKeys,
    dataDir: flags.dataDir,
    maxLogprobs: flags.maxLogprobs,
    maxQueue: flags.maxQueue,
    rateLimitRequests: flags.rateLimitRequests,
    rateLimitTokens: flags.rateLimitTokens,
    maxRequestBytes: flags.maxRequestBytes,
    requestTimeoutMs: flags.requestTimeout * 1000,
    engineReportsUsage: true,
    logLevel: flags.logLevel,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(flags.port, host, () => resolve());
  });
  let models: ServedModel[];
  try {
    models = await loading;
    await server.ready;
  } catch (error) {
    process.stderr.write(`tokenmill serve: ${(error as Error).message}\n`);
    await server.drain(0);
    uninstallLastResort();
    return 1;
  }
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  process.stdout.write(`tokenmill listening on http://${shownHost}:${addr.port}\n`);

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      say(`tokenmill: ${signal}: draining (up to ${flags.drainTimeout} s) ...`);
      void (async () => {
        await server.drain(flags.drainTimeout * 1000);
        await Promise.all(models.map((m) => m.engine.close?.()));
        say('tokenmill: stopped');
        uninstallLastResort();
        resolve(0);
      })();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
