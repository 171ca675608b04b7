// The row count of the 16-row weight layouts repacked at load (quant/q4-k-x16.h, quant/q8-0-x16.h): a group's
// rows fill the 16 int32 lanes of a 512-bit register, or the 16 columns of an AMX tile.
#pragma once

namespace tmill::quant {

constexpr int k_x16_rows = 16;

} // namespace tmill::quant
