// cfb.hpp: cipher feedback with 128-bit segments, CFB-128 (SP 800-38A, 6.3; OpenSSL's cfb128).
//
// C_i = P_i xor E(C_{i-1}), C_0 = IV. Encryption is serial (one message per thread); decryption
// is parallel because every E(C_{i-1}) input is ciphertext that is already known:
// cfb_decrypt_range decrypts any range starting on a block boundary given the preceding
// ciphertext block (chain_block_before in cbc.hpp). In-place parallel decryption must read the
// boundary blocks before any range writes. The stream may end in a partial block; CfbState keeps
// the position inside the current block so updates may split anywhere. in == out is allowed.
// Constant-time exactly when the cipher is: nothing here branches on or indexes by data.
#pragma once

#include "block_cipher.hpp"

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
  constexpr int kLanes = Cipher::kBlocksPerCall;
  size_t num_full_blocks = len / kBlockLen;
  for (size_t first = 0; first < num_full_blocks; first += kLanes) {
    size_t num_live = min_size(kLanes, num_full_blocks - first);
    gc_block ciphertext[kLanes];
    gc_block lanes[kLanes];
    for (size_t lane = 0; lane < num_live; ++lane) {
      lanes[lane] = lane == 0 ? previous_ciphertext : ciphertext[lane - 1];
      ciphertext[lane] = load_block(in + (first + lane) * kBlockLen);
    }
    fill_spare_lanes<kLanes>(lanes, num_live);
    cipher.encrypt_blocks(lanes);
    for (size_t lane = 0; lane < num_live; ++lane)
      store_block(out + (first + lane) * kBlockLen, gc_block_xor(lanes[lane], ciphertext[lane]));
    previous_ciphertext = ciphertext[num_live - 1];
  }
  size_t tail_len = len % kBlockLen;
  if (tail_len > 0) {
    uint8_t keystream[kBlockLen];
    store_block(keystream, encrypt_one(cipher, previous_ciphertext));
    size_t offset = num_full_blocks * kBlockLen;
    for (size_t i = 0; i < tail_len; ++i) out[offset + i] = (uint8_t)(in[offset + i] ^ keystream[i]);
  }
  return previous_ciphertext;
}

// CfbState: streaming CFB-128 in either direction. The register holds, at position 0, the
// feedback block (IV or last ciphertext block) still to be encrypted; at position p > 0, the
// ciphertext bytes 0..p-1 of the current block followed by keystream bytes p..15 (the layout of
// OpenSSL's CRYPTO_cfb128_encrypt, so a state can be compared or handed over byte for byte).
struct CfbState {
  uint8_t register_bytes[kBlockLen];
  unsigned position;  // 0..15

  GC_METHOD void init(gc_block iv) {
    store_block(register_bytes, iv);
    position = 0;
  }

  template <BlockCipher Cipher>
  GC_METHOD void encrypt(const Cipher& cipher, const uint8_t* in, uint8_t* out, size_t len) {
    process<true>(cipher, in, out, len);
  }

  template <BlockCipher Cipher>
  GC_METHOD void decrypt(const Cipher& cipher, const uint8_t* in, uint8_t* out, size_t len) {
    process<false>(cipher, in, out, len);
  }

 private:
  // Byte step: the register byte becomes the ciphertext byte in both directions.
  template <bool kEncrypt>
  GC_METHOD void process_byte(uint8_t in_byte, uint8_t* out_byte) {
    uint8_t result = (uint8_t)(register_bytes[position] ^ in_byte);
    register_bytes[position] = kEncrypt ? result : in_byte;
    *out_byte = result;
    position = (position + 1) % kBlockLen;
  }

  template <bool kEncrypt, BlockCipher Cipher>
  GC_METHOD void process(const Cipher& cipher, const uint8_t* in, uint8_t* out, size_t len) {
    size_t done = 0;
    while (done < len && position != 0) {  // finish the current block
      process_byte<kEncrypt>(in[done], out + done);
      ++done;
    }
    if (done == len) return;
    size_t num_full_blocks = (len - done) / kBlockLen;
    gc_block chain = load_block(register_bytes);
    if constexpr (kEncrypt) {
      chain = cfb_encrypt_blocks(cipher, chain, in + done, out + done, num_full_blocks);
    } else {
      chain = cfb_decrypt_range(cipher, chain, in + done, out + done, num_full_blocks * kBlockLen);
    }
    done += num_full_blocks * kBlockLen;
    if (done == len) {
      store_block(register_bytes, chain);
      return;
    }
    store_block(register_bytes, encrypt_one(cipher, chain));  // keystream for the partial block
    while (done < len) {
      process_byte<kEncrypt>(in[done], out + done);
      ++done;
    }
  }
};

// cfb_encrypt / cfb_decrypt: one whole message of any length.
template <BlockCipher Cipher>
GC_METHOD void cfb_encrypt(const Cipher& cipher, gc_block iv, const uint8_t* in, uint8_t* out, size_t len) {
  CfbState state;
  state.init(iv);
  state.encrypt(cipher, in, out, len);
}

template <BlockCipher Cipher>
GC_METHOD void cfb_decrypt(const Cipher& cipher, gc_block iv, const uint8_t* in, uint8_t* out, size_t len) {
  cfb_decrypt_range(cipher, iv, in, out, len);
}

}  // namespace gpucrypt::modes
