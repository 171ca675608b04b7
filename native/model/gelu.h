// GELU-gated rows for the gemma FFN: y = gelu(gate) * up, with llama.cpp's CPU numerics.
#pragma once

#include <cstdint>

namespace tmill {

// y (n) = gelu_tanh(a) * b; y may alias a or b.
// NOTE(gelu): ggml's CPU build evaluates GELU through a table over every F16 value: a in (-10, 10) is
// rounded to F16, looked up, and the F16 result multiplied by b in F32; a <= -10 gives 0 and a >= 10
// gives a * b. The table here holds the same values (the tanh approximation in F32, rounded to F16), so
// activations match node-llama-cpp's bit for bit wherever tanhf agrees to within half an F16 ulp.
void gelu_mul(const float * a, const float * b, float * y, int64_t n);

// The tanh approximation of GELU in F32, as ggml writes it (the table's source; exposed for tests).
float gelu_tanh_f32(float x);

} // namespace tmill
