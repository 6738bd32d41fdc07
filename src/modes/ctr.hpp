// ctr.hpp: counter mode (SP 800-38A, 6.5). Keystream block i = E(initial_counter + i); the whole
// 16-byte block is a 128-bit big-endian counter that wraps modulo 2^128 (OpenSSL's convention).
// GCM reuses the same code with its 32-bit counter (Counter32).
//
// Fully parallel: ctr_xor_range(cipher, initial_counter, first_block_index, in, out, len) handles
// the bytes starting at block first_block_index of the message, so a thread or chunk that owns
// blocks [j, j + n) calls it with in + 16 j, out + 16 j, min(16 n, message_len - 16 j) and needs
// nothing from its neighbours. Only the range that ends the message may end in a partial block.
// CtrState is the serial streaming form (counter block + position within the keystream block).
// Encryption and decryption are the same XOR; in == out is allowed.
// Constant-time exactly when the cipher is: nothing here branches on or indexes by data.
#pragma once

#include "../core/counter.h"
#include "block_cipher.hpp"

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

// CounterStreamState: streaming counter mode. next_counter is the counter of the next keystream
// block to generate; at position p > 0, keystream bytes p..15 of the current block are unused.
template <class Counter>
struct CounterStreamState {
  gc_block next_counter;
  uint8_t keystream[kBlockLen];
  unsigned position;  // 0..15

  GC_METHOD void init(gc_block initial_counter) {
    next_counter = initial_counter;
    position = 0;
  }

  // init_at: positions the stream at byte_offset of the message (random access).
  template <BlockCipher Cipher>
  GC_METHOD void init_at(const Cipher& cipher, gc_block initial_counter, uint64_t byte_offset) {
    next_counter = Counter::at(initial_counter, byte_offset / kBlockLen);
    position = (unsigned)(byte_offset % kBlockLen);
    if (position != 0) {
      store_block(keystream, encrypt_one(cipher, next_counter));
      next_counter = Counter::at(next_counter, 1);
    }
  }

  template <BlockCipher Cipher>
  GC_METHOD void update(const Cipher& cipher, const uint8_t* in, uint8_t* out, size_t len) {
    size_t done = 0;
    for (; done < len && position != 0; ++done) {
      out[done] = (uint8_t)(in[done] ^ keystream[position]);
      position = (position + 1) % kBlockLen;
    }
    if (done == len) return;
    size_t num_full_blocks = (len - done) / kBlockLen;
    counter_xor_range<Counter>(cipher, next_counter, 0, in + done, out + done, num_full_blocks * kBlockLen);
    next_counter = Counter::at(next_counter, num_full_blocks);
    done += num_full_blocks * kBlockLen;
    if (done == len) return;
    store_block(keystream, encrypt_one(cipher, next_counter));
    next_counter = Counter::at(next_counter, 1);
    for (; done < len; ++done) {
      out[done] = (uint8_t)(in[done] ^ keystream[position]);
      ++position;
    }
  }

  GC_METHOD void wipe() { secure_zero(keystream, sizeof keystream); }
};

using CtrState = CounterStreamState<Counter128>;

}  // namespace gpucrypt::modes
