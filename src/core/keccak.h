/* keccak.h: Keccak-p[1600, n] and the sponge around it (SHA-3, SHAKE, original Keccak, cSHAKE,
 * TurboSHAKE and the KangarooTwelve leaves all run through here).
 *
 * Constant-time: the permutation is a fixed sequence of XOR, AND-NOT and constant rotations with
 * no tables indexed by data (the round constants are indexed by the public round number only),
 * and the sponge helpers branch and index only on public lengths (rate, message length, output
 * length), never on message or state contents.
 *
 * State: 25 lanes of 64 bits, lane x + 5y holding bytes 8(x + 5y) .. 8(x + 5y) + 7 of the state
 * in little-endian order (FIPS 202 section 3.1.2 with the usual lane packing). Rates are in
 * bytes and must be multiples of 8 below 200 (every standard rate is: 168, 144, 136, 104, 72).
 *
 * Why the code looks the way it does: a GPU keeps a thread's lanes in registers only if every
 * array index is known at compile time. So every loop over lanes (and, on GPUs, over rounds) is
 * unrolled and guarded by a public condition instead of having a run-time trip count, and the
 * round constants sit in a function-local array that the unrolled loop indexes with constants.
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

/* The round loop is unrolled on GPUs (round constants become immediates and the lanes need no
 * moves between rounds: 72 registers, no stack, on sm_90). On the host g++ runs the rolled loop
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

/* One row of chi: out[x] = b[x] ^ (~b[x+1] & b[x+2]), indices mod 5. */
GC_FN void gc_keccak_chi_row(GC_PRIVATE uint64_t* out, uint64_t b0, uint64_t b1, uint64_t b2,
                             uint64_t b3, uint64_t b4) {
  out[0] = b0 ^ (~b1 & b2);
  out[1] = b1 ^ (~b2 & b3);
  out[2] = b2 ^ (~b3 & b4);
  out[3] = b3 ^ (~b4 & b0);
  out[4] = b4 ^ (~b0 & b1);
}

/* gc_keccak_p1600 applies the LAST num_rounds rounds of Keccak-f[1600] (round indices
 * 24 - num_rounds .. 23), which is Keccak-p[1600, num_rounds] of FIPS 202 section 3.3:
 * 24 for SHA-3/SHAKE/cSHAKE, 12 for TurboSHAKE and KangarooTwelve. num_rounds must be 1..24. */
GC_FN void gc_keccak_p1600(GC_PRIVATE uint64_t* state, int num_rounds) {
  const uint64_t round_constants[GC_KECCAK_MAX_ROUNDS] = {GC_KECCAK_ROUND_CONSTANTS_DATA};
  const int first_round = GC_KECCAK_MAX_ROUNDS - num_rounds;
  uint64_t a[GC_KECCAK_NUM_LANES];
  uint64_t e[GC_KECCAK_NUM_LANES];
  uint64_t c[5];
  uint64_t r[5]; /* theta: column parities rotated by one */
#if !defined(__CUDA_ARCH__)
  uint64_t d[5];
#endif
  int i;
  int round;

  GC_KECCAK_UNROLL
  for (i = 0; i < GC_KECCAK_NUM_LANES; ++i) a[i] = state[i];

  GC_KECCAK_UNROLL_ROUNDS
  for (round = 0; round < GC_KECCAK_MAX_ROUNDS; ++round) {
    if (round < first_round) continue; /* public: depends on num_rounds only */

    /* theta: XOR each lane with the parities of the two neighbouring columns. */
    GC_KECCAK_UNROLL
    for (i = 0; i < 5; ++i) c[i] = a[i] ^ a[i + 5] ^ a[i + 10] ^ a[i + 15] ^ a[i + 20];
    GC_KECCAK_UNROLL
    for (i = 0; i < 5; ++i) r[i] = gc_rotl64(c[(i + 1) % 5], 1);
#if !defined(__CUDA_ARCH__)
    GC_KECCAK_UNROLL
    for (i = 0; i < 5; ++i) d[i] = c[(i + 4) % 5] ^ r[i];
#endif

    /* theta's XOR, rho, pi and chi fused. pi sends lane (x, y) to (y, 2x + 3y), so row y of
     * the result reads lanes (x + 3y mod 5, x), x = 0..4, each rotated by its rho offset
     * (FIPS 202 table 2). Lane (x, y) is a[x + 5y]. */
    gc_keccak_chi_row(e + 0, gc_rotl64(GC_KECCAK_THETA(a[0], 0), 0), gc_rotl64(GC_KECCAK_THETA(a[6], 1), 44),
                      gc_rotl64(GC_KECCAK_THETA(a[12], 2), 43), gc_rotl64(GC_KECCAK_THETA(a[18], 3), 21),
                      gc_rotl64(GC_KECCAK_THETA(a[24], 4), 14));
    gc_keccak_chi_row(e + 5, gc_rotl64(GC_KECCAK_THETA(a[3], 3), 28), gc_rotl64(GC_KECCAK_THETA(a[9], 4), 20),
                      gc_rotl64(GC_KECCAK_THETA(a[10], 0), 3), gc_rotl64(GC_KECCAK_THETA(a[16], 1), 45),
                      gc_rotl64(GC_KECCAK_THETA(a[22], 2), 61));
    gc_keccak_chi_row(e + 10, gc_rotl64(GC_KECCAK_THETA(a[1], 1), 1), gc_rotl64(GC_KECCAK_THETA(a[7], 2), 6),
                      gc_rotl64(GC_KECCAK_THETA(a[13], 3), 25), gc_rotl64(GC_KECCAK_THETA(a[19], 4), 8),
                      gc_rotl64(GC_KECCAK_THETA(a[20], 0), 18));
    gc_keccak_chi_row(e + 15, gc_rotl64(GC_KECCAK_THETA(a[4], 4), 27), gc_rotl64(GC_KECCAK_THETA(a[5], 0), 36),
                      gc_rotl64(GC_KECCAK_THETA(a[11], 1), 10), gc_rotl64(GC_KECCAK_THETA(a[17], 2), 15),
                      gc_rotl64(GC_KECCAK_THETA(a[23], 3), 56));
    gc_keccak_chi_row(e + 20, gc_rotl64(GC_KECCAK_THETA(a[2], 2), 62), gc_rotl64(GC_KECCAK_THETA(a[8], 3), 55),
                      gc_rotl64(GC_KECCAK_THETA(a[14], 4), 39), gc_rotl64(GC_KECCAK_THETA(a[15], 0), 41),
                      gc_rotl64(GC_KECCAK_THETA(a[21], 1), 2));

    /* iota */
    e[0] ^= round_constants[round];

    GC_KECCAK_UNROLL
    for (i = 0; i < GC_KECCAK_NUM_LANES; ++i) a[i] = e[i];
  }

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
