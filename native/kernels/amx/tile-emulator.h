// A scalar emulation of the AMX tile operations the AMX kernels use (LDTILECFG, STTILECFG, TILERELEASE,
// TILELOADD, TILESTORED, TILEZERO, TDPBSSD), for the C++ tests only: the kernels' sources are compiled a second time
// against it (TM_KERNELS_AMX_EMULATED, see kernels/amx/tile-ops.h), so they run — and are checked — on
// machines without AMX. It is deliberately stricter than the hardware: every condition under which the
// instruction raises #GP or #UD is a fault here (the conditions of the SDM's pseudo-code, as Bochs's AMX
// model also checks them), and so are a configuration with palette 0 or a non-zero start row and reading a
// tile nothing has written since the configuration (the hardware would read zeros; for our kernels that is
// always a bug). A fault throws tile_emulator::fault, which fails the test that ran the kernel. State is per
// thread, as the tile registers and their configuration are, so a kernel that configures on one thread and
// computes on another faults too; and one per process, shared by every source that emulates them. The
// operations have internal linkage, as kernels/tiling.h.
#pragma once

#include "kernels/amx/tile-config.h"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tmill::kernels::tile_emulation {

struct tile {
    int rows = 0;
    int colsb = 0;
    bool written = false;
    uint8_t data[k_tile_max_rows][k_tile_max_colsb];
};

struct state {
    bool configured = false;
    tile_config config{};    // as loaded (what STTILECFG stores; all zero when not configured)
    uint64_t products = 0;   // TDPBSSDs executed on this thread (the tests check the tiles really ran)
    tile t[k_tile_count];
};

// The calling thread's tile state: one per thread for the whole process, as the CPU's, shared by every
// translation unit that emulates the tiles (each AMX kernel source's emulated build, the tests). Defined in the
// emulated build of kernels/amx/table.cpp.
state & thread_state();

} // namespace tmill::kernels::tile_emulation

namespace tmill::kernels {
namespace {
namespace tile_emulator {

struct fault : std::logic_error {
    using std::logic_error::logic_error;
};

using tile_emulation::state;
using tile_emulation::thread_state;
using tile_emulation::tile;

[[noreturn]] inline void raise(const std::string & what) { throw fault("AMX tile emulator: " + what); }

inline tile & usable(int i, const char * op) {
    state & s = thread_state();
    if (!s.configured) raise(std::string(op) + " before LDTILECFG (or after TILERELEASE): #UD");
    if (i < 0 || i >= k_tile_count) raise(std::string(op) + ": no tile tmm" + std::to_string(i));
    tile & t = s.t[i];
    if (t.rows == 0 || t.colsb == 0) raise(std::string(op) + ": tmm" + std::to_string(i) + " is not configured (0 rows or 0 bytes)");
    return t;
}

inline void loadconfig(const void * p) {
    tile_config c;
    std::memcpy(&c, p, sizeof c);
    // Palette 0 would return to the init state (the kernels release with TILERELEASE instead), and a start row
    // is only ever non-zero when the OS restarts an interrupted tile load: both faults here.
    if (c.palette_id != 1) raise("LDTILECFG palette " + std::to_string(c.palette_id) + " (palette 1 only; > 1 is #GP)");
    if (c.start_row != 0) raise("LDTILECFG start_row " + std::to_string(c.start_row) + " (only an interrupted load restarts)");
    for (uint8_t b : c.reserved0)
        if (b) raise("LDTILECFG reserved bytes 2-15 not zero: #GP");
    for (int i = 0; i < 16; ++i) {
        const int rows = c.rows[i], colsb = c.colsb[i];
        if (i >= k_tile_count) {
            if (rows || colsb) raise("LDTILECFG reserved tile fields (tiles 8-15) not zero: #GP");
            continue;
        }
        if (rows > k_tile_max_rows) raise("LDTILECFG tmm" + std::to_string(i) + " rows " + std::to_string(rows) + " > 16: #GP");
        if (colsb > k_tile_max_colsb) raise("LDTILECFG tmm" + std::to_string(i) + " colsb " + std::to_string(colsb) + " > 64: #GP");
        if ((rows == 0) != (colsb == 0)) raise("LDTILECFG tmm" + std::to_string(i) + ": rows and colsb must both be zero or both non-zero");
    }
    state & s = thread_state();
    s.configured = true;
    s.config = c;
    for (int i = 0; i < k_tile_count; ++i) {
        s.t[i].rows = c.rows[i];
        s.t[i].colsb = c.colsb[i];
        s.t[i].written = false;
        std::memset(s.t[i].data, 0, sizeof s.t[i].data);
    }
}

inline void release() {
    state & s = thread_state();
    s.configured = false;
    s.config = tile_config{};
}

// The configuration in force, as LDTILECFG took it; 64 zero bytes (palette 0) when none is.
inline void storeconfig(void * p) { std::memcpy(p, &thread_state().config, sizeof(tile_config)); }

// Rows of colsb bytes from base + r * stride (the bytes past colsb and the rows past rows read as zero).
inline void loadd(int i, const void * base, long stride) {
    tile & t = usable(i, "TILELOADD");
    if (t.colsb % 4) raise("TILELOADD of tmm" + std::to_string(i) + " whose colsb is not a multiple of 4: #UD");
    std::memset(t.data, 0, sizeof t.data);
    for (int r = 0; r < t.rows; ++r) std::memcpy(t.data[r], static_cast<const char *>(base) + r * stride, size_t(t.colsb));
    t.written = true;
}

inline void stored(int i, void * base, long stride) {
    tile & t = usable(i, "TILESTORED");
    if (t.colsb % 4) raise("TILESTORED of tmm" + std::to_string(i) + " whose colsb is not a multiple of 4: #UD");
    if (!t.written) raise("TILESTORED of tmm" + std::to_string(i) + ", which nothing wrote since LDTILECFG");
    for (int r = 0; r < t.rows; ++r) std::memcpy(static_cast<char *>(base) + r * stride, t.data[r], size_t(t.colsb));
}

inline void zero(int i) {
    tile & t = usable(i, "TILEZERO");
    std::memset(t.data, 0, sizeof t.data);
    t.written = true;
}

// C (M x N int32) += A (M x K int8 quads) . B (K x N int8 quads): for each (m, n), the K dot products of
// A's quad k of row m with B's quad n of row k, each of 4 signed byte products, added to C in int32.
inline void dpbssd(int c, int a, int b) {
    tile & tc = usable(c, "TDPBSSD dst");
    tile & ta = usable(a, "TDPBSSD src1");
    tile & tb = usable(b, "TDPBSSD src2");
    if (c == a || c == b || a == b) raise("TDPBSSD operands tmm" + std::to_string(c) + ", tmm" + std::to_string(a) + ", tmm" + std::to_string(b) + " not distinct: #UD");
    if (!ta.written || !tb.written || !tc.written) raise("TDPBSSD reads a tile nothing wrote since LDTILECFG");
    if (tc.colsb % 4 || ta.colsb % 4 || tb.colsb % 4) raise("TDPBSSD with a tile whose colsb is not a multiple of 4: #UD");
    if (tc.rows != ta.rows) raise("TDPBSSD M: dst rows " + std::to_string(tc.rows) + " != src1 rows " + std::to_string(ta.rows) + ": #UD");
    if (ta.colsb / 4 != tb.rows) raise("TDPBSSD K: src1 colsb / 4 = " + std::to_string(ta.colsb / 4) + " != src2 rows " + std::to_string(tb.rows) + ": #UD");
    if (tc.colsb != tb.colsb) raise("TDPBSSD N: dst colsb " + std::to_string(tc.colsb) + " != src2 colsb " + std::to_string(tb.colsb) + ": #UD");
    const int m_rows = tc.rows, n_cols = tc.colsb / 4, k_quads = ta.colsb / 4;
    ++thread_state().products;
    for (int m = 0; m < m_rows; ++m)
        for (int n = 0; n < n_cols; ++n) {
            int32_t acc;
            std::memcpy(&acc, &tc.data[m][4 * n], 4);
            uint32_t sum = uint32_t(acc);   // the hardware wraps; unsigned keeps that defined
            for (int k = 0; k < k_quads; ++k)
                for (int e = 0; e < 4; ++e)
                    sum += uint32_t(int32_t(int8_t(ta.data[m][4 * k + e])) * int32_t(int8_t(tb.data[k][4 * n + e])));
            acc = int32_t(sum);
            std::memcpy(&tc.data[m][4 * n], &acc, 4);
        }
}

} // namespace tile_emulator
} // namespace
} // namespace tmill::kernels
