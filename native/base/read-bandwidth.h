// The machine's memory read bandwidth as decode sees it: several threads streaming through a buffer far
// larger than the caches. Benchmarks divide it by the bytes a decode step reads to get the step's limit.
#pragma once

#include <cstddef>

namespace tmill {

// Best of `reps` passes of `n_threads` threads summing disjoint slices of a `bytes` buffer, in bytes per
// second. Allocates and touches the buffer first (so page faults stay outside the timing); blocks the
// caller for roughly (reps + 1) * bytes / bandwidth. Throws tmill::error (invalid_argument) for
// bytes < 1 MiB, n_threads < 1 or reps < 1.
double measure_read_bandwidth(size_t bytes, int n_threads, int reps);

} // namespace tmill
