// padding.hpp: PKCS#7 padding for ECB and CBC (RFC 5652, 6.3), the padding OpenSSL's EVP uses.
//
// Constant-time: pkcs7_unpadded_len inspects all 16 bytes of the last block whatever the padding
// byte says, and merges the checks with masks, so its timing does not tell a padding-oracle
// attacker which check failed. Reporting success or failure is of course visible; callers that
// decrypt attacker-chosen CBC ciphertext should authenticate first (use GCM).
#pragma once

#include "block_cipher.hpp"

namespace gpucrypt::modes {

// pkcs7_padding: the bytes to append after a message whose length leaves buffered_len bytes
// (0..15) in the last block; writes them to padding (16 bytes of room) and returns their count,
// 1..16.
GC_METHOD size_t pkcs7_padding(size_t buffered_len, uint8_t* padding) {
  size_t padding_len = kBlockLen - buffered_len % kBlockLen;
  for (size_t i = 0; i < padding_len; ++i) padding[i] = (uint8_t)padding_len;
  return padding_len;
}

// pkcs7_unpadded_len: checks the padding of the final decrypted block and sets *data_len to the
// number of message bytes in it (0..15). Returns false (and *data_len = 0) for bad padding.
GC_METHOD bool pkcs7_unpadded_len(const uint8_t* last_block, size_t* data_len) {
  // Masks are all ones for "true"; x - y with x < y wraps and sets bit 31, (b + 255) >> 8 is 1
  // exactly when a byte b is nonzero.
  uint32_t padding_len = last_block[kBlockLen - 1];
  uint32_t valid_mask = (0u - ((padding_len + 0xFFu) >> 8))   // padding_len >= 1
                        & (0u - ((padding_len - 17u) >> 31));  // padding_len <= 16
  for (uint32_t i = 0; i < kBlockLen; ++i) {
    uint32_t in_padding_mask = 0u - (((15u - i) - padding_len) >> 31);  // i >= 16 - padding_len
    uint32_t mismatch_mask = 0u - ((((uint32_t)last_block[i] ^ padding_len) + 0xFFu) >> 8);
    valid_mask &= ~(in_padding_mask & mismatch_mask);
  }
  *data_len = (size_t)((kBlockLen - padding_len) & valid_mask);
  return valid_mask != 0;
}

}  // namespace gpucrypt::modes
