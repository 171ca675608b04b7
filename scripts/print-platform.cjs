#!/usr/bin/env node
'use strict';
// Prints where a run happened, so a red CI run says which machine it was: the CPU model and its SIMD
// features, and the kernel level tokenmill's dispatch chose there (TOKENMILL_ISA caps it). The llama.cpp
// peer's CPU variant is printed by the test run itself once the peer is installed (test/helpers/peer.ts).
const fs = require('node:fs');

function cpuInfo() {
  let text = '';
  try { text = fs.readFileSync('/proc/cpuinfo', 'utf8'); } catch { return { model: 'unknown (no /proc/cpuinfo)', flags: [] }; }
  const field = (name) => (text.match(new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm')) ?? [])[1] ?? '';
  const wanted = ['avx2', 'fma', 'f16c', 'avx512f', 'avx512bw', 'avx512vl', 'avx512dq', 'avx512_vnni', 'avx512_bf16',
    'avx512_fp16', 'amx_tile', 'amx_int8', 'amx_bf16'];
  const have = new Set(field('flags').split(/\s+/));
  return { model: field('model name') || 'unknown', flags: wanted.filter((f) => have.has(f)) };
}

function kernelLevel() {
  try {
    const native = require('../lib/native/locate.cjs').loadAddon();
    return native.cpuIsa();
  } catch (error) {
    return `unavailable (${error && error.message ? error.message.split('\n')[0] : error})`;
  }
}

module.exports = { cpuInfo };

if (require.main === module) {
  const cpu = cpuInfo();
  console.log(`platform: ${cpu.model}; ${require('node:os').cpus().length} cores; features: ${cpu.flags.join(' ') || 'none of note'}`);
  console.log(`platform: tokenmill kernel level ${kernelLevel()}${process.env.TOKENMILL_ISA ? ` (capped by TOKENMILL_ISA=${process.env.TOKENMILL_ISA})` : ''}`);
}
