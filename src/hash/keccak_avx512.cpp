// keccak_avx512.cpp: the host Keccak loops (keccak_host_loops.h) on AVX-512F/VL, for the serial
// sponges the GPU cannot share out: above all the final node of a KangarooTwelve or ParallelHash
// tree, 4 MiB of chaining values per GiB of input absorbed in one sponge on one core.
//
// Each of the 25 lanes lives in the low half of its own xmm register (AVX-512VL gives 32 of them,
// where the scalar build has 16 general registers for 25 lanes and spills). A round is then 90
// vector instructions on three ports: theta's column parities as two 3-input XORs per column
// (vpternlogq), theta's XOR into each lane as one more, rho as one vprolq per lane, pi as nothing
// at all (the lanes are renamed), chi as one vpternlogq per lane and iota as one XOR. The state
// stays in registers across every block of one call (loaded once, stored once). Only xmm
// registers are used, so the core keeps its clock (no 512-bit frequency licence).
//
// Measured against the other layout, five zmm planes of five lanes (theta's parity rotations and
// chi's neighbours by vpermq, pi as a transposition of twelve vpermt2q): 4 MiB absorbed at rate
// 168, 12 rounds, median of 15, on the Xeon development machine (Sapphire Rapids, 2026-11-30):
// xmm lanes 111 ns per permutation, zmm planes 148, the BMI2 build 158, portable 187. The planes
// need 24 shuffles a round, and 512-bit shuffles issue on one port only; the xmm lanes need none.
//
// Include nothing but C headers and <immintrin.h> (keccak_host_loops.h says why); CMakeLists.txt
// compiles this unit alone with -mavx512f -mavx512vl, and keccak_sponge.cpp runs it only where
// CPUID has both.
//
// Constant-time: yes. The permutation is a fixed sequence of vpternlogq, vprolq and vpxorq with
// immediate rotation counts and truth tables; no branch or memory index depends on the state or
// the message. Branches and indices depend only on the rate, the round count, the tail length and
// the output length (public), as in src/core/keccak.h; those instructions run in fixed time
// whatever their operands.
#include "hash/keccak_host_loops.h"

#if defined(GPUCRYPT_WITH_KECCAK_AVX512)
#include <immintrin.h>
#include <string.h>

namespace gpucrypt::hash::detail {
namespace {

// Every loop over lanes is unrolled so that each lane index is a constant and the compiler keeps
// the lanes in registers rather than in an array in memory.
#define GC_UNROLL _Pragma("GCC unroll 25")

constexpr int kNumLanes = 25;
constexpr int kMaxRounds = 24;
constexpr int kStateBytes = 200;

// RC[0..23] of iota (FIPS 202 algorithm 5); Keccak-p[1600, n] runs the last n of them.
constexpr uint64_t kRoundConstants[kMaxRounds] = {
    0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808Aull, 0x8000000080008000ull,
    0x000000000000808Bull, 0x0000000080000001ull, 0x8000000080008081ull, 0x8000000000008009ull,
    0x000000000000008Aull, 0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000Aull,
    0x000000008000808Bull, 0x800000000000008Bull, 0x8000000000008089ull, 0x8000000000008003ull,
    0x8000000000008002ull, 0x8000000000000080ull, 0x000000000000800Aull, 0x800000008000000Aull,
    0x8000000080008081ull, 0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull};

// vpternlogq truth tables, operands (a, b, c): a ^ b ^ c, and chi's a ^ (~b & c).
constexpr int kXor3 = 0x96;
constexpr int kChi = 0xD2;

// Lane x + 5y in the low 64 bits of each register; the high halves are never read.
struct VectorState {
  __m128i lane[kNumLanes];
};

inline __attribute__((always_inline)) __m128i xor3(__m128i a, __m128i b, __m128i c) {
  return _mm_ternarylogic_epi64(a, b, c, kXor3);
}

// theta's XOR of the neighbouring column parities into one lane, then rho's rotation by kRho
// (immediate operands need compile-time counts, hence the template).
template <int kRho>
inline __attribute__((always_inline)) __m128i theta_rho(__m128i lane, __m128i parity_left,
                                                        __m128i parity_right_rotated) {
  const __m128i mixed = xor3(lane, parity_left, parity_right_rotated);
  if constexpr (kRho == 0) {
    return mixed;
  } else {
    return _mm_rol_epi64(mixed, kRho);
  }
}

// One row of chi, written into lanes 5y .. 5y + 4 of `out`.
inline __attribute__((always_inline)) void chi_row(__m128i* out, __m128i b0, __m128i b1, __m128i b2, __m128i b3,
                                                   __m128i b4) {
  out[0] = _mm_ternarylogic_epi64(b0, b1, b2, kChi);
  out[1] = _mm_ternarylogic_epi64(b1, b2, b3, kChi);
  out[2] = _mm_ternarylogic_epi64(b2, b3, b4, kChi);
  out[3] = _mm_ternarylogic_epi64(b3, b4, b0, kChi);
  out[4] = _mm_ternarylogic_epi64(b4, b0, b1, kChi);
}

// Keccak-p[1600, num_rounds]: the last num_rounds rounds of Keccak-f[1600] (round indices
// 24 - num_rounds .. 23), as gc_keccak_p1600. num_rounds must be 1..24.
inline __attribute__((always_inline)) void permute(VectorState& s, int num_rounds) {
  __m128i* a = s.lane;
  for (int round = kMaxRounds - num_rounds; round < kMaxRounds; ++round) {
    __m128i parity[5];
    GC_UNROLL for (int x = 0; x < 5; ++x) parity[x] = xor3(xor3(a[x], a[x + 5], a[x + 10]), a[x + 15], a[x + 20]);
    __m128i left[5], right_rotated[5];  // for column x: parity of x - 1, parity of x + 1 rotated by 1
    GC_UNROLL for (int x = 0; x < 5; ++x) {
      left[x] = parity[(x + 4) % 5];
      right_rotated[x] = _mm_rol_epi64(parity[(x + 1) % 5], 1);
    }
    // pi sends lane (x, y) to (y, 2x + 3y), so row y of chi's input reads lanes (x + 3y mod 5, x),
    // each after theta and its rho rotation (FIPS 202 table 2), as in src/core/keccak.h.
#define GC_THETA_RHO(i, rho) theta_rho<rho>(a[i], left[(i) % 5], right_rotated[(i) % 5])
    __m128i e[kNumLanes];
    chi_row(e + 0, GC_THETA_RHO(0, 0), GC_THETA_RHO(6, 44), GC_THETA_RHO(12, 43), GC_THETA_RHO(18, 21),
            GC_THETA_RHO(24, 14));
    chi_row(e + 5, GC_THETA_RHO(3, 28), GC_THETA_RHO(9, 20), GC_THETA_RHO(10, 3), GC_THETA_RHO(16, 45),
            GC_THETA_RHO(22, 61));
    chi_row(e + 10, GC_THETA_RHO(1, 1), GC_THETA_RHO(7, 6), GC_THETA_RHO(13, 25), GC_THETA_RHO(19, 8),
            GC_THETA_RHO(20, 18));
    chi_row(e + 15, GC_THETA_RHO(4, 27), GC_THETA_RHO(5, 36), GC_THETA_RHO(11, 10), GC_THETA_RHO(17, 15),
            GC_THETA_RHO(23, 56));
    chi_row(e + 20, GC_THETA_RHO(2, 62), GC_THETA_RHO(8, 55), GC_THETA_RHO(14, 39), GC_THETA_RHO(15, 41),
            GC_THETA_RHO(21, 2));
#undef GC_THETA_RHO
    e[0] = _mm_xor_si128(e[0], _mm_loadl_epi64(reinterpret_cast<const __m128i*>(&kRoundConstants[round])));
    GC_UNROLL for (int i = 0; i < kNumLanes; ++i) a[i] = e[i];
  }
}

inline __attribute__((always_inline)) void load_state(VectorState& s, const uint64_t* state) {
  GC_UNROLL for (int i = 0; i < kNumLanes; ++i) s.lane[i] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(state + i));
}

inline __attribute__((always_inline)) void store_state(const VectorState& s, uint64_t* state) {
  GC_UNROLL for (int i = 0; i < kNumLanes; ++i) _mm_storel_epi64(reinterpret_cast<__m128i*>(state + i), s.lane[i]);
}

// state ^= one block of rate_lanes * 8 bytes (x86 is little-endian: lane i is bytes 8i .. 8i + 7).
inline __attribute__((always_inline)) void xor_block(VectorState& s, const uint8_t* block, int rate_lanes) {
  GC_UNROLL for (int i = 0; i < kNumLanes; ++i) {
    if (i < rate_lanes)
      s.lane[i] = _mm_xor_si128(s.lane[i], _mm_loadl_epi64(reinterpret_cast<const __m128i*>(block + 8 * i)));
  }
}

inline __attribute__((always_inline)) void absorb_blocks_in_registers(VectorState& s, const uint8_t* data, size_t num_blocks, int rate, int num_rounds) {
  const int rate_lanes = rate / 8;
  for (size_t i = 0; i < num_blocks; ++i) {
    xor_block(s, data + i * static_cast<size_t>(rate), rate_lanes);
    permute(s, num_rounds);
  }
}

void absorb_blocks(uint64_t* state, const uint8_t* data, size_t num_blocks, int rate, int num_rounds) {
  if (num_blocks == 0) return;
  VectorState s;
  load_state(s, state);
  absorb_blocks_in_registers(s, data, num_blocks, rate, num_rounds);
  store_state(s, state);
}

// gc_keccak_absorb_final then gc_keccak_squeeze: the tail (tail_len < rate bytes), the domain
// byte after it and pad10*1's last bit 0x80 in the last byte of the rate go in as one padded
// block; then whole blocks of output, permuting between blocks and never after the last.
inline __attribute__((always_inline)) void finish_in_registers(VectorState& s, const uint8_t* tail, int tail_len, int rate, uint8_t domain, uint8_t* out,
                         size_t out_len, int num_rounds) {
  uint8_t block[kStateBytes] = {};
  if (tail_len > 0) memcpy(block, tail, static_cast<size_t>(tail_len));  // tail may be null when empty
  block[tail_len] ^= domain;
  block[rate - 1] ^= 0x80;
  absorb_blocks_in_registers(s, block, 1, rate, num_rounds);
  uint64_t lanes[kNumLanes];
  for (;;) {
    store_state(s, lanes);
    const size_t take = out_len < static_cast<size_t>(rate) ? out_len : static_cast<size_t>(rate);
    if (take > 0) memcpy(out, lanes, take);  // out may be null when out_len is 0
    out += take;
    out_len -= take;
    if (out_len == 0) break;
    permute(s, num_rounds);
  }
  // The message's tail and the state's bytes do not stay behind on the stack (callers such as
  // hash_small_on_stack wipe their own copy of the state for the same reason); the empty asm
  // keeps the compiler from dropping the stores to buffers that are dead after them.
  memset(block, 0, sizeof block);
  memset(lanes, 0, sizeof lanes);
  __asm__ __volatile__("" : : "r"(block), "r"(lanes) : "memory");
}

void finish(uint64_t* state, const uint8_t* tail, int tail_len, int rate, uint8_t domain, uint8_t* out, size_t out_len,
            int num_rounds) {
  VectorState s;
  load_state(s, state);
  finish_in_registers(s, tail, tail_len, rate, domain, out, out_len, num_rounds);
  store_state(s, state);
}

void oneshot(int rate, uint8_t domain, const uint8_t* in, size_t in_len, uint8_t* out, size_t out_len, int num_rounds) {
  VectorState s;
  GC_UNROLL for (int i = 0; i < kNumLanes; ++i) s.lane[i] = _mm_setzero_si128();
  const size_t num_blocks = in_len / static_cast<size_t>(rate);
  absorb_blocks_in_registers(s, in, num_blocks, rate, num_rounds);
  const size_t absorbed = num_blocks * static_cast<size_t>(rate);
  finish_in_registers(s, in + absorbed, static_cast<int>(in_len - absorbed), rate, domain, out, out_len, num_rounds);
}

}  // namespace

const KeccakHostLoops kKeccakLoopsAvx512 = {absorb_blocks, finish, oneshot, "avx512"};

}  // namespace gpucrypt::hash::detail

#endif
