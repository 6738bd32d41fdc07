// keccak_avx512_x8.h: eight equal-length Keccak sponges at once on AVX-512 (keccak_avx512_x8.cpp),
// for the leaves of ParallelHash and KangarooTwelve, where many messages of one length wait to be
// hashed with the same rate, domain and rounds (LeafHasher::chaining_values).
//
// Only C headers here: keccak_avx512_x8.cpp, compiled with the AVX-512 flags, includes it
// (keccak_host_loops.h says why that matters).
#ifndef GPUCRYPT_HASH_KECCAK_AVX512_X8_H
#define GPUCRYPT_HASH_KECCAK_AVX512_X8_H

#include <stddef.h>
#include <stdint.h>

namespace gpucrypt::hash::detail {

// keccak_oneshot_x8 computes, for k = 0..7, gc_keccak_sponge_oneshot(rate, domain, in[k], in_len,
// out[k], out_len, num_rounds) (src/core/keccak.h): same rate (a multiple of 8 below 200),
// domain byte, rounds (1..24) and lengths for all eight; any out_len. in[k] may be null only when
// in_len is 0. The eight outputs must not overlap the inputs.
using KeccakOneshotX8 = void (*)(int rate, uint8_t domain, const uint8_t* const in[8], size_t in_len,
                                 uint8_t* const out[8], size_t out_len, int num_rounds);

// keccak_oneshot_x8_for_this_cpu: keccak_oneshot_x8 where it was compiled (x86-64, a compiler
// taking the AVX-512 flags) and CPUID has AVX-512 F, VL, BW and DQ; nullptr otherwise
// (keccak_sponge.cpp; callers then hash one message at a time with host_keccak_loops().oneshot).
KeccakOneshotX8 keccak_oneshot_x8_for_this_cpu();

#if defined(GPUCRYPT_WITH_KECCAK_AVX512_X8)
void keccak_oneshot_x8(int rate, uint8_t domain, const uint8_t* const in[8], size_t in_len, uint8_t* const out[8],
                       size_t out_len, int num_rounds);
#endif

}  // namespace gpucrypt::hash::detail

#endif
