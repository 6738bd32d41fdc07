// ofb.hpp: output feedback (SP 800-38A, 6.4). The keystream O_i = E(O_{i-1}), O_0 = IV, is
// inherently serial and independent of the data, so encryption and decryption are the same XOR
// and a parallel engine gives one message to one thread. OfbState keeps the position inside the
// current keystream block so updates may split anywhere. in == out is allowed.
// Constant-time exactly when the cipher is: nothing here branches on or indexes by data.
#pragma once

#include "block_cipher.hpp"

namespace gpucrypt::modes {

// ofb_xor_blocks: XORs num_blocks whole blocks with the keystream that follows register_block
// (the IV, or the last keystream block); returns the last keystream block.
template <BlockCipher Cipher>
GC_METHOD gc_block ofb_xor_blocks(const Cipher& cipher, gc_block register_block, const uint8_t* in, uint8_t* out,
                                  size_t num_blocks) {
  for (size_t i = 0; i < num_blocks; ++i) {
    register_block = encrypt_one(cipher, register_block);
    store_block(out + i * kBlockLen, gc_block_xor(register_block, load_block(in + i * kBlockLen)));
  }
  return register_block;
}

// OfbState: streaming OFB. At position 0 the register holds the last keystream block (the IV at
// the start) and the next block is E(register); at position p > 0, keystream bytes p..15 of the
// current block are unused. Same layout as OpenSSL's CRYPTO_ofb128_encrypt.
struct OfbState {
  uint8_t register_bytes[kBlockLen];
  unsigned position;  // 0..15

  GC_METHOD void init(gc_block iv) {
    store_block(register_bytes, iv);
    position = 0;
  }

  // update: encrypts or decrypts (the same operation) len bytes.
  template <BlockCipher Cipher>
  GC_METHOD void update(const Cipher& cipher, const uint8_t* in, uint8_t* out, size_t len) {
    size_t done = 0;
    for (; done < len && position != 0; ++done) {
      out[done] = (uint8_t)(in[done] ^ register_bytes[position]);
      position = (position + 1) % kBlockLen;
    }
    if (done == len) return;
    size_t num_full_blocks = (len - done) / kBlockLen;
    gc_block keystream = ofb_xor_blocks(cipher, load_block(register_bytes), in + done, out + done, num_full_blocks);
    done += num_full_blocks * kBlockLen;
    if (done < len) keystream = encrypt_one(cipher, keystream);
    store_block(register_bytes, keystream);
    for (; done < len; ++done) {
      out[done] = (uint8_t)(in[done] ^ register_bytes[position]);
      ++position;
    }
  }
};

// ofb_xor: one whole message of any length (encryption and decryption alike).
template <BlockCipher Cipher>
GC_METHOD void ofb_xor(const Cipher& cipher, gc_block iv, const uint8_t* in, uint8_t* out, size_t len) {
  OfbState state;
  state.init(iv);
  state.update(cipher, in, out, len);
}

}  // namespace gpucrypt::modes
