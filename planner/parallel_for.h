// A fixed pool of threads running fn(i) for i in [0, n): each index is
// handled exactly once; results go into slots the caller pre-sized by index,
// so the output never depends on the thread count or on scheduling.
#pragma once

#include <cstddef>
#include <functional>

namespace parasim::planner {

// Runs fn(i) for every i in [0, n) on `threads` threads (0 = hardware
// concurrency; never more threads than indices). An exception thrown by fn
// stops the remaining work and the one of lowest index is rethrown here.
void ParallelFor(size_t n, int threads, const std::function<void(size_t)>& fn);

// The thread count `threads` resolves to (0 -> hardware concurrency, >= 1).
int ResolveThreads(int threads);

}  // namespace parasim::planner
