// vaes_gcm.hpp: the aes_vaes_gcm variant, AES-GCM of our own on VAES + VPCLMULQDQ (x86-64).
//
// Why our own: the system libcrypto (OpenSSL 3.0 on Debian 12) runs AES-256-GCM at about 5 GB/s
// a core on a Zen 4 / Ice Lake class CPU, where newer OpenSSL (3.5+, the copy inside pyca's
// wheel) reaches 8-15 GB/s with VAES. The file format is AES-256-GCM, so the CPU's share of every
// file goes through this path. Two widths: AVX-512 (zmm, four blocks a register) and AVX2 (ymm,
// two blocks), picked at run time from CPUID; on a CPU with neither the variant is not registered
// and aes_openssl serves GCM as before. GPUCRYPT_CPU_GCM_ISA=avx2 forces the narrower width
// (tests use it to check both on one machine).
//
// Constant-time: yes (vaes_gcm_kernels.hpp: AESENC and PCLMULQDQ only, no tables; the key
// expansion is aes_bitsliced's circuit; the tag comparison is modes::constant_time_equal).
//
// Semantics are GcmCipher's: any nonce length (SP 800-38D: 12 bytes -> nonce || 1, else GHASH of
// the nonce), any AAD length, tags of 4..16 bytes, and open verifies the tag over the whole
// ciphertext before the CTR pass writes any plaintext (out untouched on failure, in place too).
#pragma once

#include <cstddef>
#include <cstdint>

// The kernel files (compiled with -mavx512*/-mvaes) see only Key and Kernels: nothing inline from
// the standard library or the public API is instantiated there with instructions other CPUs lack.
#if !defined(GPUCRYPT_VAES_GCM_KERNELS_ONLY)
#include "gpucrypt/cipher.hpp"
#endif

namespace gpucrypt::cpu::vaes_gcm {

// H^16..H^1 (twisted, byte-reversed), then zero entries so a last partial group may read a
// whole register past H^1 (vaes_gcm_kernels.hpp, ghash_reversed).
inline constexpr int kPowerSlots = 32;

struct Key {
  alignas(64) uint8_t round_keys[15 * 16];  // FIPS-197 byte order, rounds + 1 of them
  int rounds = 0;
  alignas(64) uint8_t h_powers[kPowerSlots * 16];
};

// One instruction-set width's kernels (vaes_gcm_avx512.cpp, vaes_gcm_avx2.cpp).
struct Kernels {
  const char* name;  // "avx512" or "avx2"
  void (*init_powers)(Key& key);  // needs round_keys/rounds set
  void (*encrypt_block)(const Key& key, const uint8_t in[16], uint8_t out[16]);
  // state: the GHASH accumulator in GCM byte order; a partial last block is zero-padded.
  void (*ghash)(const Key& key, uint8_t state[16], const uint8_t* data, size_t len);
  // CTR from the counter block (inc32 on bytes 12..15), any len, in == out allowed.
  void (*ctr)(const Key& key, const uint8_t counter[16], const uint8_t* in, uint8_t* out, size_t len);
};

const Kernels* avx512_kernels();  // nullptr when not compiled in
const Kernels* avx2_kernels();
// The widest kernels this CPU runs (honouring GPUCRYPT_CPU_GCM_ISA), or nullptr.
const Kernels* best_kernels();

void wipe(void* p, size_t len);

#if !defined(GPUCRYPT_VAES_GCM_KERNELS_ONLY)

// A keyed AES-GCM context; stateless between calls, so one object serves many threads.
class Context {
 public:
  // The default is best_kernels(), for callers that construct only where the variant is registered.
  explicit Context(const Kernels& kernels = *best_kernels()) : kernels_(&kernels) {}
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  void set_key(int key_bits, const uint8_t* key);
  void seal(ByteSpan nonce, ByteSpan aad, const uint8_t* in, uint8_t* out, size_t len, uint8_t* tag,
            size_t tag_len) const;
  // Verifies first (constant-time), then writes len bytes of plaintext; false and nothing written
  // on a mismatch.
  bool open(ByteSpan nonce, ByteSpan aad, const uint8_t* in, uint8_t* out, size_t len, const uint8_t* tag,
            size_t tag_len) const;
  const char* isa() const { return kernels_->name; }

 private:
  void counter_block(ByteSpan nonce, uint8_t j0[16]) const;
  void finish_tag(uint8_t state[16], uint64_t aad_len, uint64_t len, const uint8_t j0[16], uint8_t tag[16]) const;

  const Kernels* kernels_;
  Key key_{};
};

#endif

}  // namespace gpucrypt::cpu::vaes_gcm
