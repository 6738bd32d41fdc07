// ghash_mma_probe.cu: what the tensor-core GHASH (src/backends/cuda/ghash_mma.hpp) stands on,
// measured on the GPU it runs on: the issue rate of mma.sync m16n8k256 .b1 .and.popc (beside the
// int8 m16n8k32 for scale), and PTX's fragment layouts of A, B and D for that shape, checked on
// one warp against popcount(row AND column) on the host (tests/cpp/test_ghash_mma.cpp replays
// the kernel with these layouts). Build and run by hand on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o ghash_mma_probe bench/ghash_mma_probe.cu && ./ghash_mma_probe
// Prints bit-MACs a second and MMA instructions a clock per SM (device clock attribute) for 4, 8
// and 16 warps per SM, and how many of the 128 outputs differ from the assumed layout (0).
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
// kChains independent accumulators a warp, iters rounds: kBinary the m16n8k256 .b1 .and.popc,
// else the m16n8k32 s8 (the same registers, for scale).
template <bool kBinary, int kChains>
__global__ void mma_kernel(const uint32_t* in, int32_t* out, int iters) {
  uint32_t a0 = in[threadIdx.x], a1 = in[threadIdx.x + 32], a2 = in[threadIdx.x + 64], a3 = in[threadIdx.x + 96];
  uint32_t b0 = in[threadIdx.x + 128], b1 = in[threadIdx.x + 160];
  int32_t c[kChains][4] = {};
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < kChains; ++k) {
      if constexpr (kBinary)
        asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};"
                     : "+r"(c[k][0]), "+r"(c[k][1]), "+r"(c[k][2]), "+r"(c[k][3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0 ^ k), "r"(b1));
      else
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+r"(c[k][0]), "+r"(c[k][1]), "+r"(c[k][2]), "+r"(c[k][3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0 ^ k), "r"(b1));
    }
  }
  int32_t s = 0;
#pragma unroll
  for (int k = 0; k < kChains; ++k) s += c[k][0] ^ c[k][1] ^ c[k][2] ^ c[k][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
// Semantics check of b1: one warp, random A/B; compare with CPU popc(a&b) per (m,n).
__global__ void b1_one(const uint32_t* a, const uint32_t* b, int32_t* d) {
  int l = threadIdx.x;
  int32_t c[4] = {0, 0, 0, 0};
  asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
               : "r"(a[4 * l]), "r"(a[4 * l + 1]), "r"(a[4 * l + 2]), "r"(a[4 * l + 3]), "r"(b[2 * l]), "r"(b[2 * l + 1]));
  for (int i = 0; i < 4; ++i) d[4 * l + i] = c[i];
}
int main() {
  uint32_t* in; int32_t* out;
  cudaMalloc(&in, 4096); cudaMalloc(&out, 1 << 24);
  uint32_t h[1024]; uint64_t x = 88172645463325252ull;
  for (auto& v : h) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; v = (uint32_t)x; }
  cudaMemcpy(in, h, 4096, cudaMemcpyHostToDevice);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int clk; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  const int iters = 4096;
  for (int warps : {4, 8, 16}) {
    int blocks = sms * 2, threads = 32 * warps / 2;
    float best_b1 = 1e30f, best_s8 = 1e30f;
    for (int r = 0; r < 5; ++r) {
      cudaEventRecord(e0); mma_kernel<true, 4><<<blocks, threads>>>(in, out, iters); cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1); if (ms < best_b1) best_b1 = ms;
      cudaEventRecord(e0); mma_kernel<false, 4><<<blocks, threads>>>(in, out, iters); cudaEventRecord(e1); cudaEventSynchronize(e1);
      cudaEventElapsedTime(&ms, e0, e1); if (ms < best_s8) best_s8 = ms;
    }
    double mmas = double(blocks) * threads / 32 * iters * 4;
    double b1_macs = mmas * 16 * 8 * 256, s8_macs = mmas * 16 * 8 * 32;
    printf("warps/SM %d: b1 %.3f ms = %.1f T bit-MAC/s = %.2f MMA/clk/SM ; s8 %.3f ms = %.1f T MAC/s = %.2f MMA/clk/SM\n", warps,
           best_b1, b1_macs / best_b1 / 1e9, mmas / (best_b1 * 1e-3) / sms / (clk * 1e3), best_s8, s8_macs / best_s8 / 1e9,
           mmas / (best_s8 * 1e-3) / sms / (clk * 1e3));
  }
  // semantics
  int32_t d[128]; b1_one<<<1, 32>>>(in, in + 128, out); cudaMemcpy(d, out, 512, cudaMemcpyDeviceToHost);
  // A fragment m16n8k256 b1: a0: row g, cols (t*32..); layout per PTX: row = groupID (+8 for a1,a3), k-col = threadID_in_group*32 + (0 for a0,a1; 128 for a2,a3)
  int bad = 0;
  auto A = [&](int m, int k) -> int { // find thread/reg holding A[m][k]
    int g = m % 8, hi = m / 8, kk = k % 128, half = k / 128, t = kk / 32, bit = kk % 32;
    int lane = g * 4 + t, reg = hi + 2 * half;
    return (h[4 * lane + reg] >> bit) & 1; };
  auto B = [&](int k, int n) -> int { int g = n, half = k / 128, kk = k % 128, t = kk / 32, bit = kk % 32;
    int lane = g * 4 + t; return (h[128 + 2 * lane + half] >> bit) & 1; };
  for (int lane = 0; lane < 32; ++lane) for (int i = 0; i < 4; ++i) {
    int g = lane / 4, t = lane % 4; int m = g + 8 * (i / 2), n = 2 * t + (i % 2);
    int s = 0; for (int k = 0; k < 256; ++k) s += A(m, k) & B(k, n);
    if (s != d[4 * lane + i]) ++bad;
  }
  printf("b1 semantics: %d of 128 outputs differ from the assumed fragment layout\n", bad);
  return 0;
}
