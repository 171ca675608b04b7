// `tokenmill <command>`: the command-line entry (bin/tokenmill.cjs calls main()).
import { generate, generateUsage } from './cli/generate.js';
import { pullCommand } from './cli/pull.js';
import { describeEstimate, estimateMemory, formatBytes, memoryLimit } from './engine/memory-estimate.js';
import { Model } from './engine/model.js';
import { DEVICE_REQUESTS, type DeviceRequest } from './native/device.js';
import { native } from './native/load.js';
import { serve } from './server/serve.js';
import { trajectoriesCommand, usageCommand } from './store/commands.js';

const usage = `usage: tokenmill <command> [options]

commands:
  inspect <model.gguf> [--json] [--tensors] [--device cpu|cuda|auto]
                                              print a GGUF model's architecture, hyper-parameters,
                                              tokenizer, tensors and the device that would run it
  generate --model M.gguf --prompt TEXT       stream a completion of a raw prompt (see generate --help)
  pull hf:<org>/<repo>[:<quant>]              download a GGUF model from the Hugging Face hub into the cache
                                              (--model accepts the same hf: reference; pull --help)
  version                                     print the package version and the CPU kernels in use
  serve [--model M.gguf ...] [options]        OpenAI-compatible HTTP server (serve --help for the flags;
                                              without --model: the built-in demo model)
  usage [--data-dir D] [--since YYYY-MM-DD] [--json]
                                              token usage per day, team, project and model
  trajectories export --model ID [--split S] [--data-dir D]
                                              logged trajectory groups as JSONL
`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'inspect':
      return inspect(rest);
    case 'generate':
      if (rest.includes('--help')) {
        process.stdout.write(generateUsage);
        return 0;
      }
      return generate(rest);
    case 'serve':
      return serve(rest);
    case 'pull':
      return pullCommand(rest);
    case 'usage':
      return usageCommand(rest);
    case 'trajectories':
      return trajectoriesCommand(rest);
    case 'version':
    case '--version':
      console.log(`tokenmill ${native().version} (kernels: ${native().cpuIsa()})`);
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(usage);
      return command === undefined ? 1 : 0;
    default:
      process.stderr.write(`tokenmill: unknown command '${command}'\n${usage}`);
      return 1;
  }
}

async function inspect(args: string[]): Promise<number> {
  const deviceAt = args.indexOf('--device');
  const device = deviceAt >= 0 ? args[deviceAt + 1] : 'auto';
  const rest = deviceAt >= 0 ? [...args.slice(0, deviceAt), ...args.slice(deviceAt + 2)] : args;
  const flags = new Set(rest.filter((a) => a.startsWith('--')));
  const files = rest.filter((a) => !a.startsWith('--'));
  const unknown = [...flags].filter((f) => f !== '--json' && f !== '--tensors');
  if (files.length !== 1 || unknown.length > 0 || !DEVICE_REQUESTS.includes(device as DeviceRequest)) {
    const problem = unknown.length ? `; unknown flag ${unknown.join(', ')}` : files.length === 1 ? `; --device expects cpu, cuda or auto` : '';
    process.stderr.write(`tokenmill inspect: expected one model path${problem}\n${usage}`);
    return 1;
  }
  const model = await Model.load(files[0]!, { vocabOnly: true, device: device as DeviceRequest });
  const info = model.info;
  if (flags.has('--json')) {
    console.log(JSON.stringify({ ...info, device: model.deviceDescription }, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2));
    return 0;
  }
  const hp = info.hparams;
  const lines = [
    `file            ${info.path} (GGUF v${info.ggufVersion})`,
    `device          ${model.deviceDescription}`,
    `architecture    ${info.architecture ?? '-'}${info.name ? `  (${info.name})` : ''}`,
    `context length  ${info.contextLength ?? '-'}`,
    `vocabulary      ${info.vocabSize} tokens, tokenizer ${info.tokenizerModel}${info.tokenizerPre ? ` / pre ${info.tokenizerPre}` : ''}`,
    `special tokens  bos ${info.bosTokenId ?? '-'}  eos ${info.eosTokenId ?? '-'}  eot ${info.eotTokenIds.join(',') || '-'}  add_bos ${info.addBosToken}  add_eos ${info.addEosToken}`,
    `chat template   ${info.chatTemplate === null ? 'none' : `${info.chatTemplate.length} characters`}`,
  ];
  if (hp) {
    lines.push(
      `layers          ${hp.nLayer}  embedding ${hp.nEmbd}  ffn ${hp.nFf}`,
      `attention       ${hp.nHead} heads, ${hp.nHeadKv} kv heads, head dim ${hp.headDim}, rms eps ${Number(hp.rmsEps.toPrecision(6))}`,
      `rope            ${hp.ropeStyle}, dims ${hp.nRot}, freq base ${hp.ropeFreqBase}, scaling ${hp.ropeScaling}${hp.ropeScaling === 'linear' ? ` x${1 / hp.ropeFreqScale}` : ''}`,
      `ffn             ${hp.ffnActivation}-gated${hp.slidingWindow > 0 ? `; sliding window ${hp.slidingWindow} on ${hp.slidingWindowLayers} of ${hp.nLayer} layers` : ''}`,
    );
    const e = estimateMemory(info);
    const limit = memoryLimit();
    lines.push(
      `memory          about ${describeEstimate(e)} with the default engine options; ` +
        `KV ${formatBytes(e.kvBytesPerToken)} per token (${formatBytes(e.kvBytesPerToken * hp.nCtxTrain)} for one ${hp.nCtxTrain}-token context); ` +
        `limit ${formatBytes(limit.bytes)} (${limit.source})${e.total > limit.bytes ? ' — DOES NOT FIT' : ''}`,
    );
  }
  const byType = new Map<string, number>();
  for (const t of info.tensors) byType.set(t.type, (byType.get(t.type) ?? 0) + 1);
  lines.push(`tensors         ${info.tensors.length}${byType.size ? ` (${[...byType].map(([t, n]) => `${n} ${t}`).join(', ')})` : ''}`);
  if (flags.has('--tensors')) for (const t of info.tensors) lines.push(`  ${t.name.padEnd(32)} ${t.type.padEnd(6)} [${t.shape.join(', ')}]`);
  console.log(lines.join('\n'));
  model.dispose();
  return 0;
}
