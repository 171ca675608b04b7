// Loads the addon once, through locate.cjs (the search order and the error listing every path tried live
// there, in plain JS, so the install script shares them). The relative path works from lib/ (tests run
// the TypeScript sources) and from dist/ alike.
import { createRequire } from 'node:module';

import type { NativeAddon } from './types.js';

const locate = createRequire(__filename)('../../lib/native/locate.cjs') as { loadAddon(): NativeAddon };

let addon: NativeAddon | undefined;

export function native(): NativeAddon {
  addon ??= locate.loadAddon();
  return addon;
}
