// tokenmill_cuda_tests: every device kernel of native/cuda against the CPU scalar reference (the baseline
// kernel table) on random data, on the first usable GPU. Without one it fails (exit 2) and prints why:
// a kernel that did not run is not a kernel that passed. Built by `npm run build:cuda -- --tests`, run by
// `npm run test:cuda`.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "cuda/kernels.h"
#include "cuda/probe.h"
#include "kernels/kernels.h"
#include "model/kv-storage.h"
#include "quant/fp16.h"
#include "quant/quant.h"

namespace {

using namespace tmill;

// A device copy of a host vector, freed on scope exit.
template <typename T>
class device_buffer {
public:
    explicit device_buffer(size_t n) : n_(n) { check(cudaMalloc(reinterpret_cast<void **>(&p_), std::max<size_t>(n, 1) * sizeof(T)), "cudaMalloc"); }
    explicit device_buffer(const std::vector<T> & host) : device_buffer(host.size()) {
        check(cudaMemcpy(p_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy to device");
    }
    ~device_buffer() { cudaFree(p_); }
    device_buffer(const device_buffer &) = delete;
    device_buffer & operator=(const device_buffer &) = delete;
    T * get() const { return p_; }
    std::vector<T> read() const {
        std::vector<T> host(n_);
        check(cudaDeviceSynchronize(), "kernel");
        check(cudaMemcpy(host.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
        return host;
    }
    static void check(cudaError_t e, const char * what) {
        if (e != cudaSuccess) throw error(error_code::engine_fault, std::string(what) + ": " + cudaGetErrorString(e));
    }

private:
    T * p_ = nullptr;
    size_t n_;
};

std::mt19937 rng(1234);

std::vector<float> randn(size_t n, float sigma = 1.0f) {
    std::normal_distribution<float> d(0.0f, sigma);
    std::vector<float> v(n);
    for (float & x : v) x = d(rng);
    return v;
}

// Largest |a - b| / (abs_tol + rel_tol * |b|) over the elements; <= 1 passes.
double worst(const std::vector<float> & a, const std::vector<float> & b, double abs_tol, double rel_tol) {
    double w = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
        const double e = std::fabs(double(a[i]) - double(b[i])) / (abs_tol + rel_tol * std::fabs(double(b[i])));
        w = std::isnan(e) ? INFINITY : std::max(w, e);
    }
    return w;
}

int n_failed = 0;

void report(const std::string & name, double w) {
    std::printf("%s %-40s worst error / tolerance = %.3g\n", w <= 1.0 ? "ok  " : "FAIL", name.c_str(), w);
    if (!(w <= 1.0)) ++n_failed;
}

const kernels::kernel_table & ref() {
    static const kernels::kernel_table t = kernels::kernels_for(kernels::isa_level::baseline);
    return t;
}

void test_rmsnorm() {
    const int64_t rows = 5, n = 4103;
    const std::vector<float> x = randn(size_t(rows * n), 3.0f), w = randn(size_t(n));
    std::vector<float> want(x.size());
    for (int64_t r = 0; r < rows; ++r) ref().rmsnorm(x.data() + r * n, w.data(), want.data() + r * n, n, 1e-5f);
    device_buffer<float> dx(x), dw(w), dy(x.size());
    cuda::rmsnorm(dx.get(), dw.get(), dy.get(), rows, n, 1e-5f, nullptr);
    report("rmsnorm", worst(dy.read(), want, 1e-6, 1e-5));
}

void test_rope(kernels::rope_style style, int64_t n_rot) {
    const int64_t rows = 7, n_head = 4, head_dim = 128;
    std::vector<float> x = randn(size_t(rows * n_head * head_dim));
    const std::vector<int32_t> pos = {0, 1, 2, 17, 511, 4095, 32767};
    device_buffer<float> dx(x);
    device_buffer<int32_t> dpos(pos);
    ref().rope(x.data(), rows, n_head, head_dim, n_rot, pos.data(), 10000.0f, 0.5f, nullptr, style);
    cuda::rope(dx.get(), rows, n_head, head_dim, n_rot, dpos.get(), 10000.0f, 0.5f, style, nullptr);
    // cosf/sinf on the device are within 2 ulp of the host's; the angles themselves are bitwise equal.
    report(std::string("rope ") + (style == kernels::rope_style::neox ? "neox" : "normal") + " n_rot " + std::to_string(n_rot),
           worst(dx.read(), x, 1e-5, 1e-5));
}

void test_silu_mul() {
    const size_t n = 10007;
    const std::vector<float> a = randn(n, 4.0f), b = randn(n);
    std::vector<float> want(n);
    ref().silu_mul(a.data(), b.data(), want.data(), int64_t(n));
    device_buffer<float> da(a), db(b), dy(n);
    cuda::silu_mul(da.get(), db.get(), dy.get(), int64_t(n), nullptr);
    report("silu_mul", worst(dy.read(), want, 1e-7, 1e-6));
}

// Bitwise: the device quantizer must write the bytes the CPU's does (the GEMV tests rely on it).
void test_quantize_q8_0() {
    const int64_t rows = 3, n = 4096;
    std::vector<float> x = randn(size_t(rows * n), 2.0f);
    std::fill(x.begin() + 64, x.begin() + 96, 0.0f);   // an all-zero block
    const size_t row_bytes = quant::row_bytes(ggml_type::q8_0, n);
    std::vector<uint8_t> want(rows * row_bytes);
    for (int64_t r = 0; r < rows; ++r) quant::quantize_row(ggml_type::q8_0, x.data() + r * n, want.data() + r * row_bytes, n);
    device_buffer<float> dx(x);
    device_buffer<uint8_t> dy(want.size());
    cuda::quantize_q8_0(dx.get(), dy.get(), rows, n, nullptr);
    const std::vector<uint8_t> got = dy.read();
    const size_t diff = size_t(std::inner_product(got.begin(), got.end(), want.begin(), 0, std::plus<>(),
                                                  [](uint8_t a, uint8_t b) { return a != b ? 1 : 0; }));
    report("quantize_q8_0 (bytes differing: " + std::to_string(diff) + ")", diff == 0 ? 0.0 : INFINITY);
}

// Quantized weights and activations as the CPU path prepares them; compared with the reference matmul rows.
void test_gemv(ggml_type type) {
    const int64_t n_in = 4096, n_out = 301, n_tok = 3;
    const std::vector<float> wf = randn(size_t(n_out * n_in), 0.05f), xf = randn(size_t(n_tok * n_in));
    const ggml_type act = quant::activation_type(type);
    const size_t w_row = quant::row_bytes(type, n_in), x_row = quant::row_bytes(act, n_in);
    std::vector<uint8_t> w(size_t(n_out) * w_row), x(size_t(n_tok) * x_row);
    for (int64_t r = 0; r < n_out; ++r) quant::quantize_row(type, wf.data() + r * n_in, w.data() + r * w_row, n_in);
    for (int64_t t = 0; t < n_tok; ++t) quant::quantize_row(act, xf.data() + t * n_in, x.data() + t * x_row, n_in);
    std::vector<float> want(size_t(n_tok * n_out));
    const kernels::matmul_rows_fn fn = type == ggml_type::q8_0 ? ref().matmul_q8_0 : type == ggml_type::q4_0 ? ref().matmul_q4_0 : ref().matmul_f16;
    fn(w.data(), w_row, x.data(), x_row, n_tok, n_in, 0, n_out, want.data(), n_out);

    device_buffer<uint8_t> dw(w);
    device_buffer<float> dy(want.size()), dxf(xf);
    if (type == ggml_type::f16) {
        cuda::gemv_f16(dw.get(), w_row, dxf.get(), n_tok, n_in, n_out, dy.get(), n_out, nullptr);
    } else {
        device_buffer<uint8_t> dxq(x.size());
        cuda::quantize_q8_0(dxf.get(), dxq.get(), n_tok, n_in, nullptr);
        (type == ggml_type::q8_0 ? cuda::gemv_q8_0 : cuda::gemv_q4_0)(dw.get(), w_row, dxq.get(), x_row, n_tok, n_in, n_out,
                                                                     dy.get(), n_out, nullptr);
        dy.read();   // synchronizes before dxq is freed
    }
    // Per-block products are exact; only the float sums' order differs (|y| ~ 3, 128 terms).
    report(std::string("gemv ") + (type == ggml_type::q8_0 ? "q8_0" : type == ggml_type::q4_0 ? "q4_0" : "f16"),
           worst(dy.read(), want, 1e-4, 1e-5));
}

// Exact attention in double with the query rounded to F16 (what both kernels approximate).
std::vector<float> attention_exact(const std::vector<float> & q, int64_t n_head, int64_t n_head_kv, int64_t hd, float scale,
                                   const std::vector<int32_t> & ctx, const std::vector<int32_t> & tables, int32_t max_blocks,
                                   int32_t bs, const std::vector<uint16_t> & k, const std::vector<uint16_t> & v) {
    std::vector<float> out(q.size());
    const size_t slot = size_t(n_head_kv * hd), block = size_t(bs) * slot;
    for (size_t t = 0; t < ctx.size(); ++t) {
        for (int64_t h = 0; h < n_head; ++h) {
            const int64_t kvh = h / (n_head / n_head_kv);
            const float * qh = q.data() + (t * n_head + h) * hd;
            std::vector<double> s(size_t(ctx[t]));
            for (int32_t j = 0; j < ctx[t]; ++j) {
                const size_t row = size_t(tables[t * max_blocks + j / bs]) * block + size_t(j % bs) * slot + size_t(kvh * hd);
                double dot = 0.0;
                for (int64_t d = 0; d < hd; ++d) dot += double(quant::fp16_to_fp32(quant::fp32_to_fp16(qh[d]))) * quant::fp16_to_fp32(k[row + d]);
                s[size_t(j)] = dot * scale;
            }
            const double mx = *std::max_element(s.begin(), s.end());
            double sum = 0.0;
            for (double & e : s) sum += (e = std::exp(e - mx));
            for (int64_t d = 0; d < hd; ++d) {
                double a = 0.0;
                for (int32_t j = 0; j < ctx[t]; ++j) {
                    const size_t row = size_t(tables[t * max_blocks + j / bs]) * block + size_t(j % bs) * slot + size_t(kvh * hd);
                    a += s[size_t(j)] * quant::fp16_to_fp32(v[row + d]);
                }
                out[(t * n_head + h) * hd + d] = float(a / sum);
            }
        }
    }
    return out;
}

void test_attention(int64_t hd) {
    const int64_t n_head = 8, n_head_kv = 2;
    const int32_t bs = k_kv_block_size, n_blocks = 64, max_blocks = 24;
    const std::vector<int32_t> ctx = {1, 37, 300, 129};
    const float scale = 1.0f / std::sqrt(float(hd));
    // Each token's blocks: a shuffled set of physical blocks, as a fragmented pool hands them out.
    std::vector<int32_t> tables(ctx.size() * max_blocks), phys(n_blocks);
    std::iota(phys.begin(), phys.end(), 0);
    for (size_t t = 0; t < ctx.size(); ++t) {
        std::shuffle(phys.begin(), phys.end(), rng);
        std::copy(phys.begin(), phys.begin() + max_blocks, tables.begin() + t * max_blocks);
    }
    const size_t kv_elems = size_t(n_blocks) * bs * n_head_kv * hd;
    std::vector<uint16_t> k(kv_elems), v(kv_elems);
    const std::vector<float> kf = randn(kv_elems), vf = randn(kv_elems);
    quant::quantize_row_f16(kf.data(), k.data(), int64_t(kv_elems));
    quant::quantize_row_f16(vf.data(), v.data(), int64_t(kv_elems));
    const std::vector<float> q = randn(ctx.size() * n_head * hd, 2.0f);

    std::vector<float> want(q.size()), scratch(2 * size_t(hd));
    const size_t slot = size_t(n_head_kv * hd);
    for (size_t t = 0; t < ctx.size(); ++t) {
        for (int64_t h = 0; h < n_head; ++h) {
            const int64_t kvh = h / (n_head / n_head_kv);
            ref().attend_f16(q.data() + (t * n_head + h) * hd, hd, scale, 0.0f, ctx[t], tables.data() + t * max_blocks, bs,
                             k.data() + kvh * hd, v.data() + kvh * hd, size_t(bs) * slot, slot,
                             want.data() + (t * n_head + h) * hd, scratch.data());
        }
    }
    device_buffer<float> dq(q), dout(q.size());
    device_buffer<int32_t> dctx(ctx), dtables(tables);
    device_buffer<uint16_t> dk(k), dv(v);
    cuda::attend_f16_paged(dq.get(), int64_t(ctx.size()), n_head, n_head_kv, hd, scale, dctx.get(), dtables.get(), max_blocks, bs,
                           dk.get(), dv.get(), dout.get(), nullptr);
    const std::vector<float> got = dout.read();
    const std::string name = "attend_f16_paged head_dim " + std::to_string(hd);
    // Against exact attention: only F32 rounding. Against the CPU kernel: its F16 value accumulator.
    report(name + " vs exact", worst(got, attention_exact(q, n_head, n_head_kv, hd, scale, ctx, tables, max_blocks, bs, k, v), 1e-5, 1e-4));
    report(name + " vs CPU reference", worst(got, want, 4e-3, 4e-3));
}

} // namespace

int main() {
    const cuda::probe_result probe = cuda::probe();
    const auto gpu = std::find_if(probe.devices.begin(), probe.devices.end(), [](const cuda::device_info & d) { return d.usable; });
    if (!probe.error.empty() || gpu == probe.devices.end()) {
        std::fprintf(stderr, "tokenmill_cuda_tests: no usable CUDA device (%s); the kernels were NOT run\n",
                     probe.error.empty() ? "none usable" : probe.error.c_str());
        return 2;
    }
    std::printf("device %d: %s, compute %d.%d; device code %s\n", gpu->index, gpu->name.c_str(), gpu->cc_major,
                gpu->cc_minor, cuda::compiled_architectures());
    try {
        cudaSetDevice(gpu->index);
        test_rmsnorm();
        test_rope(kernels::rope_style::normal, 128);
        test_rope(kernels::rope_style::neox, 64);
        test_silu_mul();
        test_quantize_q8_0();
        test_gemv(ggml_type::q8_0);
        test_gemv(ggml_type::q4_0);
        test_gemv(ggml_type::f16);
        test_attention(64);
        test_attention(128);
    } catch (const std::exception & e) {
        std::fprintf(stderr, "tokenmill_cuda_tests: %s\n", e.what());
        return 1;
    }
    std::printf("%d failed\n", n_failed);
    return n_failed == 0 ? 0 : 1;
}
