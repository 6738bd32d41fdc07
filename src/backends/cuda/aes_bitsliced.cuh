// aes_bitsliced.cuh: the CUDA variants "aes_bitsliced", AES as a Boolean circuit (aes_bitsliced.h,
// after BearSSL's aes_ct), two blocks per call; "aes_bitsliced32", the same S-box circuit on 32
// blocks per call (aes_bitsliced32.h: ShiftRows free, MixColumns without rotations); and
// "aes_bitsliced8", on 8 blocks per call in 32 words (aes_bitsliced8.h: rows as words, ShiftRows
// a byte rotation, MixColumns without rotations).
//
// Constant-time: no tables and no memory access whose address depends on key or data; every
// instruction is AND/XOR/NOT/shift/rotate by constants, whose timing on NVIDIA GPUs does not
// depend on operand values. The key schedule is expanded on the host (also table-free) and read
// from the kernel's parameter bank with constant indices.
//
// aes_bitsliced.cu instantiates the 2-block family; aes_bitsliced32_{128,192,256}.cu and
// aes_bitsliced8_{128,192,256}.cu the wide ones, one key size per file so that ptxas compiles them
// in parallel.
#pragma once

#include "backends/cuda/kernels.cuh"

namespace gpucrypt::cuda {

namespace {

// No tables: nothing to copy into shared memory, nothing to point a cipher at.
struct TablelessFamily {
  static constexpr size_t smem_bytes(bool) { return 0; }
  __device__ static void fill(uint32_t*, bool) {}
  template <class Cipher>
  __device__ static void bind(Cipher&, uint32_t*, bool) {}
  template <class Cipher>
  __device__ static void prepare(Cipher&, uint32_t*, bool) {}
};

template <int kKeyBits>
struct AesBitslicedFamily : TablelessFamily {
  // The round count as a template argument: aes_bitsliced_*_rounds unrolls with constant
  // round-key indices.
  using Cipher = modes::AesBitsliced<kKeyBits / 32 + 6>;
  static Cipher make_host(const uint8_t* key, int key_len) { return Cipher::make_host(key, key_len); }
  // Device expansion (the batch executor's): the same table-free schedule.
  __device__ static void expand(Cipher& cipher, const uint8_t* key, int key_len) {
    aes_bitsliced_expand_key(&cipher.key, key, key_len);
  }
};

// The wide bitslices' one shape for every GPU: 256-thread CTAs in every parallel kernel, no
// register cap below 255 (ptxas picks). aes_bitsliced32 (128 state words a thread) needs 255
// registers; aes_bitsliced8 (32 words, about 100 with the S-box temporaries) gets two CTAs an SM
// at <= 128. The per-key-size files instantiate only this shape: the fully unrolled 32-block
// rounds take ptxas minutes per kernel. aes_bitsliced8 is not swept yet on the H200; nvcc 13.0
// gives its CTR kernel 64 registers and no spills, but ptxas spills a little where it picks its
// own register target (ECB encryption 8 bytes at 80 registers, GCM 40 bytes; not yet checked
// whether inside the round loop); a sweep should settle it. The fused GCM kernel now runs only
// for a seal whose 32-bit GCM counter wraps (kGcmSealInTwoPasses below).
struct BitslicedWidePolicy : Sm90Policy {
  static constexpr int kBulkThreads = 256, kXtsThreads = 256, kGcmThreads = 256, kGcmMinCtasPerSm = 1;
};

// A wide bitslice (many blocks of one key a call: aes_bitsliced32.h's 32, aes_bitsliced8.h's 8),
// WideCipher its modes:: wrapper for kKeyBits. Every parallel kernel gives a lane that many blocks
// per tile (the policy's steps are raised to the call width); the round-key masks (7.5 KiB for 32
// blocks, 1.9 KiB for 8) are read in place from the kernel parameter. Serial modes run the 2-block
// circuit above (one block per call is all a chain allows).
template <class WideCipher, int kKeyBits>
struct AesBitslicedWideFamily : TablelessFamily {
  using Cipher = WideCipher;
  using SerialFamily = AesBitslicedFamily<kKeyBits>;
  static constexpr bool kReadKeyInPlace = true;
  // GCM seals as the CTR kernel and then the GHASH-only pass: the fused kernel must hold the wide
  // state and GHASH's multiplies at once and ran at 0.78-0.90 Tbps for aes_bitsliced8 against
  // 2.2-3.0 for its CTR alone (H200 and H100, docs/performance.md, 2026-11-27, fourth session);
  // with the rounds as a loop (2026-11-30) 1.57 / 1.36 Tbps (AES-128 / 256; 1.57 / 1.39 at 2 CTAs
  // an SM) against 1.96 / 1.65 for the overlapped two passes (gcm_overlap.hpp).
  static constexpr bool kGcmSealInTwoPasses = true;
  static Cipher make_host(const uint8_t* key, int key_len) { return Cipher::make_host(key, key_len); }
};

template <int kKeyBits>
using AesBitsliced32Family = AesBitslicedWideFamily<modes::AesBitsliced32<kKeyBits / 32 + 6>, kKeyBits>;
template <int kKeyBits>
using AesBitsliced8Family = AesBitslicedWideFamily<modes::AesBitsliced8<kKeyBits / 32 + 6>, kKeyBits>;

// The factory of one wide variant for one key size (each aes_bitsliced{32,8}_<bits>.cu one).
template <template <int> class Family, int kKeyBits>
std::unique_ptr<KeyedCipher> make_wide_bitsliced(const uint8_t* key) {
  return std::make_unique<kernels::KeyedCipherImpl<Family<kKeyBits>, kKeyBits, BitslicedWidePolicy>>(key);
}

}  // namespace

// The 32-block variant for one key size (aes_bitsliced32_<bits>.cu).
template <int kKeyBits>
std::unique_ptr<KeyedCipher> make_aes_bitsliced32_bits(const uint8_t* key);
template <>
std::unique_ptr<KeyedCipher> make_aes_bitsliced32_bits<128>(const uint8_t* key);
template <>
std::unique_ptr<KeyedCipher> make_aes_bitsliced32_bits<192>(const uint8_t* key);
template <>
std::unique_ptr<KeyedCipher> make_aes_bitsliced32_bits<256>(const uint8_t* key);

// The 8-block variant for one key size (aes_bitsliced8_<bits>.cu).
template <int kKeyBits>
std::unique_ptr<KeyedCipher> make_aes_bitsliced8_bits(const uint8_t* key);
template <>
std::unique_ptr<KeyedCipher> make_aes_bitsliced8_bits<128>(const uint8_t* key);
template <>
std::unique_ptr<KeyedCipher> make_aes_bitsliced8_bits<192>(const uint8_t* key);
template <>
std::unique_ptr<KeyedCipher> make_aes_bitsliced8_bits<256>(const uint8_t* key);

}  // namespace gpucrypt::cuda
