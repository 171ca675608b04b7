// The machine's memory read bandwidth as decode sees it: several threads streaming through memory far larger
// than the caches. Benchmarks divide it by the bytes a decode step reads to get the step's limit.
#pragma once

#include <cstddef>
#include <vector>

#include "base/byte-range.h"

namespace tmill {

// Best of `reps` passes of `n_threads` threads summing disjoint slices of a fresh `bytes` buffer, in bytes
// per second. Allocates and touches the buffer first (so page faults stay outside the timing); blocks the
// caller for roughly (reps + 1) * bytes / bandwidth. Throws tmill::error (invalid_argument) for
// bytes < 1 MiB, n_threads < 1 or reps < 1.
double measure_read_bandwidth(size_t bytes, int n_threads, int reps);

// The same passes over existing memory, in bytes per second; `ranges` are read in 8-byte words (at most 7
// bytes at either end of a range are skipped). Reading a model's weights gives the limit of the very pages
// a decode streams, and is quick enough
// (a fraction of a second for a 1 GB model) to be taken beside each decode measurement: on a shared host the
// rate drifts by a factor of two within minutes (docs/kernels.md, "The decode bandwidth limit").
// Ranges that fit in the caches give the caches' rate, which is then the bound of that decode too. Throws
// tmill::error (invalid_argument) when the ranges hold no whole word, n_threads < 1 or reps < 1.
double measure_read_bandwidth(const std::vector<byte_range> & ranges, int n_threads, int reps);

} // namespace tmill
