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

/* The AES S-box on eight bit-plane words (q[0] least significant bit). The Boolean function is that
 * of the circuit of Boyar and Peralta, "A new combinational logic minimization technique with
 * applications to cryptology" (SEA 2010, ePrint 2009/191; 32 AND, 83 XOR/XNOR), as BearSSL's aes_ct
 * writes it, re-mapped by ABC (berkeley-abc) onto 75 three-input LUTs: that circuit with output
 * bits 5 and 6 complemented, through `strash; dch -f; if -K 3 -a -E 0.5`, then rounds of
 * `strash; dch; if -K 3 -a; mfs2` (varied cut limits), the smallest of a few hundred runs.
 * Area-oriented LUT mapping duplicates logic where that saves LUTs, so the gates no longer follow
 * the paper's layers and have no names of their own: gN is LUT N in topological order, x0..x7 the
 * paper's inputs (x0 = q[7]). Each LUT is one gc_lop3 (platform.h): on NVIDIA GPUs one LOP3 as
 * inline PTX, which the compiler front end can neither reassociate nor re-share, so the mapping
 * reaches ptxas as mapped:
 * 75 LOP3 (written as plain C, LLVM re-merges the duplicated logic and ptxas makes 83 of it); a
 * two-input LUT repeats its second input as c, which its lut ignores. Bits 5 and 6 are mapped
 * complemented and complemented back with a NOT at the end, which cancels against
 * aes_bitsliced32_add_sbox_constant's NOTs of q[5] and q[6] in the kernels. Checked against
 * FIPS-197 on all 256 inputs. Constant-time: every gate is a bitwise function of whole words (LOP3,
 * AND, XOR, NOT), with data-independent timing; no table, no branch, no data-dependent index. */
GC_FN void aes_bitsliced_sbox(GC_PRIVATE uint32_t* q) {
  uint32_t x0 = q[7], x1 = q[6], x2 = q[5], x3 = q[4], x4 = q[3], x5 = q[2], x6 = q[1], x7 = q[0];
  uint32_t g1 = gc_lop3(x5, x3, x3, 0xc3);
  uint32_t g2 = gc_lop3(g1, x6, x0, 0x69);
  uint32_t g3 = gc_lop3(g2, x4, x1, 0x96);
  uint32_t g4 = gc_lop3(x3, x0, x0, 0x3c);
  uint32_t g5 = gc_lop3(g3, g4, g4, 0xc3);
  uint32_t g6 = gc_lop3(x2, x1, x1, 0xc3);
  uint32_t g7 = gc_lop3(g5, g6, g6, 0x3c);
  uint32_t g8 = gc_lop3(x0, x6, g7, 0x72);
  uint32_t g9 = gc_lop3(g6, x7, x7, 0xc3);
  uint32_t g10 = gc_lop3(g9, x0, x0, 0xc3);
  uint32_t g11 = gc_lop3(g10, g5, x7, 0x09);
  uint32_t g12 = gc_lop3(x5, x0, x0, 0xc3);
  uint32_t g13 = gc_lop3(g4, x6, x4, 0x96);
  uint32_t g14 = gc_lop3(g13, g6, g6, 0xc3);
  uint32_t g15 = gc_lop3(g3, g4, g4, 0x0c);
  uint32_t g16 = gc_lop3(g12, g14, g15, 0xa6);
  uint32_t g17 = gc_lop3(g8, g11, g16, 0x69);
  uint32_t g18 = gc_lop3(g9, x6, g8, 0xa9);
  uint32_t g19 = gc_lop3(g5, g14, g14, 0xc3);
  uint32_t g20 = gc_lop3(g1, g19, g15, 0x59);
  uint32_t g21 = gc_lop3(g18, g20, g20, 0xc3);
  uint32_t g22 = gc_lop3(g13, x7, x7, 0xc3);
  uint32_t g23 = gc_lop3(g9, x6, x6, 0x3c);
  uint32_t g24 = gc_lop3(g22, g23, g12, 0x09);
  uint32_t g25 = gc_lop3(g2, g13, g13, 0xc0);
  uint32_t g26 = gc_lop3(g24, g3, g25, 0x96);
  uint32_t g27 = gc_lop3(g20, g26, g26, 0xc3);
  uint32_t g28 = gc_lop3(g6, x3, x7, 0x28);
  uint32_t g29 = gc_lop3(g15, g25, g28, 0x69);
  uint32_t g30 = gc_lop3(g14, g12, g29, 0xa6);
  uint32_t g31 = gc_lop3(g21, g27, g30, 0xa6);
  uint32_t g32 = gc_lop3(g17, g21, g31, 0x27);
  uint32_t g33 = gc_lop3(g30, g21, g17, 0x8a);
  uint32_t g34 = gc_lop3(g21, g27, g33, 0xa9);
  uint32_t g35 = gc_lop3(g32, g34, g34, 0xc3);
  uint32_t g36 = gc_lop3(g21, g27, g17, 0x59);
  uint32_t g37 = gc_lop3(g30, g27, g36, 0x27);
  uint32_t g38 = gc_lop3(g17, g27, g30, 0x51);
  uint32_t g39 = gc_lop3(g21, g27, g38, 0x6a);
  uint32_t g40 = gc_lop3(g37, g39, g39, 0x3c);
  uint32_t g41 = gc_lop3(g40, g7, g7, 0xc0);
  uint32_t g42 = gc_lop3(g35, g13, g41, 0x95);
  uint32_t g43 = gc_lop3(x6, x0, g40, 0x28);
  uint32_t g44 = gc_lop3(g32, x7, x7, 0xc0);
  uint32_t g45 = gc_lop3(g42, g43, g44, 0x96);
  uint32_t g46 = gc_lop3(g37, g32, g32, 0xc3);
  uint32_t g47 = gc_lop3(g1, g40, g35, 0x06);
  uint32_t g48 = gc_lop3(g46, g4, g47, 0x95);
  uint32_t g49 = gc_lop3(g37, g5, x7, 0x09);
  uint32_t g50 = gc_lop3(g39, g23, g49, 0xa6);
  uint32_t g51 = gc_lop3(g45, g48, g50, 0x69);
  uint32_t g52 = gc_lop3(g39, g9, g9, 0x0c);
  uint32_t g53 = gc_lop3(g48, g52, g52, 0xc3);
  uint32_t g54 = gc_lop3(g34, g39, g39, 0xc3);
  uint32_t g55 = gc_lop3(g40, g35, g19, 0x28);
  uint32_t g56 = gc_lop3(g54, g14, g55, 0x59);
  uint32_t g57 = gc_lop3(g53, g56, g56, 0x3c);
  uint32_t g58 = gc_lop3(g57, g43, g50, 0x96);
  uint32_t g59 = gc_lop3(g37, g10, g10, 0x03);
  uint32_t g60 = gc_lop3(g57, g45, g59, 0x96);
  uint32_t g61 = gc_lop3(g9, x3, g32, 0x28);
  uint32_t g62 = gc_lop3(g34, g23, g12, 0x09);
  uint32_t g63 = gc_lop3(g60, g61, g62, 0x96);
  uint32_t g64 = gc_lop3(g35, g2, g62, 0x95);
  uint32_t g65 = gc_lop3(g53, g64, g64, 0xc3);
  uint32_t g66 = gc_lop3(g34, g22, g65, 0xa9);
  uint32_t g67 = gc_lop3(g66, g49, g44, 0x96);
  uint32_t g68 = gc_lop3(g66, g42, g42, 0xc3);
  uint32_t g69 = gc_lop3(g5, g46, g41, 0xa6);
  uint32_t g70 = gc_lop3(g69, g55, g55, 0x3c);
  uint32_t g71 = gc_lop3(g70, g52, g52, 0x3c);
  uint32_t g72 = gc_lop3(g54, g12, g47, 0xa9);
  uint32_t g73 = gc_lop3(g60, g71, g72, 0x96);
  uint32_t g74 = gc_lop3(g68, g71, g71, 0x3c);
  uint32_t g75 = gc_lop3(g65, g70, g70, 0x3c);
  q[7] = g75;
  q[6] = ~g74;
  q[5] = ~g73;
  q[4] = g68;
  q[3] = g67;
  q[2] = g63;
  q[1] = g58;
  q[0] = g51;
}

/* The AES inverse S-box on eight bit-plane words (q[0] least significant bit), as one circuit of
 * its own. Its Boolean function is Si(y) = B(S(B(y ^ 0x63)) ^ 0x63), B the inverse of the S-box's
 * linear map A (bit i of B(x) is bits i+2, i+5 and i+7, mod 8, of x) and S the forward circuit of
 * Boyar and Peralta as BearSSL's aes_ct writes it: inversion is an involution, so S(x) = A(inv(x))
 * ^ 0x63 gives the inverse. That composite was rebuilt with its top linear layer (affine in the
 * inputs) and its bottom one (affine in the nonlinear signals) re-derived by Paar's greedy XOR
 * pairing, then mapped by ABC (berkeley-abc) onto 76 three-input LUTs: a hill-climb over rounds of
 * `strash; dch; if -K 3 -a; mfs2` (varied cut and mapping options), the smallest of a few thousand
 * runs. As in aes_bitsliced_sbox, gN is LUT N in topological order and x0..x7 are the inputs (x0 =
 * q[7]), x1 and x2 complemented (below); each LUT is one gc_lop3 (platform.h), one LOP3 on NVIDIA
 * GPUs that the compiler keeps as mapped, and a two-input LUT repeats its second input as c. The
 * circuit is mapped for bits 5 and 6 of its input complemented and complements them with a NOT on
 * the way in, which cancels against aes_bitsliced32_add_sbox_constant's NOTs of q[5] and q[6] just
 * before it in the decrypt kernels; the function itself is exactly FIPS-197's inverse S-box, for
 * every caller. Checked against FIPS-197 on all 256 inputs. Constant-time: every gate is a bitwise
 * function of whole words (LOP3, AND, XOR, NOT), with data-independent timing; no table, no
 * branch, no data-dependent index. */
GC_FN void aes_bitsliced_inv_sbox(GC_PRIVATE uint32_t* q) {
  uint32_t x0 = q[7], x1 = ~q[6], x2 = ~q[5], x3 = q[4], x4 = q[3], x5 = q[2], x6 = q[1], x7 = q[0];
  uint32_t g1 = gc_lop3(x1, x0, x0, 0xc3);
  uint32_t g2 = gc_lop3(x7, x6, x6, 0xc3);
  uint32_t g3 = gc_lop3(g1, g2, g2, 0xc3);
  uint32_t g4 = gc_lop3(x4, x3, x3, 0xc3);
  uint32_t g5 = gc_lop3(g4, x6, x5, 0x96);
  uint32_t g6 = gc_lop3(x3, x0, x0, 0x3c);
  uint32_t g7 = gc_lop3(g6, x4, x1, 0x96);
  uint32_t g8 = gc_lop3(g3, x5, x4, 0x69);
  uint32_t g9 = gc_lop3(g8, g4, g4, 0x03);
  uint32_t g10 = gc_lop3(g5, g7, g9, 0x95);
  uint32_t g11 = gc_lop3(g4, g2, g2, 0xc3);
  uint32_t g12 = gc_lop3(x6, x2, x1, 0x96);
  uint32_t g13 = gc_lop3(g11, g12, x4, 0x09);
  uint32_t g14 = gc_lop3(x7, x3, x3, 0xc3);
  uint32_t g15 = gc_lop3(x3, x1, x1, 0xc3);
  uint32_t g16 = gc_lop3(x4, g14, g15, 0xd8);
  uint32_t g17 = gc_lop3(g16, x2, x1, 0x69);
  uint32_t g18 = gc_lop3(g10, g13, g17, 0x69);
  uint32_t g19 = gc_lop3(x5, x2, x2, 0xc3);
  uint32_t g20 = gc_lop3(g3, g19, g15, 0x06);
  uint32_t g21 = gc_lop3(x1, g6, g20, 0xa6);
  uint32_t g22 = gc_lop3(g10, g21, g8, 0x69);
  uint32_t g23 = gc_lop3(x7, x4, x4, 0xc3);
  uint32_t g24 = gc_lop3(g1, g23, g9, 0xa9);
  uint32_t g25 = gc_lop3(g19, x0, x0, 0xc3);
  uint32_t g26 = gc_lop3(g2, g15, g25, 0x28);
  uint32_t g27 = gc_lop3(g26, g20, g20, 0x3c);
  uint32_t g28 = gc_lop3(g24, g27, g23, 0x69);
  uint32_t g29 = gc_lop3(g2, x4, x1, 0x96);
  uint32_t g30 = gc_lop3(g12, g14, g29, 0x28);
  uint32_t g31 = gc_lop3(g24, g13, g30, 0x69);
  uint32_t g32 = gc_lop3(g18, g28, g31, 0x54);
  uint32_t g33 = gc_lop3(g18, g22, g32, 0x56);
  uint32_t g34 = gc_lop3(g18, g22, g28, 0xa6);
  uint32_t g35 = gc_lop3(g18, g31, g34, 0x72);
  uint32_t g36 = gc_lop3(g33, g35, g35, 0xc3);
  uint32_t g37 = gc_lop3(g22, g31, g28, 0x2a);
  uint32_t g38 = gc_lop3(g18, g22, g37, 0x6a);
  uint32_t g39 = gc_lop3(g33, g38, g38, 0x3c);
  uint32_t g40 = gc_lop3(g39, g1, g1, 0x03);
  uint32_t g41 = gc_lop3(g3, g36, g40, 0xa6);
  uint32_t g42 = gc_lop3(g18, g22, g31, 0xa6);
  uint32_t g43 = gc_lop3(g28, g22, g42, 0x8d);
  uint32_t g44 = gc_lop3(g4, g43, g35, 0x09);
  uint32_t g45 = gc_lop3(g35, g2, g15, 0x06);
  uint32_t g46 = gc_lop3(g41, g44, g45, 0x96);
  uint32_t g47 = gc_lop3(g38, g43, g43, 0xc3);
  uint32_t g48 = gc_lop3(g35, g43, g8, 0x82);
  uint32_t g49 = gc_lop3(g11, g47, g48, 0x59);
  uint32_t g50 = gc_lop3(g36, g47, g7, 0x28);
  uint32_t g51 = gc_lop3(g38, g15, g15, 0x03);
  uint32_t g52 = gc_lop3(g49, g50, g51, 0x69);
  uint32_t g53 = gc_lop3(g12, x4, g47, 0x82);
  uint32_t g54 = gc_lop3(g38, g4, x7, 0x06);
  uint32_t g55 = gc_lop3(g53, g54, g54, 0xc3);
  uint32_t g56 = gc_lop3(g36, g47, g5, 0x28);
  uint32_t g57 = gc_lop3(g52, g55, g56, 0x69);
  uint32_t g58 = gc_lop3(g39, g1, g23, 0x09);
  uint32_t g59 = gc_lop3(g52, g58, g58, 0xc3);
  uint32_t g60 = gc_lop3(g19, g15, g36, 0x28);
  uint32_t g61 = gc_lop3(g12, g14, g43, 0x82);
  uint32_t g62 = gc_lop3(g60, g54, g61, 0x69);
  uint32_t g63 = gc_lop3(g6, x1, g33, 0x28);
  uint32_t g64 = gc_lop3(g59, g62, g63, 0x96);
  uint32_t g65 = gc_lop3(g62, g40, g51, 0x96);
  uint32_t g66 = gc_lop3(g35, g25, g25, 0x0c);
  uint32_t g67 = gc_lop3(g33, g6, g66, 0x6a);
  uint32_t g68 = gc_lop3(g49, g67, g45, 0x69);
  uint32_t g69 = gc_lop3(g65, g68, g56, 0x69);
  uint32_t g70 = gc_lop3(g59, g60, g66, 0x69);
  uint32_t g71 = gc_lop3(g29, g43, g63, 0x59);
  uint32_t g72 = gc_lop3(g55, g58, g71, 0x69);
  uint32_t g73 = gc_lop3(g72, g68, g50, 0x69);
  uint32_t g74 = gc_lop3(g41, g67, g48, 0x69);
  uint32_t g75 = gc_lop3(g72, g74, g51, 0x96);
  uint32_t g76 = gc_lop3(g59, g53, g61, 0x69);
  q[7] = g76;
  q[6] = g75;
  q[5] = g73;
  q[4] = g70;
  q[3] = g69;
  q[2] = g64;
  q[1] = g57;
  q[0] = g46;
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
