// Starts `node bin/tokenmill.cjs serve …` on a free port (port 0; the listening line tells which) and
// stops it with SIGTERM (drain) or SIGKILL.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const repoRoot = path.resolve(__dirname, '..', '..');
const bin = path.join(repoRoot, 'bin', 'tokenmill.cjs');

export interface RunningServer {
  child: ChildProcess;
  base: string;
  stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startServer(args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', ...args], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 60 s:\n${err}`)), 60_000);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /tokenmill listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${err}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    base,
    stderr: () => err,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs a tokenmill CLI command to completion; returns stdout (throws on a non-zero exit). */
export function cli(args: string[]): string {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: repoRoot, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tokenmill ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}
