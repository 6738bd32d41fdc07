/* camellia.h: Camellia-128/192/256 (RFC 3713), table-driven ("camellia_ttable").
 *
 * Not constant-time: the F function looks up four 256-entry tables with bytes of (state ^ subkey),
 * so the addresses touched depend on the key and the data, and cache or shared-memory bank timing
 * can leak them (Jiang, Fei, Kaeli, HPCA 2016 recover AES keys this way on GPUs). FL/FL^-1, the
 * key schedule's rotations and the whitening are data-independent.
 *
 * Layout. Camellia thinks in big-endian 64-bit halves; here each half is a (hi, lo) pair of
 * 32-bit words, the gc_block words are byte-swapped on the way in and out. Keeping the state
 * little-endian instead would save those 8 swaps but cost swaps inside every FL/FL^-1 (a 1-bit
 * rotation of a big-endian word), which is about the same count, so the readable form won.
 * F merges the S-boxes and the P permutation into four tables SP1110/SP0222/SP3033/SP4404
 * (camellia_tables.h): with A = the left input word's four lookups and B = the right word's,
 * P's output is (A ^ B, A ^ B ^ (A >>> 8)), derived from RFC 3713's y1..y8 equations.
 *
 * GPU layout (GC_CAMELLIA_SBOX_WORDS 1, the CUDA variant camellia_sbox_smem32): one table of 256
 * words instead of four, entry x holding all four S-box outputs (byte j = s_{j+1}(x), built from
 * the SP tables by camellia_sbox_word), so a kernel can replicate it once per shared-memory bank
 * (entry x of lane L's copy at byte x * 256 + L * 4, GC_CAMELLIA_TABLE_STRIDE 64) like aes.h's
 * Te0: 64 KiB, where four replicated SP tables would take 256 KiB. Each lookup then places its
 * byte where the SP table has it (camellia_sp_from_sbox_word: one byte permute on NVIDIA GPUs).
 * Still not constant-time: the addresses depend on the data; replication only removes the bank
 * conflicts (and with them the conflict-timing channel). The key schedule runs on the host with
 * the SP tables (a translation unit with GC_CAMELLIA_SBOX_WORDS must not expand keys itself:
 * camellia_expand_key is not compiled there).
 *
 * Subkeys are stored in the order encryption consumes them, with kw3/kw4 stored swapped
 * (kw1 kw2 | k1..k6 | ke1 ke2 | k7..k12 | ... | kw4 kw3). Read backwards that list is exactly the
 * decryption order RFC 3713 prescribes (k1<->k18, ke1<->ke4, kw1<->kw3, ...), so one routine does
 * both directions.
 */
#ifndef GPUCRYPT_CORE_CAMELLIA_H
#define GPUCRYPT_CORE_CAMELLIA_H

#include "platform.h"
#include "camellia_tables.h"

#ifndef GC_TABLE
#define GC_TABLE GC_CONSTANT
#endif

#define GC_CAMELLIA_VARIANT_NAME "camellia_ttable"
/* 4 whitening + 24 round + 6 FL subkeys (192/256-bit keys); a 128-bit key uses 4 + 18 + 4 = 26. */
#define GC_CAMELLIA_MAX_SUBKEYS 34

#ifndef GC_CAMELLIA_SBOX_WORDS
  #define GC_CAMELLIA_SBOX_WORDS 0
#endif
#ifndef GC_CAMELLIA_TABLE_STRIDE
  #define GC_CAMELLIA_TABLE_STRIDE 1
#endif

/* camellia_tables: where the four SP tables live (constant, global or shared memory; the kernel
 * decides). Each points at GC_CAMELLIA_SP_TABLE_WORDS words. With GC_CAMELLIA_SBOX_WORDS only
 * sbox_words is used: the lane's own copy of the S-box word table (see top). */
typedef struct camellia_tables {
  const GC_TABLE uint32_t* sp1110;
  const GC_TABLE uint32_t* sp0222;
  const GC_TABLE uint32_t* sp3033;
  const GC_TABLE uint32_t* sp4404;
  const GC_TABLE uint32_t* sbox_words;
} camellia_tables;

/* Entry x of the S-box word table, from the SP tables (GC_CAMELLIA_SP_DATA order): byte 0 = s1(x)
 * (SP1110's second byte), byte 1 = s2(x), byte 2 = s3(x), byte 3 = s4(x) (the low bytes of
 * SP0222, SP3033, SP4404). */
GC_FN uint32_t camellia_sbox_word(const GC_CONSTANT uint32_t* sp_all, int x) {
  return ((sp_all[x] >> 8) & 0xffu) | (sp_all[GC_CAMELLIA_SP_TABLE_WORDS + x] & 0xffu) << 8 |
         (sp_all[2 * GC_CAMELLIA_SP_TABLE_WORDS + x] & 0xffu) << 16 |
         (sp_all[3 * GC_CAMELLIA_SP_TABLE_WORDS + x] & 0xffu) << 24;
}

/* SP-table value j (0 = SP1110, 1 = SP0222, 2 = SP3033, 3 = SP4404; a literal) from an S-box word:
 * s_{j+1} copied into the bytes that table fills (byte patterns in camellia_tables.h). */
#if defined(GC_HAS_BYTE_PERM)
  #define camellia_sp_from_sbox_word(w, j) \
    gc_byte_perm((w), 0u, (j) == 0 ? 0x0004 : (j) == 1 ? 0x4111 : (j) == 2 ? 0x2422 : 0x3343)
#else
  #define camellia_sp_from_sbox_word(w, j)                                        \
    ((((w) >> (8 * (j))) & 0xffu) *                                              \
     ((j) == 0 ? 0x01010100u : (j) == 1 ? 0x00010101u : (j) == 2 ? 0x01000101u : 0x01010001u))
#endif

/* The S-box word for byte `byte_index` (a literal 0..3) of word: with GC_CAMELLIA_LANE defined
 * (lane number, GPU kernels with a pitch of 64 words) one byte permute forms the byte offset
 * (byte << 8) | (lane << 2), as aes.h's aes_table_lookup_byte explains. */
#if defined(__CUDA_ARCH__) && defined(GC_CAMELLIA_LANE) && GC_CAMELLIA_TABLE_STRIDE == 64
  #define camellia_sbox_lookup(table, word, byte_index)                                 \
    (*(const GC_TABLE uint32_t*)((const GC_TABLE char*)((table) - (GC_CAMELLIA_LANE)) + \
                                 __byte_perm((word), (GC_CAMELLIA_LANE) * 4u, 0x5504 + 0x10 * (byte_index))))
#elif defined(GC_HAS_BYTE_PERM) && defined(GC_TABLE_PITCH_BYTES)
  /* NVIDIA OpenCL: aes.h's aes_table_lookup_byte says why. */
  #define camellia_sbox_lookup(table, word, byte_index) \
    gc_table_word_at_byte((table), (word), (byte_index), GC_TABLE_PITCH_BYTES)
#else
  #define camellia_sbox_lookup(table, word, byte_index) \
    ((table)[(((word) >> (8 * (byte_index))) & 0xffu) * GC_CAMELLIA_TABLE_STRIDE])
#endif

/* camellia_tables_at points the tables into one array holding GC_CAMELLIA_SP_DATA (1024 words). */
GC_FN camellia_tables camellia_tables_at(const GC_TABLE uint32_t* sp_all) {
  camellia_tables t;
  t.sp1110 = sp_all;
  t.sp0222 = sp_all + GC_CAMELLIA_SP_TABLE_WORDS;
  t.sp3033 = sp_all + 2 * GC_CAMELLIA_SP_TABLE_WORDS;
  t.sp4404 = sp_all + 3 * GC_CAMELLIA_SP_TABLE_WORDS;
  return t;
}

/* camellia_key_schedule: 64-bit subkeys as (hi, lo) word pairs, in encryption order (see top). */
typedef struct camellia_key_schedule {
  uint32_t subkey[2 * GC_CAMELLIA_MAX_SUBKEYS];
  int num_subkeys; /* 26 for 128-bit keys, 34 for 192/256 */
  int key_bits;    /* 128, 192 or 256 */
} camellia_key_schedule;

/* *y ^= F(x, k), all 64-bit values as (hi, lo) word pairs. */
GC_FN void camellia_f_xor(const GC_PRIVATE camellia_tables* t, uint32_t x_hi, uint32_t x_lo,
                          uint32_t k_hi, uint32_t k_lo, GC_PRIVATE uint32_t* y_hi,
                          GC_PRIVATE uint32_t* y_lo) {
  uint32_t left = x_hi ^ k_hi;  /* bytes t1..t4 */
  uint32_t right = x_lo ^ k_lo; /* bytes t5..t8 */
#if GC_CAMELLIA_SBOX_WORDS
  const GC_TABLE uint32_t* w = t->sbox_words;
  uint32_t a = camellia_sp_from_sbox_word(camellia_sbox_lookup(w, left, 3), 0) ^
               camellia_sp_from_sbox_word(camellia_sbox_lookup(w, left, 2), 1) ^
               camellia_sp_from_sbox_word(camellia_sbox_lookup(w, left, 1), 2) ^
               camellia_sp_from_sbox_word(camellia_sbox_lookup(w, left, 0), 3);
  uint32_t b = camellia_sp_from_sbox_word(camellia_sbox_lookup(w, right, 3), 1) ^
               camellia_sp_from_sbox_word(camellia_sbox_lookup(w, right, 2), 2) ^
               camellia_sp_from_sbox_word(camellia_sbox_lookup(w, right, 1), 3) ^
               camellia_sp_from_sbox_word(camellia_sbox_lookup(w, right, 0), 0);
#else
  uint32_t a = t->sp1110[left >> 24] ^ t->sp0222[(left >> 16) & 0xff] ^
               t->sp3033[(left >> 8) & 0xff] ^ t->sp4404[left & 0xff];
  uint32_t b = t->sp0222[right >> 24] ^ t->sp3033[(right >> 16) & 0xff] ^
               t->sp4404[(right >> 8) & 0xff] ^ t->sp1110[right & 0xff];
#endif
  *y_hi ^= a ^ b;
  *y_lo ^= a ^ b ^ gc_rotr32(a, 8);
}

/* FL and FL^-1 (RFC 3713 2.4.3) on a half (x_hi, x_lo) with subkey (k_hi, k_lo). */
GC_FN void camellia_fl(GC_PRIVATE uint32_t* x_hi, GC_PRIVATE uint32_t* x_lo, uint32_t k_hi,
                       uint32_t k_lo) {
  *x_lo ^= gc_rotl32(*x_hi & k_hi, 1);
  *x_hi ^= *x_lo | k_lo;
}
GC_FN void camellia_fl_inv(GC_PRIVATE uint32_t* y_hi, GC_PRIVATE uint32_t* y_lo, uint32_t k_hi,
                           uint32_t k_lo) {
  *y_hi ^= *y_lo | k_lo;
  *y_lo ^= gc_rotl32(*y_hi & k_hi, 1);
}

/* The subkey pair a cipher pass uses at its step-th subkey; decryption walks the list backwards. */
GC_FN const GC_PRIVATE uint32_t* camellia_subkey_at(const GC_PRIVATE camellia_key_schedule* ks,
                                                     int num_subkeys, int step, int reverse) {
  int index = reverse ? num_subkeys - 1 - step : step;
  return ks->subkey + 2 * index;
}

/* Groups of 6 rounds (FL layers between them): 3 for 128-bit keys, 4 for 192/256. */
GC_FN int camellia_num_groups(int key_bits) { return key_bits == 128 ? 3 : 4; }

/* One pass of the cipher: encryption with reverse = 0, decryption with reverse = 1, over
 * num_groups groups (camellia_num_groups of the schedule's key size). A GPU kernel that knows the
 * key size at compile time passes a literal: both loops then unroll and every subkey index is a
 * constant, so the schedule stays in registers or the kernel's parameter bank. (Read from the
 * schedule instead, NVIDIA's OpenCL compiler kept the loops and the schedule on the stack.) */
GC_FN gc_block camellia_crypt_groups(const GC_PRIVATE camellia_tables* t,
                                     const GC_PRIVATE camellia_key_schedule* ks, gc_block in,
                                     int reverse, int num_groups) {
  const int num_subkeys = 8 * num_groups + 2; /* kw1-2, 6 per group, 2 per FL layer, kw3-4 */
  const GC_PRIVATE uint32_t* k;
  int step = 0;
  uint32_t d1_hi = gc_block_be_word(in, 0), d1_lo = gc_block_be_word(in, 1);
  uint32_t d2_hi = gc_block_be_word(in, 2), d2_lo = gc_block_be_word(in, 3);
  gc_block out;

  k = camellia_subkey_at(ks, num_subkeys, step++, reverse);
  d1_hi ^= k[0]; d1_lo ^= k[1];
  k = camellia_subkey_at(ks, num_subkeys, step++, reverse);
  d2_hi ^= k[0]; d2_lo ^= k[1];

  GC_UNROLL
  for (int group = 0; group < num_groups; ++group) {
    if (group > 0) {
      k = camellia_subkey_at(ks, num_subkeys, step++, reverse);
      camellia_fl(&d1_hi, &d1_lo, k[0], k[1]);
      k = camellia_subkey_at(ks, num_subkeys, step++, reverse);
      camellia_fl_inv(&d2_hi, &d2_lo, k[0], k[1]);
    }
    GC_UNROLL
    for (int round_pair = 0; round_pair < 3; ++round_pair) {
      k = camellia_subkey_at(ks, num_subkeys, step++, reverse);
      camellia_f_xor(t, d1_hi, d1_lo, k[0], k[1], &d2_hi, &d2_lo);
      k = camellia_subkey_at(ks, num_subkeys, step++, reverse);
      camellia_f_xor(t, d2_hi, d2_lo, k[0], k[1], &d1_hi, &d1_lo);
    }
  }

  k = camellia_subkey_at(ks, num_subkeys, step++, reverse); /* kw4 (kw2 when decrypting) */
  d1_hi ^= k[0]; d1_lo ^= k[1];
  k = camellia_subkey_at(ks, num_subkeys, step++, reverse); /* kw3 (kw1 when decrypting) */
  d2_hi ^= k[0]; d2_lo ^= k[1];

  /* C = D2 || D1: the final swap of the Feistel network. */
  gc_block_set_be_word(&out, 0, d2_hi); gc_block_set_be_word(&out, 1, d2_lo);
  gc_block_set_be_word(&out, 2, d1_hi); gc_block_set_be_word(&out, 3, d1_lo);
  return out;
}

GC_FN gc_block camellia_encrypt(const GC_PRIVATE camellia_tables* t,
                                const GC_PRIVATE camellia_key_schedule* ks, gc_block in) {
  return camellia_crypt_groups(t, ks, in, 0, camellia_num_groups(ks->key_bits));
}

GC_FN gc_block camellia_decrypt(const GC_PRIVATE camellia_tables* t,
                                const GC_PRIVATE camellia_key_schedule* ks, gc_block in) {
  return camellia_crypt_groups(t, ks, in, 1, camellia_num_groups(ks->key_bits));
}

/* Key schedule helpers. 128-bit values (KL, KR, KA, KB) are four big-endian words, word 0 first. */

/* Subkey number `index` = the upper 64 bits of x <<< rotation (a 128-bit rotation). The lower
 * half of x <<< n is the upper half of x <<< (n + 64), so every RFC table entry is one call. */
GC_FN void camellia_set_subkey(GC_PRIVATE camellia_key_schedule* ks, int index,
                               const GC_PRIVATE uint32_t* x, int rotation) {
  int word_shift = (rotation >> 5) & 3;
  int bit_shift = rotation & 31;
  for (int i = 0; i < 2; ++i) {
    uint32_t high = x[(i + word_shift) & 3];
    uint32_t low = x[(i + word_shift + 1) & 3];
    ks->subkey[2 * index + i] = bit_shift ? (high << bit_shift) | (low >> (32 - bit_shift)) : high;
  }
}

/* Both halves of x <<< rotation into subkeys index, index + 1 (one row of RFC 3713's table). */
GC_FN void camellia_set_subkey_pair(GC_PRIVATE camellia_key_schedule* ks, int index,
                                    const GC_PRIVATE uint32_t* x, int rotation) {
  camellia_set_subkey(ks, index, x, rotation);
  camellia_set_subkey(ks, index + 1, x, rotation + 64);
}

#if !GC_CAMELLIA_SBOX_WORDS
/* Two Feistel steps of the KA/KB derivation: D2 ^= F(D1, sigma_a); D1 ^= F(D2, sigma_b). */
GC_FN void camellia_key_feistel(const GC_PRIVATE camellia_tables* t, GC_PRIVATE uint32_t* d,
                                uint32_t sigma_a_hi, uint32_t sigma_a_lo, uint32_t sigma_b_hi,
                                uint32_t sigma_b_lo) {
  camellia_f_xor(t, d[0], d[1], sigma_a_hi, sigma_a_lo, &d[2], &d[3]);
  camellia_f_xor(t, d[2], d[3], sigma_b_hi, sigma_b_lo, &d[0], &d[1]);
}

/* camellia_expand_key fills ks from a 16-, 24- or 32-byte key. Returns 0, or -1 (ks untouched)
 * for any other key_len. The caller owns ks and should wipe it when done. */
GC_FN int camellia_expand_key(GC_PRIVATE camellia_key_schedule* ks, const uint8_t* key,
                              int key_len, const GC_PRIVATE camellia_tables* t) {
  uint32_t kl[4], kr[4], ka[4], kb[4];
  if (key_len != 16 && key_len != 24 && key_len != 32) return -1;

  for (int i = 0; i < 4; ++i) {
    kl[i] = gc_load_be32(key + 4 * i);
    kr[i] = 0;
  }
  if (key_len == 24) {
    kr[0] = gc_load_be32(key + 16); kr[1] = gc_load_be32(key + 20);
    kr[2] = ~kr[0];                 kr[3] = ~kr[1];
  } else if (key_len == 32) {
    for (int i = 0; i < 4; ++i) kr[i] = gc_load_be32(key + 16 + 4 * i);
  }

  /* KA and KB (RFC 3713 2.2), with the constants Sigma1..Sigma6. */
  for (int i = 0; i < 4; ++i) ka[i] = kl[i] ^ kr[i];
  camellia_key_feistel(t, ka, 0xA09E667Fu, 0x3BCC908Bu, 0xB67AE858u, 0x4CAA73B2u);
  for (int i = 0; i < 4; ++i) ka[i] ^= kl[i];
  camellia_key_feistel(t, ka, 0xC6EF372Fu, 0xE94F82BEu, 0x54FF53A5u, 0xF1D36F1Cu);
  for (int i = 0; i < 4; ++i) kb[i] = ka[i] ^ kr[i];
  camellia_key_feistel(t, kb, 0x10E527FAu, 0xDE682D1Du, 0xB05688C2u, 0xB3E6C1FDu);

  /* RFC 3713 2.4 subkey tables, in encryption order; comments name the subkeys filled. */
  if (key_len == 16) {
    camellia_set_subkey_pair(ks, 0, kl, 0);    /* kw1 kw2 */
    camellia_set_subkey_pair(ks, 2, ka, 0);    /* k1 k2 */
    camellia_set_subkey_pair(ks, 4, kl, 15);   /* k3 k4 */
    camellia_set_subkey_pair(ks, 6, ka, 15);   /* k5 k6 */
    camellia_set_subkey_pair(ks, 8, ka, 30);   /* ke1 ke2 */
    camellia_set_subkey_pair(ks, 10, kl, 45);  /* k7 k8 */
    camellia_set_subkey(ks, 12, ka, 45);       /* k9 = (KA <<< 45)_hi */
    camellia_set_subkey(ks, 13, kl, 60 + 64);  /* k10 = (KL <<< 60)_lo */
    camellia_set_subkey_pair(ks, 14, ka, 60);  /* k11 k12 */
    camellia_set_subkey_pair(ks, 16, kl, 77);  /* ke3 ke4 */
    camellia_set_subkey_pair(ks, 18, kl, 94);  /* k13 k14 */
    camellia_set_subkey_pair(ks, 20, ka, 94);  /* k15 k16 */
    camellia_set_subkey_pair(ks, 22, kl, 111); /* k17 k18 */
    camellia_set_subkey(ks, 24, ka, 111 + 64); /* kw4 */
    camellia_set_subkey(ks, 25, ka, 111);      /* kw3 */
    ks->num_subkeys = 26;
  } else {
    camellia_set_subkey_pair(ks, 0, kl, 0);    /* kw1 kw2 */
    camellia_set_subkey_pair(ks, 2, kb, 0);    /* k1 k2 */
    camellia_set_subkey_pair(ks, 4, kr, 15);   /* k3 k4 */
    camellia_set_subkey_pair(ks, 6, ka, 15);   /* k5 k6 */
    camellia_set_subkey_pair(ks, 8, kr, 30);   /* ke1 ke2 */
    camellia_set_subkey_pair(ks, 10, kb, 30);  /* k7 k8 */
    camellia_set_subkey_pair(ks, 12, kl, 45);  /* k9 k10 */
    camellia_set_subkey_pair(ks, 14, ka, 45);  /* k11 k12 */
    camellia_set_subkey_pair(ks, 16, kl, 60);  /* ke3 ke4 */
    camellia_set_subkey_pair(ks, 18, kr, 60);  /* k13 k14 */
    camellia_set_subkey_pair(ks, 20, kb, 60);  /* k15 k16 */
    camellia_set_subkey_pair(ks, 22, kl, 77);  /* k17 k18 */
    camellia_set_subkey_pair(ks, 24, ka, 77);  /* ke5 ke6 */
    camellia_set_subkey_pair(ks, 26, kr, 94);  /* k19 k20 */
    camellia_set_subkey_pair(ks, 28, ka, 94);  /* k21 k22 */
    camellia_set_subkey_pair(ks, 30, kl, 111); /* k23 k24 */
    camellia_set_subkey(ks, 32, kb, 111 + 64); /* kw4 */
    camellia_set_subkey(ks, 33, kb, 111);      /* kw3 */
    ks->num_subkeys = 34;
  }
  ks->key_bits = 8 * key_len;
  return 0;
}
#endif /* !GC_CAMELLIA_SBOX_WORDS */

#endif
