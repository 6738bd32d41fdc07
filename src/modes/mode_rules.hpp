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

namespace gpucrypt::modes {

// is_parallel: whether a message in this mode and direction can be cut at any block boundary and
// its pieces processed independently, each from its own starting value (ECB: none; CTR: the counter
// plus the piece's block offset; CBC and CFB decryption: the ciphertext block before the piece).
// CBC and CFB encryption and OFB chain every block to the one before; XTS is one data unit and GCM
// one authenticated message, which their own code splits.
constexpr bool is_parallel(Mode mode, Direction direction) {
  switch (mode) {
    case Mode::ecb:
    case Mode::ctr: return true;
    case Mode::cbc:
    case Mode::cfb: return direction == Direction::decrypt;
    case Mode::ofb:
    case Mode::xts:
    case Mode::gcm: return false;
  }
  return false;
}

// range_iv: the starting value of the piece of a parallel-mode message that begins at block
// first_block, given the message's IV (or counter): CTR counts on from the counter (counter.h's
// 128-bit rule), CBC and CFB decryption start from the ciphertext block before the piece
// (`previous_block`, which the caller takes from the input before anything overwrites it; unused
// when first_block is 0), ECB has none (out is left as the IV). Writes 16 bytes to out.
inline void range_iv(Mode mode, const uint8_t iv[16], uint64_t first_block, const uint8_t* previous_block,
                     uint8_t out[16]) {
  if (mode == Mode::ctr) {
    gc_block_store(out, gc_ctr128_add(gc_block_load(iv), first_block));
    return;
  }
  std::memcpy(out, (mode == Mode::cbc || mode == Mode::cfb) && first_block > 0 ? previous_block : iv, 16);
}

// is_keystream: whether the mode XORs the message with a keystream that the key and IV fix (CTR,
// OFB; CFB's first block, its later ones also depend on the ciphertext), so that two messages
// under one key and IV leak the XOR of their plaintexts (CFB: of the first blocks, and onward while
// they agree): the modes whose IV a Cipher object hands out only once (Python's KeystreamReuseError).
constexpr bool is_keystream(Mode mode) { return mode == Mode::ctr || mode == Mode::ofb || mode == Mode::cfb; }

// is_aead: GCM: the mode authenticates the message (a tag), so it is an AEAD (AEAD and Batch's
// seal/open take it; Cipher, the stream engine and `gpucrypt enc` do not).
constexpr bool is_aead(Mode mode) { return mode == Mode::gcm; }

// is_stream: whether input of any length goes through one key and IV in consecutive pieces, each
// enciphered as it arrives (the stream engine's transform and StreamCipher, `gpucrypt enc`): every
// mode but an AEAD (GCM: its tag follows the whole message, its plaintext only the tag) and XTS (one
// data unit of at most 16 MiB, enciphered whole, since ciphertext stealing places its tail).
constexpr bool is_stream(Mode mode) { return !is_aead(mode) && mode != Mode::xts; }

// needs_whole_blocks: ECB and CBC (without padding) take whole 16-byte blocks only; the other
// modes take any length (XTS: its own data-unit rule, xts_check_data_unit).
constexpr bool needs_whole_blocks(Mode mode) { return mode == Mode::ecb || mode == Mode::cbc; }

// check_whole_blocks: the one refusal of a length such a mode cannot take, naming the cipher:
// "aes-256-cbc without padding needs a multiple of 16 bytes, got 17" (`scope`, e.g. " in all",
// says what the length counts).
inline void check_whole_blocks(const CipherName& name, uint64_t len, std::string_view scope = "") {
  if (needs_whole_blocks(name.mode) && len % 16 != 0)
    throw std::invalid_argument(name.canonical + " without padding needs a multiple of 16 bytes" + std::string(scope) +
                                ", got " + std::to_string(len));
}

}  // namespace gpucrypt::modes
