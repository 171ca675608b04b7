// Turns a failed kernel launch into tmill::error(engine_fault) naming the kernel and the CUDA error.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "base/error.h"

namespace tmill::cuda {

inline void check_launch(const char * kernel) {
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        throw error(error_code::engine_fault,
                    std::string(kernel) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
    }
}

} // namespace tmill::cuda
