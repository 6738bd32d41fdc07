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

#include "cbc.hpp"  // the feedback modes' templates and traits

namespace gpucrypt::modes {

// cfb_encrypt_blocks: num_blocks whole blocks after chain (IV or previous ciphertext block);
// returns the last ciphertext block.
template <BlockCipher Cipher>
GC_METHOD gc_block cfb_encrypt_blocks(const Cipher& cipher, gc_block chain, const uint8_t* in, uint8_t* out,
                                      size_t num_blocks) {
  return feedback_encrypt_blocks<Feedback::cfb>(cipher, chain, in, out, num_blocks);
}

// cfb_decrypt_range: decrypts len bytes starting on a block boundary whose preceding ciphertext
// block is previous_ciphertext. Only the range that ends the message may end in a partial block.
// Returns the last complete ciphertext block of the range (previous_ciphertext if there is none).
template <BlockCipher Cipher>
GC_METHOD gc_block cfb_decrypt_range(const Cipher& cipher, gc_block previous_ciphertext, const uint8_t* in,
                                     uint8_t* out, size_t len) {
  return feedback_decrypt_range<Feedback::cfb>(cipher, previous_ciphertext, in, out, len);
}

// cfb_encrypt / cfb_decrypt: one whole message of any length.
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

// CfbMode: the mode's traits (mode_kind.hpp): a feedback mode (cbc.hpp) of any length.
struct CfbMode : FeedbackModeTraits<Feedback::cfb> {
  static constexpr Mode kMode = Mode::cfb;
  static constexpr bool kKeystream = true;
};

}  // namespace gpucrypt::modes
