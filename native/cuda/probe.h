// Whether this process can run CUDA kernels, asked of the CUDA runtime without ever failing: the CUDA
// variant of the addon calls it before it is chosen (lib/native/device.ts), so a machine without a GPU,
// without a driver or with a driver older than the runtime gets a reason instead of a crash.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tmill::cuda {

// The oldest compute capability the variant's device code runs on: SASS for sm_80 (which also runs on
// sm_86/sm_89) and sm_90, PTX for compute_90 that the driver compiles for newer GPUs.
constexpr int k_min_cc_major = 8;

struct device_info {
    int index = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0;   // compute capability
    size_t total_bytes = 0;           // device memory
    size_t free_bytes = 0;            // free when probed
    bool usable = false;              // cc_major >= k_min_cc_major
};

struct probe_result {
    int runtime_version = 0;          // CUDA runtime linked into the variant, e.g. 13000
    int driver_version = 0;           // 0 when no driver is installed
    std::vector<device_info> devices;
    // Empty when at least one device is usable; otherwise why not (the runtime's error name and text,
    // "no CUDA device", or the devices that are too old).
    std::string error;
};

// Never throws; creates a context on each device it measures (cudaMemGetInfo).
probe_result probe();

// "sm_80, sm_90 (+ PTX compute_90)": the device code compiled into this build (CMakeLists.txt passes it).
const char * compiled_architectures();

} // namespace tmill::cuda
