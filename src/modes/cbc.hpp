// cbc.hpp: cipher block chaining (SP 800-38A, 6.2).
//
// Encryption is serial: block i needs ciphertext i-1. A parallel engine gives one message to one
// thread (cbc_encrypt_blocks, or CbcEncryptState for a byte stream).
// Decryption is parallel: P_i = D(C_i) xor C_{i-1}, so any block range can be decrypted by
// cbc_decrypt_range given the ciphertext block just before it (the IV for block 0,
// chain_block_before finds it). In-place parallel decryption must read those boundary blocks
// before any range is written, because the neighbouring range overwrites them.
// in == out is allowed for every function here.
// Constant-time exactly when the cipher is: nothing here branches on or indexes by data.
#pragma once

#include "block_cipher.hpp"
#include "block_stream.hpp"

namespace gpucrypt::modes {

// chain_block_before: the ciphertext block that precedes block first_block (the IV for block 0);
// the chaining input of a CBC or CFB decryption range starting there.
GC_METHOD gc_block chain_block_before(gc_block iv, const uint8_t* ciphertext, size_t first_block) {
  return first_block == 0 ? iv : load_block(ciphertext + (first_block - 1) * kBlockLen);
}

// cbc_encrypt_blocks: encrypts num_blocks whole blocks following chain (the IV, or the previous
// ciphertext block) and returns the new chain: the last ciphertext block.
template <BlockCipher Cipher>
GC_METHOD gc_block cbc_encrypt_blocks(const Cipher& cipher, gc_block chain, const uint8_t* in, uint8_t* out,
                                      size_t num_blocks) {
  for (size_t i = 0; i < num_blocks; ++i) {
    chain = encrypt_one(cipher, gc_block_xor(chain, load_block(in + i * kBlockLen)));
    store_block(out + i * kBlockLen, chain);
  }
  return chain;
}

// cbc_decrypt_range: decrypts num_blocks whole blocks whose preceding ciphertext block is
// previous_ciphertext; returns the last ciphertext block of the range (the chain for whatever
// follows). Independent of every other range, so threads and chunks call it concurrently.
template <BlockCipher Cipher>
GC_METHOD gc_block cbc_decrypt_range(const Cipher& cipher, gc_block previous_ciphertext, const uint8_t* in,
                                     uint8_t* out, size_t num_blocks) {
  constexpr int kLanes = Cipher::kBlocksPerCall;
  for (size_t first = 0; first < num_blocks; first += kLanes) {
    size_t num_live = min_size(kLanes, num_blocks - first);
    gc_block ciphertext[kLanes];
    gc_block lanes[kLanes];
    for (size_t lane = 0; lane < num_live; ++lane) {
      ciphertext[lane] = load_block(in + (first + lane) * kBlockLen);
      lanes[lane] = ciphertext[lane];
    }
    fill_spare_lanes<kLanes>(lanes, num_live);
    cipher.decrypt_blocks(lanes);
    for (size_t lane = 0; lane < num_live; ++lane) {
      gc_block chain = lane == 0 ? previous_ciphertext : ciphertext[lane - 1];
      store_block(out + (first + lane) * kBlockLen, gc_block_xor(lanes[lane], chain));
    }
    previous_ciphertext = ciphertext[num_live - 1];
  }
  return previous_ciphertext;
}

// CbcEncryptState: streaming CBC encryption. update returns the bytes written (whole blocks; see
// BlockStreamBuffer for buffer sizes and aliasing); the caller appends its padding through update
// before finish, which fails if a partial block is left.
struct CbcEncryptState {
  gc_block chain;
  BlockStreamBuffer buffer;

  GC_METHOD void init(gc_block iv) {
    chain = iv;
    buffer.init(false);
  }

  template <BlockCipher Cipher>
  GC_METHOD size_t update(const Cipher& cipher, const uint8_t* in, size_t in_len, uint8_t* out) {
    return buffer.update(in, in_len, out, [&](const uint8_t* block_in, uint8_t* block_out, size_t num_blocks) {
      chain = cbc_encrypt_blocks(cipher, chain, block_in, block_out, num_blocks);
    });
  }

  GC_METHOD ModeStatus finish() const {
    return buffer.pending_len == 0 ? ModeStatus::ok : ModeStatus::invalid_length;
  }
};

// CbcDecryptState: streaming CBC decryption. With hold_back_last_block the final block is only
// released by finish (16 bytes written to out), so the caller can check and strip padding.
struct CbcDecryptState {
  gc_block chain;
  BlockStreamBuffer buffer;

  GC_METHOD void init(gc_block iv, bool hold_back_last_block = false) {
    chain = iv;
    buffer.init(hold_back_last_block);
  }

  template <BlockCipher Cipher>
  GC_METHOD size_t update(const Cipher& cipher, const uint8_t* in, size_t in_len, uint8_t* out) {
    return buffer.update(in, in_len, out, [&](const uint8_t* block_in, uint8_t* block_out, size_t num_blocks) {
      chain = cbc_decrypt_range(cipher, chain, block_in, block_out, num_blocks);
    });
  }

  // finish: writes the held-back block (if any) to out and sets *out_len to 0 or 16; fails with
  // invalid_length when a partial block remains.
  template <BlockCipher Cipher>
  GC_METHOD ModeStatus finish(const Cipher& cipher, uint8_t* out, size_t* out_len) {
    *out_len = 0;
    if (buffer.pending_len != 0 && buffer.pending_len != kBlockLen) return ModeStatus::invalid_length;
    if (buffer.pending_len == kBlockLen) {
      chain = cbc_decrypt_range(cipher, chain, buffer.pending, out, 1);
      *out_len = kBlockLen;
    }
    buffer.pending_len = 0;
    return ModeStatus::ok;
  }
};

}  // namespace gpucrypt::modes
