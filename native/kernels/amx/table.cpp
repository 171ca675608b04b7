// The AMX level's entries (kernels/amx/amx.h) and, in the emulated build, the tile emulator's state for the tests.
#include "kernels/amx/level.h"

#include "kernels/amx/amx.h"
#include "kernels/amx/tile-ops.h"
#include "kernels/amx/tile-session.h"

namespace tmill::kernels::TM_AMX_LEVEL {

void fill(kernel_table & t) {
    t.matmul_q8_0 = matmul_q8_0;
    t.matmul_q4_0 = matmul_q4_0;
    t.matmul_iq4_nl = matmul_iq4_nl;
    t.matmul_q4_1 = matmul_q4_1;
    t.matmul_q5_1 = matmul_q5_1;
    t.matmul_q8_0_x16 = matmul_q8_0_x16;
    t.q8_0_x16 = true;
    t.matmul_q4_k_x16 = matmul_q4_k_x16;
    t.matmul_q6_k = matmul_q6_k;
    // Its Q6_K tiles read the GGUF rows (matmul-q6-k.cpp), so Q6_K is not repacked for this level.
    t.q6_k_x16 = false;
    // Q4_1, Q4_0 and IQ4_NL keep the avx512 level's 16-row layouts: fewer than k_amx_min_tokens tokens take its
    // lanes, more the tiles, converted from the layout (matmul-q8-0.cpp). Q5_0, which has no tiles, keeps that
    // level's layout and kernels whole (the flag and entry its fill left).
    t.matmul_q4_1_x16 = matmul_q4_1_x16;
    t.matmul_q4_0_x16 = matmul_q4_0_x16;
    t.matmul_iq4_nl_x16 = matmul_iq4_nl_x16;
}

#if defined(TM_KERNELS_AMX_EMULATED)
tile_config tile_config_in_force() {
    tile_config c;
    TM_TILE_STORECONFIG(&c);
    return c;
}
void load_tile_config(const tile_config & c) { load_tile_state(c); }
uint64_t tile_products() { return tile_emulator::thread_state().products; }
#endif

} // namespace tmill::kernels::TM_AMX_LEVEL

#if defined(TM_KERNELS_AMX_EMULATED)
namespace tmill::kernels::tile_emulation {
state & thread_state() {
    static thread_local state s;
    return s;
}
} // namespace tmill::kernels::tile_emulation
#endif
