// ecb.hpp: electronic codebook (SP 800-38A, 6.1). Every block is independent, so the range
// functions are the whole mode: a parallel caller gives each thread or chunk a block range
// (in + 16 * first_block, out + 16 * first_block, num_blocks). EcbState adds byte-stream buffering
// for a streaming API; padding is the caller's business (padding.hpp). in == out is allowed.
// Constant-time exactly when the cipher is: nothing here branches on or indexes by data.
#pragma once

#include "block_cipher.hpp"
#include "block_stream.hpp"

namespace gpucrypt::modes {

namespace detail {
template <bool kEncrypt, BlockCipher Cipher>
GC_METHOD void ecb_blocks(const Cipher& cipher, const uint8_t* in, uint8_t* out, size_t num_blocks) {
  constexpr int kLanes = Cipher::kBlocksPerCall;
  for (size_t first = 0; first < num_blocks; first += kLanes) {
    size_t num_live = min_size(kLanes, num_blocks - first);
    gc_block lanes[kLanes];
    for (size_t lane = 0; lane < num_live; ++lane) lanes[lane] = load_block(in + (first + lane) * kBlockLen);
    fill_spare_lanes<kLanes>(lanes, num_live);
    if constexpr (kEncrypt) {
      cipher.encrypt_blocks(lanes);
    } else {
      cipher.decrypt_blocks(lanes);
    }
    for (size_t lane = 0; lane < num_live; ++lane) store_block(out + (first + lane) * kBlockLen, lanes[lane]);
  }
}
}  // namespace detail

// ecb_encrypt_blocks / ecb_decrypt_blocks: num_blocks whole blocks.
template <BlockCipher Cipher>
GC_METHOD void ecb_encrypt_blocks(const Cipher& cipher, const uint8_t* in, uint8_t* out, size_t num_blocks) {
  detail::ecb_blocks<true>(cipher, in, out, num_blocks);
}

template <BlockCipher Cipher>
GC_METHOD void ecb_decrypt_blocks(const Cipher& cipher, const uint8_t* in, uint8_t* out, size_t num_blocks) {
  detail::ecb_blocks<false>(cipher, in, out, num_blocks);
}

// EcbState: streaming ECB over whole blocks. init(encrypt, hold_back_last_block); update returns
// the bytes written (see BlockStreamBuffer); finish fails unless no partial block is left. A
// decryptor that strips padding sets hold_back_last_block and gets the last block from finish.
struct EcbState {
  BlockStreamBuffer buffer;
  bool encrypt;

  GC_METHOD void init(bool encrypting, bool hold_back_last_block = false) {
    encrypt = encrypting;
    buffer.init(hold_back_last_block);
  }

  template <BlockCipher Cipher>
  GC_METHOD size_t update(const Cipher& cipher, const uint8_t* in, size_t in_len, uint8_t* out) {
    return buffer.update(in, in_len, out, [&](const uint8_t* block_in, uint8_t* block_out, size_t num_blocks) {
      if (encrypt) {
        ecb_encrypt_blocks(cipher, block_in, block_out, num_blocks);
      } else {
        ecb_decrypt_blocks(cipher, block_in, block_out, num_blocks);
      }
    });
  }

  // finish: writes the held-back block (if any, 16 bytes) to out and sets *out_len; fails with
  // invalid_length when a partial block remains.
  template <BlockCipher Cipher>
  GC_METHOD ModeStatus finish(const Cipher& cipher, uint8_t* out, size_t* out_len) {
    *out_len = 0;
    if (buffer.pending_len != 0 && buffer.pending_len != kBlockLen) return ModeStatus::invalid_length;
    if (buffer.pending_len == kBlockLen) {
      if (encrypt) {
        ecb_encrypt_blocks(cipher, buffer.pending, out, 1);
      } else {
        ecb_decrypt_blocks(cipher, buffer.pending, out, 1);
      }
      *out_len = kBlockLen;
    }
    buffer.pending_len = 0;
    return ModeStatus::ok;
  }
};

}  // namespace gpucrypt::modes
