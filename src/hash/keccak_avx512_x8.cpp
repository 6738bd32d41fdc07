// keccak_avx512_x8.cpp: eight Keccak sponges side by side on AVX-512 (keccak_avx512_x8.h). Lane i
// of the eight states sits in one zmm register, message k in its 64-bit element k, so one
// instruction advances all eight: theta's three-way XORs and chi are one VPTERNLOGQ each (0x96,
// 0xD2), rho one VPROLQ, iota one XOR of a broadcast round constant. A tree hash's leaves are
// independent and of one length, so the scalar permutation's serial chain of dependent 64-bit
// operations (src/core/keccak.h, ~197 ns per 12 rounds here) becomes eight chains that fill the
// 512-bit ports: KT128 leaves (8 KiB, 12 rounds), one thread, about 5x the scalar BMI2 loop on the
// Xeon development machine (the numbers are in the commit that added this file).
//
// Compiled with -mavx512f -mavx512vl -mavx512bw -mavx512dq (CMakeLists.txt) and run only after
// keccak_sponge.cpp found those in CPUID. Only C headers and <immintrin.h> are included
// (keccak_host_loops.h says why).
//
// Loading a block: the eight messages' 64-byte rows are transposed to lanes in registers (an 8x8
// transpose of 64-bit words: 8 loads and 24 shuffles per 8 lanes). Rejected 2026-11-30: one
// VPGATHERQQ per lane (the eight message offsets as indices), 4.70 GB/s against the transpose's
// 5.47 (KT128 leaves, one thread, medians of 11 runs on the Xeon development machine).
//
// Constant-time: yes. Every instruction here (ternary logic, rotations by immediates, XOR,
// shuffles with fixed patterns, masked loads whose masks come from the rate) takes the same time
// whatever the data; branches and addresses depend only on the public rate, lengths, round count
// and the message pointers.
#if defined(GPUCRYPT_WITH_KECCAK_AVX512_X8)
// GCC 12 warns inside its own AVX-512 intrinsics (_mm512_undefined_epi32, GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#include <string.h>

#include "core/keccak.h"
#include "hash/keccak_avx512_x8.h"

#if defined(GPUCRYPT_WITH_KECCAK_AVX512_X8)

namespace gpucrypt::hash::detail {
namespace {

constexpr int kNumWays = 8;  // messages per call: 64-bit elements of a zmm register

constexpr uint64_t kRoundConstants[GC_KECCAK_MAX_ROUNDS] = {GC_KECCAK_ROUND_CONSTANTS_DATA};

// rho's rotation of lane x + 5y (FIPS 202 table 2).
constexpr int kRhoOffsets[GC_KECCAK_NUM_LANES] = {0,  1,  62, 28, 27, 36, 44, 6,  55, 20, 3,  10, 43,
                                                  25, 39, 41, 45, 15, 21, 8,  18, 2,  61, 56, 14};

inline __m512i xor3(__m512i a, __m512i b, __m512i c) { return _mm512_ternarylogic_epi64(a, b, c, 0x96); }

// chi's a ^ (~b & c): truth table 0xF0 ^ (~0xCC & 0xAA) = 0xD2.
inline __m512i xor_and_not(__m512i a, __m512i b, __m512i c) { return _mm512_ternarylogic_epi64(a, b, c, 0xD2); }

// Lane (x, y) of the result of theta, rho and pi: pi moves lane (x', y') to (y', 2x' + 3y'), so
// (x, y) comes from (x', y') = ((x + 3y) mod 5, x), after theta has XORed into it the parities of
// columns x' - 1 (parity[]) and x' + 1 rotated by one (rotated_parity[]) and rho has rotated it.
template <int kX, int kY>
inline __m512i theta_rho_pi(const __m512i* state, const __m512i* parity, const __m512i* rotated_parity) {
  constexpr int kSourceX = (kX + 3 * kY) % 5;
  constexpr int kSourceLane = kSourceX + 5 * kX;
  const __m512i lane = xor3(state[kSourceLane], parity[(kSourceX + 4) % 5], rotated_parity[(kSourceX + 1) % 5]);
  if constexpr (kRhoOffsets[kSourceLane] == 0) {
    return lane;
  } else {
    return _mm512_rol_epi64(lane, kRhoOffsets[kSourceLane]);
  }
}

template <int kY>
inline void round_row(const __m512i* state, const __m512i* parity, const __m512i* rotated_parity, __m512i* next) {
  const __m512i b0 = theta_rho_pi<0, kY>(state, parity, rotated_parity);
  const __m512i b1 = theta_rho_pi<1, kY>(state, parity, rotated_parity);
  const __m512i b2 = theta_rho_pi<2, kY>(state, parity, rotated_parity);
  const __m512i b3 = theta_rho_pi<3, kY>(state, parity, rotated_parity);
  const __m512i b4 = theta_rho_pi<4, kY>(state, parity, rotated_parity);
  next[5 * kY + 0] = xor_and_not(b0, b1, b2);
  next[5 * kY + 1] = xor_and_not(b1, b2, b3);
  next[5 * kY + 2] = xor_and_not(b2, b3, b4);
  next[5 * kY + 3] = xor_and_not(b3, b4, b0);
  next[5 * kY + 4] = xor_and_not(b4, b0, b1);
}

// One round of Keccak-f[1600] (round index `round`, 0..23) on eight states, from state into next.
inline void keccak_round_x8(const __m512i* state, __m512i* next, int round) {
  __m512i parity[5];
  __m512i rotated_parity[5];
  for (int x = 0; x < 5; ++x)
    parity[x] = xor3(xor3(state[x], state[x + 5], state[x + 10]), state[x + 15], state[x + 20]);
  for (int x = 0; x < 5; ++x) rotated_parity[x] = _mm512_rol_epi64(parity[x], 1);
  round_row<0>(state, parity, rotated_parity, next);
  round_row<1>(state, parity, rotated_parity, next);
  round_row<2>(state, parity, rotated_parity, next);
  round_row<3>(state, parity, rotated_parity, next);
  round_row<4>(state, parity, rotated_parity, next);
  next[0] = _mm512_xor_si512(next[0], _mm512_set1_epi64(static_cast<long long>(kRoundConstants[round])));
}

// Keccak-p[1600, num_rounds] on eight states: the LAST num_rounds of the 24 rounds, as
// gc_keccak_p1600. Rounds go in pairs, state -> scratch -> state, so no round copies its result.
void keccak_p1600_x8(__m512i* state, int num_rounds) {
  __m512i a[GC_KECCAK_NUM_LANES];
  __m512i e[GC_KECCAK_NUM_LANES];
  for (int i = 0; i < GC_KECCAK_NUM_LANES; ++i) a[i] = state[i];
  int round = GC_KECCAK_MAX_ROUNDS - num_rounds;
  if (num_rounds % 2 != 0) {  // public: the round count
    keccak_round_x8(a, e, round++);
    for (int i = 0; i < GC_KECCAK_NUM_LANES; ++i) a[i] = e[i];
  }
  for (; round < GC_KECCAK_MAX_ROUNDS; round += 2) {
    keccak_round_x8(a, e, round);
    keccak_round_x8(e, a, round + 1);
  }
  for (int i = 0; i < GC_KECCAK_NUM_LANES; ++i) state[i] = a[i];
}

// XORs lanes first_lane .. first_lane + num_lanes - 1 (num_lanes <= 8) of each message's block
// into the eight states. Row k holds message k's num_lanes words; the transpose turns the eight
// rows into one register per lane. Masked loads read only the rate's bytes, so the last block of
// a message that ends exactly there is never read past.
inline void absorb_lanes(__m512i* state, const uint8_t* const row_start[kNumWays], int first_lane, int num_lanes) {
  const __mmask8 mask = static_cast<__mmask8>((1u << num_lanes) - 1);
  __m512i rows[kNumWays];
  for (int k = 0; k < kNumWays; ++k) rows[k] = _mm512_maskz_loadu_epi64(mask, row_start[k] + 8 * first_lane);
  // Stage 1: pairs of messages. pair_even[p] holds words 0, 2, 4, 6 of messages 2p and 2p + 1
  // (one 128-bit chunk per word: message 2p, then 2p + 1); pair_odd[p] words 1, 3, 5, 7.
  __m512i pair_even[4];
  __m512i pair_odd[4];
  for (int p = 0; p < 4; ++p) {
    pair_even[p] = _mm512_unpacklo_epi64(rows[2 * p], rows[2 * p + 1]);
    pair_odd[p] = _mm512_unpackhi_epi64(rows[2 * p], rows[2 * p + 1]);
  }
  // Stage 2: from two pairs' words {w, w+2, w+4, w+6} (w = 0 or 1), 128-bit chunks 0 and 2 of
  // each (0x88) give words w and w + 4 of four messages, chunks 1 and 3 (0xDD) words w + 2 and
  // w + 6. Stage 3 does the same across the two halves: word w of all eight messages (0x88) and
  // word w + 4 (0xDD) from the low quads, w + 2 and w + 6 from the high ones.
  const __m512i* pairs[2] = {pair_even, pair_odd};
  __m512i lanes[kNumWays];
  for (int parity = 0; parity < 2; ++parity) {
    const __m512i* pair = pairs[parity];
    const __m512i low_first = _mm512_shuffle_i64x2(pair[0], pair[1], 0x88);   // words w, w+4 of messages 0-3
    const __m512i high_first = _mm512_shuffle_i64x2(pair[0], pair[1], 0xDD);  // words w+2, w+6 of messages 0-3
    const __m512i low_second = _mm512_shuffle_i64x2(pair[2], pair[3], 0x88);  // ... of messages 4-7
    const __m512i high_second = _mm512_shuffle_i64x2(pair[2], pair[3], 0xDD);
    lanes[parity + 0] = _mm512_shuffle_i64x2(low_first, low_second, 0x88);
    lanes[parity + 4] = _mm512_shuffle_i64x2(low_first, low_second, 0xDD);
    lanes[parity + 2] = _mm512_shuffle_i64x2(high_first, high_second, 0x88);
    lanes[parity + 6] = _mm512_shuffle_i64x2(high_first, high_second, 0xDD);
  }
  for (int j = 0; j < num_lanes; ++j) state[first_lane + j] = _mm512_xor_si512(state[first_lane + j], lanes[j]);
}

// XORs one block of `rate` bytes of each message (block_start[k]) into the states and permutes.
void absorb_block_x8(__m512i* state, const uint8_t* const block_start[kNumWays], int rate, int num_rounds) {
  const int num_rate_lanes = rate / 8;
  for (int first_lane = 0; first_lane < num_rate_lanes; first_lane += kNumWays) {
    const int num_lanes = num_rate_lanes - first_lane < kNumWays ? num_rate_lanes - first_lane : kNumWays;
    absorb_lanes(state, block_start, first_lane, num_lanes);
  }
  keccak_p1600_x8(state, num_rounds);
}

// Copies the first num_bytes (<= rate) of each state to out[k] + offset.
void extract_x8(const __m512i* state, uint8_t* const out[kNumWays], size_t offset, size_t num_bytes) {
  alignas(64) uint64_t lanes[GC_KECCAK_NUM_LANES][kNumWays];
  const size_t num_lanes = (num_bytes + 7) / 8;
  for (size_t i = 0; i < num_lanes; ++i) _mm512_store_si512(lanes[i], state[i]);
  for (int k = 0; k < kNumWays; ++k) {
    uint8_t* const destination = out[k] + offset;
    for (size_t i = 0; i < num_bytes / 8; ++i) memcpy(destination + 8 * i, &lanes[i][k], 8);  // little-endian host
    for (size_t j = num_bytes / 8 * 8; j < num_bytes; ++j)
      destination[j] = static_cast<uint8_t>(lanes[j / 8][k] >> (8 * (j % 8)));
  }
  // The digests' bytes do not stay behind on the stack (keccak_oneshot_x8 says why).
  memset(lanes, 0, sizeof lanes);
  __asm__ __volatile__("" : : "r"(lanes) : "memory");
}

}  // namespace

void keccak_oneshot_x8(int rate, uint8_t domain, const uint8_t* const in[8], size_t in_len, uint8_t* const out[8],
                       size_t out_len, int num_rounds) {
  __m512i state[GC_KECCAK_NUM_LANES];
  for (int i = 0; i < GC_KECCAK_NUM_LANES; ++i) state[i] = _mm512_setzero_si512();

  const size_t num_whole_blocks = in_len / static_cast<size_t>(rate);
  const uint8_t* block_start[kNumWays];
  for (size_t block = 0; block < num_whole_blocks; ++block) {
    for (int k = 0; k < kNumWays; ++k) block_start[k] = in[k] + block * static_cast<size_t>(rate);
    absorb_block_x8(state, block_start, rate, num_rounds);
  }

  // The last block: the tail, the domain byte and pad10*1's final bit, as gc_keccak_absorb_final,
  // padded in a copy so it goes through the same loads as the whole blocks.
  const size_t tail_len = in_len - num_whole_blocks * static_cast<size_t>(rate);
  alignas(64) uint8_t final_blocks[kNumWays][GC_KECCAK_STATE_BYTES];
  for (int k = 0; k < kNumWays; ++k) {
    memset(final_blocks[k], 0, static_cast<size_t>(rate));
    if (tail_len > 0) memcpy(final_blocks[k], in[k] + num_whole_blocks * static_cast<size_t>(rate), tail_len);
    final_blocks[k][tail_len] ^= domain;
    final_blocks[k][rate - 1] ^= 0x80;
    block_start[k] = final_blocks[k];
  }
  absorb_block_x8(state, block_start, rate, num_rounds);

  // Squeeze: permute between output blocks, never after the last (gc_keccak_squeeze).
  size_t offset = 0;
  while (out_len - offset > static_cast<size_t>(rate)) {
    extract_x8(state, out, offset, static_cast<size_t>(rate));
    keccak_p1600_x8(state, num_rounds);
    offset += static_cast<size_t>(rate);
  }
  extract_x8(state, out, offset, out_len - offset);
  // The messages' tails and the states' bytes do not stay behind on the stack, as in the serial
  // loops (keccak_avx512.cpp, hash_small_on_stack); the empty asm keeps the compiler from dropping
  // the stores to buffers that are dead after them.
  memset(final_blocks, 0, sizeof final_blocks);
  for (int i = 0; i < GC_KECCAK_NUM_LANES; ++i) state[i] = _mm512_setzero_si512();
  __asm__ __volatile__("" : : "r"(final_blocks), "r"(state) : "memory");
}

}  // namespace gpucrypt::hash::detail

#endif
