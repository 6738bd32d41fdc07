// block_cipher.hpp: what a mode needs from a cipher, and the helpers every mode shares.
//
// Modes (ecb.hpp ... gcm.hpp) are templates over a BlockCipher and are written once for every
// cipher (AES, Camellia, SC2000; table, bitsliced or OpenSSL-backed) and for every place they run:
// host code, CPU thread-pool chunks and CUDA kernels all call the same functions. Code in this
// directory therefore uses no std:: containers, no exceptions and no allocation; std:: appears only
// at compile time (type traits, concepts).
//
// Constant-time position: the modes add no secret-dependent branch or index of their own (tag
// comparison and padding checks are constant-time); whether a mode is constant-time is decided by
// the cipher it runs.
//
// The BlockCipher concept. A keyed cipher is a trivially copyable struct (so it can be copied to a
// kernel argument, constant or shared memory, and by value into a thread pool task) with
//
//   static constexpr int kBlocksPerCall;                  // 1 for table ciphers, 2 for bitsliced AES
//   GC_METHOD void encrypt_blocks(gc_block* blocks) const;  // kBlocksPerCall blocks, in place
//   GC_METHOD void decrypt_blocks(gc_block* blocks) const;
//
// Modes always hand it exactly kBlocksPerCall blocks. When fewer are live (message tails, serial
// modes), the other lanes carry copies of a live block: that costs a full call per block in the
// serial modes, but the cipher's timing never depends on how many lanes are live.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <concepts>
#include <type_traits>

#include "../core/platform.h"

#if defined(__CUDACC__)
#define GC_METHOD __host__ __device__ inline
#else
#define GC_METHOD inline
#endif

namespace gpucrypt::modes {

template <class Cipher>
concept BlockCipher = std::is_trivially_copyable_v<Cipher> &&
                      requires(const Cipher& cipher, gc_block* blocks) {
                        { Cipher::kBlocksPerCall } -> std::convertible_to<int>;
                        cipher.encrypt_blocks(blocks);
                        cipher.decrypt_blocks(blocks);
                      } && (Cipher::kBlocksPerCall >= 1);

inline constexpr size_t kBlockLen = 16;

// ModeStatus: what a checked mode entry point returns. Range functions that cannot fail return
// nothing; their preconditions are documented and are the caller's to meet.
enum class ModeStatus : int {
  ok = 0,
  invalid_length,          // XTS data unit below 16 bytes
  invalid_iv_length,       // GCM IV of 0 bytes or longer than 2^61 - 1 bytes
  invalid_tag_length,      // GCM tag outside 4..16 bytes
  message_too_long,        // GCM beyond 2^32 - 2 blocks of data or 2^61 - 1 bytes of AAD
  authentication_failed,   // GCM tag mismatch
};

// load_block / store_block: 16 bytes <-> gc_block at any alignment. gc_block's word i is the
// little-endian load of bytes 4i..4i+3, which on every little-endian target is the memory image
// itself: the host copies 16 bytes (one unaligned vector move), and the device uses one 128-bit
// or four 32-bit accesses when the address allows (the byte-wise path costs 16 loads per block).
GC_METHOD gc_block load_block(const uint8_t* bytes) {
#if defined(__CUDA_ARCH__)
  uintptr_t address = reinterpret_cast<uintptr_t>(bytes);
  if ((address & 15) == 0) {
    uint4 v = *reinterpret_cast<const uint4*>(bytes);
    return gc_block{{v.x, v.y, v.z, v.w}};
  }
  if ((address & 3) == 0) {
    const uint32_t* words = reinterpret_cast<const uint32_t*>(bytes);
    return gc_block{{words[0], words[1], words[2], words[3]}};
  }
  return gc_block_load(bytes);
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  gc_block block;
  memcpy(&block, bytes, sizeof block);
  return block;
#else
  return gc_block_load(bytes);
#endif
}

GC_METHOD void store_block(uint8_t* bytes, gc_block block) {
#if defined(__CUDA_ARCH__)
  uintptr_t address = reinterpret_cast<uintptr_t>(bytes);
  if ((address & 15) == 0) {
    *reinterpret_cast<uint4*>(bytes) = make_uint4(block.w[0], block.w[1], block.w[2], block.w[3]);
    return;
  }
  if ((address & 3) == 0) {
    uint32_t* words = reinterpret_cast<uint32_t*>(bytes);
    words[0] = block.w[0];
    words[1] = block.w[1];
    words[2] = block.w[2];
    words[3] = block.w[3];
    return;
  }
  gc_block_store(bytes, block);
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(bytes, &block, sizeof block);
#else
  gc_block_store(bytes, block);
#endif
}

GC_METHOD gc_block zero_block() {
  gc_block b;
  b.w[0] = b.w[1] = b.w[2] = b.w[3] = 0;
  return b;
}

// encrypt_one / decrypt_one: one block through a cipher of any width. For kBlocksPerCall > 1 the
// spare lanes get copies of the block, which wastes them but keeps the call constant-time.
template <BlockCipher Cipher>
GC_METHOD gc_block encrypt_one(const Cipher& cipher, gc_block block) {
  gc_block lanes[Cipher::kBlocksPerCall];
  for (int lane = 0; lane < Cipher::kBlocksPerCall; ++lane) lanes[lane] = block;
  cipher.encrypt_blocks(lanes);
  return lanes[0];
}

template <BlockCipher Cipher>
GC_METHOD gc_block decrypt_one(const Cipher& cipher, gc_block block) {
  gc_block lanes[Cipher::kBlocksPerCall];
  for (int lane = 0; lane < Cipher::kBlocksPerCall; ++lane) lanes[lane] = block;
  cipher.decrypt_blocks(lanes);
  return lanes[0];
}

// fill_spare_lanes: after num_live blocks have been written to lanes[0..num_live), copy lanes[0]
// into the rest so the cipher never reads uninitialised lanes.
template <int kLanes>
GC_METHOD void fill_spare_lanes(gc_block* lanes, size_t num_live) {
  for (size_t lane = num_live; lane < (size_t)kLanes; ++lane) lanes[lane] = lanes[0];
}

// xor_partial_block: out = in xor the first len (< 16) bytes of keystream_block; the final
// partial block of a CFB, OFB or CTR message. in == out is allowed.
GC_METHOD void xor_partial_block(gc_block keystream_block, const uint8_t* in, uint8_t* out, size_t len) {
  uint8_t keystream[kBlockLen];
  store_block(keystream, keystream_block);
  for (size_t i = 0; i < len; ++i) out[i] = (uint8_t)(in[i] ^ keystream[i]);
}

// secure_zero: wipes key or state memory in a way the optimiser may not drop.
GC_METHOD void secure_zero(void* memory, size_t len) {
  volatile uint8_t* bytes = static_cast<volatile uint8_t*>(memory);
  for (size_t i = 0; i < len; ++i) bytes[i] = 0;
}

// constant_time_equal: true when the len bytes at a and b match; time depends on len only.
GC_METHOD bool constant_time_equal(const uint8_t* a, const uint8_t* b, size_t len) {
  uint32_t difference = 0;
  for (size_t i = 0; i < len; ++i) difference |= (uint32_t)(a[i] ^ b[i]);
  return ((difference - 1u) >> 31) != 0;  // difference is < 256: the subtraction borrows iff it is 0
}

GC_METHOD size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

}  // namespace gpucrypt::modes
