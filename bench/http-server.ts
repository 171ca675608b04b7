// A `tokenmill serve` child process on 127.0.0.1 with a free port, for the HTTP benchmarks. A separate
// process, as in deployment: the benchmark's own clients do not share the server's event loop.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Endpoint } from './http-client.js';

export class ServeProcess {
  private constructor(private readonly child: ChildProcess, readonly endpoint: Endpoint, private readonly dataDir: string) {}

  /** Starts `node bin/tokenmill.cjs serve` with `flags` and resolves once it prints its listening line. */
  static start(repoRoot: string, flags: string[], log: (s: string) => void, startTimeoutMs = 120_000): Promise<ServeProcess> {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tokenmill-bench-http-'));
    const args = [path.join(repoRoot, 'bin', 'tokenmill.cjs'), 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, '--log-level', 'warning', ...flags];
    const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (s: string) => { stderr = (stderr + s).slice(-4000); });
    return new Promise((resolve, reject) => {
      let out = '';
      const fail = (why: string): void => {
        clearTimeout(timer);
        child.kill('SIGKILL');
        rmSync(dataDir, { recursive: true, force: true });
        reject(new Error(`tokenmill serve ${why}\n${stderr}`));
      };
      const timer = setTimeout(() => fail(`did not start within ${startTimeoutMs} ms`), startTimeoutMs);
      child.on('exit', (code) => fail(`exited with ${code} before listening`));
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (s: string) => {
        out += s;
        const m = /tokenmill listening on http:\/\/([^\s:]+):(\d+)/.exec(out);
        if (!m) return;
        clearTimeout(timer);
        child.removeAllListeners('exit');
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        log(`server pid ${child.pid} on ${m[1]}:${m[2]}`);
        resolve(new ServeProcess(child, { host: '127.0.0.1', port: Number(m[2]) }, dataDir));
      });
    });
  }

  /** SIGTERM (the server drains and exits), SIGKILL after 30 s; removes the scratch data directory. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
      this.child.kill('SIGTERM');
      const t = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(t);
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
