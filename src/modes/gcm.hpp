// gcm.hpp: Galois/Counter Mode (NIST SP 800-38D) over any 128-bit block cipher.
//
// Limits enforced here (and by gcm_check_lengths for callers that drive the range functions):
// IV of 1 .. 2^61 - 1 bytes (12 bytes is the fast, recommended case), AAD up to 2^61 - 1 bytes,
// data up to 2^32 - 2 blocks (beyond that the 32-bit counter would reuse keystream), tags of 4 to
// 16 bytes (SP 800-38D, 5.2.1.2 and appendix C discourage 4 and 8; that policy is the caller's).
// Constant-time exactly when the cipher is: GHASH uses gf128.h's constant-time multiplier and the
// tag comparison is constant-time. gcm_decrypt writes no plaintext unless the tag verifies.
//
// Parallel use. Per (key, IV): gcm_setup gives a GcmContext (H, J0, E(J0)). Then
//   - any thread or chunk owning data blocks [j, j + n) (block-aligned; only the last range may
//     end in a partial block) calls gcm_encrypt_range(cipher, context, j, in + 16 j, out + 16 j,
//     len_of_range), which does the counter part and returns the GHASH of its ciphertext in one
//     pass; or the two halves separately: gcm_ctr_xor_range (counter part only) and
//     gcm_ghash_range(H, ciphertext_chunk, chunk_len);
//   - the per-range GHASH values are combined in order with gc_ghash_combine (gf128.h), or each
//     range first applies gc_ghash_shift by the number of data blocks after it and the results
//     are XORed in any order (a reduction tree, an atomic XOR);
//   - the tag: gcm_tag_from_hashes(context, aad_hash, ciphertext_hash, aad_len, data_len, ...).
// Decryption computes and checks the tag over the ciphertext before releasing plaintext.
// There is no streaming GCM here: gcm_encrypt / gcm_decrypt take one whole message.
// in == out is allowed everywhere.
#pragma once

#include <stdexcept>
#include <string>

#include "../core/counter.h"
#include "../core/gf128.h"
#include "block_cipher.hpp"
#include "ctr.hpp"
#include "mode_kind.hpp"

namespace gpucrypt::modes {

inline constexpr uint64_t kGcmMaxDataLen = ((uint64_t{1} << 32) - 2) * kBlockLen;
inline constexpr uint64_t kGcmMaxAadLen = (uint64_t{1} << 61) - 1;
inline constexpr uint64_t kGcmMaxIvLen = (uint64_t{1} << 61) - 1;
inline constexpr size_t kGcmMinTagLen = 4;
inline constexpr size_t kGcmMaxTagLen = 16;

// gcm_check_lengths: the SP 800-38D limits above, for one message.
GC_METHOD ModeStatus gcm_check_lengths(uint64_t iv_len, uint64_t aad_len, uint64_t data_len, size_t tag_len) {
  if (iv_len == 0 || iv_len > kGcmMaxIvLen) return ModeStatus::invalid_iv_length;
  if (tag_len < kGcmMinTagLen || tag_len > kGcmMaxTagLen) return ModeStatus::invalid_tag_length;
  if (aad_len > kGcmMaxAadLen || data_len > kGcmMaxDataLen) return ModeStatus::message_too_long;
  return ModeStatus::ok;
}

// gcm_check_arguments: the limits above as the error every backend's GCM raises
// (std::invalid_argument naming the limit). Host only (a plain inline function, which device code
// cannot call).
inline void gcm_check_arguments(uint64_t iv_len, uint64_t aad_len, uint64_t data_len, size_t tag_len) {
  switch (gcm_check_lengths(iv_len, aad_len, data_len, tag_len)) {
    case ModeStatus::ok: return;
    case ModeStatus::invalid_iv_length:
      throw std::invalid_argument("GCM nonce must be at least 1 byte (12 bytes recommended)");
    case ModeStatus::invalid_tag_length:
      throw std::invalid_argument("GCM tag length must be 4..16 bytes, got " + std::to_string(tag_len));
    default:
      throw std::invalid_argument(aad_len > kGcmMaxAadLen ? "GCM AAD is longer than 2^61-1 bytes"
                                                          : "GCM can encrypt at most 2^32-2 blocks (about 64 GiB) per nonce");
  }
}

// GcmContext: everything derived from (key, IV). Holds secrets (H, E(J0)): wipe after use.
struct GcmContext {
  gc_gf128 hash_subkey;  // H = E_K(0^128)
  gc_block pre_counter;  // J0
  gc_block tag_mask;     // E_K(J0)

  GC_METHOD void wipe() { secure_zero(this, sizeof *this); }
};

// gcm_ghash_range: GHASH of len bytes from the zero state, the final partial block zero-padded.
GC_METHOD gc_gf128 gcm_ghash_range(gc_gf128 hash_subkey, const uint8_t* data, size_t len) {
  return gc_ghash_bytes(gc_gf128_make(0, 0), hash_subkey, data, len);
}

// gcm_pre_counter: J0 = IV || 0^31 || 1 for a 12-byte IV, else GHASH(IV, zero-padded || 0^64 ||
// [bit length of IV]_64).
GC_METHOD gc_block gcm_pre_counter(gc_gf128 hash_subkey, const uint8_t* iv, size_t iv_len) {
  if (iv_len == 12) {
    uint8_t block[kBlockLen];
    for (size_t i = 0; i < 12; ++i) block[i] = iv[i];
    block[12] = block[13] = block[14] = 0;
    block[15] = 1;
    return load_block(block);
  }
  gc_gf128 hash = gcm_ghash_range(hash_subkey, iv, iv_len);
  hash = gc_ghash_block(hash, hash_subkey, gc_gf128_make(0, (uint64_t)iv_len * 8));
  return gc_gf128_to_block(hash);
}

// gcm_setup: fills *context for one (key, IV); invalid_iv_length for an empty or oversized IV.
template <BlockCipher Cipher>
GC_METHOD ModeStatus gcm_setup(const Cipher& cipher, const uint8_t* iv, size_t iv_len, GcmContext* context) {
  if (iv_len == 0 || iv_len > kGcmMaxIvLen) return ModeStatus::invalid_iv_length;
  context->hash_subkey = gc_gf128_from_block(encrypt_one(cipher, zero_block()));
  context->pre_counter = gcm_pre_counter(context->hash_subkey, iv, iv_len);
  context->tag_mask = encrypt_one(cipher, context->pre_counter);
  return ModeStatus::ok;
}

// gcm_ctr_xor_range: GCTR over data bytes starting at data block first_block_index; data block k
// uses inc32^(k+1)(J0). Encryption and decryption alike.
template <BlockCipher Cipher>
GC_METHOD void gcm_ctr_xor_range(const Cipher& cipher, gc_block pre_counter, uint64_t first_block_index,
                                 const uint8_t* in, uint8_t* out, size_t len) {
  counter_xor_range<Counter32>(cipher, gc_ctr32_add(pre_counter, 1), first_block_index, in, out, len);
}

namespace detail {
template <bool kEncrypt, BlockCipher Cipher>
GC_METHOD gc_gf128 gcm_crypt_range(const Cipher& cipher, const GcmContext& context, uint64_t first_block_index,
                                   const uint8_t* in, uint8_t* out, size_t len) {
  constexpr int kLanes = Cipher::kBlocksPerCall;
  gc_block range_counter = gc_ctr32_add(context.pre_counter, 1 + first_block_index);
  gc_gf128 hash = gc_gf128_make(0, 0);
  size_t num_blocks = (len + kBlockLen - 1) / kBlockLen;
  for (size_t first = 0; first < num_blocks; first += kLanes) {
    size_t num_live = min_size(kLanes, num_blocks - first);
    gc_block lanes[kLanes];
    for (size_t lane = 0; lane < num_live; ++lane) lanes[lane] = gc_ctr32_add(range_counter, first + lane);
    fill_spare_lanes<kLanes>(lanes, num_live);
    cipher.encrypt_blocks(lanes);
    for (size_t lane = 0; lane < num_live; ++lane) {
      size_t offset = (first + lane) * kBlockLen;
      gc_block input, output;
      if (len - offset >= kBlockLen) {
        input = load_block(in + offset);
        output = gc_block_xor(input, lanes[lane]);
        store_block(out + offset, output);
      } else {  // final partial block: GHASH sees the ciphertext zero-padded
        uint8_t input_bytes[kBlockLen] = {0}, output_bytes[kBlockLen] = {0}, keystream[kBlockLen];
        store_block(keystream, lanes[lane]);
        for (size_t i = 0; i < len - offset; ++i) {
          input_bytes[i] = in[offset + i];
          output_bytes[i] = (uint8_t)(input_bytes[i] ^ keystream[i]);
          out[offset + i] = output_bytes[i];
        }
        input = load_block(input_bytes);
        output = load_block(output_bytes);
      }
      hash = gc_ghash_block(hash, context.hash_subkey, gc_gf128_from_block(kEncrypt ? output : input));
    }
  }
  return hash;
}
}  // namespace detail

// gcm_encrypt_range / gcm_decrypt_range: the counter part and the GHASH of a range in one pass
// (each block is hashed while it is still in registers: one read and one write of the data).
// Return GHASH of the range's ciphertext from the zero state, as gcm_ghash_range would; combine
// or shift it as described at the top. Decryption releases plaintext before any tag check: a
// parallel decryptor either hashes first (gcm_ghash_range) or withholds the output until the
// combined tag has been verified.
template <BlockCipher Cipher>
GC_METHOD gc_gf128 gcm_encrypt_range(const Cipher& cipher, const GcmContext& context, uint64_t first_block_index,
                                     const uint8_t* in, uint8_t* out, size_t len) {
  return detail::gcm_crypt_range<true>(cipher, context, first_block_index, in, out, len);
}

template <BlockCipher Cipher>
GC_METHOD gc_gf128 gcm_decrypt_range(const Cipher& cipher, const GcmContext& context, uint64_t first_block_index,
                                     const uint8_t* in, uint8_t* out, size_t len) {
  return detail::gcm_crypt_range<false>(cipher, context, first_block_index, in, out, len);
}

// gcm_length_block: [bit length of AAD]_64 || [bit length of data]_64.
GC_METHOD gc_gf128 gcm_length_block(uint64_t aad_len, uint64_t data_len) {
  return gc_gf128_make(aad_len * 8, data_len * 8);
}

// gcm_tag_from_running_hash: the tag once GHASH has absorbed the padded AAD and ciphertext.
GC_METHOD void gcm_tag_from_running_hash(const GcmContext& context, gc_gf128 hash, uint64_t aad_len,
                                         uint64_t data_len, uint8_t* tag, size_t tag_len) {
  hash = gc_ghash_block(hash, context.hash_subkey, gcm_length_block(aad_len, data_len));
  uint8_t full_tag[kBlockLen];
  store_block(full_tag, gc_block_xor(gc_gf128_to_block(hash), context.tag_mask));
  for (size_t i = 0; i < tag_len; ++i) tag[i] = full_tag[i];
}

// gcm_tag_from_hashes: the tag from GHASH(AAD) and GHASH(ciphertext), each started from zero (as
// gcm_ghash_range and the chunk combinations give them); tag_len bytes are written.
GC_METHOD void gcm_tag_from_hashes(const GcmContext& context, gc_gf128 aad_hash, gc_gf128 ciphertext_hash,
                                   uint64_t aad_len, uint64_t data_len, uint8_t* tag, size_t tag_len) {
  uint64_t num_data_blocks = (data_len + kBlockLen - 1) / kBlockLen;
  gc_gf128 hash = gc_ghash_combine(aad_hash, gc_gf128_pow(context.hash_subkey, num_data_blocks), ciphertext_hash);
  gcm_tag_from_running_hash(context, hash, aad_len, data_len, tag, tag_len);
}

// gcm_encrypt: one message; writes len bytes to out and tag_len bytes to tag. Checks every limit
// before touching any buffer.
template <BlockCipher Cipher>
GC_METHOD ModeStatus gcm_encrypt(const Cipher& cipher, const uint8_t* iv, size_t iv_len, const uint8_t* aad,
                                 size_t aad_len, const uint8_t* in, uint8_t* out, size_t len, uint8_t* tag,
                                 size_t tag_len) {
  ModeStatus status = gcm_check_lengths(iv_len, aad_len, len, tag_len);
  if (status != ModeStatus::ok) return status;
  GcmContext context;
  gcm_setup(cipher, iv, iv_len, &context);
  gc_gf128 ciphertext_hash = gcm_encrypt_range(cipher, context, 0, in, out, len);
  gcm_tag_from_hashes(context, gcm_ghash_range(context.hash_subkey, aad, aad_len), ciphertext_hash, aad_len, len,
                      tag, tag_len);
  context.wipe();
  return ModeStatus::ok;
}

// gcm_decrypt: verifies tag (tag_len bytes, constant-time) over aad and the ciphertext in, and only
// then writes the plaintext to out; authentication_failed leaves out untouched.
template <BlockCipher Cipher>
GC_METHOD ModeStatus gcm_decrypt(const Cipher& cipher, const uint8_t* iv, size_t iv_len, const uint8_t* aad,
                                 size_t aad_len, const uint8_t* in, uint8_t* out, size_t len, const uint8_t* tag,
                                 size_t tag_len) {
  ModeStatus status = gcm_check_lengths(iv_len, aad_len, len, tag_len);
  if (status != ModeStatus::ok) return status;
  GcmContext context;
  gcm_setup(cipher, iv, iv_len, &context);
  uint8_t expected_tag[kBlockLen];
  gcm_tag_from_hashes(context, gcm_ghash_range(context.hash_subkey, aad, aad_len),
                      gcm_ghash_range(context.hash_subkey, in, len), aad_len, len, expected_tag, tag_len);
  bool tag_ok = constant_time_equal(expected_tag, tag, tag_len);
  secure_zero(expected_tag, sizeof expected_tag);
  if (tag_ok) gcm_ctr_xor_range(cipher, context.pre_counter, 0, in, out, len);
  context.wipe();
  return tag_ok ? ModeStatus::ok : ModeStatus::authentication_failed;
}

// GcmMode: the mode's traits (mode_kind.hpp): an AEAD, which the engines' GCM objects run.
struct GcmMode : ModeTraitsBase {
  static constexpr Mode kMode = Mode::gcm;
  static constexpr ModeKind kind(Direction) { return ModeKind::aead; }
};

}  // namespace gpucrypt::modes
