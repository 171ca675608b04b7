import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

export const peerDir = path.resolve(__dirname, '..', 'peer');

// Installs test/peer's node-llama-cpp with --omit=optional (its mac/win/riscv optional packages are not
// on this registry) unless it is already there. Nothing is downloaded beyond the npm registry: the
// linux-x64 package carries the prebuilt llama.cpp.
export function installPeer(): void {
  if (existsSync(path.join(peerDir, 'node_modules', '@node-llama-cpp', 'linux-x64', 'package.json'))) return;
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['install', '--omit=optional', '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: peerDir,
    stdio: 'inherit',
  });
  if (result.status !== 0) throw new Error(`installing the node-llama-cpp peer in ${peerDir} failed (exit ${result.status})`);
}
