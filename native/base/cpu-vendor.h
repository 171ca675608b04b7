// Who made the CPU: a fact the kernel dispatch tunes by beside the instruction sets, where the same instructions
// stream memory best in different ways on different makers' cores (docs/kernels.md, "Q4_K repacked at load").
// Plain enum only: kernels/kernels.h, included by every ISA's objects, includes it.
#pragma once

namespace tmill {

enum class cpu_vendor : int { other = 0, intel = 1, amd = 2 };

} // namespace tmill
