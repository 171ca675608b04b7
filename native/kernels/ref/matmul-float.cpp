// Reference matmul rows for F32, F16 and BF16 weights (activations in the same type, as llama.cpp).
// Dot products accumulate in double: this is the accuracy yardstick for the SIMD variants.
#include "kernels/kernels.h"
#include "quant/fp16.h"

namespace tmill::kernels::ref {

namespace {
template <typename Load>
void rows_generic(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes, int64_t n_tok,
                  int64_t n_in, int64_t r0, int64_t r1, float * y, int64_t ldy, Load load) {
    for (int64_t t = 0; t < n_tok; ++t) {
        const char * xr = static_cast<const char *>(x) + size_t(t) * x_row_bytes;
        for (int64_t r = r0; r < r1; ++r) {
            const char * wr = static_cast<const char *>(w) + size_t(r) * w_row_bytes;
            double sum = 0.0;
            for (int64_t i = 0; i < n_in; ++i) sum += double(load(wr, i)) * double(load(xr, i));
            y[t * ldy + r] = float(sum);
        }
    }
}
} // namespace

void matmul_f32(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                     int64_t r0, int64_t r1, float * y, int64_t ldy) {
    rows_generic(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy,
                 [](const char * p, int64_t i) { return reinterpret_cast<const float *>(p)[i]; });
}

void matmul_f16(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                     int64_t r0, int64_t r1, float * y, int64_t ldy) {
    rows_generic(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy, [](const char * p, int64_t i) {
        return quant::fp16_to_fp32(reinterpret_cast<const uint16_t *>(p)[i]);
    });
}

void matmul_bf16(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                      int64_t r0, int64_t r1, float * y, int64_t ldy) {
    rows_generic(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy, [](const char * p, int64_t i) {
        return quant::bf16_to_fp32(reinterpret_cast<const uint16_t *>(p)[i]);
    });
}

} // namespace tmill::kernels::ref
