// ecb.hpp: electronic codebook (SP 800-38A, 6.1). Every block is independent, so the range
// functions are the whole mode: a parallel caller gives each thread or chunk a block range
// (in + 16 * first_block, out + 16 * first_block, num_blocks). Buffering partial blocks belongs to
// the caller (src/backends/cipher_stream.cpp), and so does padding (padding.hpp has PKCS#7).
// in == out is allowed.
// Constant-time exactly when the cipher is: nothing here branches on or indexes by data.
#pragma once

#include "block_cipher.hpp"
#include "mode_kind.hpp"

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

// EcbMode: the mode's traits (mode_kind.hpp): bulk both ways, no start value, whole blocks.
struct EcbMode : ModeTraitsBase {
  static constexpr Mode kMode = Mode::ecb;
  static constexpr bool kWholeBlocks = true;
  static constexpr ModeKind kind(Direction) { return ModeKind::bulk; }
  static constexpr Bulk bulk_op(Direction direction) {
    return direction == Direction::encrypt ? Bulk::ecb_encrypt : Bulk::ecb_decrypt;
  }
  template <BlockCipher Cipher>
  GC_METHOD static void bulk_range(const Cipher& cipher, Direction direction, gc_block, const uint8_t* in, uint8_t* out,
                                   size_t len) {
    if (direction == Direction::encrypt) ecb_encrypt_blocks(cipher, in, out, len / kBlockLen);
    else ecb_decrypt_blocks(cipher, in, out, len / kBlockLen);
  }
};

}  // namespace gpucrypt::modes
