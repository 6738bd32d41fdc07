// mode_rules.hpp: what the library needs to know about a mode, stated once: which modes split
// (is_parallel), where a piece starts (range_iv), which leak under a reused IV (is_keystream),
// which authenticate (is_aead), which take input of any length in pieces (is_stream) and which take
// whole blocks only (needs_whole_blocks, check_whole_blocks). Used by the CPU
// thread-pool splitter (cipher_stream.cpp), the CPU batch executor's tasks, the batch builder and
// the stream engine's jobs (src/api/transform.cpp: transform_range, TransformStream); cipher.hpp is
// their public door, and _native exposes them (parse_cipher_name's keys, mode_rules, range_iv).
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/counter.h"
#include "gpucrypt/cipher.hpp"
#include "modes/modes.hpp"

namespace gpucrypt::modes {

// Every answer here is read off the modes' traits (modes.hpp's ModeList, mode_kind.hpp), so a new
// mode states its rules once, in its header.

// is_parallel: whether a message in this mode and direction can be cut at any block boundary and
// its pieces processed independently, each from its own starting value: the bulk kind (ECB: none;
// CTR: the counter plus the piece's block offset; CBC and CFB decryption: the ciphertext block
// before the piece). CBC and CFB encryption and OFB chain every block to the one before; XTS is
// one data unit and GCM one authenticated message, which their own code splits.
constexpr bool is_parallel(Mode mode, Direction direction) { return kind(mode, direction) == ModeKind::bulk; }

// range_iv: the starting value of the piece of a parallel-mode message that begins at block
// first_block, given the message's IV (or counter): the traits' range_start (CTR counts on from
// the counter, counter.h's 128-bit rule; CBC and CFB decryption start from the ciphertext block
// before the piece, `previous_block`, which the caller takes from the input before anything
// overwrites it, unused when first_block is 0; ECB has none: out is left as the IV). Writes 16
// bytes to out.
inline void range_iv(Mode mode, const uint8_t iv[16], uint64_t first_block, const uint8_t* previous_block,
                     uint8_t out[16]) {
  const gc_block start = gc_block_load(iv);
  gc_block result = start;
  for_each_mode([&](auto traits) {
    if (mode == decltype(traits)::kMode) result = decltype(traits)::range_start(start, first_block, previous_block);
  });
  gc_block_store(out, result);
}

// range_needs_previous: whether range_iv reads previous_block (for a piece after block 0): a
// direction of the mode whose bulk shape reads the block before (CBC and CFB decryption).
constexpr bool range_needs_previous(Mode mode) {
  bool result = false;
  for_each_mode([&](auto traits) {
    using Traits = decltype(traits);
    if (mode != Traits::kMode) return;
    if constexpr (Traits::kind(Direction::encrypt) == ModeKind::bulk)
      result = result || bulk_reads_previous(Traits::bulk_op(Direction::encrypt));
    if constexpr (Traits::kind(Direction::decrypt) == ModeKind::bulk)
      result = result || bulk_reads_previous(Traits::bulk_op(Direction::decrypt));
  });
  return result;
}

// is_keystream: whether the mode XORs the message with a keystream that the key and IV fix (CTR,
// OFB; CFB's first block, its later ones also depend on the ciphertext), so that two messages
// under one key and IV leak the XOR of their plaintexts (CFB: of the first blocks, and onward while
// they agree): the modes whose IV a Cipher object hands out only once (Python's KeystreamReuseError).
constexpr bool is_keystream(Mode mode) {
  bool result = false;
  for_each_mode([&](auto traits) {
    if (mode == decltype(traits)::kMode) result = decltype(traits)::kKeystream;
  });
  return result;
}

// is_aead: GCM: the mode authenticates the message (a tag), so it is an AEAD (AEAD and Batch's
// seal/open take it; Cipher, the stream engine and `gpucrypt enc` do not).
constexpr bool is_aead(Mode mode) { return kind(mode, Direction::encrypt) == ModeKind::aead; }

// is_stream: whether input of any length goes through one key and IV in consecutive pieces, each
// enciphered as it arrives (the stream engine's transform and StreamCipher, `gpucrypt enc`): the
// bulk and serial kinds, not an AEAD (GCM: its tag follows the whole message, its plaintext only the
// tag) nor XTS (one data unit of at most 16 MiB, enciphered whole, since ciphertext stealing places
// its tail).
constexpr bool is_stream(Mode mode) {
  const ModeKind k = kind(mode, Direction::encrypt);
  return k == ModeKind::bulk || k == ModeKind::serial;
}

// needs_whole_blocks: ECB and CBC (without padding) take whole 16-byte blocks only; the other
// modes take any length (XTS: its own data-unit rule, xts_check_data_unit).
constexpr bool needs_whole_blocks(Mode mode) {
  bool result = false;
  for_each_mode([&](auto traits) {
    if (mode == decltype(traits)::kMode) result = decltype(traits)::kWholeBlocks;
  });
  return result;
}

// check_whole_blocks: the one refusal of a length such a mode cannot take, naming the cipher:
// "aes-256-cbc without padding needs a multiple of 16 bytes, got 17" (`scope`, e.g. " in all",
// says what the length counts).
inline void check_whole_blocks(const CipherName& name, uint64_t len, std::string_view scope = "") {
  if (needs_whole_blocks(name.mode) && len % 16 != 0)
    throw std::invalid_argument(name.canonical + " without padding needs a multiple of 16 bytes" + std::string(scope) +
                                ", got " + std::to_string(len));
}

}  // namespace gpucrypt::modes
