// `tokenmill generate --model M.gguf --prompt "..." [--max-tokens N] ...`: streams a completion of a raw
// prompt (no chat template) to stdout — the quickest way to see a model run.
import { Engine } from '../engine/engine.js';
import { resolveModelPath } from '../hub/model-path.js';
import { Model } from '../engine/model.js';
import { DEVICE_REQUESTS, type DeviceRequest } from '../native/device.js';

export const generateUsage = `usage: tokenmill generate --model M.gguf|hf:<org>/<repo>[:<quant>] --prompt TEXT [options]
  --max-tokens N        tokens to generate (default: until EOS or the context is full)
  --temperature T       0 = greedy (default 0)
  --top-p P  --top-k K  --min-p P  --seed S
  --threads N           kernel threads (default: all cores)
  --device D            cpu, cuda or auto (default auto: the GPU when one is usable)
  --stats               print prompt/generation speed to stderr at the end
`;

interface GenerateArgs {
  model: string;
  prompt: string;
  maxTokens?: number;
  temperature: number;
  topP?: number;
  topK?: number;
  minP?: number;
  seed?: number;
  threads?: number;
  device: DeviceRequest;
  stats: boolean;
}

function parse(argv: string[]): GenerateArgs | string {
  const out: Partial<GenerateArgs> = { temperature: 0, stats: false, device: 'auto' };
  const numbers: Record<string, keyof GenerateArgs> = {
    '--max-tokens': 'maxTokens', '--temperature': 'temperature', '--top-p': 'topP', '--top-k': 'topK',
    '--min-p': 'minP', '--seed': 'seed', '--threads': 'threads',
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--stats') {
      out.stats = true;
      continue;
    }
    const value = argv[++i];
    if (value === undefined) return `missing value for ${flag}`;
    if (flag === '--model') out.model = value;
    else if (flag === '--prompt') out.prompt = value;
    else if (flag === '--device') {
      if (!DEVICE_REQUESTS.includes(value as DeviceRequest)) return `--device expects cpu, cuda or auto, got '${value}'`;
      out.device = value as DeviceRequest;
    }
    else if (flag in numbers) {
      const n = Number(value);
      if (!Number.isFinite(n)) return `${flag} expects a number, got '${value}'`;
      (out as Record<string, unknown>)[numbers[flag]!] = n;
    } else return `unknown flag ${flag}`;
  }
  if (!out.model) return '--model is required';
  if (out.prompt === undefined) return '--prompt is required';
  return out as GenerateArgs;
}

export async function generate(argv: string[]): Promise<number> {
  const args = parse(argv);
  if (typeof args === 'string') {
    process.stderr.write(`tokenmill generate: ${args}\n${generateUsage}`);
    return 1;
  }
  const model = await Model.load(await resolveModelPath(args.model, (line) => process.stderr.write(`${line}\n`)), { device: args.device });
  const engine = await Engine.create(model, { threads: args.threads, maxNumSeqs: 1 });
  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  process.once('SIGINT', onSignal);
  try {
    const promptTokens = model.tokenize(args.prompt, { addSpecial: true, parseSpecial: false });
    const start = performance.now();
    let firstAt = 0;
    let n = 0;
    for await (const ev of engine.generate(
      { promptTokens, maxTokens: args.maxTokens, temperature: args.temperature, topP: args.topP, topK: args.topK, minP: args.minP, seed: args.seed },
      { signal: controller.signal },
    )) {
      if (n === 0 && ev.tokenIds.length > 0) firstAt = performance.now();
      n += ev.tokenIds.length;
      process.stdout.write(ev.text);
      if (ev.finishReason === 'error') throw ev.error ?? new Error('generation failed');
      if (ev.finishReason) {
        process.stdout.write('\n');
        if (args.stats) {
          const end = performance.now();
          const decodeS = (end - firstAt) / 1000;
          process.stderr.write(
            `prompt ${promptTokens.length} tokens in ${((firstAt - start) / 1000).toFixed(3)} s; ` +
              `${n} tokens generated, ${n > 1 ? ((n - 1) / decodeS).toFixed(1) : '-'} tok/s; finish ${ev.finishReason}\n`,
          );
        }
      }
    }
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    await engine.close();
    model.dispose();
  }
}
