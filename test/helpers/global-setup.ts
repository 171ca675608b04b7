// Runs once before the test files: installs the node-llama-cpp peer (test/peer) when it is missing, so
// parity tests can use it (kept out of the main lockfile on purpose, see test/peer/package.json), prints
// which CPU, kernel level and llama.cpp CPU build this run uses, and hands that build to the test files.
import type { ProvidedContext } from 'vitest';
import { installPeer } from './peer-install.js';
import { runEnvironment } from './run-environment.js';

// `project` is vitest's TestProject (typed by the one method used: vitest/node is ESM-only for this CJS build).
export default async function setup(project: { provide(key: 'peerCpuBuild', value: ProvidedContext['peerCpuBuild']): void }): Promise<void> {
  installPeer();
  const { line, peer } = await runEnvironment();
  console.log(line);
  project.provide('peerCpuBuild', peer);
}
