// microbench.cu: instruction latency and throughput on the present GPU, for the lab's
// nishikawa-microbench (python/gpucrypt/lab/microbench.py compiles it with nvcc for this GPU's
// architecture, checks every kernel's loop in the SASS with cuobjdump, then runs it).
//
//   microbench            one JSON object per line on stdout: the device, then each measurement
//
// Each operation OP has two kernels: lat_OP (one dependent chain per thread, one warp per SM:
// cycles per instruction = latency) and thr_OP (kChains independent chains per thread, 32 warps
// per SM: instructions per clock per SM = throughput). The loop body holds kUnroll dependent
// instructions per chain (see RING_OP). Every operation is inline PTX so the front end cannot
// fold the chain algebraically (x ^ y ^ y = x); ptxas still fuses two-input logic operations
// into LOP3s (the xor/and/or kernels lose about 40% of their instructions with CUDA 13), which is
// why the lab reads each loop back from the SASS and rejects a kernel whose loop does not hold
// the intended instruction the intended number of times. Cycles come from clock64() on each SM
// (max end - min start of the blocks that ran there), so no clock-rate assumption enters.
// lat_lop3 (what XOR/AND/OR compile to) is also launched with 1..32 warps per SM: throughput
// against active warps (their Fig. 9).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

struct BlockClock {   // per block: the SM it ran on and clock64() around its loop
  unsigned sm;
  long long start, end;
};

namespace {

constexpr int kUnroll = 128;  // chain steps (instructions) per loop iteration, a multiple of 4
constexpr int kChains = 4;    // independent chains per thread in the throughput kernels

__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// One struct per operation. A chain is a ring of four registers r[0..3]: step k replaces the
// oldest value with OP(newest, oldest) (three-input operations also read the second newest), so
// every instruction depends on the one before it, and each value is a function of four inputs.
// The simpler "a ^= b; b ^= a" of the paper is a function of two inputs only, and ptxas folds a
// whole unrolled loop of it into three LOP3s; four inputs are more than one LOP3 can fold.
// Operands: %0 the oldest (replaced), %1 the newest, %2 the second newest, %3 p, %4 s.
#define RING_OP(NAME, TYPE, C, PTX)                                                          \
  struct NAME {                                                                              \
    using T = TYPE;                                                                          \
    static __device__ __forceinline__ void step(T& oldest, T newest, T second, T p, unsigned s) { \
      asm volatile(PTX : "+" C(oldest) : C(newest), C(second), C(p), "r"(s));                \
    }                                                                                        \
  };

RING_OP(OpAdd, unsigned, "r", "add.u32 %0, %1, %0;")
RING_OP(OpSub, unsigned, "r", "sub.u32 %0, %1, %0;")
RING_OP(OpMul, unsigned, "r", "mul.lo.u32 %0, %1, %0;")
RING_OP(OpMad, unsigned, "r", "mad.lo.u32 %0, %1, %0, %2;")
RING_OP(OpXor, unsigned, "r", "xor.b32 %0, %1, %0;")
RING_OP(OpAnd, unsigned, "r", "and.b32 %0, %1, %0;")
RING_OP(OpOr, unsigned, "r", "or.b32 %0, %1, %0;")
// Shifts take a register amount (a constant would become IMAD.SHL): a plain chain newest << s.
RING_OP(OpShl, unsigned, "r", "shl.b32 %0, %1, %4;")
RING_OP(OpShr, unsigned, "r", "shr.u32 %0, %1, %4;")
RING_OP(OpFadd, float, "f", "add.rn.f32 %0, %1, %0;")
RING_OP(OpFmul, float, "f", "mul.rn.f32 %0, %1, %0;")
RING_OP(OpDadd, double, "d", "add.rn.f64 %0, %1, %0;")
RING_OP(OpDmul, double, "d", "mul.rn.f64 %0, %1, %0;")
// Keccak's chi as one LOP3: newest ^ (~second & oldest).
RING_OP(OpLop3, unsigned, "r", "lop3.b32 %0, %1, %2, %0, 0xD2;")
RING_OP(OpPrmt, unsigned, "r", "prmt.b32 %0, %1, %0, %4;")
// Two PTX adds that ptxas is expected to fuse into one IADD3 (newest + second + oldest).
RING_OP(OpIadd3, unsigned, "r", "{ .reg .u32 t; add.u32 t, %1, %2; add.u32 %0, t, %0; }")
RING_OP(OpShf, unsigned, "r", "shf.l.wrap.b32 %0, %1, %0, %4;")

template <typename Op, int kNumChains>
__device__ __forceinline__ void run_chains(int iters, typename Op::T p, unsigned s, typename Op::T* sink,
                                           BlockClock* clocks) {
  using T = typename Op::T;
  T r[kNumChains][4];
#pragma unroll
  for (int c = 0; c < kNumChains; ++c)
#pragma unroll
    for (int j = 0; j < 4; ++j) r[c][j] = p + T(threadIdx.x * 4 + c * 16 + j + 1);
  __syncthreads();
  const long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {   // step k: r[(k+1)%4] (oldest) = OP(r[k%4], r[(k+1)%4])
#pragma unroll
      for (int c = 0; c < kNumChains; ++c) Op::step(r[c][(k + 1) & 3], r[c][k & 3], r[c][(k + 3) & 3], p, s);
    }
  }
  __syncthreads();
  const long long end = clock64();
  T acc = T(0);
#pragma unroll
  for (int c = 0; c < kNumChains; ++c) acc += r[c][0] + r[c][1] + r[c][2] + r[c][3];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;  // keeps every chain alive
  if (threadIdx.x == 0) clocks[blockIdx.x] = BlockClock{sm_id(), start, end};
}

}  // namespace

#define KERNELS(NAME, OP)                                                                    \
  extern "C" __global__ void lat_##NAME(int iters, OP::T p, unsigned s, OP::T* sink,         \
                                        BlockClock* clocks) {                                \
    run_chains<OP, 1>(iters, p, s, sink, clocks);                                            \
  }                                                                                          \
  extern "C" __global__ void thr_##NAME(int iters, OP::T p, unsigned s, OP::T* sink,         \
                                        BlockClock* clocks) {                                \
    run_chains<OP, kChains>(iters, p, s, sink, clocks);                                      \
  }

KERNELS(add, OpAdd)
KERNELS(sub, OpSub)
KERNELS(mul, OpMul)
KERNELS(mad, OpMad)
KERNELS(xor, OpXor)
KERNELS(and, OpAnd)
KERNELS(or, OpOr)
KERNELS(shl, OpShl)
KERNELS(shr, OpShr)
KERNELS(fadd, OpFadd)
KERNELS(fmul, OpFmul)
KERNELS(dadd, OpDadd)
KERNELS(dmul, OpDmul)
KERNELS(lop3, OpLop3)
KERNELS(prmt, OpPrmt)
KERNELS(iadd3, OpIadd3)
KERNELS(shf, OpShf)

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "microbench: %s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

struct Device {
  int sm_count = 0;
  int max_threads_per_sm = 0;
  void* sink = nullptr;
  BlockClock* clocks = nullptr;
};

// Launches a kernel (best of 3 runs) and returns instructions per clock per SM.
template <typename T>
double ops_per_clock_per_sm(const Device& dev, void (*kernel)(int, T, unsigned, T*, BlockClock*), int blocks,
                            int threads, int iters, double ops_per_thread) {
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    kernel<<<blocks, threads>>>(iters, T(3), 1u, static_cast<T*>(dev.sink), dev.clocks);
    check(cudaGetLastError(), "launch");
    check(cudaDeviceSynchronize(), "kernel");
    std::vector<BlockClock> clocks(blocks);
    check(cudaMemcpy(clocks.data(), dev.clocks, blocks * sizeof(BlockClock), cudaMemcpyDeviceToHost), "copy");
    std::map<unsigned, std::pair<long long, long long>> span;   // per SM: min start, max end
    std::map<unsigned, int> blocks_on;
    for (const BlockClock& c : clocks) {
      auto it = span.find(c.sm);
      if (it == span.end()) span[c.sm] = {c.start, c.end};
      else it->second = {std::min(it->second.first, c.start), std::max(it->second.second, c.end)};
      ++blocks_on[c.sm];
    }
    double sum = 0;
    for (const auto& [sm, s] : span) sum += blocks_on[sm] * threads * ops_per_thread / double(s.second - s.first);
    best = std::max(best, sum / span.size());
  }
  return best;
}

template <typename T>
void measure(const Device& dev, const char* name, void (*lat)(int, T, unsigned, T*, BlockClock*),
             void (*thr)(int, T, unsigned, T*, BlockClock*)) {
  const int lat_iters = 2000, thr_iters = 100;
  const double lat_ops = 1.0 * kUnroll * lat_iters, thr_ops = 1.0 * kUnroll * kChains * thr_iters;
  // Latency: one warp per SM; per thread, lat_ops dependent instructions.
  const double lat_rate = ops_per_clock_per_sm(dev, lat, dev.sm_count, 32, lat_iters, lat_ops);
  std::printf("{\"op\": \"%s\", \"mode\": \"latency\", \"kernel\": \"lat_%s\", \"warps_per_sm\": 1, "
              "\"ops_per_loop\": %d, \"ops_per_clock_per_sm\": %.4f, \"cycles_per_op\": %.3f}\n",
              name, name, kUnroll, lat_rate, 32.0 / lat_rate);
  const double thr_rate = ops_per_clock_per_sm(dev, thr, dev.sm_count, 1024, thr_iters, thr_ops);
  std::printf("{\"op\": \"%s\", \"mode\": \"throughput\", \"kernel\": \"thr_%s\", \"warps_per_sm\": 32, "
              "\"ops_per_loop\": %d, \"ops_per_clock_per_sm\": %.4f}\n",
              name, name, kUnroll * kChains, thr_rate);
}

}  // namespace

int main() {
  Device dev;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  dev.sm_count = prop.multiProcessorCount;
  dev.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  const size_t max_blocks = size_t(dev.sm_count) * 2;
  check(cudaMalloc(&dev.sink, max_blocks * 1024 * sizeof(double)), "cudaMalloc");
  check(cudaMalloc(&dev.clocks, max_blocks * sizeof(BlockClock)), "cudaMalloc");
  std::printf("{\"device\": \"%s\", \"compute_capability\": \"%d.%d\", \"sm_count\": %d, \"unroll\": %d, "
              "\"chains\": %d}\n", prop.name, prop.major, prop.minor, dev.sm_count, kUnroll, kChains);
  measure<unsigned>(dev, "add", lat_add, thr_add);
  measure<unsigned>(dev, "sub", lat_sub, thr_sub);
  measure<unsigned>(dev, "mul", lat_mul, thr_mul);
  measure<unsigned>(dev, "mad", lat_mad, thr_mad);
  measure<unsigned>(dev, "xor", lat_xor, thr_xor);
  measure<unsigned>(dev, "and", lat_and, thr_and);
  measure<unsigned>(dev, "or", lat_or, thr_or);
  measure<unsigned>(dev, "shl", lat_shl, thr_shl);
  measure<unsigned>(dev, "shr", lat_shr, thr_shr);
  measure<float>(dev, "fadd", lat_fadd, thr_fadd);
  measure<float>(dev, "fmul", lat_fmul, thr_fmul);
  measure<double>(dev, "dadd", lat_dadd, thr_dadd);
  measure<double>(dev, "dmul", lat_dmul, thr_dmul);
  measure<unsigned>(dev, "lop3", lat_lop3, thr_lop3);
  measure<unsigned>(dev, "prmt", lat_prmt, thr_prmt);
  measure<unsigned>(dev, "iadd3", lat_iadd3, thr_iadd3);
  measure<unsigned>(dev, "shf", lat_shf, thr_shf);
  // Their Fig. 9: logic (LOP3) dependent chains against the number of active warps per SM.
  for (int warps = 1; warps <= 32; warps *= 2) {
    const int iters = 500;
    const double rate = ops_per_clock_per_sm<unsigned>(dev, lat_lop3, dev.sm_count, 32 * warps, iters,
                                                       1.0 * kUnroll * iters);
    std::printf("{\"op\": \"lop3\", \"mode\": \"warps\", \"kernel\": \"lat_lop3\", \"warps_per_sm\": %d, "
                "\"ops_per_loop\": %d, \"ops_per_clock_per_sm\": %.4f}\n", warps, kUnroll, rate);
  }
  cudaFree(dev.sink);
  cudaFree(dev.clocks);
  return 0;
}
