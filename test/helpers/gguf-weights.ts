// Moved to lib/gguf/weights.ts (see gguf-writer.ts).
export * from '../../lib/gguf/weights.js';
