// ofb.hpp: output feedback (SP 800-38A, 6.4). The keystream O_i = E(O_{i-1}), O_0 = IV, is
// inherently serial and independent of the data, so encryption and decryption are the same XOR
// and a parallel engine gives one message to one thread. A stream that splits anywhere keeps its
// own position inside the keystream block (src/backends/cipher_stream.cpp). in == out is allowed.
// Constant-time exactly when the cipher is: nothing here branches on or indexes by data.
#pragma once

#include "block_cipher.hpp"
#include "mode_kind.hpp"

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

// ofb_xor: one whole message of any length (encryption and decryption alike).
template <BlockCipher Cipher>
GC_METHOD void ofb_xor(const Cipher& cipher, gc_block iv, const uint8_t* in, uint8_t* out, size_t len) {
  size_t offset = len - len % kBlockLen;
  gc_block keystream = ofb_xor_blocks(cipher, iv, in, out, offset / kBlockLen);
  if (len > offset) xor_partial_block(encrypt_one(cipher, keystream), in + offset, out + offset, len - offset);
}

// OfbMode: the mode's traits (mode_kind.hpp): serial both ways (the same XOR), any length; the
// register after a block is its keystream.
struct OfbMode : ModeTraitsBase {
  static constexpr Mode kMode = Mode::ofb;
  static constexpr bool kKeystream = true;
  static constexpr bool kOneOperation = true;
  static constexpr ModeKind kind(Direction) { return ModeKind::serial; }
  template <BlockCipher Cipher>
  GC_METHOD static gc_block serial_blocks(const Cipher& cipher, Direction, gc_block chain, const uint8_t* in,
                                          uint8_t* out, size_t num_blocks) {
    return ofb_xor_blocks(cipher, chain, in, out, num_blocks);
  }
  GC_METHOD static gc_block next_register(gc_block, gc_block keystream, gc_block) { return keystream; }
};

}  // namespace gpucrypt::modes
