// The tile state of one call of an AMX kernel (kernels/amx/*.cpp, compiled as TM_KERNELS_AMX or
// TM_KERNELS_AMX_EMULATED): the one tile shape those kernels use, and the thread's own configuration, saved when
// the call starts and put back when it ends. Internal linkage, as kernels/tiling.h.
#pragma once

#include "kernels/amx/tile-config.h"
#include "kernels/amx/tile-ops.h"

#include <cstdint>
#include <cstring>

namespace tmill::kernels {
namespace {

// The products of one block of K bytes (32: a 32-block; 64: two K-quant sub-blocks) between n tokens and 16
// weight rows, in one of two operand layouts. tokens_a: tmm0/tmm1 A (n rows x K bytes: n tokens' int8 values of
// the block), tmm2/tmm3 B (K / 4 rows x 64 bytes: the block of 16 weight rows in VNNI order), tmm4..tmm7 C (n
// rows x 64 bytes: each token's 16 int32 dots). weights_a: tmm0/tmm1 B (K / 4 rows x 4n bytes: the tokens'
// values in VNNI order), tmm2/tmm3 A (16 rows x K bytes: a weight row's values each), tmm4..tmm7 C (16 rows x 4n
// bytes: each weight row's n int32 dots). How the kernels use them is theirs.
constexpr int k_tile_block_bytes = 32;
constexpr int k_tile_weight_rows = 16;

enum class tile_layout { tokens_a, weights_a };

inline void configure_tiles(int n, int k_bytes, tile_layout layout) {
    tile_config cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.palette_id = 1;
    const bool tokens_a = layout == tile_layout::tokens_a;
    for (int i = 0; i < 2; ++i) {
        cfg.rows[i] = uint8_t(tokens_a ? n : k_bytes / 4);
        cfg.colsb[i] = uint16_t(tokens_a ? k_bytes : 4 * n);
        cfg.rows[2 + i] = uint8_t(tokens_a ? k_bytes / 4 : k_tile_weight_rows);
        cfg.colsb[2 + i] = uint16_t(tokens_a ? 4 * k_tile_weight_rows : k_bytes);
    }
    for (int i = 4; i < 8; ++i) {
        cfg.rows[i] = uint8_t(tokens_a ? n : k_tile_weight_rows);
        cfg.colsb[i] = uint16_t(tokens_a ? 4 * k_tile_weight_rows : 4 * n);
    }
    TM_TILE_LOADCONFIG(&cfg);
}

// c in force, as LDTILECFG puts it on the CPU: palette 0 (none) is the init state TILERELEASE gives, the only
// way the strict emulator takes.
inline void load_tile_state(const tile_config & c) {
    if (c.palette_id == 0)
        TM_TILE_RELEASE();
    else
        TM_TILE_LOADCONFIG(&c);
}

// Configured on the thread that runs the call, and left as the call found it: released when no configuration
// was in force (no tile state stays on a pool worker between calls, none to save at a context switch), the
// caller's configuration loaded again otherwise. The thread may be shared with other native code — a libuv
// worker runs Model.evaluate, and node-llama-cpp's decode on the next task — and ggml's AMX kernels configure a
// thread's tiles once and then assume the configuration stays: with TILERELEASE alone their next TILEZERO
// raised #UD (SIGILL) in a process running both (tile data does not outlive a call on either side, so only the
// configuration is restored). A shape is loaded only when it changes (LDTILECFG also zeroes every tile).
class tile_session {
public:
    explicit tile_session(int k_bytes, tile_layout layout = tile_layout::tokens_a) : k_bytes_(k_bytes), layout_(layout) {
        TM_TILE_STORECONFIG(&callers_);
    }
    ~tile_session() { load_tile_state(callers_); }
    tile_session(const tile_session &) = delete;
    tile_session & operator=(const tile_session &) = delete;

    // The shape for n tokens (1..16) in force.
    void tokens(int n) {
        if (n == n_) return;
        configure_tiles(n, k_bytes_, layout_);
        n_ = n;
    }

private:
    tile_config callers_;
    int k_bytes_;
    tile_layout layout_;
    int n_ = 0;
};

} // namespace
} // namespace tmill::kernels
