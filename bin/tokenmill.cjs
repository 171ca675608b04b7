#!/usr/bin/env node
'use strict';
require('../dist/cli.js').main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (error) => { console.error(`tokenmill: ${error && error.message ? error.message : error}`); process.exitCode = 1; },
);
