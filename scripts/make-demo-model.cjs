'use strict';
// `npm install` / build hook: writes models/demo.gguf (the built-in demo model) when it is missing.
// dist/ may not exist yet in a git clone (its `prepare` builds it, and build:ts then writes the model).
const path = require('node:path');
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');

const script = path.resolve(__dirname, '..', 'dist', 'demo', 'make-demo-model.js');
if (!fs.existsSync(script)) process.exit(0);
const result = spawnSync(process.execPath, [script, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(result.status ?? 1);
