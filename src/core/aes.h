/* aes.h: AES-128/192/256 (FIPS-197) with one T-table per direction, the "aes_ttable" variant.
 *
 * NOT constant-time. Every round indexes Te0/Td0 with bytes of the secret state, and key
 * expansion indexes the S-box with key bytes, so lookup time (CPU cache lines, GPU shared-memory
 * bank conflicts, constant-cache serialisation) depends on key and data; Jiang, Fei and Kaeli
 * (HPCA 2016) recover AES keys from exactly that timing on a GPU. Use aes_bitsliced.h where
 * timing must not leak.
 *
 * Layout follows Tezcan (IEEE Access 2021): only Te0 (Td0) is stored, because the tables for
 * state rows 1..3 are byte rotations of it and a rotation is one funnel shift or __byte_perm on
 * NVIDIA GPUs, cheaper than the shared-memory space and bank pressure of three more tables. The
 * kernel may replicate the table 32 times, one copy per shared-memory bank, interleaved so that
 * entry i of the copy for lane L sits at word i * 32 + L; it then defines GC_AES_TABLE_STRIDE 32
 * and GC_TABLE (e.g. as nothing in CUDA, __local in OpenCL) before including this file, and passes
 * `table + lane`. Every lookup here goes through aes_table_lookup, so a lane only ever touches its
 * own bank. The stride holds for the whole translation unit, host code in it included: a host
 * reference computed next to such a kernel must pass replicated tables too. The final encryption
 * round takes its S-box bytes out of Te0 entries, so encryption needs no second table.
 *
 * The tables are laid out for the little-endian gc_block words (aes_tables.h), so the state is
 * never byte-swapped: row r of column c is bits 8r..8r+7 of word c.
 *
 * Loops: aes_ttable_encrypt/decrypt read the round count from the schedule. A GPU kernel that
 * knows the key size at compile time calls the *_rounds form with a literal instead. The round
 * loop always runs to AES_MAX_ROUNDS with the rounds past num_rounds skipped by a test, so its
 * trip count is a constant in every context and GC_UNROLL unrolls it; with a literal num_rounds
 * the tests fold away and every round-key index is a constant, which lets the schedule live in
 * registers. (A plain `round < num_rounds` loop was not unrolled by nvcc 13.0 after inlining a
 * literal in the bitsliced variant, so both variants use this form.) With a run-time count the
 * GPU code is 13 guarded rounds, each test uniform across a warp.
 */
#ifndef GPUCRYPT_CORE_AES_H
#define GPUCRYPT_CORE_AES_H

#include "platform.h"
#include "aes_tables.h" /* not used here; included so host callers get the tables with the code */

#ifndef GC_AES_TABLE_STRIDE
  #define GC_AES_TABLE_STRIDE 1
#endif
#ifndef GC_TABLE
  #define GC_TABLE GC_CONSTANT
#endif

#ifndef AES_MAX_ROUNDS
  #define AES_MAX_ROUNDS 14 /* AES-256 */
#endif

/* aes_key_schedule: round keys as little-endian words, four per round, num_rounds + 1 rounds.
 * An encryption schedule holds the FIPS-197 key expansion; a decryption schedule holds the round
 * keys of the equivalent inverse cipher (FIPS-197 section 5.3.5): reversed, with InvMixColumns
 * applied to all but the first and last. Words past the used rounds are zero. */
typedef struct aes_key_schedule {
  uint32_t rk[4 * (AES_MAX_ROUNDS + 1)];
  int num_rounds;
} aes_key_schedule;

/* aes_num_rounds returns 10, 12 or 14 for a 16-, 24- or 32-byte key, or -1 for any other length. */
GC_FN int aes_num_rounds(int key_len) {
  return key_len == 16 ? 10 : key_len == 24 ? 12 : key_len == 32 ? 14 : -1;
}

GC_FN uint32_t aes_table_lookup(const GC_TABLE uint32_t* table, uint32_t index) {
  return table[index * GC_AES_TABLE_STRIDE];
}

/* Multiplies each of the four bytes of x by {02} in GF(2^8). */
GC_FN uint32_t aes_xtime_bytes(uint32_t x) {
  return ((x & 0x7f7f7f7fu) << 1) ^ (((x >> 7) & 0x01010101u) * 0x1bu);
}

GC_FN uint32_t aes_sub_word(uint32_t word, const GC_CONSTANT uint8_t* sbox) {
  return (uint32_t)sbox[word & 0xff] | ((uint32_t)sbox[(word >> 8) & 0xff] << 8) |
         ((uint32_t)sbox[(word >> 16) & 0xff] << 16) | ((uint32_t)sbox[word >> 24] << 24);
}

/* InvMixColumns of one column; byte r of the word is row r. Row r of the result is
 * {0e}b[r] + {0b}b[r+1] + {0d}b[r+2] + {09}b[r+3], and rotating right by 8k bits brings b[r+k]
 * to row r. Only the decryption key schedule uses it, once per round key. */
GC_FN uint32_t aes_inv_mix_column(uint32_t column) {
  uint32_t times2 = aes_xtime_bytes(column);
  uint32_t times4 = aes_xtime_bytes(times2);
  uint32_t times8 = aes_xtime_bytes(times4);
  uint32_t times9 = times8 ^ column;
  uint32_t times11 = times9 ^ times2;
  uint32_t times13 = times9 ^ times4;
  uint32_t times14 = times8 ^ times4 ^ times2;
  return times14 ^ gc_rotr32(times11, 8) ^ gc_rotr32(times13, 16) ^ gc_rotr32(times9, 24);
}

/* aes_expand_key_enc writes the encryption schedule for a 16-, 24- or 32-byte key. sbox is the
 * 256-byte FIPS-197 S-box (gc_aes_sbox on the host). Returns 0, or -1 for another key_len, in
 * which case ks is untouched. */
GC_FN int aes_expand_key_enc(GC_PRIVATE aes_key_schedule* ks, const uint8_t* key, int key_len,
                             const GC_CONSTANT uint8_t* sbox) {
  int num_rounds = aes_num_rounds(key_len);
  if (num_rounds < 0) return -1;
  int num_key_words = key_len / 4;
  int num_schedule_words = 4 * (num_rounds + 1);
  uint32_t round_constant = 1;
  for (int i = 0; i < num_key_words; ++i) ks->rk[i] = gc_load_le32(key + 4 * i);
  for (int i = num_key_words; i < num_schedule_words; ++i) {
    uint32_t word = ks->rk[i - 1];
    if (i % num_key_words == 0) {
      /* RotWord moves byte 1 to byte 0: a right rotation of the little-endian word. */
      word = aes_sub_word(gc_rotr32(word, 8), sbox) ^ round_constant;
      round_constant = aes_xtime_bytes(round_constant);
    } else if (num_key_words > 6 && i % num_key_words == 4) {
      word = aes_sub_word(word, sbox);
    }
    ks->rk[i] = ks->rk[i - num_key_words] ^ word;
  }
  for (int i = num_schedule_words; i < 4 * (AES_MAX_ROUNDS + 1); ++i) ks->rk[i] = 0;
  ks->num_rounds = num_rounds;
  return 0;
}

/* aes_expand_key_dec writes the schedule aes_ttable_decrypt expects (equivalent inverse cipher).
 * Same arguments and failure behaviour as aes_expand_key_enc. */
GC_FN int aes_expand_key_dec(GC_PRIVATE aes_key_schedule* ks, const uint8_t* key, int key_len,
                             const GC_CONSTANT uint8_t* sbox) {
  if (aes_expand_key_enc(ks, key, key_len, sbox) != 0) return -1;
  int num_rounds = ks->num_rounds;
  for (int low = 0, high = num_rounds; low < high; ++low, --high) {
    for (int c = 0; c < 4; ++c) {
      uint32_t word = ks->rk[4 * low + c];
      ks->rk[4 * low + c] = ks->rk[4 * high + c];
      ks->rk[4 * high + c] = word;
    }
  }
  for (int i = 4; i < 4 * num_rounds; ++i) ks->rk[i] = aes_inv_mix_column(ks->rk[i]);
  return 0;
}

GC_FN gc_block aes_add_round_key(gc_block state, const GC_PRIVATE uint32_t* round_key) {
  gc_block out;
  out.w[0] = state.w[0] ^ round_key[0];
  out.w[1] = state.w[1] ^ round_key[1];
  out.w[2] = state.w[2] ^ round_key[2];
  out.w[3] = state.w[3] ^ round_key[3];
  return out;
}

/* One output column of a T-table round. The caller passes the input words that hold rows 0..3
 * of this column after (Inv)ShiftRows; row r's table entry is the row-0 entry rotated left by
 * 8r bits (the MixColumns matrix is circulant). */
/* aes_table_lookup_byte: the entry indexed by byte `byte_index` (a literal 0..3) of word.
 * On NVIDIA GPUs, a kernel that lays its replicas out with a pitch of 64 words (entry i of lane
 * L's copy at byte i * 256 + L * 4) defines GC_AES_LANE as L (e.g. (threadIdx.x & 31u)): then one
 * __byte_perm forms the whole byte offset, where the generic form spends a shift, a mask and a
 * multiply-add. That measured AES-128-CTR 2.84 -> 4.68 Tbps on an H200 (docs/performance.md).
 * The table pointer is still the lane's own (table + L). `table - GC_AES_LANE` must stay word
 * arithmetic on the typed pointer: the compiler then cancels it against the kernel's `+ lane`
 * and the address is the shared base plus the permuted byte (LDS [R+UR]). Subtracting L * 4
 * from a char pointer instead got reassociated into (perm - L * 4) + table, two more integer
 * instructions per lookup, and cost 22% (4.68 -> 3.65 Tbps). */
#if defined(__CUDA_ARCH__) && defined(GC_AES_LANE) && GC_AES_TABLE_STRIDE == 64
  #define aes_table_lookup_byte(table, word, byte_index)                                  \
    (*(const GC_TABLE uint32_t*)((const GC_TABLE char*)((table) - (GC_AES_LANE)) +        \
                                 __byte_perm((word), (GC_AES_LANE) * 4u, 0x5504 + 0x10 * (byte_index))))
#elif defined(GC_HAS_BYTE_PERM) && defined(GC_TABLE_PITCH_BYTES)
  /* NVIDIA's OpenCL gives a work-group 48 KiB of local memory, no room for the pitch of 64: a byte
   * permute and a multiply-add (FMA pipe) instead (ciphers.cl's GC_TABLE_PITCH_BYTES). */
  #define aes_table_lookup_byte(table, word, byte_index) \
    gc_table_word_at_byte((table), (word), (byte_index), GC_TABLE_PITCH_BYTES)
#else
  #define aes_table_lookup_byte(table, word, byte_index) \
    aes_table_lookup((table), ((word) >> (8 * (byte_index))) & 0xff)
#endif

GC_FN uint32_t aes_ttable_column(const GC_TABLE uint32_t* table, uint32_t row0_word,
                                 uint32_t row1_word, uint32_t row2_word, uint32_t row3_word) {
  return aes_table_lookup_byte(table, row0_word, 0) ^
         gc_rotr32(aes_table_lookup_byte(table, row1_word, 1), 24) ^
         gc_rotr32(aes_table_lookup_byte(table, row2_word, 2), 16) ^
         gc_rotr32(aes_table_lookup_byte(table, row3_word, 3), 8);
}

/* SubBytes, ShiftRows (row r of column c comes from column c + r), MixColumns, AddRoundKey. */
GC_FN gc_block aes_ttable_encrypt_round(const GC_TABLE uint32_t* te0, gc_block s,
                                        const GC_PRIVATE uint32_t* round_key) {
  gc_block out;
  out.w[0] = aes_ttable_column(te0, s.w[0], s.w[1], s.w[2], s.w[3]) ^ round_key[0];
  out.w[1] = aes_ttable_column(te0, s.w[1], s.w[2], s.w[3], s.w[0]) ^ round_key[1];
  out.w[2] = aes_ttable_column(te0, s.w[2], s.w[3], s.w[0], s.w[1]) ^ round_key[2];
  out.w[3] = aes_ttable_column(te0, s.w[3], s.w[0], s.w[1], s.w[2]) ^ round_key[3];
  return out;
}

/* InvSubBytes, InvShiftRows (row r of column c comes from column c - r), InvMixColumns,
 * AddRoundKey, in the order of the equivalent inverse cipher. */
GC_FN gc_block aes_ttable_decrypt_round(const GC_TABLE uint32_t* td0, gc_block s,
                                        const GC_PRIVATE uint32_t* round_key) {
  gc_block out;
  out.w[0] = aes_ttable_column(td0, s.w[0], s.w[3], s.w[2], s.w[1]) ^ round_key[0];
  out.w[1] = aes_ttable_column(td0, s.w[1], s.w[0], s.w[3], s.w[2]) ^ round_key[1];
  out.w[2] = aes_ttable_column(td0, s.w[2], s.w[1], s.w[0], s.w[3]) ^ round_key[2];
  out.w[3] = aes_ttable_column(td0, s.w[3], s.w[2], s.w[1], s.w[0]) ^ round_key[3];
  return out;
}

/* Final encryption round, one column: S[x] is byte 1 and byte 2 of Te0[x], so rows 1 and 2 only
 * need a mask and rows 0 and 3 a shift by one byte. */
GC_FN uint32_t aes_ttable_final_column(const GC_TABLE uint32_t* te0, uint32_t row0_word,
                                       uint32_t row1_word, uint32_t row2_word, uint32_t row3_word) {
  return ((aes_table_lookup(te0, row0_word & 0xff) >> 8) & 0x000000ffu) |
         (aes_table_lookup(te0, (row1_word >> 8) & 0xff) & 0x0000ff00u) |
         (aes_table_lookup(te0, (row2_word >> 16) & 0xff) & 0x00ff0000u) |
         ((aes_table_lookup(te0, row3_word >> 24) << 8) & 0xff000000u);
}

/* Final decryption round, one column: the inverse S-box words repeat their byte four times, so
 * each row is a mask. */
GC_FN uint32_t aes_ttable_inv_final_column(const GC_TABLE uint32_t* inv_sbox_words,
                                           uint32_t row0_word, uint32_t row1_word,
                                           uint32_t row2_word, uint32_t row3_word) {
  return (aes_table_lookup(inv_sbox_words, row0_word & 0xff) & 0x000000ffu) |
         (aes_table_lookup(inv_sbox_words, (row1_word >> 8) & 0xff) & 0x0000ff00u) |
         (aes_table_lookup(inv_sbox_words, (row2_word >> 16) & 0xff) & 0x00ff0000u) |
         (aes_table_lookup(inv_sbox_words, row3_word >> 24) & 0xff000000u);
}

/* aes_ttable_encrypt_rounds encrypts one block with a schedule from aes_expand_key_enc.
 * num_rounds must equal ks->num_rounds; pass a literal (10, 12, 14) to get an unrolled loop. */
GC_FN gc_block aes_ttable_encrypt_rounds(const GC_TABLE uint32_t* te0,
                                         const GC_PRIVATE aes_key_schedule* ks, gc_block in,
                                         int num_rounds) {
  const GC_PRIVATE uint32_t* rk = ks->rk;
  gc_block s = aes_add_round_key(in, rk);
  GC_UNROLL
  for (int round = 1; round < AES_MAX_ROUNDS; ++round) {
    if (round < num_rounds) s = aes_ttable_encrypt_round(te0, s, rk + 4 * round);
  }
  const GC_PRIVATE uint32_t* last_key = rk + 4 * num_rounds;
  gc_block out;
  out.w[0] = aes_ttable_final_column(te0, s.w[0], s.w[1], s.w[2], s.w[3]) ^ last_key[0];
  out.w[1] = aes_ttable_final_column(te0, s.w[1], s.w[2], s.w[3], s.w[0]) ^ last_key[1];
  out.w[2] = aes_ttable_final_column(te0, s.w[2], s.w[3], s.w[0], s.w[1]) ^ last_key[2];
  out.w[3] = aes_ttable_final_column(te0, s.w[3], s.w[0], s.w[1], s.w[2]) ^ last_key[3];
  return out;
}

/* aes_ttable_decrypt_rounds decrypts one block with a schedule from aes_expand_key_dec.
 * inv_sbox_words is GC_AES_INV_SBOX_WORDS_DATA (gc_aes_inv_sbox_words on the host), laid out
 * with the same stride as td0. */
GC_FN gc_block aes_ttable_decrypt_rounds(const GC_TABLE uint32_t* td0,
                                         const GC_TABLE uint32_t* inv_sbox_words,
                                         const GC_PRIVATE aes_key_schedule* ks, gc_block in,
                                         int num_rounds) {
  const GC_PRIVATE uint32_t* rk = ks->rk;
  gc_block s = aes_add_round_key(in, rk);
  GC_UNROLL
  for (int round = 1; round < AES_MAX_ROUNDS; ++round) {
    if (round < num_rounds) s = aes_ttable_decrypt_round(td0, s, rk + 4 * round);
  }
  const GC_PRIVATE uint32_t* last_key = rk + 4 * num_rounds;
  gc_block out;
  out.w[0] = aes_ttable_inv_final_column(inv_sbox_words, s.w[0], s.w[3], s.w[2], s.w[1]) ^ last_key[0];
  out.w[1] = aes_ttable_inv_final_column(inv_sbox_words, s.w[1], s.w[0], s.w[3], s.w[2]) ^ last_key[1];
  out.w[2] = aes_ttable_inv_final_column(inv_sbox_words, s.w[2], s.w[1], s.w[0], s.w[3]) ^ last_key[2];
  out.w[3] = aes_ttable_inv_final_column(inv_sbox_words, s.w[3], s.w[2], s.w[1], s.w[0]) ^ last_key[3];
  return out;
}

/* aes_ttable_encrypt / aes_ttable_decrypt: the same, with the round count from the schedule. */
GC_FN gc_block aes_ttable_encrypt(const GC_TABLE uint32_t* te0,
                                  const GC_PRIVATE aes_key_schedule* ks, gc_block in) {
  return aes_ttable_encrypt_rounds(te0, ks, in, ks->num_rounds);
}

GC_FN gc_block aes_ttable_decrypt(const GC_TABLE uint32_t* td0,
                                  const GC_TABLE uint32_t* inv_sbox_words,
                                  const GC_PRIVATE aes_key_schedule* ks, gc_block in) {
  return aes_ttable_decrypt_rounds(td0, inv_sbox_words, ks, in, ks->num_rounds);
}

#endif
