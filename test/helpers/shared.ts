import { existsSync } from 'node:fs';
import path from 'node:path';

// ../shared beside the repository, or $TOKENMILL_SHARED.
export const sharedDir = process.env.TOKENMILL_SHARED
  ? path.resolve(process.env.TOKENMILL_SHARED)
  : path.resolve(__dirname, '..', '..', '..', 'shared');

if (!existsSync(sharedDir)) {
  throw new Error(`shared test material not found at ${sharedDir}; set TOKENMILL_SHARED`);
}

export const modelsDir = path.join(sharedDir, 'models');
export const vocabDir = path.join(modelsDir, 'vocab');
export const oraclesDir = path.join(sharedDir, 'oracles');
export const templatesDir = path.join(sharedDir, 'templates');
export const stories260K = path.join(modelsDir, 'stories260K.gguf');
export const tinyRandom = path.join(modelsDir, 'llama-2-tiny-random.gguf');
export const legacyV1 = path.join(modelsDir, 'legacy', 'tinyllamas-stories-260k-f32.v1.gguf');
