// The AMX tile operations as the AMX kernels write them: TM_TILE_LOADCONFIG(cfg), TM_TILE_STORECONFIG(cfg),
// TM_TILE_RELEASE(), TM_TILE_LOADD(tmm, base, stride), TM_TILE_STORED(tmm, base, stride), TM_TILE_ZERO(tmm)
// and TM_TILE_DPBSSD(dst, src1, src2), tile numbers being literal constants 0-7 (they are encoded in the
// instruction). TM_KERNELS_AMX: the instructions. TM_KERNELS_AMX_EMULATED (the C++ tests): the strict scalar
// emulation of kernels/amx/tile-emulator.h, so the same kernel source is tested on every machine.
#pragma once

#include "kernels/amx/tile-config.h"

#if defined(TM_KERNELS_AMX_EMULATED)
#include "kernels/amx/tile-emulator.h"
#define TM_TILE_LOADCONFIG(cfg) ::tmill::kernels::tile_emulator::loadconfig(cfg)
#define TM_TILE_STORECONFIG(cfg) ::tmill::kernels::tile_emulator::storeconfig(cfg)
#define TM_TILE_RELEASE() ::tmill::kernels::tile_emulator::release()
#define TM_TILE_LOADD(tmm, base, stride) ::tmill::kernels::tile_emulator::loadd(tmm, base, long(stride))
#define TM_TILE_STORED(tmm, base, stride) ::tmill::kernels::tile_emulator::stored(tmm, base, long(stride))
#define TM_TILE_ZERO(tmm) ::tmill::kernels::tile_emulator::zero(tmm)
#define TM_TILE_DPBSSD(dst, src1, src2) ::tmill::kernels::tile_emulator::dpbssd(dst, src1, src2)
#elif defined(TM_KERNELS_AMX)
// Our own asm statements rather than GCC's <amxtileintrin.h>: there (GCC 12) TILELOADD's statement names only
// the address register, not the memory it reads, and LDTILECFG's only the first 8 bytes of the 64, so the
// compiler may sink or drop the stores that fill a buffer a tile then loads — a fault the emulated build
// cannot show. Here each statement that reads or writes memory names it: a load or store of a tile as the
// bytes from its base on (an array of unknown bound: character bytes alias everything), so every store to that
// buffer before the statement and every load after it stay where they are; TILEZERO and TDPBSSD touch
// registers only. No statement clobbers all memory: that would force every value the compiler keeps in memory
// around it — a kernel's accumulator array among them — to be written back and read again at each tile
// operation (it did: the fold's 16 accumulators went through the stack at every block).
#define TM_TILE_LOADCONFIG(cfg) \
    __asm__ volatile("ldtilecfg %0" ::"m"(*static_cast<const ::tmill::kernels::tile_config *>(cfg)))
#define TM_TILE_STORECONFIG(cfg) \
    __asm__ volatile("sttilecfg %0" : "=m"(*static_cast<::tmill::kernels::tile_config *>(cfg)))
#define TM_TILE_RELEASE() __asm__ volatile("tilerelease" ::)
#define TM_TILE_LOADD(tmm, base, stride)                                                                      \
    __asm__ volatile("tileloadd (%1,%2,1), %%tmm" #tmm ::"m"(*static_cast<const char(*)[]>(static_cast<const void *>(base))), \
                     "r"(static_cast<const void *>(base)), "r"(long(stride)))
#define TM_TILE_STORED(tmm, base, stride)                                                                     \
    __asm__ volatile("tilestored %%tmm" #tmm ", (%1,%2,1)"                                                    \
                     : "=m"(*static_cast<char(*)[]>(static_cast<void *>(base)))                             \
                     : "r"(static_cast<void *>(base)), "r"(long(stride)))
#define TM_TILE_ZERO(tmm) __asm__ volatile("tilezero %%tmm" #tmm ::)
// AT&T order: src2, src1, dst.
#define TM_TILE_DPBSSD(dst, src1, src2) __asm__ volatile("tdpbssd %%tmm" #src2 ", %%tmm" #src1 ", %%tmm" #dst ::)
#else
#error "kernels/amx sources are compiled as TM_KERNELS_AMX (the instructions) or TM_KERNELS_AMX_EMULATED (the tests)"
#endif
