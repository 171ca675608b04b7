// The GGUF writer moved into the package (lib/gguf/writer.ts) so the demo model can be built at install;
// tests keep importing it from here.
export * from '../../lib/gguf/writer.js';
