// vaes_gcm_avx2.cpp: aes_vaes_gcm's kernels on ymm registers (two AES blocks each). Compiled
// with -mavx2 -mvaes -mvpclmulqdq (CMakeLists.txt); called only after
// vaes_gcm.cpp checked CPUID. Constant-time: yes (vaes_gcm_kernels.hpp).
#define GPUCRYPT_VAES_GCM_KERNELS_ONLY
#include "backends/cpu/vaes_gcm.hpp"

#if defined(GPUCRYPT_WITH_VAES_GCM)
#include <immintrin.h>

#include <cstring>

namespace {

struct Vec {
  using type = __m256i;
  static constexpr int kLanes = 2;
  static type zero() { return _mm256_setzero_si256(); }
  static type xor_(type a, type b) { return _mm256_xor_si256(a, b); }
  static type loadu(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void storeu(uint8_t* p, type x) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), x); }
  static type broadcast128(__m128i x) { return _mm256_broadcastsi128_si256(x); }
  static type from128(__m128i x) { return _mm256_inserti128_si256(_mm256_setzero_si256(), x, 0); }
  static type aesenc(type x, type k) { return _mm256_aesenc_epi128(x, k); }
  static type aesenclast(type x, type k) { return _mm256_aesenclast_epi128(x, k); }
  template <int kImm>
  static type clmul(type a, type b) { return _mm256_clmulepi64_epi128(a, b, kImm); }
  static __m128i sum_lanes(type x) {
    return _mm_xor_si128(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
  }
  static type shuffle(type x, type mask) { return _mm256_shuffle_epi8(x, mask); }
  static type bswap_mask() {
    return broadcast128(_mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
  }
  static type add_epi32(type a, type b) { return _mm256_add_epi32(a, b); }
  static type lane_index() { return _mm256_set_epi32(0, 0, 0, 1, 0, 0, 0, 0); }
  static type lane_step() { return _mm256_set_epi32(0, 0, 0, 2, 0, 0, 0, 2); }
};

#include "backends/cpu/vaes_gcm_kernels.hpp"

const gpucrypt::cpu::vaes_gcm::Kernels kKernels{"avx2", init_impl, encrypt_block_impl, ghash_impl, ctr_impl};

}  // namespace

const gpucrypt::cpu::vaes_gcm::Kernels* gpucrypt::cpu::vaes_gcm::avx2_kernels() { return &kKernels; }
#else
const gpucrypt::cpu::vaes_gcm::Kernels* gpucrypt::cpu::vaes_gcm::avx2_kernels() { return nullptr; }
#endif
