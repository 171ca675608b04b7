// `node dist/demo/make-demo-model.js [--if-missing]`: writes models/demo.gguf (run by build:ts and at install).
import fs from 'node:fs';
import { demoModelPath, writeDemoModel } from './demo-model.js';

const file = demoModelPath();
if (process.argv.includes('--if-missing') && fs.existsSync(file)) {
  process.exit(0);
}
writeDemoModel(file);
process.stdout.write(`tokenmill: wrote the demo model ${file}\n`);
