/* keccak.h: Keccak-p[1600, n] and the sponge around it (SHA-3, SHAKE, original Keccak, cSHAKE,
 * TurboSHAKE and the KangarooTwelve leaves all run through here).
 *
 * Constant-time: the permutation is a fixed sequence of XOR, AND-NOT and constant rotations with
 * no tables indexed by data (the round constants are indexed by the public round number only),
 * and the sponge helpers branch and index only on public lengths (rate, message length, output
 * length), never on message or state contents. On CUDA some rotations are computed as integer
 * multiplications and multiply-adds by public constants (powers of two, immediates in the
 * instruction), which run in fixed time whatever the operand values (GC_KECCAK_FMA_ROTATIONS).
 *
 * State: 25 lanes of 64 bits, lane x + 5y holding bytes 8(x + 5y) .. 8(x + 5y) + 7 of the state
 * in little-endian order (FIPS 202 section 3.1.2 with the usual lane packing). Rates are in
 * bytes and must be multiples of 8 below 200 (every standard rate is: 168, 144, 136, 104, 72).
 *
 * Why the code looks the way it does: a GPU keeps a thread's lanes in registers only if every
 * array index is known at compile time. So every loop over lanes (and, on OpenCL GPUs, over
 * rounds) is unrolled and guarded by a public condition instead of having a run-time trip count,
 * and the round constants sit in a function-local array that the unrolled loop indexes with
 * constants. CUDA loops over pairs of rounds (a -> e, e -> a: every lane index is still a
 * constant) with the round constants in constant memory: GC_KECCAK_GPU_ROUNDS_PER_STEP says why.
 * Inlined into a kernel with a local state array, nvcc keeps the whole sponge in registers
 * (-Xptxas -v, sm_90: no stack frame, no spills; 72 registers for SHA3-256 with constant rate
 * and rounds, 113 when rate and rounds are kernel arguments).
 */
#ifndef GPUCRYPT_CORE_KECCAK_H
#define GPUCRYPT_CORE_KECCAK_H

#include "platform.h"

#define GC_KECCAK_NUM_LANES 25
#define GC_KECCAK_STATE_BYTES 200
#define GC_KECCAK_MAX_ROUNDS 24

/* Sponge rates in bytes (capacity = 200 - rate). */
#define GC_KECCAK_RATE_128 168 /* SHAKE128, cSHAKE128, TurboSHAKE128, KT128 */
#define GC_KECCAK_RATE_224 144 /* SHA3-224, Keccak-224 */
#define GC_KECCAK_RATE_256 136 /* SHA3-256, SHAKE256, cSHAKE256, TurboSHAKE256, KT256 */
#define GC_KECCAK_RATE_384 104 /* SHA3-384, Keccak-384 */
#define GC_KECCAK_RATE_512 72  /* SHA3-512, Keccak-512 */

/* Domain-separation bytes: the message suffix bits and the first padding bit, as one byte that is
 * XORed right after the message (FIPS 202 appendix B.2; SP 800-185; RFC 9861). */
#define GC_KECCAK_DOMAIN_KECCAK 0x01       /* original Keccak submission (pre-FIPS 202) */
#define GC_KECCAK_DOMAIN_CSHAKE 0x04       /* cSHAKE with a non-empty N or S */
#define GC_KECCAK_DOMAIN_SHA3 0x06         /* SHA3-224 .. SHA3-512 */
#define GC_KECCAK_DOMAIN_SHAKE 0x1F        /* SHAKE128/256 (and TurboSHAKE's default D) */
#define GC_KECCAK_DOMAIN_KT_SINGLE 0x07    /* KangarooTwelve, message fits one chunk */
#define GC_KECCAK_DOMAIN_KT_LEAF 0x0B      /* KangarooTwelve, chaining value of a leaf chunk */
#define GC_KECCAK_DOMAIN_KT_FINAL 0x06     /* KangarooTwelve, final node of the tree */

/* Round constants RC[0..23] of iota (FIPS 202 algorithm 5), as a list so each target can
 * instantiate it where it likes; gc_keccak_p1600 keeps its own local copy. */
#define GC_KECCAK_ROUND_CONSTANTS_DATA                                                      \
  0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808Aull, 0x8000000080008000ull, \
  0x000000000000808Bull, 0x0000000080000001ull, 0x8000000080008081ull, 0x8000000000008009ull, \
  0x000000000000008Aull, 0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000Aull, \
  0x000000008000808Bull, 0x800000000000008Bull, 0x8000000000008089ull, 0x8000000000008003ull, \
  0x8000000000008002ull, 0x8000000000000080ull, 0x000000000000800Aull, 0x800000008000000Aull, \
  0x8000000080008081ull, 0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull

/* GC_KECCAK_UNROLL asks for complete unrolling of a short loop over lanes. The host pass of nvcc
 * gets nothing: its front end rejects GCC's spelling and g++ rejects nvcc's. */
#if defined(__CUDA_ARCH__) || defined(__OPENCL_VERSION__) || defined(__clang__)
  #define GC_KECCAK_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
  #define GC_KECCAK_UNROLL
#elif defined(__GNUC__)
  #define GC_KECCAK_UNROLL _Pragma("GCC unroll 25")
#else
  #define GC_KECCAK_UNROLL
#endif

/* The round loop is unrolled on OpenCL GPUs (round constants become immediates and the lanes need
 * no moves between rounds: 72 registers, no stack, on sm_90; CUDA runs two rounds a step,
 * GC_KECCAK_GPU_ROUNDS_PER_STEP below says why). On the host g++ runs the rolled loop
 * faster: 318 ns per permutation rolled, 311 unrolled by 2, 392 fully unrolled (g++ 12 -O2 and
 * -O3 alike, AMD EPYC, 200000 permutations, best of 7). An includer may define
 * GC_KECCAK_UNROLL_ROUNDS itself to measure again. */
#if defined(GC_KECCAK_UNROLL_ROUNDS)
  /* set by the includer */
#elif defined(__CUDA_ARCH__) || defined(__OPENCL_VERSION__)
  #define GC_KECCAK_UNROLL_ROUNDS _Pragma("unroll")
#else
  #define GC_KECCAK_UNROLL_ROUNDS
#endif

/* theta's XOR into lane of column x. On NVIDIA GPUs a ^ c[x-1] ^ rot(c[x+1], 1) is one 3-input
 * LOP3 per 32-bit half, so forming d[x] first only costs instructions: folding it measured 4649 ->
 * 4312 SASS instructions per permutation (-7.2%) on sm_90. x86 has no 3-input XOR outside
 * AVX-512, so the host keeps d[x]. */
#if defined(__CUDA_ARCH__)
  #define GC_KECCAK_THETA(lane, x) ((lane) ^ c[((x) + 4) % 5] ^ r[x])
#else
  #define GC_KECCAK_THETA(lane, x) ((lane) ^ d[x])
#endif

/* Rotations on the multiply-add pipe. On NVIDIA GPUs every 64-bit lane operation is two 32-bit
 * instructions on the integer ALU pipe (LOP3 for theta and chi, SHF.L.W funnel shifts for the
 * rotations: 4316 ALU-pipe instructions per permutation on sm_90), which bounds the permutation,
 * while the FMA pipe, which issues IMAD at the same rate, stays idle. A rotation by 0 < n < 32 of
 * a lane (hi:lo) can run there instead, as four integer multiply(-add)s by m = 2^n:
 *   new_lo = mad.lo(lo, m, mul.hi(hi, m)) = (lo << n) + (hi >> (32 - n))
 *   new_hi = mad.lo(hi, m, mul.hi(lo, m)) = (hi << n) + (lo >> (32 - n))
 * (the two terms of each sum have no bit in common, so + is |); n >= 32 swaps the words first.
 * That is 2 IMAD + 2 IMAD.HI in place of 2 SHF: two ALU-pipe instructions fewer per rotation.
 *
 * GC_KECCAK_FMA_ROTATIONS says how many of the 29 rotations of a round take that route: the 24
 * of rho in the order they appear in gc_keccak_p1600 (rank 0..23), then theta's five rotations
 * by one (rank 24..28); 0 keeps every rotation a funnel shift. On paper 22 balances the two
 * pipes (3260 ALU and 2119 FMA-pipe instructions per permutation, against 4316 ALU-only), but
 * measured on an H200 (bench/keccak_bench.cu, 262144 x 8 KiB, 2026-11-22) every K > 0 is slower:
 * SHA3-256 424 (K=0), 385 (16), 349 (22), 331 (29) GB/s; SHAKE128 514, 470, 426, 405. IMAD.HI
 * costs more issue than the two funnel shifts it replaces, so the default is 0 (funnel shifts,
 * the SASS of before) and the route stays for other GPUs and compilers to measure
 * (-DGC_KECCAK_FMA_ROTATIONS=K). It matters only to CUDA device code; the host always shifts.
 *
 * The multipliers are immediates. Taken from a __constant__ table (so that ptxas cannot see
 * powers of two) they end up in registers: 96 -> 125 per thread, 5 -> 4 blocks of 128 threads
 * per SM, and that earlier experiment ran slower than the funnel shifts. With immediates the
 * kernels keep 96 registers and ptxas keeps mul.hi/mad.lo as IMAD.HI/IMAD (checked in the SASS
 * for sm_90, CUDA 13.0); the three-instruction form around one mad.wide.u32 is not kept: ptxas
 * splits it into IMAD.SHL, IMAD.HI, LEA.HI (ALU) and IMAD.X. The template below is CUDA C++ (an
 * asm immediate needs a constant expression); everything else in this file stays C.
 *
 * gc_keccak_rotl64_mul is the same arithmetic in portable C, one statement per PTX instruction:
 * tests/cpp/test_keccak.cpp checks it against gc_rotl64 for every n and runs the permutation
 * with it on every rotation (GC_KECCAK_EMULATE_FMA_ROTATIONS), the GPU runs the PTX. */
#if !defined(GC_KECCAK_FMA_ROTATIONS)
  #define GC_KECCAK_FMA_ROTATIONS 0
#endif

GC_FN uint64_t gc_keccak_rotl64_mul(uint64_t x, int n) {
  uint32_t lo = (uint32_t)x;
  uint32_t hi = (uint32_t)(x >> 32);
  uint32_t m, t, u, new_lo, new_hi;
  n &= 63;
  if (n >= 32) { /* rotating by 32 swaps the words */
    t = lo;
    lo = hi;
    hi = t;
    n -= 32;
  }
  m = (uint32_t)1 << n;
  t = (uint32_t)(((uint64_t)hi * m) >> 32);      /* mul.hi.u32 t, hi, m      */
  new_lo = (uint32_t)((uint64_t)lo * m + t);     /* mad.lo.u32 new_lo, lo, m, t */
  u = (uint32_t)(((uint64_t)lo * m) >> 32);      /* mul.hi.u32 u, lo, m      */
  new_hi = (uint32_t)((uint64_t)hi * m + u);     /* mad.lo.u32 new_hi, hi, m, u */
  return ((uint64_t)new_hi << 32) | new_lo;
}

#if defined(__CUDA_ARCH__)
template <int N>
__device__ __forceinline__ uint64_t gc_keccak_rotl64_fma(uint64_t x) {
  uint32_t lo = (uint32_t)x;
  uint32_t hi = (uint32_t)(x >> 32);
  uint32_t new_lo, new_hi;
  if ((N & 63) >= 32) {
    new_lo = lo;
    lo = hi;
    hi = new_lo;
  }
  if ((N & 31) == 0) return ((uint64_t)hi << 32) | lo;
  asm("{\n\t"
      ".reg .u32 t, u;\n\t"
      "mul.hi.u32 t, %3, %4;\n\t"
      "mad.lo.u32 %0, %2, %4, t;\n\t"
      "mul.hi.u32 u, %2, %4;\n\t"
      "mad.lo.u32 %1, %3, %4, u;\n\t"
      "}"
      : "=r"(new_lo), "=r"(new_hi)
      : "r"(lo), "r"(hi), "n"(1u << (N & 31)));
  return ((uint64_t)new_hi << 32) | new_lo;
}
  /* n must be a literal: it becomes the template argument. */
  #define GC_KECCAK_ROTL(lane, n, rank) \
    ((rank) < GC_KECCAK_FMA_ROTATIONS ? gc_keccak_rotl64_fma<(n)>(lane) : gc_rotl64((lane), (n)))
#elif defined(GC_KECCAK_EMULATE_FMA_ROTATIONS)
  #define GC_KECCAK_ROTL(lane, n, rank) \
    ((rank) < GC_KECCAK_FMA_ROTATIONS ? gc_keccak_rotl64_mul((lane), (n)) : gc_rotl64((lane), (n)))
#else
  #define GC_KECCAK_ROTL(lane, n, rank) gc_rotl64((lane), (n))
#endif

/* theta's XOR into lane a[i] (column x) of gc_keccak_p1600, then rho's rotation by n, with its
 * rank for GC_KECCAK_FMA_ROTATIONS. */
#define GC_KECCAK_RHO(i, x, n, rank) GC_KECCAK_ROTL(GC_KECCAK_THETA(a[i], x), n, rank)

/* One row of chi: out[x] = b[x] ^ (~b[x+1] & b[x+2]), indices mod 5. */
GC_FN void gc_keccak_chi_row(GC_PRIVATE uint64_t* out, uint64_t b0, uint64_t b1, uint64_t b2,
                             uint64_t b3, uint64_t b4) {
  out[0] = b0 ^ (~b1 & b2);
  out[1] = b1 ^ (~b2 & b3);
  out[2] = b2 ^ (~b3 & b4);
  out[3] = b3 ^ (~b4 & b0);
  out[4] = b4 ^ (~b0 & b1);
}

/* gc_keccak_round: one round of Keccak-f[1600] from lanes a into lanes e (a and e distinct), with
 * round constant rc. theta's XOR, rho, pi and chi are fused: pi sends lane (x, y) to
 * (y, 2x + 3y), so row y of the result reads lanes (x + 3y mod 5, x), x = 0..4, each rotated by
 * its rho offset (FIPS 202 table 2). Lane (x, y) is a[x + 5y]. */
GC_FN void gc_keccak_round(const GC_PRIVATE uint64_t* a, GC_PRIVATE uint64_t* e, uint64_t rc) {
  uint64_t c[5];
  uint64_t r[5]; /* theta: column parities rotated by one */
#if !defined(__CUDA_ARCH__)
  uint64_t d[5];
#endif
  int i;
  /* theta: XOR each lane with the parities of the two neighbouring columns. */
  GC_KECCAK_UNROLL
  for (i = 0; i < 5; ++i) c[i] = a[i] ^ a[i + 5] ^ a[i + 10] ^ a[i + 15] ^ a[i + 20];
  GC_KECCAK_UNROLL
  for (i = 0; i < 5; ++i) r[i] = GC_KECCAK_ROTL(c[(i + 1) % 5], 1, 24 + i);
#if !defined(__CUDA_ARCH__)
  GC_KECCAK_UNROLL
  for (i = 0; i < 5; ++i) d[i] = c[(i + 4) % 5] ^ r[i];
#endif
  gc_keccak_chi_row(e + 0, GC_KECCAK_THETA(a[0], 0), GC_KECCAK_RHO(6, 1, 44, 0), GC_KECCAK_RHO(12, 2, 43, 1),
                    GC_KECCAK_RHO(18, 3, 21, 2), GC_KECCAK_RHO(24, 4, 14, 3));
  gc_keccak_chi_row(e + 5, GC_KECCAK_RHO(3, 3, 28, 4), GC_KECCAK_RHO(9, 4, 20, 5), GC_KECCAK_RHO(10, 0, 3, 6),
                    GC_KECCAK_RHO(16, 1, 45, 7), GC_KECCAK_RHO(22, 2, 61, 8));
  gc_keccak_chi_row(e + 10, GC_KECCAK_RHO(1, 1, 1, 9), GC_KECCAK_RHO(7, 2, 6, 10), GC_KECCAK_RHO(13, 3, 25, 11),
                    GC_KECCAK_RHO(19, 4, 8, 12), GC_KECCAK_RHO(20, 0, 18, 13));
  gc_keccak_chi_row(e + 15, GC_KECCAK_RHO(4, 4, 27, 14), GC_KECCAK_RHO(5, 0, 36, 15), GC_KECCAK_RHO(11, 1, 10, 16),
                    GC_KECCAK_RHO(17, 2, 15, 17), GC_KECCAK_RHO(23, 3, 56, 18));
  gc_keccak_chi_row(e + 20, GC_KECCAK_RHO(2, 2, 62, 19), GC_KECCAK_RHO(8, 3, 55, 20), GC_KECCAK_RHO(14, 4, 39, 21),
                    GC_KECCAK_RHO(15, 0, 41, 22), GC_KECCAK_RHO(21, 1, 2, 23));
  /* iota */
  e[0] ^= rc;
}

/* GC_KECCAK_GPU_ROUNDS_PER_STEP (CUDA device code): 0 unrolls all rounds; an even n runs them as a
 * loop of n rounds a step (a -> e, e -> a, so no lane moves), round constants from constant
 * memory, the num_rounds % n rounds before the loop one at a time. The default is 2: with 24
 * rounds written out a permutation is ~70 KB of SASS, and warps at different places in it missed
 * the instruction cache (Nsight Compute: 4.1 of every 10.6 cycles between a warp's instructions
 * waiting on instruction fetch, 2026-11-25); a two-round loop (~6 KB) stays in it. H200,
 * bench/keccak_bench.cu, 2026-11-30: SHA3-256 8 KiB messages 424 -> 488 GB/s, SHAKE128 514 -> 604,
 * ParallelHash128 leaves 495 -> 591, KT128 leaves 1087 -> 1123; 4 and 6 rounds a step the same
 * as 2; with the loop, FMA-pipe rotations (K = 2, 4, 8) still gained nothing (488, 485, 482). */
#if !defined(GC_KECCAK_GPU_ROUNDS_PER_STEP)
  #define GC_KECCAK_GPU_ROUNDS_PER_STEP 2
#endif
#if defined(__CUDACC__)
static __constant__ uint64_t gc_keccak_round_constants_device[GC_KECCAK_MAX_ROUNDS] = {
    GC_KECCAK_ROUND_CONSTANTS_DATA};
#endif

/* gc_keccak_p1600 applies the LAST num_rounds rounds of Keccak-f[1600] (round indices
 * 24 - num_rounds .. 23), which is Keccak-p[1600, num_rounds] of FIPS 202 section 3.3:
 * 24 for SHA-3/SHAKE/cSHAKE, 12 for TurboSHAKE and KangarooTwelve. num_rounds must be 1..24. */
GC_FN void gc_keccak_p1600(GC_PRIVATE uint64_t* state, int num_rounds) {
  const int first_round = GC_KECCAK_MAX_ROUNDS - num_rounds;
  uint64_t a[GC_KECCAK_NUM_LANES];
  uint64_t e[GC_KECCAK_NUM_LANES];
  int i;
  int round;

  GC_KECCAK_UNROLL
  for (i = 0; i < GC_KECCAK_NUM_LANES; ++i) a[i] = state[i];

#if defined(__CUDA_ARCH__) && GC_KECCAK_GPU_ROUNDS_PER_STEP > 0
  round = first_round;
  GC_KECCAK_UNROLL
  for (i = 0; i < GC_KECCAK_GPU_ROUNDS_PER_STEP - 1; ++i) {
    if (i < num_rounds % GC_KECCAK_GPU_ROUNDS_PER_STEP) { /* public: depends on num_rounds only */
      int k;
      gc_keccak_round(a, e, gc_keccak_round_constants_device[round]);
      GC_KECCAK_UNROLL
      for (k = 0; k < GC_KECCAK_NUM_LANES; ++k) a[k] = e[k];
      ++round;
    }
  }
  #pragma unroll 1
  for (; round < GC_KECCAK_MAX_ROUNDS; round += GC_KECCAK_GPU_ROUNDS_PER_STEP) {
    GC_KECCAK_UNROLL
    for (i = 0; i < GC_KECCAK_GPU_ROUNDS_PER_STEP; i += 2) {
      gc_keccak_round(a, e, gc_keccak_round_constants_device[round + i]);
      gc_keccak_round(e, a, gc_keccak_round_constants_device[round + i + 1]);
    }
  }
#else
  {
    const uint64_t round_constants[GC_KECCAK_MAX_ROUNDS] = {GC_KECCAK_ROUND_CONSTANTS_DATA};
    GC_KECCAK_UNROLL_ROUNDS
    for (round = 0; round < GC_KECCAK_MAX_ROUNDS; ++round) {
      if (round < first_round) continue; /* public: depends on num_rounds only */
      gc_keccak_round(a, e, round_constants[round]);
      GC_KECCAK_UNROLL
      for (i = 0; i < GC_KECCAK_NUM_LANES; ++i) a[i] = e[i];
    }
  }
#endif

  GC_KECCAK_UNROLL
  for (i = 0; i < GC_KECCAK_NUM_LANES; ++i) state[i] = a[i];
}

/* gc_keccak_f1600 is the full 24-round permutation. */
GC_FN void gc_keccak_f1600(GC_PRIVATE uint64_t* state) { gc_keccak_p1600(state, GC_KECCAK_MAX_ROUNDS); }

GC_FN void gc_keccak_init(GC_PRIVATE uint64_t* state) {
  int i;
  GC_KECCAK_UNROLL
  for (i = 0; i < GC_KECCAK_NUM_LANES; ++i) state[i] = 0;
}

/* Little-endian load of num_bytes < 8 bytes into the low end of a lane. */
GC_FN uint64_t gc_keccak_load_partial_lane(const uint8_t* bytes, int num_bytes) {
  uint64_t lane = 0;
  int j;
  for (j = 0; j < num_bytes; ++j) lane |= (uint64_t)bytes[j] << (8 * j);
  return lane;
}

/* gc_keccak_absorb_block XORs one full block of `rate` bytes into the state and permutes. */
GC_FN void gc_keccak_absorb_block(GC_PRIVATE uint64_t* state, const uint8_t* block, int rate,
                                  int num_rounds) {
  int i;
  GC_KECCAK_UNROLL
  for (i = 0; i < GC_KECCAK_NUM_LANES; ++i) {
    if (8 * i < rate) state[i] ^= gc_load_le64(block + 8 * i);
  }
  gc_keccak_p1600(state, num_rounds);
}

/* gc_keccak_absorb_final XORs the last, partial block (tail_len < rate bytes, possibly 0), the
 * domain byte right after it and the final padding bit 0x80 into the last byte of the rate
 * (pad10*1 with the suffix bits folded into `domain`), then permutes: the state is ready to be
 * squeezed. */
GC_FN void gc_keccak_absorb_final(GC_PRIVATE uint64_t* state, const uint8_t* tail, int tail_len,
                                  int rate, uint8_t domain, int num_rounds) {
  int i;
  GC_KECCAK_UNROLL
  for (i = 0; i < GC_KECCAK_NUM_LANES; ++i) {
    const int lane_start = 8 * i;
    uint64_t lane = 0;
    if (lane_start >= rate) continue;
    if (lane_start + 8 <= tail_len) {
      lane = gc_load_le64(tail + lane_start);
    } else if (lane_start <= tail_len) { /* the lane holding the domain byte */
      lane = gc_keccak_load_partial_lane(tail + lane_start, tail_len - lane_start);
      lane ^= (uint64_t)domain << (8 * (tail_len - lane_start));
    }
    if (lane_start + 8 == rate) lane ^= 0x80ull << 56;
    state[i] ^= lane;
  }
  gc_keccak_p1600(state, num_rounds);
}

/* gc_keccak_extract copies the first num_bytes (<= rate) bytes of the state to out. */
GC_FN void gc_keccak_extract(const GC_PRIVATE uint64_t* state, uint8_t* out, int num_bytes) {
  int i;
  GC_KECCAK_UNROLL
  for (i = 0; i < GC_KECCAK_NUM_LANES; ++i) {
    const int lane_start = 8 * i;
    if (lane_start + 8 <= num_bytes) {
      gc_store_le64(out + lane_start, state[i]);
    } else if (lane_start < num_bytes) {
      uint64_t lane = state[i];
      int j;
      for (j = 0; j < num_bytes - lane_start; ++j) out[lane_start + j] = (uint8_t)(lane >> (8 * j));
    }
  }
}

/* gc_keccak_squeeze writes out_len bytes of output, starting from a state that
 * gc_keccak_absorb_final has just produced; it permutes between blocks, never after the last. */
GC_FN void gc_keccak_squeeze(GC_PRIVATE uint64_t* state, uint8_t* out, size_t out_len, int rate,
                             int num_rounds) {
  while (out_len > (size_t)rate) {
    gc_keccak_extract(state, out, rate);
    gc_keccak_p1600(state, num_rounds);
    out += rate;
    out_len -= (size_t)rate;
  }
  gc_keccak_extract(state, out, (int)out_len);
}

/* gc_keccak_sponge_oneshot hashes one whole message: Keccak-p[1600, num_rounds] sponge with the
 * given rate (bytes) and domain byte, in_len bytes in, out_len bytes out. This is what a GPU
 * thread that owns one message calls; e.g. SHA3-256 = (136, 0x06, ..., 32, 24), SHAKE128 =
 * (168, 0x1F, ...), Keccak-256 = (136, 0x01, ...), TurboSHAKE128 = (168, D, ..., 12). */
GC_FN void gc_keccak_sponge_oneshot(int rate, uint8_t domain, const uint8_t* in, size_t in_len,
                                    uint8_t* out, size_t out_len, int num_rounds) {
  uint64_t state[GC_KECCAK_NUM_LANES];
  gc_keccak_init(state);
  while (in_len >= (size_t)rate) {
    gc_keccak_absorb_block(state, in, rate, num_rounds);
    in += rate;
    in_len -= (size_t)rate;
  }
  gc_keccak_absorb_final(state, in, (int)in_len, rate, domain, num_rounds);
  gc_keccak_squeeze(state, out, out_len, rate, num_rounds);
}

#endif
