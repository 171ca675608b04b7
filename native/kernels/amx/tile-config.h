// The 64-byte tile configuration LDTILECFG reads (palette 1), shared by the AMX kernels and the tile
// emulator of the C++ tests. Plain data only (see kernels/kernels.h's ODR rule).
#pragma once

#include <cstdint>

namespace tmill::kernels {

// Byte 0 palette (1 = the 8 tiles of at most 16 rows x 64 bytes; 0 = release), byte 1 the restart row
// (0), bytes 2-15 reserved zero; colsb[i] bytes per row of tile i (bytes 16-31; 32-47 reserved zero);
// rows[i] rows of tile i (bytes 48-55; 56-63 reserved zero). A tile not used has colsb = rows = 0.
struct alignas(64) tile_config {
    uint8_t palette_id;
    uint8_t start_row;
    uint8_t reserved0[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};
static_assert(sizeof(tile_config) == 64, "LDTILECFG reads exactly 64 bytes");

// Palette 1's limits (Sapphire Rapids; CPUID leaf 0x1D reports them, and no CPU so far has others).
constexpr int k_tile_count = 8;
constexpr int k_tile_max_rows = 16;
constexpr int k_tile_max_colsb = 64;

} // namespace tmill::kernels
