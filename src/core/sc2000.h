/* sc2000.h: SC2000-128/192/256 (Shimoyama et al., FSE 2001; NESSIE / CRYPTREC), table-driven
 * ("sc2000_table"), following the project's verified spec docs sc2000.md.
 *
 * Not constant-time: the round function's MS(x) = M(S(x)) is six table lookups indexed by fields
 * of round data, so the addresses touched depend on key and data and cache or shared-memory bank
 * timing can leak them (Jiang, Fei, Kaeli, HPCA 2016). The B / B^-1 layers are bitsliced boolean
 * formulas and the I layers plain XORs; those parts are constant-time. The key schedule also uses
 * MS on key words.
 *
 * Why per-field M∘S tables: M is linear, so M(S(x)) is the XOR of M applied to each substituted
 * field on its own (sc2000_tables.h). Evaluating M bit by bit costs 32 test-and-XOR steps per MS,
 * against 6 lookups and about 15 shifts, masks and XORs here. The paper's merged variants
 * (6,10,10,6 bits: 9 KiB; 11,10,11 bits: 20 KiB) save two or three lookups but need 9-20x the
 * on-chip memory; 1 KiB leaves room to replicate the tables across shared-memory banks and keeps
 * occupancy high, so that is the one implemented here.
 *
 * Words are big-endian (designer bit 0 = MSB): a = bytes 0..3 of the block, ..., d = bytes 12..15.
 */
#ifndef GPUCRYPT_CORE_SC2000_H
#define GPUCRYPT_CORE_SC2000_H

#include "platform.h"
#include "sc2000_tables.h"

#ifndef GC_TABLE
#define GC_TABLE GC_CONSTANT
#endif

#define GC_SC2000_VARIANT_NAME "sc2000_table"
/* 8 extended-key words per round plus 8 for the final I-B-I; 6 rounds (128-bit) or 7 (192/256). */
#define GC_SC2000_MAX_EXTENDED_KEYS 64

/* sc2000_tables: where the six MS field tables live (the kernel decides). */
typedef struct sc2000_tables {
  const GC_TABLE uint32_t* ms6_hi;  /* 64 words, bits 31..26 */
  const GC_TABLE uint32_t* ms5_b21; /* 32 words, bits 25..21 */
  const GC_TABLE uint32_t* ms5_b16; /* 32 words, bits 20..16 */
  const GC_TABLE uint32_t* ms5_b11; /* 32 words, bits 15..11 */
  const GC_TABLE uint32_t* ms5_b6;  /* 32 words, bits 10..6 */
  const GC_TABLE uint32_t* ms6_lo;  /* 64 words, bits 5..0 */
} sc2000_tables;

/* sc2000_tables_at points the tables into one array holding GC_SC2000_MS_DATA (256 words). */
GC_FN sc2000_tables sc2000_tables_at(const GC_TABLE uint32_t* ms_all) {
  sc2000_tables t;
  t.ms6_hi = ms_all;
  t.ms5_b21 = ms_all + 64;
  t.ms5_b16 = ms_all + 96;
  t.ms5_b11 = ms_all + 128;
  t.ms5_b6 = ms_all + 160;
  t.ms6_lo = ms_all + 192;
  return t;
}

/* Full rounds before the final I-B-I: 6 for 128-bit keys, 7 for 192 and 256. */
GC_FN int sc2000_num_rounds(int key_bits) { return key_bits == 128 ? 6 : 7; }

typedef struct sc2000_key_schedule {
  uint32_t extended_key[GC_SC2000_MAX_EXTENDED_KEYS];
  int num_rounds; /* full rounds before the final I-B-I: 6 for 128-bit keys, 7 for 192/256 */
  int key_bits;   /* 128, 192 or 256 */
} sc2000_key_schedule;

#define GC_SC2000_MASK_R5 0x55555555u
#define GC_SC2000_MASK_R3 0x33333333u

/* The word at byte offset `offset` of a table. sc2000_ms below forms each offset from x with one
 * shift and one mask (the field already scaled by 4), so a GPU adds the table's place in the
 * shared array as the load's immediate. Indexed as table[field], NVIDIA's OpenCL compiler ORed
 * each table's place into the index and scaled it apart: two more integer instructions for each
 * of the 24 lookups of a round pair. */
GC_FN uint32_t sc2000_table_word(const GC_TABLE uint32_t* table, uint32_t offset) {
  return *(const GC_TABLE uint32_t*)((const GC_TABLE char*)table + offset);
}

GC_FN uint32_t sc2000_ms(const GC_PRIVATE sc2000_tables* t, uint32_t x) {
  return sc2000_table_word(t->ms6_hi, (x >> 24) & 0xfcu) ^   /* bits 31..26, times 4 */
         sc2000_table_word(t->ms5_b21, (x >> 19) & 0x7cu) ^  /* bits 25..21 */
         sc2000_table_word(t->ms5_b16, (x >> 14) & 0x7cu) ^  /* bits 20..16 */
         sc2000_table_word(t->ms5_b11, (x >> 9) & 0x7cu) ^   /* bits 15..11 */
         sc2000_table_word(t->ms5_b6, (x >> 4) & 0x7cu) ^    /* bits 10..6 */
         sc2000_table_word(t->ms6_lo, (x << 2) & 0xfcu);     /* bits 5..0 */
}

/* I layer: XOR four extended-key words into the state. */
GC_FN void sc2000_add_key(GC_PRIVATE uint32_t* s, const GC_PRIVATE uint32_t* k) {
  s[0] ^= k[0]; s[1] ^= k[1]; s[2] ^= k[2]; s[3] ^= k[3];
}

/* B layer: the 4-bit S-box S4 applied to every bit column (a supplies the nibble's MSB), as the
 * boolean circuit of Fig. 3 in the paper (checked against S4 for all 16 inputs). */
GC_FN void sc2000_b(GC_PRIVATE uint32_t* s) {
  uint32_t a = s[0], b = s[1], c = s[2], d = s[3];
  uint32_t t1 = ~b, t2 = a | d, t3 = c ^ t2, t4 = t1 & t3;
  uint32_t e = d ^ t4;
  uint32_t t6 = t2 ^ e, t7 = a ^ b, t8 = t6 | t7;
  uint32_t f = c ^ t8;
  uint32_t t10 = c & t3, t11 = t1 ^ t10, t12 = c ^ t4, t13 = t6 & t12;
  uint32_t h = t7 ^ t13;
  uint32_t t15 = c | h;
  uint32_t g = t11 ^ t15;
  s[0] = e; s[1] = f; s[2] = g; s[3] = h;
}

/* B^-1 layer: the same with S4's inverse. */
GC_FN void sc2000_b_inv(GC_PRIVATE uint32_t* s) {
  uint32_t a = s[0], b = s[1], c = s[2], d = s[3];
  uint32_t t1 = c ^ d, t2 = t1 | b, t3 = t2 ^ c, t4 = t3 & a, t5 = ~c, t6 = t5 | b, t7 = t6 ^ d;
  uint32_t e = t7 ^ t4;
  uint32_t t8 = a ^ t6, t9 = t8 | d;
  uint32_t g = t9 ^ b;
  uint32_t t10 = c ^ g, t11 = t10 | t4, t12 = t11 & t9;
  uint32_t f = t12 ^ e;
  uint32_t t13 = t6 ^ g, t14 = t13 & t1;
  uint32_t h = t14 ^ a;
  s[0] = e; s[1] = f; s[2] = g; s[3] = h;
}

/* Half of an R round: (y0, y1) ^= F(x0, x1; mask), F = L(MS(x0), MS(x1); mask). */
GC_FN void sc2000_f_xor(const GC_PRIVATE sc2000_tables* t, uint32_t x0, uint32_t x1,
                        GC_PRIVATE uint32_t* y0, GC_PRIVATE uint32_t* y1, uint32_t mask) {
  uint32_t s = sc2000_ms(t, x0), u = sc2000_ms(t, x1);
  *y0 ^= (s & mask) ^ u;
  *y1 ^= (u & ~mask) ^ s;
}

/* R x R with one mask: R, cross connection, R. An involution, so decryption uses it as is. */
GC_FN void sc2000_round_pair(const GC_PRIVATE sc2000_tables* t, GC_PRIVATE uint32_t* s,
                             uint32_t mask) {
  uint32_t a, b;
  sc2000_f_xor(t, s[2], s[3], &s[0], &s[1], mask); /* R on (a, b, c, d) */
  sc2000_f_xor(t, s[0], s[1], &s[2], &s[3], mask); /* R after the cross: (c, d, a, b) */
  a = s[0]; b = s[1];
  s[0] = s[2]; s[1] = s[3]; s[2] = a; s[3] = b;
}

/* Round r uses R5 x R5 when r is even, R3 x R3 when odd. */
GC_FN uint32_t sc2000_round_mask(int round) {
  return (round & 1) ? GC_SC2000_MASK_R3 : GC_SC2000_MASK_R5;
}

GC_FN void sc2000_load_state(GC_PRIVATE uint32_t* s, gc_block in) {
  for (int i = 0; i < 4; ++i) s[i] = gc_block_be_word(in, i);
}
GC_FN gc_block sc2000_store_state(const GC_PRIVATE uint32_t* s) {
  gc_block out;
  for (int i = 0; i < 4; ++i) gc_block_set_be_word(&out, i, s[i]);
  return out;
}

/* Encryption: NR times (I-B-I, RxR), then a final I-B-I. num_rounds must equal ks->num_rounds;
 * a GPU kernel that knows the key size at compile time passes a literal (6 or 7): the loop then
 * unrolls and every extended-key index is a constant, so the schedule stays in registers or the
 * kernel's parameter bank. (Read from the schedule instead, NVIDIA's OpenCL compiler kept the
 * loop and the schedule on the stack.) */
GC_FN gc_block sc2000_encrypt_rounds(const GC_PRIVATE sc2000_tables* t,
                                     const GC_PRIVATE sc2000_key_schedule* ks, gc_block in,
                                     int num_rounds) {
  const GC_PRIVATE uint32_t* ek = ks->extended_key;
  uint32_t s[4];
  sc2000_load_state(s, in);
  GC_UNROLL
  for (int round = 0; round <= num_rounds; ++round) {
    sc2000_add_key(s, ek + 8 * round);
    sc2000_b(s);
    sc2000_add_key(s, ek + 8 * round + 4);
    if (round < num_rounds) sc2000_round_pair(t, s, sc2000_round_mask(round));
  }
  return sc2000_store_state(s);
}

/* Decryption: the layers of encryption inverted and in reverse order (key groups in reverse group
 * order but words in normal order inside a group; B^-1 for B; RxR is its own inverse). Same
 * num_rounds rule as sc2000_encrypt_rounds. */
GC_FN gc_block sc2000_decrypt_rounds(const GC_PRIVATE sc2000_tables* t,
                                     const GC_PRIVATE sc2000_key_schedule* ks, gc_block in,
                                     int num_rounds) {
  const GC_PRIVATE uint32_t* ek = ks->extended_key;
  uint32_t s[4];
  sc2000_load_state(s, in);
  GC_UNROLL
  for (int round = num_rounds; round >= 0; --round) {
    sc2000_add_key(s, ek + 8 * round + 4);
    sc2000_b_inv(s);
    sc2000_add_key(s, ek + 8 * round);
    if (round > 0) sc2000_round_pair(t, s, sc2000_round_mask(round - 1));
  }
  return sc2000_store_state(s);
}

/* sc2000_encrypt / sc2000_decrypt: the same, with the round count from the schedule. */
GC_FN gc_block sc2000_encrypt(const GC_PRIVATE sc2000_tables* t,
                              const GC_PRIVATE sc2000_key_schedule* ks, gc_block in) {
  return sc2000_encrypt_rounds(t, ks, in, ks->num_rounds);
}
GC_FN gc_block sc2000_decrypt(const GC_PRIVATE sc2000_tables* t,
                              const GC_PRIVATE sc2000_key_schedule* ks, gc_block in) {
  return sc2000_decrypt_rounds(t, ks, in, ks->num_rounds);
}

/* sc2000_expand_key fills ks from a 16-, 24- or 32-byte key (sc2000.md section 6). Returns 0, or
 * -1 (ks untouched) for any other key_len. The caller owns ks and should wipe it when done. */
GC_FN int sc2000_expand_key(GC_PRIVATE sc2000_key_schedule* ks, const uint8_t* key, int key_len,
                            const GC_PRIVATE sc2000_tables* t) {
  /* Order[t]: which intermediate-key family (a=0, b=1, c=2, d=3) feeds X, Y, Z, W, one nibble
   * each: abcd, badc, cdab, dcba, acdb, bdca, cabd, dbac, adbc, bcad, cbda, dacb. */
  const uint32_t order[12] = {0x0123u, 0x1032u, 0x2301u, 0x3210u, 0x0231u, 0x1320u,
                              0x2013u, 0x3102u, 0x0312u, 0x1203u, 0x2130u, 0x3021u};
  /* Index[s]: which of the three words of each family is taken, in the same nibble layout. */
  const uint32_t index[9] = {0x0000u, 0x1111u, 0x2222u, 0x0101u, 0x1212u,
                             0x2020u, 0x0202u, 0x1010u, 0x2121u};
  uint32_t uk[8];
  uint32_t intermediate[4][3]; /* [family a..d][i] */
  int num_key_words = key_len / 4;
  int num_extended_keys;
  if (key_len != 16 && key_len != 24 && key_len != 32) return -1;

  /* The user key is extended to 8 words by repeating its leading words. */
  for (int i = 0; i < 8; ++i) {
    int word = i < num_key_words ? i : i - num_key_words;
    uk[i] = gc_load_be32(key + 4 * word);
  }

  for (int family = 0; family < 4; ++family) {
    uint32_t ms_even = sc2000_ms(t, uk[2 * family]);
    uint32_t ms_odd = sc2000_ms(t, uk[2 * family + 1]);
    for (int i = 0; i < 3; ++i) {
      uint32_t family_constant = sc2000_ms(t, (uint32_t)(4 * i + family));
      uint32_t mixed = (family_constant + ms_even) ^ (ms_odd * (uint32_t)(i + 1));
      intermediate[family][i] = sc2000_ms(t, mixed);
    }
  }

  num_extended_keys = key_len == 16 ? 56 : 64;
  for (int n = 0; n < num_extended_keys; ++n) {
    uint32_t families = order[(n + n / 36) % 12];
    uint32_t words = index[n % 9];
    uint32_t x = intermediate[(families >> 12) & 15][(words >> 12) & 15];
    uint32_t y = intermediate[(families >> 8) & 15][(words >> 8) & 15];
    uint32_t z = intermediate[(families >> 4) & 15][(words >> 4) & 15];
    uint32_t w = intermediate[families & 15][words & 15];
    ks->extended_key[n] = (gc_rotl32(x, 1) + y) ^ gc_rotl32(gc_rotl32(z, 1) - w, 1);
  }
  ks->num_rounds = sc2000_num_rounds(8 * key_len);
  ks->key_bits = 8 * key_len;
  return 0;
}

#endif
