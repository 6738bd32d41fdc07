// ciphers.hpp: the portable primitives of src/core/ wrapped as BlockCipher structs for the modes.
//
// One struct per variant. Each holds its key schedule by value and pointers to its tables, so the
// same struct serves a CPU thread (tables in host memory, from make_host) and a CUDA thread
// (tables in shared or constant memory, pointers set by the kernel). kRounds/kKeyBits template
// arguments let a GPU kernel fix the key size at compile time so round loops unroll and round
// keys can sit in registers; 0 means "read it from the schedule".
//
// Constant-time: AesBitsliced, AesBitsliced32 and AesBitsliced8 only. The table ciphers index
// tables with secret bytes.
// make_host ignores the expand_key status: the API layer has already checked the key length.
#pragma once

#include "core/aes.h"
#include "core/aes_bitsliced.h"
#include "core/aes_bitsliced32.h"
#include "core/aes_bitsliced8.h"
#include "core/camellia.h"
#include "core/sc2000.h"
#include "modes/block_cipher.hpp"

namespace gpucrypt::modes {

template <int kRounds = 0>
struct AesTTable {
  static constexpr int kBlocksPerCall = 1;
  aes_key_schedule enc;
  aes_key_schedule dec;
  const GC_TABLE uint32_t* te0;
  const GC_TABLE uint32_t* td0;
  const GC_TABLE uint32_t* inv_sbox_words;

  GC_METHOD void encrypt_blocks(gc_block* b) const {
    b[0] = aes_ttable_encrypt_rounds(te0, &enc, b[0], kRounds ? kRounds : enc.num_rounds);
  }
  GC_METHOD void decrypt_blocks(gc_block* b) const {
    b[0] = aes_ttable_decrypt_rounds(td0, inv_sbox_words, &dec, b[0],
                                     kRounds ? kRounds : dec.num_rounds);
  }
#if GC_AES_TABLE_STRIDE == 1
  // Expands key (16/24/32 bytes; the caller has checked the length) with host table pointers.
  // Only where tables are not replicated: a translation unit with GC_AES_TABLE_STRIDE 32 must point
  // the tables at its own replicated copies.
  static AesTTable make_host(const uint8_t* key, int key_len) {
    AesTTable c{};
    aes_expand_key_enc(&c.enc, key, key_len, gc_aes_sbox);
    aes_expand_key_dec(&c.dec, key, key_len, gc_aes_sbox);
    c.te0 = gc_aes_te0;
    c.td0 = gc_aes_td0;
    c.inv_sbox_words = gc_aes_inv_sbox_words;
    return c;
  }
#endif
};

template <int kRounds = 0>
struct AesBitsliced {
  static constexpr int kBlocksPerCall = AES_BITSLICED_BLOCKS;
  aes_bitsliced_key key;

  GC_METHOD void encrypt_blocks(gc_block* b) const {
    aes_bitsliced_encrypt_rounds(&key, b, kRounds ? kRounds : key.num_rounds);
  }
  GC_METHOD void decrypt_blocks(gc_block* b) const {
    aes_bitsliced_decrypt_rounds(&key, b, kRounds ? kRounds : key.num_rounds);
  }
  static AesBitsliced make_host(const uint8_t* k, int key_len) {
    AesBitsliced c{};
    aes_bitsliced_expand_key(&c.key, k, key_len);
    return c;
  }
};

// AesBitsliced32: 32 blocks a call in the full-width bitslice (aes_bitsliced32.h). The key is
// 7684 bytes of round-key masks (same key for both directions); on CUDA it is meant to be read
// in place from a __grid_constant__ parameter or shared memory, not copied into registers.
template <int kRounds = 0>
struct AesBitsliced32 {
  static constexpr int kBlocksPerCall = AES_BITSLICED32_BLOCKS;
  aes_bitsliced32_key key;

  GC_METHOD void encrypt_blocks(gc_block* b) const {
    aes_bitsliced32_encrypt_rounds(&key, b, kRounds ? kRounds : key.num_rounds);
  }
  GC_METHOD void decrypt_blocks(gc_block* b) const {
    aes_bitsliced32_decrypt_rounds(&key, b, kRounds ? kRounds : key.num_rounds);
  }
  static AesBitsliced32 make_host(const uint8_t* k, int key_len) {
    AesBitsliced32 c{};
    aes_bitsliced32_expand_key(&c.key, k, key_len);
    return c;
  }
};

// AesBitsliced8: 8 blocks a call, rows of the state as words (aes_bitsliced8.h). The key is 5284
// bytes of byte masks (same key for both directions); on CUDA it is read in place from the
// __grid_constant__ parameter, like AesBitsliced32's.
template <int kRounds = 0>
struct AesBitsliced8 {
  static constexpr int kBlocksPerCall = AES_BITSLICED8_BLOCKS;
  aes_bitsliced8_key key;

  GC_METHOD void encrypt_blocks(gc_block* b) const {
    aes_bitsliced8_encrypt_rounds(&key, b, kRounds ? kRounds : key.num_rounds);
  }
  GC_METHOD void decrypt_blocks(gc_block* b) const {
    aes_bitsliced8_decrypt_rounds(&key, b, kRounds ? kRounds : key.num_rounds);
  }
  // CTR's keystream for the counters first + 32 i, i < 8 (a warp lane's blocks in the CUDA bulk
  // kernels), the counters built straight into bit planes, less last_round_key(), which the
  // kernel adds with the data: aes_bitsliced8_ctr_stride32_but_last_key.
  GC_METHOD void ctr_keystream_stride32(gc_block first, gc_block* b) const {
    aes_bitsliced8_ctr_stride32_but_last_key(&key, first, b, kRounds ? kRounds : key.num_rounds);
  }
  // The cipher without its first and last AddRoundKey (first_round_key() and last_round_key() as
  // blocks; decryption adds them the other way round), for XTS, which adds them with its tweak.
  GC_METHOD void encrypt_blocks_unkeyed(gc_block* b) const {
    aes_bitsliced8_encrypt_rounds_unkeyed(&key, b, kRounds ? kRounds : key.num_rounds);
  }
  GC_METHOD void decrypt_blocks_unkeyed(gc_block* b) const {
    aes_bitsliced8_decrypt_rounds_unkeyed(&key, b, kRounds ? kRounds : key.num_rounds);
  }
  GC_METHOD gc_block first_round_key() const {
    return gc_block{{key.key0[0], key.key0[1], key.key0[2], key.key0[3]}};
  }
  GC_METHOD gc_block last_round_key() const {
    return gc_block{{key.key_last[0], key.key_last[1], key.key_last[2], key.key_last[3]}};
  }
  static AesBitsliced8 make_host(const uint8_t* k, int key_len) {
    AesBitsliced8 c{};
    aes_bitsliced8_expand_key(&c.key, k, key_len);
    return c;
  }
};

// The Camellia key schedule expanded with the SP tables on the host, for translation units built
// with GC_CAMELLIA_SBOX_WORDS, where camellia.h has no key expansion (src/backends/camellia_keys.cpp).
void camellia_host_expand_key(camellia_key_schedule* ks, const uint8_t* key, int key_len);

// Table Camellia with either table layout of camellia.h (four SP tables, or the S-box words a
// GPU kernel replicates per bank; the kernel then points tables.sbox_words at its copy).
struct CamelliaTTable {
  static constexpr int kBlocksPerCall = 1;
  camellia_key_schedule ks;
  camellia_tables tables;

  GC_METHOD void encrypt_blocks(gc_block* b) const { b[0] = camellia_encrypt(&tables, &ks, b[0]); }
  GC_METHOD void decrypt_blocks(gc_block* b) const { b[0] = camellia_decrypt(&tables, &ks, b[0]); }
  // A GPU kernel stores its key size as a literal: camellia_encrypt then passes a constant group
  // count to camellia_crypt_groups, whose loops unroll, and every subkey index is a constant.
  GC_METHOD void set_literal_key_bits(int key_bits) {
    ks.key_bits = key_bits;
    ks.num_subkeys = key_bits == 128 ? 26 : 34;
  }
  static CamelliaTTable make_host(const uint8_t* key, int key_len) {
    CamelliaTTable c{};
#if GC_CAMELLIA_SBOX_WORDS
    camellia_host_expand_key(&c.ks, key, key_len);
#else
    c.tables = camellia_tables_at(gc_camellia_sp);
    camellia_expand_key(&c.ks, key, key_len, &c.tables);
#endif
    return c;
  }
};

struct Sc2000Table {
  static constexpr int kBlocksPerCall = 1;
  sc2000_key_schedule ks;
  sc2000_tables tables;

  GC_METHOD void encrypt_blocks(gc_block* b) const { b[0] = sc2000_encrypt(&tables, &ks, b[0]); }
  GC_METHOD void decrypt_blocks(gc_block* b) const { b[0] = sc2000_decrypt(&tables, &ks, b[0]); }
  static Sc2000Table make_host(const uint8_t* key, int key_len) {
    Sc2000Table c{};
    c.tables = sc2000_tables_at(gc_sc2000_ms);
    sc2000_expand_key(&c.ks, key, key_len, &c.tables);
    return c;
  }
};

}  // namespace gpucrypt::modes
