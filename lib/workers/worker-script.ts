// NOTE(workers/worker-script): where a work-pool worker's main module is. The built package runs
// dist/workers/work-entry.js. Run from the TypeScript sources (vitest imports lib/ directly) there is
// no .js beside this file, so the worker starts ts-source-worker.cjs, which compiles the .ts modules
// it loads with the project's TypeScript (a devDependency, present wherever the sources are run).
import { existsSync } from 'node:fs';
import path from 'node:path';

export interface WorkerScript {
  filename: string;
  workerData: unknown;
}

export function workerScript(): WorkerScript {
  const compiled = path.join(__dirname, 'work-entry.js');
  if (existsSync(compiled)) return { filename: compiled, workerData: null };
  const source = path.join(__dirname, 'work-entry.ts');
  if (existsSync(source)) return { filename: path.join(__dirname, 'ts-source-worker.cjs'), workerData: { entry: source } };
  throw new Error(`work pool: neither ${compiled} nor ${source} exists`);
}
