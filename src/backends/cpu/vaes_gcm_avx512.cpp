// vaes_gcm_avx512.cpp: aes_vaes_gcm's kernels on zmm registers (four AES blocks each). Compiled
// with -mavx512f -mavx512bw -mavx512vl -mvaes -mvpclmulqdq (CMakeLists.txt); called only after
// vaes_gcm.cpp checked CPUID. Constant-time: yes (vaes_gcm_kernels.hpp).
#define GPUCRYPT_VAES_GCM_KERNELS_ONLY
#include "backends/cpu/vaes_gcm.hpp"

#if defined(GPUCRYPT_WITH_VAES_GCM)
// GCC 12 warns inside its own AVX-512 intrinsics (_mm512_undefined_epi32, GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstring>

namespace {

struct Vec {
  using type = __m512i;
  static constexpr int kLanes = 4;
  static type zero() { return _mm512_setzero_si512(); }
  static type xor_(type a, type b) { return _mm512_xor_si512(a, b); }
  static type loadu(const uint8_t* p) { return _mm512_loadu_si512(p); }
  static void storeu(uint8_t* p, type x) { _mm512_storeu_si512(p, x); }
  static type broadcast128(__m128i x) { return _mm512_broadcast_i32x4(x); }
  static type from128(__m128i x) { return _mm512_inserti32x4(_mm512_setzero_si512(), x, 0); }
  static type aesenc(type x, type k) { return _mm512_aesenc_epi128(x, k); }
  static type aesenclast(type x, type k) { return _mm512_aesenclast_epi128(x, k); }
  template <int kImm>
  static type clmul(type a, type b) { return _mm512_clmulepi64_epi128(a, b, kImm); }
  static __m128i sum_lanes(type x) {
    const __m256i half = _mm256_xor_si256(_mm512_castsi512_si256(x), _mm512_extracti64x4_epi64(x, 1));
    return _mm_xor_si128(_mm256_castsi256_si128(half), _mm256_extracti128_si256(half, 1));
  }
  static type shuffle(type x, type mask) { return _mm512_shuffle_epi8(x, mask); }
  static type bswap_mask() {
    return broadcast128(_mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
  }
  static type add_epi32(type a, type b) { return _mm512_add_epi32(a, b); }
  static type lane_index() { return _mm512_set_epi32(0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0); }
  static type lane_step() { return _mm512_set_epi32(0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4); }
};

#include "backends/cpu/vaes_gcm_kernels.hpp"

const gpucrypt::cpu::vaes_gcm::Kernels kKernels{"avx512", init_impl, encrypt_block_impl, ghash_impl, ctr_impl};

}  // namespace

const gpucrypt::cpu::vaes_gcm::Kernels* gpucrypt::cpu::vaes_gcm::avx512_kernels() { return &kKernels; }
#else
const gpucrypt::cpu::vaes_gcm::Kernels* gpucrypt::cpu::vaes_gcm::avx512_kernels() { return nullptr; }
#endif
