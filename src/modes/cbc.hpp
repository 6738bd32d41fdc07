// cbc.hpp: cipher block chaining (SP 800-38A, 6.2).
//
// Encryption is serial: block i needs ciphertext i-1. A parallel engine gives one message to one
// thread (cbc_encrypt_blocks, which returns the chain for the next call).
// Decryption is parallel: P_i = D(C_i) xor C_{i-1}, so any block range can be decrypted by
// cbc_decrypt_range given the ciphertext block just before it (the IV for block 0,
// chain_block_before finds it). In-place parallel decryption must read those boundary blocks
// before any range is written, because the neighbouring range overwrites them.
// in == out is allowed for every function here.
// Constant-time exactly when the cipher is: nothing here branches on or indexes by data.
#pragma once

#include "block_cipher.hpp"
#include "mode_kind.hpp"

namespace gpucrypt::modes {

// chain_block_before: the ciphertext block that precedes block first_block (the IV for block 0);
// the chaining input of a CBC or CFB decryption range starting there.
GC_METHOD gc_block chain_block_before(gc_block iv, const uint8_t* ciphertext, size_t first_block) {
  return first_block == 0 ? iv : load_block(ciphertext + (first_block - 1) * kBlockLen);
}

// The two feedback modes, CBC and CFB (cfb.hpp), are one template each way with the mode as its
// parameter.
enum class Feedback { cbc, cfb };

// The serial direction of both feedback modes: CBC's chain is E(chain xor P_i), CFB's E(chain) xor
// P_i; either way the chain is the ciphertext block just written.
template <Feedback kMode, BlockCipher Cipher>
GC_METHOD gc_block feedback_encrypt_blocks(const Cipher& cipher, gc_block chain, const uint8_t* in, uint8_t* out,
                                           size_t num_blocks) {
  for (size_t i = 0; i < num_blocks; ++i) {
    if constexpr (kMode == Feedback::cbc) chain = encrypt_one(cipher, gc_block_xor(chain, load_block(in + i * kBlockLen)));
    else chain = gc_block_xor(encrypt_one(cipher, chain), load_block(in + i * kBlockLen));
    store_block(out + i * kBlockLen, chain);
  }
  return chain;
}

// cbc_encrypt_blocks: encrypts num_blocks whole blocks following chain (the IV, or the previous
// ciphertext block) and returns the new chain: the last ciphertext block.
template <BlockCipher Cipher>
GC_METHOD gc_block cbc_encrypt_blocks(const Cipher& cipher, gc_block chain, const uint8_t* in, uint8_t* out,
                                      size_t num_blocks) {
  return feedback_encrypt_blocks<Feedback::cbc>(cipher, chain, in, out, num_blocks);
}

// The parallel decryption of the two feedback modes over whole blocks: every cipher input is
// ciphertext already known, so kBlocksPerCall blocks go through the cipher at once. CBC:
// P_i = D(C_i) xor C_{i-1}; CFB: P_i = E(C_{i-1}) xor C_i. A group's ciphertext is read before any
// of its output is written, so in == out works. Returns the last ciphertext block.
template <Feedback kMode, BlockCipher Cipher>
GC_METHOD gc_block feedback_decrypt_blocks(const Cipher& cipher, gc_block previous_ciphertext, const uint8_t* in,
                                           uint8_t* out, size_t num_blocks) {
  constexpr int kLanes = Cipher::kBlocksPerCall;
  for (size_t first = 0; first < num_blocks; first += kLanes) {
    size_t num_live = min_size(kLanes, num_blocks - first);
    gc_block ciphertext[kLanes];
    gc_block lanes[kLanes];
    for (size_t lane = 0; lane < num_live; ++lane) {
      ciphertext[lane] = load_block(in + (first + lane) * kBlockLen);
      lanes[lane] = kMode == Feedback::cbc ? ciphertext[lane] : (lane == 0 ? previous_ciphertext : ciphertext[lane - 1]);
    }
    fill_spare_lanes<kLanes>(lanes, num_live);
    if constexpr (kMode == Feedback::cbc) cipher.decrypt_blocks(lanes);
    else cipher.encrypt_blocks(lanes);
    for (size_t lane = 0; lane < num_live; ++lane) {
      const gc_block before = lane == 0 ? previous_ciphertext : ciphertext[lane - 1];
      store_block(out + (first + lane) * kBlockLen,
                  gc_block_xor(lanes[lane], kMode == Feedback::cbc ? before : ciphertext[lane]));
    }
    previous_ciphertext = ciphertext[num_live - 1];
  }
  return previous_ciphertext;
}

// cbc_decrypt_range: decrypts num_blocks whole blocks whose preceding ciphertext block is
// previous_ciphertext; returns the last ciphertext block of the range (the chain for whatever
// follows). Independent of every other range, so threads and chunks call it concurrently.
template <BlockCipher Cipher>
GC_METHOD gc_block cbc_decrypt_range(const Cipher& cipher, gc_block previous_ciphertext, const uint8_t* in,
                                     uint8_t* out, size_t num_blocks) {
  return feedback_decrypt_blocks<Feedback::cbc>(cipher, previous_ciphertext, in, out, num_blocks);
}

// A feedback mode's decryption of a range of len bytes: its whole blocks, then (CFB only: CBC's
// lengths are whole blocks) a partial last block, E(the last ciphertext block) xor the input.
// Returns the last whole ciphertext block.
template <Feedback kMode, BlockCipher Cipher>
GC_METHOD gc_block feedback_decrypt_range(const Cipher& cipher, gc_block previous_ciphertext, const uint8_t* in,
                                          uint8_t* out, size_t len) {
  const size_t whole = len - len % kBlockLen;
  previous_ciphertext = feedback_decrypt_blocks<kMode>(cipher, previous_ciphertext, in, out, whole / kBlockLen);
  if (len > whole) xor_partial_block(encrypt_one(cipher, previous_ciphertext), in + whole, out + whole, len - whole);
  return previous_ciphertext;
}

// The two feedback modes' traits (mode_kind.hpp), all but their names and length rules: serial
// encryption, bulk decryption from the ciphertext block before a piece (the IV before block 0),
// and the register after a block is its ciphertext.
template <Feedback kFeedback>
struct FeedbackModeTraits : ModeTraitsBase {
  static constexpr ModeKind kind(Direction direction) {
    return direction == Direction::encrypt ? ModeKind::serial : ModeKind::bulk;
  }
  GC_METHOD static gc_block range_start(gc_block iv, uint64_t first_block, const uint8_t* previous_block) {
    return first_block > 0 ? load_block(previous_block) : iv;
  }
  static constexpr Bulk bulk_op(Direction) { return kFeedback == Feedback::cbc ? Bulk::cbc_decrypt : Bulk::cfb_decrypt; }
  template <BlockCipher Cipher>
  GC_METHOD static void bulk_range(const Cipher& cipher, Direction, gc_block start, const uint8_t* in, uint8_t* out,
                                   size_t len) {
    feedback_decrypt_range<kFeedback>(cipher, start, in, out, len);
  }
  template <BlockCipher Cipher>
  GC_METHOD static gc_block serial_blocks(const Cipher& cipher, Direction, gc_block chain, const uint8_t* in,
                                          uint8_t* out, size_t num_blocks) {
    return feedback_encrypt_blocks<kFeedback>(cipher, chain, in, out, num_blocks);
  }
  GC_METHOD static gc_block next_register(gc_block, gc_block, gc_block ciphertext) { return ciphertext; }
};

// CbcMode: the mode's traits: a feedback mode of whole blocks.
struct CbcMode : FeedbackModeTraits<Feedback::cbc> {
  static constexpr Mode kMode = Mode::cbc;
  static constexpr bool kWholeBlocks = true;
};

}  // namespace gpucrypt::modes
