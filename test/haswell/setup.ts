// Runs before every test file of `npm run test:cpu-haswell`: the file must run on the emulated AVX2-only
// CPU, which the addon's own cpuid probe shows (on this project's AVX-512 machines a native worker would
// report avx512). A worker that escaped the emulator fails its file instead of passing on the host's CPU.
import { native } from '../../lib/native/load.js';

if (process.env.TOKENMILL_ISA) throw new Error(`TOKENMILL_ISA=${process.env.TOKENMILL_ISA} is set: the emulated run must show what dispatch picks by itself`);
const level = native().cpuIsa();
if (level !== 'avx2') throw new Error(`this worker's kernel level is ${level}, not avx2: it is not running on the emulated AVX2-only CPU`);
