/* aes_bitsliced.h: constant-time bitsliced AES-128/192/256 (FIPS-197), the "aes_bitsliced"
 * variant, after the design of Thomas Pornin's BearSSL aes_ct (32-bit words, two blocks a call).
 *
 * Constant-time: no table lookups at all, and no branch or array index depends on key or data,
 * key expansion included (its S-box is the same Boolean circuit; its branches depend only on the
 * word counter and the public key length, as do the round-skipping tests in the round loops).
 * Every operation is AND, XOR, NOT, shift or rotation by a constant, which take data-independent
 * time on the CPUs and GPUs we target. Checked under valgrind memcheck with key and data marked
 * undefined (ctgrind method): no report from expansion, encryption or decryption at -O0 and -O2.
 *
 * Representation. Two blocks are 32 state bytes. After aes_bitsliced_ortho, word q[i] holds bit i
 * of all 32 bytes; within a word, bits 8r..8r+7 belong to state row r, and inside that byte
 * column c takes bits 2c (first block) and 2c+1 (second block). So SubBytes is one evaluation of
 * the S-box circuit on eight words (32 S-boxes in parallel), ShiftRows rotates 2-bit groups
 * inside each row byte, and MixColumns moves rows into place with word rotations by 8 and 16.
 * Cost, counted in sm_90 SASS from nvcc 13.0 for AES-128 with a literal round count: about 1440
 * instructions per block (LOP3 does most of the circuit), against about 760 for aes_ttable with
 * Te0 in constant memory, of which 160 are table loads. Constant time costs about 2x the
 * instructions and needs no table memory.
 */
#ifndef GPUCRYPT_CORE_AES_BITSLICED_H
#define GPUCRYPT_CORE_AES_BITSLICED_H

#include "platform.h"


#define AES_BITSLICED_BLOCKS 2
#ifndef AES_MAX_ROUNDS
  #define AES_MAX_ROUNDS 14 /* AES-256 */
#endif

/* aes_bitsliced_key: round keys already in bitsliced form (eight words per round, the key
 * repeated in both block lanes), so a round key is added with eight XORs. Serves encryption and
 * decryption alike. Words past the used rounds are zero. */
typedef struct aes_bitsliced_key {
  uint32_t sk[8 * (AES_MAX_ROUNDS + 1)];
  int num_rounds;
} aes_bitsliced_key;

/* The AES S-box on eight bit-plane words (q[0] least significant bit), as the circuit of Boyar
 * and Peralta, "A new combinational logic minimization technique with applications to
 * cryptology" (SEA 2010, ePrint 2009/191): 32 AND and 83 XOR/XNOR gates, of which the top map
 * here uses 21 gates of two or three inputs in place of 23. The names x, y, t, z, s
 * are the paper's so the circuit can be checked line by line; the paper numbers bits from the
 * most significant end, hence x0 = q[7]. The three sections are a linear map into GF(2^4)^2
 * coordinates, the shared non-linear inversion, and a linear map back that folds in the affine
 * transform (the XNORs add the constant 0x63). The top map is recomputed for 3-input gates (each
 * y is one XOR of at most three earlier signals, found by a randomized greedy search and checked
 * on all 256 inputs), which the NVIDIA compiler turns into one LOP3 each. Constant-time: only
 * AND, XOR and NOT on whole words, no table, no branch, no data-dependent index. */
GC_FN void aes_bitsliced_sbox(GC_PRIVATE uint32_t* q) {
  uint32_t x0 = q[7], x1 = q[6], x2 = q[5], x3 = q[4], x4 = q[3], x5 = q[2], x6 = q[1], x7 = q[0];
  /* Top linear transformation: the paper's y1..y21, each one 2- or 3-input XOR (one LOP3) of
   * inputs and earlier y values; 21 gates where the paper has 23 two-input XORs. */
  uint32_t y8 = x0 ^ x5;
  uint32_t y21 = x2 ^ x4 ^ y8;
  uint32_t y18 = x6 ^ y21;
  uint32_t y1 = x1 ^ x2 ^ x7;
  uint32_t y7 = x0 ^ y18 ^ y1;
  uint32_t y17 = x2 ^ x3 ^ y8;
  uint32_t y4 = x3 ^ y1;
  uint32_t y9 = x0 ^ x3;
  uint32_t y10 = x7 ^ y7 ^ y17;
  uint32_t y20 = x2 ^ x5 ^ y10;
  uint32_t y16 = x0 ^ y18;
  uint32_t y19 = y8 ^ y10;
  uint32_t y12 = x1 ^ x4 ^ y20;
  uint32_t y13 = x0 ^ x6;
  uint32_t y3 = y4 ^ y12;
  uint32_t y5 = x6 ^ y1;
  uint32_t y2 = x0 ^ y1;
  uint32_t y14 = x3 ^ x5;
  uint32_t y11 = x7 ^ y7;
  uint32_t y15 = y17 ^ y16;
  uint32_t y6 = x7 ^ y15;

  /* Non-linear section: inversion in GF(2^8) via GF(2^4). */
  uint32_t t2 = y12 & y15;
  uint32_t t3 = y3 & y6;
  uint32_t t4 = t3 ^ t2;
  uint32_t t5 = y4 & x7;
  uint32_t t6 = t5 ^ t2;
  uint32_t t7 = y13 & y16;
  uint32_t t8 = y5 & y1;
  uint32_t t9 = t8 ^ t7;
  uint32_t t10 = y2 & y7;
  uint32_t t11 = t10 ^ t7;
  uint32_t t12 = y9 & y11;
  uint32_t t13 = y14 & y17;
  uint32_t t14 = t13 ^ t12;
  uint32_t t15 = y8 & y10;
  uint32_t t16 = t15 ^ t12;
  uint32_t t17 = t4 ^ t14;
  uint32_t t18 = t6 ^ t16;
  uint32_t t19 = t9 ^ t14;
  uint32_t t20 = t11 ^ t16;
  uint32_t t21 = t17 ^ y20;
  uint32_t t22 = t18 ^ y19;
  uint32_t t23 = t19 ^ y21;
  uint32_t t24 = t20 ^ y18;
  uint32_t t25 = t21 ^ t22;
  uint32_t t26 = t21 & t23;
  uint32_t t27 = t24 ^ t26;
  uint32_t t28 = t25 & t27;
  uint32_t t29 = t28 ^ t22;
  uint32_t t30 = t23 ^ t24;
  uint32_t t31 = t22 ^ t26;
  uint32_t t32 = t31 & t30;
  uint32_t t33 = t32 ^ t24;
  uint32_t t34 = t23 ^ t33;
  uint32_t t35 = t27 ^ t33;
  uint32_t t36 = t24 & t35;
  uint32_t t37 = t36 ^ t34;
  uint32_t t38 = t27 ^ t36;
  uint32_t t39 = t29 & t38;
  uint32_t t40 = t25 ^ t39;
  uint32_t t41 = t40 ^ t37;
  uint32_t t42 = t29 ^ t33;
  uint32_t t43 = t29 ^ t40;
  uint32_t t44 = t33 ^ t37;
  uint32_t t45 = t42 ^ t41;
  uint32_t z0 = t44 & y15;
  uint32_t z1 = t37 & y6;
  uint32_t z2 = t33 & x7;
  uint32_t z3 = t43 & y16;
  uint32_t z4 = t40 & y1;
  uint32_t z5 = t29 & y7;
  uint32_t z6 = t42 & y11;
  uint32_t z7 = t45 & y17;
  uint32_t z8 = t41 & y10;
  uint32_t z9 = t44 & y12;
  uint32_t z10 = t37 & y3;
  uint32_t z11 = t33 & y4;
  uint32_t z12 = t43 & y13;
  uint32_t z13 = t40 & y5;
  uint32_t z14 = t29 & y2;
  uint32_t z15 = t42 & y9;
  uint32_t z16 = t45 & y14;
  uint32_t z17 = t41 & y8;

  /* Bottom linear transformation, including the affine constant. */
  uint32_t t46 = z15 ^ z16;
  uint32_t t47 = z10 ^ z11;
  uint32_t t48 = z5 ^ z13;
  uint32_t t49 = z9 ^ z10;
  uint32_t t50 = z2 ^ z12;
  uint32_t t51 = z2 ^ z5;
  uint32_t t52 = z7 ^ z8;
  uint32_t t53 = z0 ^ z3;
  uint32_t t54 = z6 ^ z7;
  uint32_t t55 = z16 ^ z17;
  uint32_t t56 = z12 ^ t48;
  uint32_t t57 = t50 ^ t53;
  uint32_t t58 = z4 ^ t46;
  uint32_t t59 = z3 ^ t54;
  uint32_t t60 = t46 ^ t57;
  uint32_t t61 = z14 ^ t57;
  uint32_t t62 = t52 ^ t58;
  uint32_t t63 = t49 ^ t58;
  uint32_t t64 = z4 ^ t59;
  uint32_t t65 = t61 ^ t62;
  uint32_t t66 = z1 ^ t63;
  uint32_t s0 = t59 ^ t63;
  uint32_t s6 = t56 ^ ~t62;
  uint32_t s7 = t48 ^ ~t60;
  uint32_t t67 = t64 ^ t65;
  uint32_t s3 = t53 ^ t66;
  uint32_t s4 = t51 ^ t66;
  uint32_t s5 = t47 ^ t65;
  uint32_t s1 = t64 ^ ~s3;
  uint32_t s2 = t55 ^ ~t67;
  q[7] = s0;
  q[6] = s1;
  q[5] = s2;
  q[4] = s3;
  q[3] = s4;
  q[2] = s5;
  q[1] = s6;
  q[0] = s7;
}

/* x -> B(x ^ 0x63), where B is the inverse of the S-box's linear map A: bit i of the result is
 * bits i+2, i+5 and i+7 (mod 8) of the input; 0x63 has bits 0, 1, 5 and 6 set. */
GC_FN void aes_bitsliced_inv_affine(GC_PRIVATE uint32_t* q) {
  uint32_t q0 = ~q[0], q1 = ~q[1], q2 = q[2], q3 = q[3];
  uint32_t q4 = q[4], q5 = ~q[5], q6 = ~q[6], q7 = q[7];
  q[0] = q2 ^ q5 ^ q7;
  q[1] = q3 ^ q6 ^ q0;
  q[2] = q4 ^ q7 ^ q1;
  q[3] = q5 ^ q0 ^ q2;
  q[4] = q6 ^ q1 ^ q3;
  q[5] = q7 ^ q2 ^ q4;
  q[6] = q0 ^ q3 ^ q5;
  q[7] = q1 ^ q4 ^ q6;
}

/* Inverse S-box without a second circuit: S(x) = A(inv(x)) ^ 0x63 and inversion is an
 * involution, so Si(y) = B(S(B(y ^ 0x63)) ^ 0x63). Costs 2 x 24 XOR/NOT more than a dedicated
 * circuit; decryption is the less common direction (CTR, GCM, CFB and OFB only encrypt). */
GC_FN void aes_bitsliced_inv_sbox(GC_PRIVATE uint32_t* q) {
  aes_bitsliced_inv_affine(q);
  aes_bitsliced_sbox(q);
  aes_bitsliced_inv_affine(q);
}

/* Exchanges the bits of x selected by ~low_mask with the bits of y selected by low_mask, `shift`
 * positions apart: one stage of a 2x2 bit-matrix transpose. */
GC_FN void aes_bitsliced_swap_bits(GC_PRIVATE uint32_t* q, int x, int y, uint32_t low_mask,
                                   int shift) {
  uint32_t a = q[x], b = q[y];
  q[x] = (a & low_mask) | ((b & low_mask) << shift);
  q[y] = ((a & ~low_mask) >> shift) | (b & ~low_mask);
}

/* Converts between eight words of block data (q[2i] = word i of the first block, q[2i+1] = word
 * i of the second) and eight bit planes. Three transpose stages of 1, 2 and 4 bits make the
 * 8 x 8 bit transpose in every byte position; the map is its own inverse. */
GC_FN void aes_bitsliced_ortho(GC_PRIVATE uint32_t* q) {
  aes_bitsliced_swap_bits(q, 0, 1, 0x55555555u, 1);
  aes_bitsliced_swap_bits(q, 2, 3, 0x55555555u, 1);
  aes_bitsliced_swap_bits(q, 4, 5, 0x55555555u, 1);
  aes_bitsliced_swap_bits(q, 6, 7, 0x55555555u, 1);

  aes_bitsliced_swap_bits(q, 0, 2, 0x33333333u, 2);
  aes_bitsliced_swap_bits(q, 1, 3, 0x33333333u, 2);
  aes_bitsliced_swap_bits(q, 4, 6, 0x33333333u, 2);
  aes_bitsliced_swap_bits(q, 5, 7, 0x33333333u, 2);

  aes_bitsliced_swap_bits(q, 0, 4, 0x0f0f0f0fu, 4);
  aes_bitsliced_swap_bits(q, 1, 5, 0x0f0f0f0fu, 4);
  aes_bitsliced_swap_bits(q, 2, 6, 0x0f0f0f0fu, 4);
  aes_bitsliced_swap_bits(q, 3, 7, 0x0f0f0f0fu, 4);
}

/* ShiftRows on one bit plane: row r (bits 8r..8r+7, two bits per column) rotates right by 2r
 * bits, so column c receives column c + r. */
GC_FN uint32_t aes_bitsliced_shift_rows_plane(uint32_t x) {
  return (x & 0x000000ffu) |
         ((x & 0x0000fc00u) >> 2) | ((x & 0x00000300u) << 6) |
         ((x & 0x00f00000u) >> 4) | ((x & 0x000f0000u) << 4) |
         ((x & 0xc0000000u) >> 6) | ((x & 0x3f000000u) << 2);
}

/* InvShiftRows on one bit plane: row r rotates left by 2r bits. */
GC_FN uint32_t aes_bitsliced_inv_shift_rows_plane(uint32_t x) {
  return (x & 0x000000ffu) |
         ((x & 0x00003f00u) << 2) | ((x & 0x0000c000u) >> 6) |
         ((x & 0x000f0000u) << 4) | ((x & 0x00f00000u) >> 4) |
         ((x & 0x03000000u) << 6) | ((x & 0xfc000000u) >> 2);
}

GC_FN void aes_bitsliced_shift_rows(GC_PRIVATE uint32_t* q) {
  GC_UNROLL
  for (int i = 0; i < 8; ++i) q[i] = aes_bitsliced_shift_rows_plane(q[i]);
}

GC_FN void aes_bitsliced_inv_shift_rows(GC_PRIVATE uint32_t* q) {
  GC_UNROLL
  for (int i = 0; i < 8; ++i) q[i] = aes_bitsliced_inv_shift_rows_plane(q[i]);
}

/* MixColumns. With a_r the row-r byte of a column, out_r = {02}a_r + {03}a_{r+1} + a_{r+2} +
 * a_{r+3}. Rotating a plane right by 8 bits (rot8) brings row r+1 to row r, by 16 bits row r+2,
 * so out = {02}q + {03}rot8(q) + rot16(q + rot8(q)). Multiplying by {02} on bit planes shifts
 * plane i to i+1 and feeds plane 7 back into planes 0, 1, 3 and 4 (x^8 = x^4 + x^3 + x + 1). */
GC_FN void aes_bitsliced_mix_columns(GC_PRIVATE uint32_t* q) {
  uint32_t q0 = q[0], q1 = q[1], q2 = q[2], q3 = q[3], q4 = q[4], q5 = q[5], q6 = q[6], q7 = q[7];
  uint32_t r0 = gc_rotr32(q0, 8), r1 = gc_rotr32(q1, 8), r2 = gc_rotr32(q2, 8);
  uint32_t r3 = gc_rotr32(q3, 8), r4 = gc_rotr32(q4, 8), r5 = gc_rotr32(q5, 8);
  uint32_t r6 = gc_rotr32(q6, 8), r7 = gc_rotr32(q7, 8);
  q[0] = q7 ^ r7 ^ r0 ^ gc_rotr32(q0 ^ r0, 16);
  q[1] = q0 ^ r0 ^ q7 ^ r7 ^ r1 ^ gc_rotr32(q1 ^ r1, 16);
  q[2] = q1 ^ r1 ^ r2 ^ gc_rotr32(q2 ^ r2, 16);
  q[3] = q2 ^ r2 ^ q7 ^ r7 ^ r3 ^ gc_rotr32(q3 ^ r3, 16);
  q[4] = q3 ^ r3 ^ q7 ^ r7 ^ r4 ^ gc_rotr32(q4 ^ r4, 16);
  q[5] = q4 ^ r4 ^ r5 ^ gc_rotr32(q5 ^ r5, 16);
  q[6] = q5 ^ r5 ^ r6 ^ gc_rotr32(q6 ^ r6, 16);
  q[7] = q6 ^ r6 ^ r7 ^ gc_rotr32(q7 ^ r7, 16);
}

/* InvMixColumns, out_r = {0e}a_r + {0b}a_{r+1} + {0d}a_{r+2} + {09}a_{r+3}, written the same way
 * as out = {0e}q + {0b}rot8(q) + rot16({0d}q + {09}rot8(q)); each plane's terms are the bits
 * of those constant multiplications expanded over the eight input planes. */
GC_FN void aes_bitsliced_inv_mix_columns(GC_PRIVATE uint32_t* q) {
  uint32_t q0 = q[0], q1 = q[1], q2 = q[2], q3 = q[3], q4 = q[4], q5 = q[5], q6 = q[6], q7 = q[7];
  uint32_t r0 = gc_rotr32(q0, 8), r1 = gc_rotr32(q1, 8), r2 = gc_rotr32(q2, 8);
  uint32_t r3 = gc_rotr32(q3, 8), r4 = gc_rotr32(q4, 8), r5 = gc_rotr32(q5, 8);
  uint32_t r6 = gc_rotr32(q6, 8), r7 = gc_rotr32(q7, 8);
  q[0] = q5 ^ q6 ^ q7 ^ r0 ^ r5 ^ r7 ^ gc_rotr32(q0 ^ q5 ^ q6 ^ r0 ^ r5, 16);
  q[1] = q0 ^ q5 ^ r0 ^ r1 ^ r5 ^ r6 ^ r7 ^ gc_rotr32(q1 ^ q5 ^ q7 ^ r1 ^ r5 ^ r6, 16);
  q[2] = q0 ^ q1 ^ q6 ^ r1 ^ r2 ^ r6 ^ r7 ^ gc_rotr32(q0 ^ q2 ^ q6 ^ r2 ^ r6 ^ r7, 16);
  q[3] = q0 ^ q1 ^ q2 ^ q5 ^ q6 ^ r0 ^ r2 ^ r3 ^ r5 ^
         gc_rotr32(q0 ^ q1 ^ q3 ^ q5 ^ q6 ^ q7 ^ r0 ^ r3 ^ r5 ^ r7, 16);
  q[4] = q1 ^ q2 ^ q3 ^ q5 ^ r1 ^ r3 ^ r4 ^ r5 ^ r6 ^ r7 ^
         gc_rotr32(q1 ^ q2 ^ q4 ^ q5 ^ q7 ^ r1 ^ r4 ^ r5 ^ r6, 16);
  q[5] = q2 ^ q3 ^ q4 ^ q6 ^ r2 ^ r4 ^ r5 ^ r6 ^ r7 ^
         gc_rotr32(q2 ^ q3 ^ q5 ^ q6 ^ r2 ^ r5 ^ r6 ^ r7, 16);
  q[6] = q3 ^ q4 ^ q5 ^ q7 ^ r3 ^ r5 ^ r6 ^ r7 ^ gc_rotr32(q3 ^ q4 ^ q6 ^ q7 ^ r3 ^ r6 ^ r7, 16);
  q[7] = q4 ^ q5 ^ q6 ^ r4 ^ r6 ^ r7 ^ gc_rotr32(q4 ^ q5 ^ q7 ^ r4 ^ r7, 16);
}

GC_FN void aes_bitsliced_add_round_key(GC_PRIVATE uint32_t* q, const GC_PRIVATE uint32_t* round_key) {
  GC_UNROLL
  for (int i = 0; i < 8; ++i) q[i] ^= round_key[i];
}

/* SubWord for key expansion, through the same circuit: with all eight words equal to w, every
 * plane's byte lanes hold w's bytes, and after the round trip q[0] is SubWord(w). */
GC_FN uint32_t aes_bitsliced_sub_word(uint32_t word) {
  uint32_t q[8];
  GC_UNROLL
  for (int i = 0; i < 8; ++i) q[i] = word;
  aes_bitsliced_ortho(q);
  aes_bitsliced_sbox(q);
  aes_bitsliced_ortho(q);
  return q[0];
}

/* aes_bitsliced_expand_key expands a 16-, 24- or 32-byte key into ks (FIPS-197 key expansion,
 * then each round key is copied into both block lanes and transposed once). Returns 0, or -1
 * for another key_len, in which case ks is untouched. */
GC_FN int aes_bitsliced_expand_key(GC_PRIVATE aes_bitsliced_key* ks, const uint8_t* key,
                                   int key_len) {
  int num_rounds = key_len == 16 ? 10 : key_len == 24 ? 12 : key_len == 32 ? 14 : -1;
  if (num_rounds < 0) return -1;
  int num_key_words = key_len / 4;
  int num_schedule_words = 4 * (num_rounds + 1);
  uint32_t round_constant = 1;
  uint32_t word = 0;
  /* Schedule word i goes to sk[2i] and sk[2i+1]: the block layout aes_bitsliced_ortho expects. */
  for (int i = 0; i < num_schedule_words; ++i) {
    if (i < num_key_words) {
      word = gc_load_le32(key + 4 * i);
    } else {
      if (i % num_key_words == 0) {
        /* RotWord on a little-endian word is a right rotation by one byte. */
        word = aes_bitsliced_sub_word(gc_rotr32(word, 8)) ^ round_constant;
        round_constant = ((round_constant << 1) ^ ((round_constant >> 7) * 0x11bu)) & 0xffu;
      } else if (num_key_words > 6 && i % num_key_words == 4) {
        word = aes_bitsliced_sub_word(word);
      }
      word ^= ks->sk[2 * (i - num_key_words)];
    }
    ks->sk[2 * i] = word;
    ks->sk[2 * i + 1] = word;
  }
  for (int i = 0; i < 2 * num_schedule_words; i += 8) aes_bitsliced_ortho(ks->sk + i);
  for (int i = 2 * num_schedule_words; i < 8 * (AES_MAX_ROUNDS + 1); ++i) ks->sk[i] = 0;
  ks->num_rounds = num_rounds;
  return 0;
}

GC_FN void aes_bitsliced_load(GC_PRIVATE uint32_t* q, const GC_PRIVATE gc_block* blocks) {
  GC_UNROLL
  for (int i = 0; i < 4; ++i) {
    q[2 * i] = blocks[0].w[i];
    q[2 * i + 1] = blocks[1].w[i];
  }
  aes_bitsliced_ortho(q);
}

GC_FN void aes_bitsliced_store(GC_PRIVATE uint32_t* q, GC_PRIVATE gc_block* blocks) {
  aes_bitsliced_ortho(q);
  GC_UNROLL
  for (int i = 0; i < 4; ++i) {
    blocks[0].w[i] = q[2 * i];
    blocks[1].w[i] = q[2 * i + 1];
  }
}

/* aes_bitsliced_encrypt_rounds encrypts AES_BITSLICED_BLOCKS blocks in place. num_rounds must
 * equal ks->num_rounds; pass a literal (10, 12, 14) to get an unrolled loop with constant
 * round-key indices. The loop runs to AES_MAX_ROUNDS and skips the rounds past num_rounds, so
 * that its trip count is constant before inlining: nvcc 13.0 left a `round < num_rounds` loop
 * rolled even after inlining a literal, which put the round keys in local memory. */
GC_FN void aes_bitsliced_encrypt_rounds(const GC_PRIVATE aes_bitsliced_key* ks,
                                        GC_PRIVATE gc_block* blocks, int num_rounds) {
  uint32_t q[8];
  aes_bitsliced_load(q, blocks);
  aes_bitsliced_add_round_key(q, ks->sk);
  GC_UNROLL
  for (int round = 1; round < AES_MAX_ROUNDS; ++round) {
    if (round < num_rounds) {
      aes_bitsliced_sbox(q);
      aes_bitsliced_shift_rows(q);
      aes_bitsliced_mix_columns(q);
      aes_bitsliced_add_round_key(q, ks->sk + 8 * round);
    }
  }
  aes_bitsliced_sbox(q);
  aes_bitsliced_shift_rows(q);
  aes_bitsliced_add_round_key(q, ks->sk + 8 * num_rounds);
  aes_bitsliced_store(q, blocks);
}

/* aes_bitsliced_decrypt_rounds decrypts AES_BITSLICED_BLOCKS blocks in place (the direct inverse
 * cipher, so the same key serves both directions); num_rounds as for encryption. */
GC_FN void aes_bitsliced_decrypt_rounds(const GC_PRIVATE aes_bitsliced_key* ks,
                                        GC_PRIVATE gc_block* blocks, int num_rounds) {
  uint32_t q[8];
  aes_bitsliced_load(q, blocks);
  aes_bitsliced_add_round_key(q, ks->sk + 8 * num_rounds);
  GC_UNROLL
  for (int step = 1; step < AES_MAX_ROUNDS; ++step) {
    int round = num_rounds - step; /* counts down from num_rounds - 1 to 1 */
    if (round > 0) {
      aes_bitsliced_inv_shift_rows(q);
      aes_bitsliced_inv_sbox(q);
      aes_bitsliced_add_round_key(q, ks->sk + 8 * round);
      aes_bitsliced_inv_mix_columns(q);
    }
  }
  aes_bitsliced_inv_shift_rows(q);
  aes_bitsliced_inv_sbox(q);
  aes_bitsliced_add_round_key(q, ks->sk);
  aes_bitsliced_store(q, blocks);
}

/* aes_bitsliced_encrypt / aes_bitsliced_decrypt: the same, with the round count from the key. */
GC_FN void aes_bitsliced_encrypt(const GC_PRIVATE aes_bitsliced_key* ks, GC_PRIVATE gc_block* blocks) {
  aes_bitsliced_encrypt_rounds(ks, blocks, ks->num_rounds);
}

GC_FN void aes_bitsliced_decrypt(const GC_PRIVATE aes_bitsliced_key* ks, GC_PRIVATE gc_block* blocks) {
  aes_bitsliced_decrypt_rounds(ks, blocks, ks->num_rounds);
}

#endif
