// bench_support.cuh: helpers shared by the GPU benchmarks (gpu_bench.cu, shape_sweep.cu).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace gpucrypt::bench {

// Exits with a message naming the call when a CUDA call failed (benchmarks stop at the first error).
inline void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(status));
    std::exit(2);
  }
}

// Fills words with splitmix64 output: random, never all zero (benchmarks never run on zeros).
static __global__ void fill_random(uint64_t* words, size_t num_words, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < num_words; i += size_t(gridDim.x) * blockDim.x) {
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;  // splitmix64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    words[i] = z ^ (z >> 31);
  }
}

// CUDA events around what fn() enqueues on a stream: the milliseconds of one run.
class EventTimer {
 public:
  EventTimer() {
    cuda_check(cudaEventCreate(&start_), "cudaEventCreate");
    cuda_check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  template <class Fn>
  double ms(cudaStream_t stream, Fn&& fn) {
    cuda_check(cudaEventRecord(start_, stream), "cudaEventRecord");
    fn();
    cuda_check(cudaEventRecord(stop_, stream), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop_), "timed run");
    float t = 0;
    cuda_check(cudaEventElapsedTime(&t, start_, stop_), "cudaEventElapsedTime");
    return t;
  }

 private:
  cudaEvent_t start_, stop_;
};

// Times fn() (which enqueues on stream) reps times after 3 warm-ups; returns milliseconds.
template <class Fn>
std::vector<double> time_runs(cudaStream_t stream, int reps, Fn&& fn) {
  EventTimer timer;
  for (int i = 0; i < 3; ++i) fn();
  cuda_check(cudaStreamSynchronize(stream), "warm-up");
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) ms.push_back(timer.ms(stream, fn));
  return ms;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace gpucrypt::bench
