// parallel.hpp: the CPU backend's worker threads, for a program that spreads its own host work
// over them as the library does (Python's bindings fill many output objects and copy staging
// buffers so). It is the one process-wide pool the library's CPU work runs on (sized to the
// machine, or GPUCRYPT_CPU_THREADS), so work given here shares the cores instead of
// oversubscribing them. The pool itself is src/backends/cpu/thread_pool.hpp.
#pragma once

#include <cstddef>
#include <functional>

namespace gpucrypt::cpu {

// The pool's size, the calling thread included (it works too): what `gpucrypt speed` reports.
unsigned num_threads();

// Calls body(begin, end) over contiguous ranges covering [0, num_items), on the pool, and returns
// when all are done. Ranges are multiples of `grain` items (except the last). Runs inline when the
// work is a single grain. An exception from body is rethrown here.
void parallel_for(size_t num_items, size_t grain, const std::function<void(size_t begin, size_t end)>& body);

// memcpy (or, with src == nullptr, a zero fill the compiler may not drop: secure_zero, a wipe) of
// n bytes split into 1 MiB pieces over the pool.
// Used for host copies into and out of the GPU's page-locked staging buffers: one core copies 6-10
// GB/s, a fifth of what PCIe moves, so a single-threaded copy would bound every host-memory
// transfer (measured on the H200 host: a 16 MiB batch spent 6 of its 7.5 ms there).
void parallel_copy(void* dst, const void* src, size_t n);

// Offers the 2 MiB-aligned whole pages inside [p, p + n) of anonymous host memory about to be
// written for the first time (a large malloc, a Python bytes object) to transparent huge pages
// (Linux madvise MADV_HUGEPAGE; advice only: nothing elsewhere or where the kernel declines). A
// buffer of hundreds of MiB written once otherwise takes a page fault per 4 KiB, about 2.5 us
// each: a 256 MiB batch arena, 65,536 faults, cost more than its encryption on the GPU.
// (The base layer's, beside secure_zero: the batch plan's buffers use it too.)
void advise_huge_pages(void* p, size_t n);

}  // namespace gpucrypt::cpu
