#include "cuda/probe.h"

#include <cuda_runtime_api.h>

#ifndef TM_CUDA_ARCHITECTURES
#error "TM_CUDA_ARCHITECTURES must name the compiled device code (CMakeLists.txt defines it)"
#endif

namespace tmill::cuda {

namespace {

std::string describe(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

} // namespace

const char * compiled_architectures() { return TM_CUDA_ARCHITECTURES; }

probe_result probe() {
    probe_result r;
    cudaRuntimeGetVersion(&r.runtime_version);
    cudaDriverGetVersion(&r.driver_version);   // leaves 0 when no driver is installed
    int count = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
        r.error = describe(e);
        cudaGetLastError();   // reset the last-error slot so no later call reports this one
        return r;
    }
    if (count == 0) {
        r.error = "no CUDA device";
        return r;
    }
    std::string reasons;   // why each unusable device is unusable, "; "-separated
    for (int i = 0; i < count; ++i) {
        device_info d;
        d.index = i;
        cudaDeviceProp prop{};
        cudaError_t e = cudaGetDeviceProperties(&prop, i);
        if (e == cudaSuccess) {
            d.name = prop.name;
            d.cc_major = prop.major;
            d.cc_minor = prop.minor;
            d.total_bytes = prop.totalGlobalMem;
            if (prop.major < k_min_cc_major) {
                reasons += "device " + std::to_string(i) + " (" + d.name + ") has compute capability " +
                           std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + ", below " +
                           std::to_string(k_min_cc_major) + ".0; ";
                r.devices.push_back(d);
                continue;
            }
            e = cudaSetDevice(i);
        }
        size_t total_bytes = 0;
        if (e == cudaSuccess) e = cudaMemGetInfo(&d.free_bytes, &total_bytes);
        d.usable = e == cudaSuccess;
        if (!d.usable) {
            reasons += "device " + std::to_string(i) + ": " + describe(e) + "; ";
            cudaGetLastError();
        }
        r.devices.push_back(d);
    }
    bool any = false;
    for (const device_info & d : r.devices) any = any || d.usable;
    if (!any) r.error = reasons.substr(0, reasons.size() - 2);
    return r;
}

} // namespace tmill::cuda
