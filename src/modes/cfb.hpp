// cfb.hpp: cipher feedback with 128-bit segments, CFB-128 (SP 800-38A, 6.3; OpenSSL's cfb128).
//
// C_i = P_i xor E(C_{i-1}), C_0 = IV. Encryption is serial (one message per thread); decryption
// is parallel because every E(C_{i-1}) input is ciphertext that is already known:
// cfb_decrypt_range decrypts any range starting on a block boundary given the preceding
// ciphertext block (chain_block_before in cbc.hpp). In-place parallel decryption must read the
// boundary blocks before any range writes. A message may end in a partial block; a stream that
// splits anywhere keeps its own position inside the block (src/backends/cipher_stream.cpp).
// in == out is allowed.
// Constant-time exactly when the cipher is: nothing here branches on or indexes by data.
#pragma once

#include "cbc.hpp"  // feedback_decrypt_blocks

namespace gpucrypt::modes {

// cfb_encrypt_blocks: num_blocks whole blocks after chain (IV or previous ciphertext block);
// returns the last ciphertext block.
template <BlockCipher Cipher>
GC_METHOD gc_block cfb_encrypt_blocks(const Cipher& cipher, gc_block chain, const uint8_t* in, uint8_t* out,
                                      size_t num_blocks) {
  for (size_t i = 0; i < num_blocks; ++i) {
    chain = gc_block_xor(encrypt_one(cipher, chain), load_block(in + i * kBlockLen));
    store_block(out + i * kBlockLen, chain);
  }
  return chain;
}

// cfb_decrypt_range: decrypts len bytes starting on a block boundary whose preceding ciphertext
// block is previous_ciphertext. Only the range that ends the message may end in a partial block.
// Returns the last complete ciphertext block of the range (previous_ciphertext if there is none).
template <BlockCipher Cipher>
GC_METHOD gc_block cfb_decrypt_range(const Cipher& cipher, gc_block previous_ciphertext, const uint8_t* in,
                                     uint8_t* out, size_t len) {
  const size_t num_full_blocks = len / kBlockLen;
  previous_ciphertext =
      feedback_decrypt_blocks<Feedback::cfb>(cipher, previous_ciphertext, in, out, num_full_blocks);
  size_t offset = num_full_blocks * kBlockLen;
  if (len > offset) {
    xor_partial_block(encrypt_one(cipher, previous_ciphertext), in + offset, out + offset, len - offset);
  }
  return previous_ciphertext;
}

// cfb_encrypt / cfb_decrypt: one whole message of any length (the CUDA serial kernel also calls
// cfb_encrypt for the partial block that ends a message, with the chain so far as iv).
template <BlockCipher Cipher>
GC_METHOD void cfb_encrypt(const Cipher& cipher, gc_block iv, const uint8_t* in, uint8_t* out, size_t len) {
  size_t offset = len - len % kBlockLen;
  gc_block chain = cfb_encrypt_blocks(cipher, iv, in, out, offset / kBlockLen);
  if (len > offset) xor_partial_block(encrypt_one(cipher, chain), in + offset, out + offset, len - offset);
}

template <BlockCipher Cipher>
GC_METHOD void cfb_decrypt(const Cipher& cipher, gc_block iv, const uint8_t* in, uint8_t* out, size_t len) {
  cfb_decrypt_range(cipher, iv, in, out, len);
}

// CfbMode: the mode's traits (mode_kind.hpp): a feedback mode (cbc.hpp) of any length; the
// register after a block is its ciphertext.
struct CfbMode : FeedbackModeTraits {
  static constexpr Mode kMode = Mode::cfb;
  static constexpr bool kKeystream = true;
  static constexpr Bulk bulk_op(Direction) { return Bulk::cfb_decrypt; }
  template <BlockCipher Cipher>
  GC_METHOD static void bulk_range(const Cipher& cipher, Direction, gc_block start, const uint8_t* in, uint8_t* out,
                                   size_t len) {
    cfb_decrypt_range(cipher, start, in, out, len);
  }
  template <BlockCipher Cipher>
  GC_METHOD static gc_block serial_blocks(const Cipher& cipher, Direction, gc_block chain, const uint8_t* in,
                                          uint8_t* out, size_t num_blocks) {
    return cfb_encrypt_blocks(cipher, chain, in, out, num_blocks);
  }
  template <BlockCipher Cipher>
  GC_METHOD static void serial_tail(const Cipher& cipher, Direction, gc_block chain, const uint8_t* in, uint8_t* out,
                                    size_t tail_len) {
    cfb_encrypt(cipher, chain, in, out, tail_len);
  }
  GC_METHOD static gc_block next_register(gc_block, gc_block, gc_block ciphertext) { return ciphertext; }
};

}  // namespace gpucrypt::modes
