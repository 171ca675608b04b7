// Runs once before the test files: installs the node-llama-cpp peer (test/peer) when it is missing, so
// parity tests can use it. Kept out of the main lockfile on purpose (see test/peer/package.json).
import { installPeer } from './peer-install.js';

export default function setup(): void {
  installPeer();
}
