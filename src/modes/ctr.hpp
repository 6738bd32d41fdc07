// ctr.hpp: counter mode (SP 800-38A, 6.5). Keystream block i = E(initial_counter + i); the whole
// 16-byte block is a 128-bit big-endian counter that wraps modulo 2^128 (OpenSSL's convention).
// GCM reuses the same code with its 32-bit counter (Counter32).
//
// Fully parallel: ctr_xor_range(cipher, initial_counter, first_block_index, in, out, len) handles
// the bytes starting at block first_block_index of the message, so a thread or chunk that owns
// blocks [j, j + n) calls it with in + 16 j, out + 16 j, min(16 n, message_len - 16 j) and needs
// nothing from its neighbours. Only the range that ends the message may end in a partial block.
// Encryption and decryption are the same XOR; in == out is allowed.
// Constant-time exactly when the cipher is: nothing here branches on or indexes by data.
#pragma once

#include "../core/counter.h"
#include "block_cipher.hpp"
#include "mode_kind.hpp"

namespace gpucrypt::modes {

// Counter policies: the counter block for keystream block `offset` after `base`.
struct Counter128 {
  GC_METHOD static gc_block at(gc_block base, uint64_t offset) { return gc_ctr128_add(base, offset); }
};
struct Counter32 {  // GCM inc32
  GC_METHOD static gc_block at(gc_block base, uint64_t offset) { return gc_ctr32_add(base, offset); }
};

// counter_xor_range: the counter-mode core over either counter policy.
template <class Counter, BlockCipher Cipher>
GC_METHOD void counter_xor_range(const Cipher& cipher, gc_block initial_counter, uint64_t first_block_index,
                                 const uint8_t* in, uint8_t* out, size_t len) {
  constexpr int kLanes = Cipher::kBlocksPerCall;
  gc_block range_counter = Counter::at(initial_counter, first_block_index);
  size_t num_blocks = (len + kBlockLen - 1) / kBlockLen;
  for (size_t first = 0; first < num_blocks; first += kLanes) {
    size_t num_live = min_size(kLanes, num_blocks - first);
    gc_block lanes[kLanes];
    for (size_t lane = 0; lane < num_live; ++lane) lanes[lane] = Counter::at(range_counter, first + lane);
    fill_spare_lanes<kLanes>(lanes, num_live);
    cipher.encrypt_blocks(lanes);
    for (size_t lane = 0; lane < num_live; ++lane) {
      size_t offset = (first + lane) * kBlockLen;
      if (len - offset >= kBlockLen) {
        store_block(out + offset, gc_block_xor(load_block(in + offset), lanes[lane]));
      } else {  // the message's final partial block
        uint8_t keystream[kBlockLen];
        store_block(keystream, lanes[lane]);
        for (size_t i = 0; i < len - offset; ++i) out[offset + i] = (uint8_t)(in[offset + i] ^ keystream[i]);
      }
    }
  }
}

// ctr_xor_range: CTR with a 128-bit counter; see the file comment.
template <BlockCipher Cipher>
GC_METHOD void ctr_xor_range(const Cipher& cipher, gc_block initial_counter, uint64_t first_block_index,
                             const uint8_t* in, uint8_t* out, size_t len) {
  counter_xor_range<Counter128>(cipher, initial_counter, first_block_index, in, out, len);
}

// CtrMode: the mode's traits (mode_kind.hpp): bulk both ways (the same XOR) from the counter
// plus the piece's first block, any length; the register after a block is the next counter.
struct CtrMode : ModeTraitsBase {
  static constexpr Mode kMode = Mode::ctr;
  static constexpr bool kKeystream = true;
  static constexpr bool kOneOperation = true;
  static constexpr ModeKind kind(Direction) { return ModeKind::bulk; }
  static constexpr Bulk bulk_op(Direction) { return Bulk::ctr; }
  GC_METHOD static gc_block range_start(gc_block iv, uint64_t first_block, const uint8_t*) {
    return gc_ctr128_add(iv, first_block);
  }
  template <BlockCipher Cipher>
  GC_METHOD static void bulk_range(const Cipher& cipher, Direction, gc_block start, const uint8_t* in, uint8_t* out,
                                   size_t len) {
    ctr_xor_range(cipher, start, 0, in, out, len);
  }
  GC_METHOD static gc_block next_register(gc_block counter, gc_block, gc_block) { return gc_ctr128_add(counter, 1); }
};

}  // namespace gpucrypt::modes
