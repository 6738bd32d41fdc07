// xts.hpp: XTS-AES style tweakable encryption (IEEE 1619-2018, SP 800-38E) over any 128-bit
// block cipher, with ciphertext stealing for a data unit whose length is not a block multiple.
//
// Keys: the data cipher is keyed with the first key half, the tweak cipher with the second; the
// API layer must refuse equal halves (xts_key_halves_differ) and data units under 16 bytes.
// Block j of a data unit is encrypted as E(P_j xor T_j) xor T_j with T_j = E_K2(tweak) * alpha^j.
//
// Parallel use: compute encrypted_tweak = xts_encrypted_tweak(tweak_cipher, tweak) once per data
// unit; then any thread or chunk owning blocks [j, j + n) calls xts_encrypt_range (or decrypt)
// with first_block_index j, in + 16 j, out + 16 j. It starts from T * alpha^j (counter.h) and
// walks on by doubling. Ranges split on block boundaries; the range that ends the data unit
// carries the ragged tail and must also hold at least the last full block (len >= 16), because
// ciphertext stealing mixes the last full and the partial block. in == out is allowed.
//
// IEEE 1619 caps a data unit at 2^20 blocks (16 MiB): the range functions accept any length, and
// every entry point (CipherStream on each CPU and CUDA variant, the device-pointer API, the batch
// builder) applies the one rule, xts_check_data_unit, before it touches data.
// Constant-time exactly when the cipher is: tweaks are computed with counter.h's constant-time
// arithmetic and nothing here branches on or indexes by data.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "../core/counter.h"
#include "block_cipher.hpp"
#include "mode_kind.hpp"

namespace gpucrypt::modes {

inline constexpr uint64_t kXtsMinDataUnitLen = 16;
inline constexpr uint64_t kXtsMaxDataUnitLen = uint64_t{1} << 24;  // IEEE 1619-2018 5.1: 2^20 blocks

// xts_check_data_unit: throws std::invalid_argument naming the cipher and the limits unless
// 16 <= len <= 16 MiB. (Host only.)
inline void xts_check_data_unit(std::string_view cipher_name, uint64_t len) {
  if (len >= kXtsMinDataUnitLen && len <= kXtsMaxDataUnitLen) return;
  throw std::invalid_argument(std::string(cipher_name) +
                              ": an XTS data unit must be at least 16 bytes and at most 16 MiB (IEEE 1619: 2^20 "
                              "blocks; split larger data into units with their own tweaks), got " +
                              std::to_string(len) + " bytes");
}

// Many data units in one call (dm-crypt's sectors): len bytes are len / unit_len units back to
// back, unit u under the tweak first_unit + u. xts_check_units is the one rule every entry point
// applies (a data unit as above, a whole number of them), throwing std::invalid_argument. (Host.)
inline void xts_check_units(std::string_view cipher_name, uint64_t unit_len, uint64_t len) {
  xts_check_data_unit(cipher_name, unit_len);
  if (len % unit_len != 0)
    throw std::invalid_argument(std::string(cipher_name) + ": " + std::to_string(len) +
                                " bytes are not a whole number of " + std::to_string(unit_len) + "-byte data units");
}

// XtsUnitNumber: a data unit's number, 128 bits (IEEE 1619-2018 5.1's data unit sequence
// number). The API takes a 64-bit first number; first + u may pass 2^64 and carries into the
// high half (a call split over threads or staging chunks adds the offset of its piece here, so
// every piece counts from the same 128-bit start).
struct XtsUnitNumber {
  uint64_t low = 0, high = 0;
  XtsUnitNumber plus(uint64_t u) const {
    const uint64_t sum = low + u;
    return {sum, high + (sum < low ? 1u : 0u)};
  }
  // The unit's tweak: its number as a 128-bit little-endian integer (dm-crypt's plain64 below 2^64).
  void tweak(uint8_t out[16]) const {
    for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(low >> (8 * i));
    for (int i = 0; i < 8; ++i) out[8 + i] = static_cast<uint8_t>(high >> (8 * i));
  }
};

// xts_encrypted_tweak: T_0 = E_K2(tweak), the tweak of block 0.
template <BlockCipher Cipher>
GC_METHOD gc_block xts_encrypted_tweak(const Cipher& tweak_cipher, gc_block tweak) {
  return encrypt_one(tweak_cipher, tweak);
}

// xts_key_halves_differ: false when the two halves of an XTS key are equal (which IEEE 1619-2018
// and FIPS forbid). Constant-time in the key bytes.
GC_METHOD bool xts_key_halves_differ(const uint8_t* key, size_t key_len) {
  return !constant_time_equal(key, key + key_len / 2, key_len / 2);
}

namespace detail {

// xts_blocks: whole blocks with tweaks tweak, tweak*alpha, ...; returns the tweak of the block
// after the last one.
template <bool kEncrypt, BlockCipher Cipher>
GC_METHOD gc_block xts_blocks(const Cipher& cipher, gc_block tweak, const uint8_t* in, uint8_t* out,
                              size_t num_blocks) {
  constexpr int kLanes = Cipher::kBlocksPerCall;
  for (size_t first = 0; first < num_blocks; first += kLanes) {
    size_t num_live = min_size(kLanes, num_blocks - first);
    gc_block tweaks[kLanes];
    gc_block lanes[kLanes];
    for (size_t lane = 0; lane < num_live; ++lane) {
      tweaks[lane] = tweak;
      tweak = gc_xts_mul_alpha(tweak);
      lanes[lane] = gc_block_xor(load_block(in + (first + lane) * kBlockLen), tweaks[lane]);
    }
    fill_spare_lanes<kLanes>(lanes, num_live);
    if constexpr (kEncrypt) {
      cipher.encrypt_blocks(lanes);
    } else {
      cipher.decrypt_blocks(lanes);
    }
    for (size_t lane = 0; lane < num_live; ++lane)
      store_block(out + (first + lane) * kBlockLen, gc_block_xor(lanes[lane], tweaks[lane]));
  }
  return tweak;
}

template <bool kEncrypt, BlockCipher Cipher>
GC_METHOD gc_block xts_one_block(const Cipher& cipher, gc_block tweak, gc_block block) {
  block = gc_block_xor(block, tweak);
  block = kEncrypt ? encrypt_one(cipher, block) : decrypt_one(cipher, block);
  return gc_block_xor(block, tweak);
}

template <bool kEncrypt, BlockCipher Cipher>
GC_METHOD ModeStatus xts_range(const Cipher& cipher, gc_block encrypted_tweak, uint64_t first_block_index,
                               const uint8_t* in, uint8_t* out, size_t len) {
  size_t tail_len = len % kBlockLen;
  if (tail_len != 0 && len < kBlockLen) return ModeStatus::invalid_length;
  size_t num_full_blocks = len / kBlockLen;
  gc_block tweak = gc_xts_tweak_at(encrypted_tweak, first_block_index);
  if (tail_len == 0) {
    xts_blocks<kEncrypt>(cipher, tweak, in, out, num_full_blocks);
    return ModeStatus::ok;
  }
  // Ciphertext stealing (IEEE 1619-2018, 5.3.2 and 5.4.2): block m-1 is the last full block, m
  // the partial one. Encryption: CC = enc_{m-1}(P_{m-1}); C_m = first tail_len bytes of CC;
  // C_{m-1} = enc_m(P_m || rest of CC). Decryption undoes it, so it uses tweak m first.
  tweak = xts_blocks<kEncrypt>(cipher, tweak, in, out, num_full_blocks - 1);
  gc_block tweak_last = gc_xts_mul_alpha(tweak);
  size_t last_full = (num_full_blocks - 1) * kBlockLen;
  size_t partial = num_full_blocks * kBlockLen;
  uint8_t stolen[kBlockLen];
  store_block(stolen, xts_one_block<kEncrypt>(cipher, kEncrypt ? tweak : tweak_last, load_block(in + last_full)));
  uint8_t mixed[kBlockLen];
  for (size_t i = 0; i < kBlockLen; ++i) mixed[i] = i < tail_len ? in[partial + i] : stolen[i];
  for (size_t i = 0; i < tail_len; ++i) out[partial + i] = stolen[i];
  store_block(out + last_full, xts_one_block<kEncrypt>(cipher, kEncrypt ? tweak_last : tweak, load_block(mixed)));
  return ModeStatus::ok;
}

}  // namespace detail

// xts_encrypt_range / xts_decrypt_range: see the file comment. Returns invalid_length only for a
// range that is neither a block multiple nor at least 16 bytes; otherwise ok.
template <BlockCipher Cipher>
GC_METHOD ModeStatus xts_encrypt_range(const Cipher& data_cipher, gc_block encrypted_tweak, uint64_t first_block_index,
                                       const uint8_t* in, uint8_t* out, size_t len) {
  return detail::xts_range<true>(data_cipher, encrypted_tweak, first_block_index, in, out, len);
}

template <BlockCipher Cipher>
GC_METHOD ModeStatus xts_decrypt_range(const Cipher& data_cipher, gc_block encrypted_tweak, uint64_t first_block_index,
                                       const uint8_t* in, uint8_t* out, size_t len) {
  return detail::xts_range<false>(data_cipher, encrypted_tweak, first_block_index, in, out, len);
}

// xts_encrypt / xts_decrypt: one whole data unit; invalid_length below 16 bytes.
template <BlockCipher Cipher>
GC_METHOD ModeStatus xts_encrypt(const Cipher& data_cipher, const Cipher& tweak_cipher, gc_block tweak,
                                 const uint8_t* in, uint8_t* out, size_t len) {
  if (len < kBlockLen) return ModeStatus::invalid_length;
  return xts_encrypt_range(data_cipher, xts_encrypted_tweak(tweak_cipher, tweak), 0, in, out, len);
}

template <BlockCipher Cipher>
GC_METHOD ModeStatus xts_decrypt(const Cipher& data_cipher, const Cipher& tweak_cipher, gc_block tweak,
                                 const uint8_t* in, uint8_t* out, size_t len) {
  if (len < kBlockLen) return ModeStatus::invalid_length;
  return xts_decrypt_range(data_cipher, xts_encrypted_tweak(tweak_cipher, tweak), 0, in, out, len);
}

// XtsMode: the mode's traits (mode_kind.hpp): its own kind (tweaked data units with ciphertext
// stealing), which the engines' xts entries run.
struct XtsMode : ModeTraitsBase {
  static constexpr Mode kMode = Mode::xts;
  static constexpr ModeKind kind(Direction) { return ModeKind::xts; }
};

}  // namespace gpucrypt::modes
