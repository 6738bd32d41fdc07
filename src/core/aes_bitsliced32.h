/* aes_bitsliced32.h: constant-time bitsliced AES-128/192/256 (FIPS-197) on 32 blocks a call, in
 * the full-width bitslice: each of 128 words holds one bit position of all 32 blocks. Meant for
 * GPU threads, which have registers for the whole state (128 words). On an x86-64 core it runs
 * but spills, at about 0.8x the speed of aes_bitsliced.h (g++ -O2).
 *
 * Representation. After aes_bitsliced32_load, q[32c + 8r + i] holds bit i (0 = least significant)
 * of the state byte in row r, column c, block j in bit j of the word. A gc_block's word c is state
 * column c (bytes 4c..4c+3 are rows 0..3), so the load is four 32 x 32 bit transposes, one per
 * block word (two byte-permute stages, three shift-and-select stages), and the store the same
 * four. Every AES step then works on whole words with no rotations:
 *   SubBytes     aes_bitsliced_sbox of aes_bitsliced.h (Boyar-Peralta) on each byte's 8 words;
 *   ShiftRows    nothing: MixColumns and the last round read row r of column c from column c + r,
 *                constant indices once unrolled, so it is register renaming;
 *   MixColumns   per column out_r = {02}(a_r + a_{r+1}) + a_{r+1} + (a_{r+2} + a_{r+3}): 32 XORs
 *                and 44 LOP3s; InvMixColumns is MixColumns after a_0, a_2 += {04}(a_0 + a_2) and
 *                a_1, a_3 += {04}(a_1 + a_3);
 *   AddRoundKey  XOR with mask words: the key holds each round-key bit as 0 or 0xffffffff, 128
 *                words a round; most XORs fold into MixColumns' LOP3s.
 * Bits 5 and 6 of the S-box constant 0x63 travel in round keys 1..Nr instead of through the S-box
 * (see aes_bitsliced32_sub_bytes), which saves the NOTs the compiler would otherwise keep.
 * Decryption is the direct inverse cipher with the same key.
 *
 * Constant-time: no table lookups, no branch and no array index that depends on key or data.
 * Every index is a constant once unrolled, or a function of the public round count; which rounds
 * run depends only on that count. Every operation is AND, OR, XOR, NOT, shift by a constant or
 * byte permute by a constant selector, whose timing is data-independent on the CPUs and GPUs we
 * target. Key expansion is aes_bitsliced_expand_key (table-free) spread into masks with shifts by
 * public amounts and a subtraction from zero.
 *
 * Cost, counted in sm_90 SASS from nvcc 13.0 (-O3, literal round count, 32 blocks loaded from and
 * stored to global memory by the probe kernel, no local memory), instructions per block:
 *                    AES-128   AES-192   AES-256
 *   encrypt            651       768       885    key as a __grid_constant__ parameter
 *   encrypt            633       746       859    key copied to shared memory first
 *   decrypt            809       957      1107    parameter
 *   decrypt            780       924      1067    shared memory
 *   aes_bitsliced.h   1385      1649     ~1960    encrypt, 2 blocks a call x 16, for comparison
 *   aes_bitsliced.h   1583      1890      2197    decrypt
 * 180 to 255 registers. Of AES-128 encryption's 651: S-boxes 450 (90 LOP3 each, 16 a round),
 * MixColumns with AddRoundKey 108, transposes 64, round-key loads 30 (ULDC.64 and UMOV from the
 * parameter bank; LDS.128 from shared memory, 11). */
#ifndef GPUCRYPT_CORE_AES_BITSLICED32_H
#define GPUCRYPT_CORE_AES_BITSLICED32_H

#include "platform.h"
#include "aes_bitsliced.h"

#define AES_BITSLICED32_BLOCKS 32
#define AES_BITSLICED32_WORDS 128 /* state words, and round-key mask words per round */

/* The part of the S-box's affine constant 0x63 that the round keys carry (bits 5 and 6), see
 * aes_bitsliced32_sub_bytes. */
#define AES_BITSLICED32_SBOX_CONSTANT 0x60u

/* aes_bitsliced32_key: round key n, bit i of the byte in row r, column c is the mask word
 * rk[128 n + 32 c + 8 r + i], 0 or 0xffffffff. Round keys 1 to num_rounds have
 * AES_BITSLICED32_SBOX_CONSTANT added to every byte, so they are not plain FIPS-197 round keys;
 * rounds past num_rounds are zero. Serves encryption and decryption alike. 7684 bytes, 4-byte
 * aligned, trivially copyable. */
typedef struct aes_bitsliced32_key {
  uint32_t rk[AES_BITSLICED32_WORDS * (AES_MAX_ROUNDS + 1)];
  int num_rounds;
} aes_bitsliced32_key;

/* aes_bitsliced32_expand_key expands a 16-, 24- or 32-byte key into ks: the key expansion of
 * aes_bitsliced.h, whose round keys (bit i of row r, column c at bit 8r + 2c of word i) are then
 * spread into masks. Returns 0, or -1 for another key_len, in which case ks is untouched. */
GC_FN int aes_bitsliced32_expand_key(GC_PRIVATE aes_bitsliced32_key* ks, const uint8_t* key,
                                     int key_len) {
  aes_bitsliced_key planes;
  if (aes_bitsliced_expand_key(&planes, key, key_len) != 0) return -1;
  for (int round = 0; round <= AES_MAX_ROUNDS; ++round) {
    /* The constant goes into every byte of rounds 1..num_rounds (a public condition). */
    uint32_t sbox_bits =
        round >= 1 && round <= planes.num_rounds ? AES_BITSLICED32_SBOX_CONSTANT : 0;
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 4; ++r)
        for (int i = 0; i < 8; ++i)
          ks->rk[AES_BITSLICED32_WORDS * round + 32 * c + 8 * r + i] =
              0u - (((planes.sk[8 * round + i] >> (8 * r + 2 * c)) ^ (sbox_bits >> i)) & 1u);
  }
  ks->num_rounds = planes.num_rounds;
  return 0;
}

/* Inline LOP3s on CUDA. LLVM rewrites the XOR networks and masked merges below in ways after
 * which ptxas no longer finds the 3-input LOP3s (a select with a constant mask became two ANDs
 * with two constants, two LOP3s; MixColumns' XORs were reassociated into shared pairs), so on CUDA
 * they are written as PTX lop3 instructions. Each truth table is the C expression of the portable
 * fallback evaluated on PTX's operand patterns 0xf0, 0xcc, 0xaa, so the two cannot disagree. */
#define AES_BITSLICED32_SELECT_EXPR(x, y, mask) (((x) & (mask)) | ((y) & ~(mask)))
#define AES_BITSLICED32_XOR3_EXPR(a, b, c) ((a) ^ (b) ^ (c))
#define AES_BITSLICED32_LUT(expr) ((expr(0xf0, 0xcc, 0xaa)) & 0xff)

/* Defines GC_FN uint32_t name(a, b, c) = expr(a, b, c), one lop3 on CUDA. */
#if defined(__CUDA_ARCH__)
  #define AES_BITSLICED32_DEFINE_LOP3(name, expr)                                            \
    GC_FN uint32_t name(uint32_t a, uint32_t b, uint32_t c) {                                \
      uint32_t r;                                                                            \
      asm("lop3.b32 %0, %1, %2, %3, %4;"                                                     \
          : "=r"(r)                                                                          \
          : "r"(a), "r"(b), "r"(c), "n"(AES_BITSLICED32_LUT(expr)));                         \
      return r;                                                                              \
    }
#else
  #define AES_BITSLICED32_DEFINE_LOP3(name, expr) \
    GC_FN uint32_t name(uint32_t a, uint32_t b, uint32_t c) { return expr(a, b, c); }
#endif

/* aes_bitsliced32_select(x, y, mask) = (x & mask) | (y & ~mask); aes_bitsliced32_xor3. */
AES_BITSLICED32_DEFINE_LOP3(aes_bitsliced32_select, AES_BITSLICED32_SELECT_EXPR)
AES_BITSLICED32_DEFINE_LOP3(aes_bitsliced32_xor3, AES_BITSLICED32_XOR3_EXPR)

GC_FN uint32_t aes_bitsliced32_xor2(uint32_t a, uint32_t b) {
  return aes_bitsliced32_xor3(a, b, 0);
}

/* CUDA's __byte_perm(x, y, selector): byte k of the result is byte (selector >> 4k) & 7 of the
 * eight bytes x (0..3), y (4..7). The portable form is the same definition, so the host tests
 * run the selectors the GPU runs. */
GC_FN uint32_t aes_bitsliced32_byte_perm(uint32_t x, uint32_t y, uint32_t selector) {
#if defined(GC_HAS_BYTE_PERM)
  return gc_byte_perm(x, y, selector);
#else
  uint64_t bytes = ((uint64_t)y << 32) | x;
  uint32_t r = 0;
  for (int k = 0; k < 4; ++k) {
    uint32_t byte = (uint32_t)(bytes >> (8 * ((selector >> (4 * k)) & 7))) & 0xffu;
    r |= byte << (8 * k);
  }
  return r;
#endif
}

/* One stage of a 32 x 32 bit transpose on rows x[a] and x[a + shift]: the high `shift` columns
 * of row a trade places with the low `shift` columns of row a + shift (mask selects the low
 * columns of each 2 * shift group). The byte stages are one byte permute per word. */
GC_FN void aes_bitsliced32_transpose_stage(GC_PRIVATE uint32_t* x, int a, int shift,
                                           uint32_t mask) {
  uint32_t lo = x[a], hi = x[a + shift];
  if (shift == 16) {
    x[a] = aes_bitsliced32_byte_perm(lo, hi, 0x5410);
    x[a + shift] = aes_bitsliced32_byte_perm(lo, hi, 0x7632);
  } else if (shift == 8) {
    x[a] = aes_bitsliced32_byte_perm(lo, hi, 0x6240);
    x[a + shift] = aes_bitsliced32_byte_perm(lo, hi, 0x7351);
  } else {
    x[a] = aes_bitsliced32_select(lo, hi << shift, mask);
    x[a + shift] = aes_bitsliced32_select(lo >> shift, hi, mask);
  }
}

/* Transposes the 32 x 32 bit matrix whose row k is x[k] (column j = bit j): afterwards bit j of
 * x[k] is what bit k of x[j] was. Its own inverse. */
GC_FN void aes_bitsliced32_transpose(GC_PRIVATE uint32_t* x) {
  GC_UNROLL
  for (int a = 0; a < 16; ++a) aes_bitsliced32_transpose_stage(x, a, 16, 0x0000ffffu);
  GC_UNROLL
  for (int a = 0; a < 32; a += 16) {
    GC_UNROLL
    for (int b = 0; b < 8; ++b) aes_bitsliced32_transpose_stage(x, a + b, 8, 0x00ff00ffu);
  }
  GC_UNROLL
  for (int a = 0; a < 32; a += 8) {
    GC_UNROLL
    for (int b = 0; b < 4; ++b) aes_bitsliced32_transpose_stage(x, a + b, 4, 0x0f0f0f0fu);
  }
  GC_UNROLL
  for (int a = 0; a < 32; a += 4) {
    GC_UNROLL
    for (int b = 0; b < 2; ++b) aes_bitsliced32_transpose_stage(x, a + b, 2, 0x33333333u);
  }
  GC_UNROLL
  for (int a = 0; a < 32; a += 2) aes_bitsliced32_transpose_stage(x, a, 1, 0x55555555u);
}

/* 32 blocks -> 128 bit-plane words (layout in the file comment). */
GC_FN void aes_bitsliced32_load(GC_PRIVATE uint32_t* q, const GC_PRIVATE gc_block* blocks) {
  GC_UNROLL
  for (int c = 0; c < 4; ++c) {
    GC_UNROLL
    for (int j = 0; j < 32; ++j) q[32 * c + j] = blocks[j].w[c];
    aes_bitsliced32_transpose(q + 32 * c);
  }
}

/* 128 bit-plane words -> 32 blocks; q is clobbered. */
GC_FN void aes_bitsliced32_store(GC_PRIVATE uint32_t* q, GC_PRIVATE gc_block* blocks) {
  GC_UNROLL
  for (int c = 0; c < 4; ++c) {
    aes_bitsliced32_transpose(q + 32 * c);
    GC_UNROLL
    for (int j = 0; j < 32; ++j) blocks[j].w[c] = q[32 * c + j];
  }
}

/* Adds AES_BITSLICED32_SBOX_CONSTANT to one byte's eight words (complements bits 5 and 6). */
GC_FN void aes_bitsliced32_add_sbox_constant(GC_PRIVATE uint32_t* q) {
  GC_UNROLL
  for (int i = 0; i < 8; ++i)
    if ((AES_BITSLICED32_SBOX_CONSTANT >> i) & 1) q[i] = ~q[i];
}

/* SubBytes less part of its affine constant: aes_bitsliced_sbox, then bits 5 and 6 of 0x63 added
 * again, which the compiler cancels against two of the circuit's XNORs. The round keys carry
 * those bits instead: MixColumns maps a column of four equal bytes to itself, so S(x) + 0x60
 * through MixColumns, then a round key k + 0x60, gives what S(x) and k give. On CUDA, where the
 * XOR networks below are inline LOP3s, the NOTs would otherwise be instructions of their own.
 * Bits 0 and 1 stay in the circuit: there LLVM shares one NOT between two outputs (ptxas folds it
 * into LOP3s), and taking them out left two NOTs per S-box. Each byte is corrected right after
 * its S-box; done after all 16, LLVM cancelled only some. */
GC_FN void aes_bitsliced32_sub_bytes(GC_PRIVATE uint32_t* q) {
  GC_UNROLL
  for (int n = 0; n < 16; ++n) {
    aes_bitsliced_sbox(q + 8 * n);
    aes_bitsliced32_add_sbox_constant(q + 8 * n);
  }
}

/* InvSubBytes of a state that carries the constant (it came through a round key): the constant
 * is taken off first, cancelling NOTs at the input of aes_bitsliced_inv_sbox. Decryption keeps the
 * state offset by 0x60 in every byte between rounds (same argument through InvMixColumns, which
 * also maps four equal bytes to themselves), so the same round keys serve. */
GC_FN void aes_bitsliced32_inv_sub_bytes(GC_PRIVATE uint32_t* q) {
  GC_UNROLL
  for (int n = 0; n < 16; ++n) {
    aes_bitsliced32_add_sbox_constant(q + 8 * n);
    aes_bitsliced_inv_sbox(q + 8 * n);
  }
}

/* MixColumns on one column, a[8r + i] = bit i of row r, in place, then (when key is not null)
 * AddRoundKey with key[8r + i]. With t_r = a_r + a_{r+1}, out_r = {02}t_r + a_{r+1} + t_{r+2};
 * {02}x on bit planes moves bit i to i + 1 and adds bit 7 into bits 0, 1, 3 and 4 (0x1b). So
 * each output bit is an XOR of 3 terms, or 4 in bits 1, 3 and 4, plus the key: 8 XORs for the
 * t_r and 11 LOP3s for the outputs of each row, 16 with the key. When t_key is not null, t_r is
 * a_r + a_{r+1} + t_key[8r..8r+7] instead (aes_bitsliced32_mix_column_folded); the two keys are
 * not meant to be given together. */
GC_FN void aes_bitsliced32_mix_column_with(GC_PRIVATE uint32_t* a, const GC_PRIVATE uint32_t* t_key,
                                           const GC_PRIVATE uint32_t* key) {
  uint32_t t[32];
  GC_UNROLL
  for (int k = 0; k < 32; ++k)
    t[k] = t_key ? aes_bitsliced32_xor3(a[k], a[(k + 8) & 31], t_key[k]) : aes_bitsliced32_xor2(a[k], a[(k + 8) & 31]);
  uint32_t out[32];
  GC_UNROLL
  for (int r = 0; r < 4; ++r) {
    const int r1 = 8 * ((r + 1) & 3), r2 = 8 * ((r + 2) & 3);
    GC_UNROLL
    for (int i = 0; i < 8; ++i) {
      const uint32_t doubled = t[8 * r + ((i + 7) & 7)]; /* bit i of {02}t_r, less the 0x1b part */
      uint32_t x;
      if ((0x1au >> i) & 1) { /* bits 1, 3, 4: t_r bit i - 1 and bit 7 */
        x = aes_bitsliced32_xor3(doubled, t[8 * r + 7], a[r1 + i]);
        x = key ? aes_bitsliced32_xor3(x, t[r2 + i], key[8 * r + i]) : x ^ t[r2 + i];
      } else {
        x = aes_bitsliced32_xor3(doubled, a[r1 + i], t[r2 + i]);
        if (key) x ^= key[8 * r + i];
      }
      out[8 * r + i] = x;
    }
  }
  GC_UNROLL
  for (int k = 0; k < 32; ++k) a[k] = out[k];
}

GC_FN void aes_bitsliced32_mix_column(GC_PRIVATE uint32_t* a, const GC_PRIVATE uint32_t* key) {
  aes_bitsliced32_mix_column_with(a, 0, key);
}

/* MixColumns then AddRoundKey, the round key given folded into the t_r (folded, made by
 * aes_bitsliced32_fold_mix_key): t_r = a_r + a_{r+1} + K_r, out_r = {02}t_r + a_{r+1} + t_{r+2}.
 * The K_r cost nothing (the t_r become three-input LOP3s instead of two-input ones), and the key
 * no longer adds a fifth term to the outputs: 11 LOP3s a row instead of 16. */
GC_FN void aes_bitsliced32_mix_column_folded(GC_PRIVATE uint32_t* a, const GC_PRIVATE uint32_t* folded) {
  aes_bitsliced32_mix_column_with(a, folded, 0);
}

/* {02}x of one row's eight bit planes x[i] (bit i of every byte): bit i + 1 takes bit i, and bit 7
 * adds into bits 0, 1, 3 and 4 (0x1b). */
GC_FN void aes_bitsliced32_times2_planes(GC_PRIVATE uint32_t* out, const GC_PRIVATE uint32_t* x) {
  out[0] = x[7];
  GC_UNROLL
  for (int i = 1; i < 8; ++i) out[i] = ((0x1au >> i) & 1) ? x[i - 1] ^ x[7] : x[i - 1];
}

/* aes_bitsliced32_fold_mix_key: the round key k of a MixColumns round (32 plane words, k[8r + i]
 * bit i of row r) as the K of aes_bitsliced32_mix_column_folded. With t_r + K_r in place of t_r,
 * the outputs gain {02}K_r + K_{r+2}, which must be k_r: rows r and r + 2 pair up as
 * {02}K_0 + K_2 = k_0 and {02}K_2 + K_0 = k_2, so {05}K_0 = {02}k_0 + k_2, that is
 * K_0 = {52}({02}k_0 + k_2) ({52} is {05}'s inverse) and K_2 = k_0 + {02}K_0; rows 1 and 3 alike.
 * Per byte column, so any bytes of k (and the S-box constant they carry) fold alike. Linear
 * operations on the key's words only: no branch or index on key data. */
GC_FN void aes_bitsliced32_fold_mix_key(GC_PRIVATE uint32_t* folded, const GC_PRIVATE uint32_t* k) {
  for (int r = 0; r < 2; ++r) {
    const GC_PRIVATE uint32_t* k_r = k + 8 * r;
    const GC_PRIVATE uint32_t* k_r2 = k + 8 * (r + 2);
    uint32_t sum[8], power[8], next[8], fold[8];
    aes_bitsliced32_times2_planes(sum, k_r);
    for (int i = 0; i < 8; ++i) {
      sum[i] ^= k_r2[i]; /* {02}k_r + k_{r+2} */
      fold[i] = 0;
      power[i] = sum[i];
    }
    for (int e = 0; e < 8; ++e) { /* fold = {52} sum: {02}^e sum for the bits 1, 4, 6 of 0x52 */
      if ((0x52 >> e) & 1)
        for (int i = 0; i < 8; ++i) fold[i] ^= power[i];
      aes_bitsliced32_times2_planes(next, power);
      for (int i = 0; i < 8; ++i) power[i] = next[i];
    }
    aes_bitsliced32_times2_planes(next, fold);
    for (int i = 0; i < 8; ++i) {
      folded[8 * r + i] = fold[i];
      folded[8 * (r + 2) + i] = k_r[i] ^ next[i];
    }
  }
}

/* a_0 and a_2 += {04}(a_0 + a_2); a_1 and a_3 += {04}(a_1 + a_3): with MixColumns after it, this
 * is InvMixColumns ({0e 0b 0d 09} = {02 03 01 01} x {05 00 04 00} as circulant matrices).
 * {04}s has bits (s6, s6+s7, s0+s7, s1+s6, s2+s6+s7, s3+s7, s4, s5). */
GC_FN void aes_bitsliced32_inv_mix_first(GC_PRIVATE uint32_t* a) {
  GC_UNROLL
  for (int p = 0; p < 2; ++p) {
    GC_PRIVATE uint32_t* x = a + 8 * p;      /* row p */
    GC_PRIVATE uint32_t* y = a + 8 * p + 16; /* row p + 2 */
    uint32_t s[8];
    GC_UNROLL
    for (int i = 0; i < 8; ++i) s[i] = x[i] ^ y[i];
    const uint32_t s67 = s[6] ^ s[7];
    GC_UNROLL
    for (int j = 0; j < 2; ++j) {
      GC_PRIVATE uint32_t* v = j ? y : x;
      v[0] ^= s[6];
      v[1] ^= s67;
      v[2] = aes_bitsliced32_xor3(v[2], s[0], s[7]);
      v[3] = aes_bitsliced32_xor3(v[3], s[1], s[6]);
      v[4] = aes_bitsliced32_xor3(v[4], s[2], s67);
      v[5] = aes_bitsliced32_xor3(v[5], s[3], s[7]);
      v[6] ^= s[4];
      v[7] ^= s[5];
    }
  }
}

GC_FN void aes_bitsliced32_inv_mix_column(GC_PRIVATE uint32_t* a) {
  aes_bitsliced32_inv_mix_first(a);
  aes_bitsliced32_mix_column(a, 0);
}

/* AddRoundKey with a round key k, then InvMixColumns, as InvMixColumns then the key InvMixColumns(k)
 * (both linear), that key given folded (folded = aes_bitsliced32_fold_mix_key of it): the key's
 * 32 XORs go, and the MixColumns step takes it at no cost. */
GC_FN void aes_bitsliced32_add_key_inv_mix_column_folded(GC_PRIVATE uint32_t* a,
                                                          const GC_PRIVATE uint32_t* folded) {
  aes_bitsliced32_inv_mix_first(a);
  aes_bitsliced32_mix_column_folded(a, folded);
}

/* One middle encryption round after SubBytes: ShiftRows, MixColumns and AddRoundKey with the 128
 * round-key words rk. */
GC_FN void aes_bitsliced32_mix_round(GC_PRIVATE uint32_t* q, const GC_PRIVATE uint32_t* rk) {
  uint32_t next[AES_BITSLICED32_WORDS];
  GC_UNROLL
  for (int c = 0; c < 4; ++c) {
    uint32_t a[32];
    GC_UNROLL
    for (int k = 0; k < 32; ++k) a[k] = q[32 * ((c + (k >> 3)) & 3) + k]; /* ShiftRows */
    aes_bitsliced32_mix_column(a, rk + 32 * c);
    GC_UNROLL
    for (int k = 0; k < 32; ++k) next[32 * c + k] = a[k];
  }
  GC_UNROLL
  for (int k = 0; k < AES_BITSLICED32_WORDS; ++k) q[k] = next[k];
}

/* One middle decryption round after InvSubBytes: InvShiftRows, AddRoundKey, InvMixColumns. */
GC_FN void aes_bitsliced32_inv_mix_round(GC_PRIVATE uint32_t* q, const GC_PRIVATE uint32_t* rk) {
  uint32_t next[AES_BITSLICED32_WORDS];
  GC_UNROLL
  for (int c = 0; c < 4; ++c) {
    uint32_t a[32];
    GC_UNROLL
    for (int k = 0; k < 32; ++k) a[k] = q[32 * ((c - (k >> 3)) & 3) + k] ^ rk[32 * c + k];
    aes_bitsliced32_inv_mix_column(a);
    GC_UNROLL
    for (int k = 0; k < 32; ++k) next[32 * c + k] = a[k];
  }
  GC_UNROLL
  for (int k = 0; k < AES_BITSLICED32_WORDS; ++k) q[k] = next[k];
}

/* ShiftRows (direction +1) or InvShiftRows (-1) and AddRoundKey, for the rounds without
 * MixColumns. */
GC_FN void aes_bitsliced32_shift_rows_add_key(GC_PRIVATE uint32_t* q, const GC_PRIVATE uint32_t* rk,
                                              int direction) {
  uint32_t next[AES_BITSLICED32_WORDS];
  GC_UNROLL
  for (int k = 0; k < AES_BITSLICED32_WORDS; ++k) {
    const int c = k >> 5, r = (k >> 3) & 3;
    next[k] = q[32 * ((c + direction * r) & 3) + (k & 31)] ^ rk[k];
  }
  GC_UNROLL
  for (int k = 0; k < AES_BITSLICED32_WORDS; ++k) q[k] = next[k];
}

GC_FN void aes_bitsliced32_add_round_key(GC_PRIVATE uint32_t* q, const GC_PRIVATE uint32_t* rk) {
  GC_UNROLL
  for (int k = 0; k < AES_BITSLICED32_WORDS; ++k) q[k] ^= rk[k];
}

/* One middle encryption round (1 <= round < num_rounds), and one middle decryption round. */
GC_FN void aes_bitsliced32_encrypt_round(GC_PRIVATE uint32_t* q,
                                         const GC_PRIVATE aes_bitsliced32_key* ks, int round) {
  aes_bitsliced32_sub_bytes(q);
  aes_bitsliced32_mix_round(q, ks->rk + AES_BITSLICED32_WORDS * round);
}

GC_FN void aes_bitsliced32_decrypt_round(GC_PRIVATE uint32_t* q,
                                         const GC_PRIVATE aes_bitsliced32_key* ks, int round) {
  aes_bitsliced32_inv_sub_bytes(q);
  aes_bitsliced32_inv_mix_round(q, ks->rk + AES_BITSLICED32_WORDS * round);
}

/* The middle rounds of an AES encryption (rounds 1 .. num_rounds - 1, upwards) and of a
 * decryption (num_rounds - 1 .. 1, downwards), each a call round_fn(q, ks, round) with a literal
 * round number, for the wide bitslices here and in aes_bitsliced8.h. Written out rather than
 * looped (aes_bitsliced32_encrypt_planes says why); which rounds run depends only on the public
 * num_rounds (10, 12 or 14). */
#define AES_BITSLICED_MIDDLE_ROUNDS_UP(round_fn, q, ks, num_rounds)                    \
  do {                                                                                  \
    round_fn(q, ks, 1); round_fn(q, ks, 2); round_fn(q, ks, 3); round_fn(q, ks, 4);     \
    round_fn(q, ks, 5); round_fn(q, ks, 6); round_fn(q, ks, 7); round_fn(q, ks, 8);     \
    round_fn(q, ks, 9);                                                                 \
    if ((num_rounds) > 10) { round_fn(q, ks, 10); round_fn(q, ks, 11); }                \
    if ((num_rounds) > 12) { round_fn(q, ks, 12); round_fn(q, ks, 13); }                \
  } while (0)
#define AES_BITSLICED_MIDDLE_ROUNDS_DOWN(round_fn, q, ks, num_rounds)                  \
  do {                                                                                  \
    if ((num_rounds) > 12) { round_fn(q, ks, 13); round_fn(q, ks, 12); }                \
    if ((num_rounds) > 10) { round_fn(q, ks, 11); round_fn(q, ks, 10); }                \
    round_fn(q, ks, 9); round_fn(q, ks, 8); round_fn(q, ks, 7); round_fn(q, ks, 6);     \
    round_fn(q, ks, 5); round_fn(q, ks, 4); round_fn(q, ks, 3); round_fn(q, ks, 2);     \
    round_fn(q, ks, 1);                                                                 \
  } while (0)

/* aes_bitsliced32_encrypt_planes encrypts a state already in bit planes (aes_bitsliced32_load's
 * layout), in place: for callers that build the planes themselves (a CTR kernel can make counter
 * planes without a transpose). num_rounds must equal ks->num_rounds; pass a literal (10, 12, 14)
 * so that every round-key index is a constant. The rounds are written out rather than looped: a
 * round is thousands of LLVM instructions, more than nvcc 13.0 fully unrolls under
 * `#pragma unroll`, and the loop of aes_bitsliced.h's form came out unrolled by 4 with a test per
 * round and round keys read by computed index. Which rounds run depends only on the public
 * num_rounds. */
GC_FN void aes_bitsliced32_encrypt_planes(const GC_PRIVATE aes_bitsliced32_key* ks,
                                          GC_PRIVATE uint32_t* q, int num_rounds) {
  aes_bitsliced32_add_round_key(q, ks->rk);
  AES_BITSLICED_MIDDLE_ROUNDS_UP(aes_bitsliced32_encrypt_round, q, ks, num_rounds);
  aes_bitsliced32_sub_bytes(q);
  aes_bitsliced32_shift_rows_add_key(q, ks->rk + AES_BITSLICED32_WORDS * num_rounds, 1);
}

/* aes_bitsliced32_decrypt_planes: the direct inverse cipher on bit planes, in place (the same key
 * serves both directions); num_rounds as for encryption. */
GC_FN void aes_bitsliced32_decrypt_planes(const GC_PRIVATE aes_bitsliced32_key* ks,
                                          GC_PRIVATE uint32_t* q, int num_rounds) {
  aes_bitsliced32_add_round_key(q, ks->rk + AES_BITSLICED32_WORDS * num_rounds);
  AES_BITSLICED_MIDDLE_ROUNDS_DOWN(aes_bitsliced32_decrypt_round, q, ks, num_rounds);
  aes_bitsliced32_inv_sub_bytes(q);
  aes_bitsliced32_shift_rows_add_key(q, ks->rk, -1);
}

/* aes_bitsliced32_encrypt_rounds / aes_bitsliced32_decrypt_rounds: AES_BITSLICED32_BLOCKS blocks
 * in place; num_rounds as above (a literal at the call site). */
GC_FN void aes_bitsliced32_encrypt_rounds(const GC_PRIVATE aes_bitsliced32_key* ks,
                                          GC_PRIVATE gc_block* blocks, int num_rounds) {
  uint32_t q[AES_BITSLICED32_WORDS];
  aes_bitsliced32_load(q, blocks);
  aes_bitsliced32_encrypt_planes(ks, q, num_rounds);
  aes_bitsliced32_store(q, blocks);
}

GC_FN void aes_bitsliced32_decrypt_rounds(const GC_PRIVATE aes_bitsliced32_key* ks,
                                          GC_PRIVATE gc_block* blocks, int num_rounds) {
  uint32_t q[AES_BITSLICED32_WORDS];
  aes_bitsliced32_load(q, blocks);
  aes_bitsliced32_decrypt_planes(ks, q, num_rounds);
  aes_bitsliced32_store(q, blocks);
}

/* aes_bitsliced32_encrypt / aes_bitsliced32_decrypt: the same, the round count from the key. */
GC_FN void aes_bitsliced32_encrypt(const GC_PRIVATE aes_bitsliced32_key* ks,
                                   GC_PRIVATE gc_block* blocks) {
  aes_bitsliced32_encrypt_rounds(ks, blocks, ks->num_rounds);
}

GC_FN void aes_bitsliced32_decrypt(const GC_PRIVATE aes_bitsliced32_key* ks,
                                   GC_PRIVATE gc_block* blocks) {
  aes_bitsliced32_decrypt_rounds(ks, blocks, ks->num_rounds);
}

#endif
