/* aes_bitsliced8.h: constant-time bitsliced AES-128/192/256 (FIPS-197) on 8 blocks a call in 32
 * words, the "aes_bitsliced8" variant. Meant for GPU threads: the state is 32 registers, so a
 * thread needs about 100 in all, where aes_bitsliced32.h's 128-word state hits the 255-register
 * limit and spills (docs/performance.md), and it does the S-box work of aes_bitsliced32.h per
 * block, against twice that for aes_bitsliced.h (2 blocks a call, so every word carries half the
 * S-box inputs it could).
 *
 * Representation. After aes_bitsliced8_load, q[8r + i] holds bit i (0 = least significant) of
 * state row r for all 8 blocks and 4 columns: the byte of column c, block b at bit 8c + b. Rows
 * are separate words and columns are bytes of a word, which is what makes every step cheap:
 *   SubBytes     aes_bitsliced_sbox of aes_bitsliced.h (Boyar-Peralta) on each row's 8 words:
 *                4 circuits a round for 8 blocks, as many per block as aes_bitsliced32.h;
 *   ShiftRows    row r moves columns by r, a byte rotation of each of its words (one PRMT or
 *                funnel shift; 24 a round, row 0 stays);
 *   MixColumns   aes_bitsliced32_mix_column of aes_bitsliced32.h, which takes one column's rows as
 *                separate words; here the same 32 words carry all four columns of 8 blocks, so it
 *                runs unchanged on the whole state, XORs and LOP3s with no rotation at all;
 *   AddRoundKey  XOR with 32 mask words a round: all 8 blocks share the key, so round-key byte
 *                (r, c) bit i is the byte 0x00 or 0xff at bits 8c..8c+7 of word 8r + i. In the
 *                MixColumns rounds the key is folded into MixColumns' sums t_r instead
 *                (aes_bitsliced32_fold_mix_key; ks->mk, and ks->dk for decryption), where it costs
 *                nothing: 76 instructions a round for MixColumns and the key against 96 with the
 *                key as a fifth term of the outputs. CTR leaves the last round key to the kernel,
 *                which adds it with the data (ks->key_last), and XTS both outer round keys, which
 *                go in with the tweak (aes_bitsliced8_encrypt_rounds_unkeyed).
 * The transposed choice, columns as words and rows as bytes, would turn ShiftRows into byte
 * permutes between words and give MixColumns word rotations (two or more per word, as in
 * aes_bitsliced.h); rows as words costs 24 rotations a round and nothing else. Bits 5 and 6
 * of the S-box constant travel in round keys 1..Nr (aes_bitsliced32.h's
 * AES_BITSLICED32_SBOX_CONSTANT; its sub_bytes comment says why that is sound and what it saves).
 * Decryption is the direct inverse cipher with the same key.
 *
 * Load and store: a gc_block's word c is state column c (bytes 4c..4c+3 are rows 0..3), so
 * putting block b's word c at q[8c + b] and transposing the 32 x 32 bit matrix
 * (aes_bitsliced32_transpose: two byte-permute stages, three shift-and-select stages, 256
 * instructions) gives the layout above; the store is the same transpose back. 32 instructions a
 * block each way.
 *
 * Constant-time: no table lookups, no branch and no array index that depends on key or data.
 * Every index is a constant once unrolled, or a function of the public round count; which rounds
 * run depends only on that count. Every operation is AND, OR, XOR, NOT, shift or rotation by a
 * constant or byte permute by a constant selector, whose timing is data-independent on the CPUs
 * and GPUs we target. Key expansion is aes_bitsliced_expand_key (table-free), spread into byte
 * masks with shifts by public amounts, a subtraction from zero and ANDs.
 *
 * CTR (aes_bitsliced8_ctr_stride32) skips the load and its transpose: the 8 counters of a GPU
 * lane differ in few bits, so they are built straight into bit planes with round key 0 folded in
 * (aes_bitsliced8_counter_planes says how; 25 instructions a block instead of about 45).
 *
 * Cost, counted in sm_90 SASS from nvcc 13.0 in the loop of the CUDA bulk kernels (-O3, literal
 * round count, key read from the __grid_constant__ parameter, 8 blocks loaded and stored per
 * lane), instructions per block, and those on the integer ALU pipe that bounds the kernels:
 *                    all      ALU pipe
 *   AES-128 encrypt  621      582       (ECB)
 *   AES-128 CTR      605      565       counters as bit planes, data loaded and XORed
 *   AES-256 CTR      823      775
 * Decryption runs the inverse S-box circuit (76 LOP3, aes_bitsliced.h): the AES-128 ECB-decrypt
 * kernel has 4684 LOP3 per 8 blocks (5584 when it wrapped the forward circuit in two linear maps).
 * Since (2026-12-01) the folded round keys: the round loop is 376 LOP3 and 24 SHF for 8 blocks
 * (396 and 24 before), 2.5 ALU instructions a block a round fewer, and CTR's last AddRoundKey
 * merged into the data XOR; same-call A/B on an H200: AES-128-CTR 3.467 -> 3.607 Tbps, AES-256
 * 2.580 -> 2.692, ECB decrypt 1.05x (its AddRoundKey folded into InvMixColumns), XTS 1.03-1.05x.
 * Nsight Compute, AES-128-CTR through the library: 540 ALU-pipe instructions a block (583 in all),
 * the pipe at 94.7% of its peak, 9.0 SM-cycles a block.
 * Before the explicit-LOP3 S-box and the counter planes (2026-11-27): AES-128 CTR 701 / 652. Of
 * AES-128 CTR's 565: S-boxes 375 (75 LOP3 each, aes_bitsliced.h; 4 a round), MixColumns with
 * AddRoundKey about 95, the output transpose 26, ShiftRows 30 (SHF; rotations as IMAD pairs on
 * the FMA pipe measured 1-6% slower), counter planes 13. 64 registers for CTR (a few words of
 * loop state spill, outside the rounds), 79 for ECB. Round keys copied to shared memory first
 * (LDS.128) made CTR slower: not worth a per-CTA copy and barrier.
 *
 * On CUDA the middle rounds run as a loop (AES_BITSLICED8_GPU_ROUNDS_PER_STEP, one round a step),
 * not written out: written out, an AES-128 kernel is ten copies of a ~420-instruction round
 * (about 70 KB of SASS with the load and store), and the 8 warps a scheduler keeps, each at its
 * own place in it, missed the instruction cache: Nsight Compute put 4.8 of every 13.8 cycles
 * between a warp's instructions on instruction fetch (2026-11-25). A loop of one round (~7 KB)
 * stays in the cache; its round keys are read by computed index from the kernel parameter (LDC,
 * off the ALU pipe). Same-call A/B on an H200 (2026-11-30): AES-128-CTR 2.98 -> 3.48 Tbps
 * (1.17x), AES-256-CTR 2.16 -> 2.59 (1.20x), ECB 1.13-1.18x, XTS 1.17-1.26x; two rounds a step
 * ran 0.97x of one; ShiftRows on the FMA pipe (IMAD.HI + IMAD by 2^8r for rows 1, 1-2 or 1-3)
 * was still slower with the loop (CTR 0.99x, 0.985x, 0.98x). OpenCL keeps the rounds written out
 * (not measured there). */
#ifndef GPUCRYPT_CORE_AES_BITSLICED8_H
#define GPUCRYPT_CORE_AES_BITSLICED8_H

#include "platform.h"
#include "aes_bitsliced.h"
#include "aes_bitsliced32.h"
#include "counter.h"

/* AES_BITSLICED8_GPU_ROUNDS_PER_STEP (CUDA device code): n >= 1 runs the middle rounds as a loop
 * of n rounds a step, round keys read by computed index ((num_rounds - 1) % n rounds first, one at
 * a time); 0 writes every round out. */
#if !defined(AES_BITSLICED8_GPU_ROUNDS_PER_STEP)
  #define AES_BITSLICED8_GPU_ROUNDS_PER_STEP 1
#endif

#define AES_BITSLICED8_BLOCKS 8
#define AES_BITSLICED8_WORDS 32 /* state words, and round-key mask words per round */

/* aes_bitsliced8_key: round key n, bit i of the byte in row r, column c is byte c of mask word
 * rk[32 n + 8 r + i], 0x00 or 0xff. Round keys 1 to num_rounds have AES_BITSLICED32_SBOX_CONSTANT
 * added to every byte, so they are not plain FIPS-197 round keys; rounds past num_rounds are zero.
 * Serves encryption and decryption alike. 5284 bytes, 4-byte aligned, trivially copyable. */
typedef struct aes_bitsliced8_key {
  uint32_t rk[AES_BITSLICED8_WORDS * (AES_MAX_ROUNDS + 1)];
  int num_rounds;
  /* Round key 0 (the cipher key's first 16 bytes) as a gc_block's words, for CTR's counters built
   * straight into bit planes (aes_bitsliced8_ctr_stride32): XORed into the counter before it is
   * spread, it costs 4 instructions instead of 32. */
  uint32_t key0[4];
  /* Round keys 1 to num_rounds - 1 (those of the MixColumns rounds) folded for encryption's
   * aes_bitsliced32_mix_column_folded: mk[32 (n - 1) + 8 r + i] is the K of round key n; dk the
   * same of InvMixColumns(round key n), for decryption's
   * aes_bitsliced32_add_key_inv_mix_column_folded. */
  uint32_t mk[AES_BITSLICED8_WORDS * (AES_MAX_ROUNDS - 1)];
  uint32_t dk[AES_BITSLICED8_WORDS * (AES_MAX_ROUNDS - 1)];
  /* The last round key (round num_rounds, with the constant) as a gc_block's words, for CTR, which
   * adds it to the keystream blocks after the output transpose: there it merges into the XOR with
   * the data (one three-input LOP3 a word), where in bit planes it was 32 XORs of its own. */
  uint32_t key_last[4];
} aes_bitsliced8_key;

/* aes_bitsliced8_expand_key expands a 16-, 24- or 32-byte key into ks: the key expansion of
 * aes_bitsliced.h, whose round keys (bit i of row r, column c at bit 8r + 2c of word i) are then
 * spread into byte masks. Returns 0, or -1 for another key_len, in which case ks is untouched. */
GC_FN int aes_bitsliced8_expand_key(GC_PRIVATE aes_bitsliced8_key* ks, const uint8_t* key,
                                    int key_len) {
  aes_bitsliced_key planes;
  if (aes_bitsliced_expand_key(&planes, key, key_len) != 0) return -1;
  for (int round = 0; round <= AES_MAX_ROUNDS; ++round) {
    /* The constant goes into every byte of rounds 1..num_rounds (a public condition). */
    uint32_t sbox_bits =
        round >= 1 && round <= planes.num_rounds ? AES_BITSLICED32_SBOX_CONSTANT : 0;
    for (int r = 0; r < 4; ++r)
      for (int i = 0; i < 8; ++i) {
        uint32_t mask = 0;
        for (int c = 0; c < 4; ++c) {
          uint32_t bit = ((planes.sk[8 * round + i] >> (8 * r + 2 * c)) ^ (sbox_bits >> i)) & 1u;
          mask |= (0u - bit) & (0xffu << (8 * c));
        }
        ks->rk[AES_BITSLICED8_WORDS * round + 8 * r + i] = mask;
      }
  }
  ks->num_rounds = planes.num_rounds;
  for (int round = 1; round < AES_MAX_ROUNDS; ++round) {
    uint32_t inv_mixed[AES_BITSLICED8_WORDS];
    for (int k = 0; k < AES_BITSLICED8_WORDS; ++k) inv_mixed[k] = ks->rk[AES_BITSLICED8_WORDS * round + k];
    aes_bitsliced32_inv_mix_column(inv_mixed);
    aes_bitsliced32_fold_mix_key(ks->mk + AES_BITSLICED8_WORDS * (round - 1),
                                 ks->rk + AES_BITSLICED8_WORDS * round);
    aes_bitsliced32_fold_mix_key(ks->dk + AES_BITSLICED8_WORDS * (round - 1), inv_mixed);
  }
  for (int c = 0; c < 4; ++c) {
    uint32_t word = 0;
    for (int r = 0; r < 4; ++r)
      for (int i = 0; i < 8; ++i)
        word |= ((ks->rk[AES_BITSLICED8_WORDS * planes.num_rounds + 8 * r + i] >> (8 * c)) & 1u) << (8 * r + i);
    ks->key_last[c] = word;
  }
  ks->key0[0] = gc_load_le32(key);
  ks->key0[1] = gc_load_le32(key + 4);
  ks->key0[2] = gc_load_le32(key + 8);
  ks->key0[3] = gc_load_le32(key + 12);
  return 0;
}

/* 8 blocks -> 32 bit-plane words (layout in the file comment). */
GC_FN void aes_bitsliced8_load(GC_PRIVATE uint32_t* q, const GC_PRIVATE gc_block* blocks) {
  GC_UNROLL
  for (int c = 0; c < 4; ++c) {
    GC_UNROLL
    for (int b = 0; b < AES_BITSLICED8_BLOCKS; ++b) q[8 * c + b] = blocks[b].w[c];
  }
  aes_bitsliced32_transpose(q);
}

/* 32 bit-plane words -> 8 blocks; q is clobbered. */
GC_FN void aes_bitsliced8_store(GC_PRIVATE uint32_t* q, GC_PRIVATE gc_block* blocks) {
  aes_bitsliced32_transpose(q);
  GC_UNROLL
  for (int c = 0; c < 4; ++c) {
    GC_UNROLL
    for (int b = 0; b < AES_BITSLICED8_BLOCKS; ++b) blocks[b].w[c] = q[8 * c + b];
  }
}

/* SubBytes less bits 5 and 6 of its constant (aes_bitsliced32_sub_bytes says why), and its
 * inverse on a state that carries them: one circuit per row. */
GC_FN void aes_bitsliced8_sub_bytes(GC_PRIVATE uint32_t* q) {
  GC_UNROLL
  for (int r = 0; r < 4; ++r) {
    aes_bitsliced_sbox(q + 8 * r);
    aes_bitsliced32_add_sbox_constant(q + 8 * r);
  }
}

GC_FN void aes_bitsliced8_inv_sub_bytes(GC_PRIVATE uint32_t* q) {
  GC_UNROLL
  for (int r = 0; r < 4; ++r) {
    aes_bitsliced32_add_sbox_constant(q + 8 * r);
    aes_bitsliced_inv_sbox(q + 8 * r);
  }
}

/* ShiftRows: row r's column c takes what was in column c + r, so byte c of each row-r word takes
 * byte c + r: a right rotation by 8r bits. InvShiftRows rotates left. */
GC_FN void aes_bitsliced8_shift_rows(GC_PRIVATE uint32_t* q) {
  GC_UNROLL
  for (int k = 8; k < AES_BITSLICED8_WORDS; ++k) q[k] = gc_rotr32(q[k], 8 * (k >> 3));
}

GC_FN void aes_bitsliced8_inv_shift_rows(GC_PRIVATE uint32_t* q) {
  GC_UNROLL
  for (int k = 8; k < AES_BITSLICED8_WORDS; ++k) q[k] = gc_rotl32(q[k], 8 * (k >> 3));
}

GC_FN void aes_bitsliced8_add_round_key(GC_PRIVATE uint32_t* q, const GC_PRIVATE uint32_t* rk) {
  GC_UNROLL
  for (int k = 0; k < AES_BITSLICED8_WORDS; ++k) q[k] ^= rk[k];
}

/* One middle encryption round (1 <= round < num_rounds): SubBytes, ShiftRows, then MixColumns
 * with AddRoundKey folded in (the round key as mk's K, which saves 5 LOP3s a row). */
GC_FN void aes_bitsliced8_encrypt_round(GC_PRIVATE uint32_t* q,
                                        const GC_PRIVATE aes_bitsliced8_key* ks, int round) {
  aes_bitsliced8_sub_bytes(q);
  aes_bitsliced8_shift_rows(q);
  aes_bitsliced32_mix_column_folded(q, ks->mk + AES_BITSLICED8_WORDS * (round - 1));
}

/* One middle decryption round: InvSubBytes, InvShiftRows (the two commute), AddRoundKey,
 * InvMixColumns (the last two as one step with the key folded, dk). */
GC_FN void aes_bitsliced8_decrypt_round(GC_PRIVATE uint32_t* q,
                                        const GC_PRIVATE aes_bitsliced8_key* ks, int round) {
  aes_bitsliced8_inv_sub_bytes(q);
  aes_bitsliced8_inv_shift_rows(q);
  aes_bitsliced32_add_key_inv_mix_column_folded(q, ks->dk + AES_BITSLICED8_WORDS * (round - 1));
}

/* aes_bitsliced8_encrypt_planes encrypts a state already in bit planes (aes_bitsliced8_load's
 * layout), in place. num_rounds must equal ks->num_rounds; pass a literal (10, 12, 14) so that
 * every round-key index is a constant where the rounds are written out
 * (AES_BITSLICED_MIDDLE_ROUNDS_UP of aes_bitsliced32.h; on CUDA the rounds loop, the file comment
 * says why). Which rounds run depends only on the public num_rounds. */
GC_FN void aes_bitsliced8_encrypt_keyed_planes(const GC_PRIVATE aes_bitsliced8_key* ks,
                                               GC_PRIVATE uint32_t* q, int num_rounds);

GC_FN void aes_bitsliced8_encrypt_planes(const GC_PRIVATE aes_bitsliced8_key* ks,
                                         GC_PRIVATE uint32_t* q, int num_rounds) {
  aes_bitsliced8_add_round_key(q, ks->rk);
  aes_bitsliced8_encrypt_keyed_planes(ks, q, num_rounds);
}

/* aes_bitsliced8_encrypt_keyed_planes: the same on a state that already has round key 0 added
 * (rounds 1..num_rounds); aes_bitsliced8_encrypt_keyed_planes_but_last_key leaves out the last
 * AddRoundKey (the caller adds ks->key_last to the blocks it stores). */
GC_FN void aes_bitsliced8_encrypt_keyed_planes_but_last_key(const GC_PRIVATE aes_bitsliced8_key* ks,
                                                            GC_PRIVATE uint32_t* q, int num_rounds) {
#if defined(__CUDA_ARCH__) && AES_BITSLICED8_GPU_ROUNDS_PER_STEP > 0
  int round = 1;
  GC_UNROLL
  for (int k = 0; k < AES_BITSLICED8_GPU_ROUNDS_PER_STEP - 1; ++k)
    if (k < (num_rounds - 1) % AES_BITSLICED8_GPU_ROUNDS_PER_STEP) aes_bitsliced8_encrypt_round(q, ks, round++);
  #pragma unroll 1
  for (; round < num_rounds; round += AES_BITSLICED8_GPU_ROUNDS_PER_STEP) {
    GC_UNROLL
    for (int k = 0; k < AES_BITSLICED8_GPU_ROUNDS_PER_STEP; ++k) aes_bitsliced8_encrypt_round(q, ks, round + k);
  }
#else
  AES_BITSLICED_MIDDLE_ROUNDS_UP(aes_bitsliced8_encrypt_round, q, ks, num_rounds);
#endif
  aes_bitsliced8_sub_bytes(q);
  aes_bitsliced8_shift_rows(q);
}

GC_FN void aes_bitsliced8_encrypt_keyed_planes(const GC_PRIVATE aes_bitsliced8_key* ks,
                                               GC_PRIVATE uint32_t* q, int num_rounds) {
  aes_bitsliced8_encrypt_keyed_planes_but_last_key(ks, q, num_rounds);
  aes_bitsliced8_add_round_key(q, ks->rk + AES_BITSLICED8_WORDS * num_rounds);
}

/* aes_bitsliced8_decrypt_planes: the direct inverse cipher on bit planes, in place (the same key
 * serves both directions); num_rounds as for encryption. aes_bitsliced8_decrypt_planes_unkeyed
 * leaves out the first and the last AddRoundKey (round keys num_rounds and 0: ks->key_last and
 * ks->key0 as blocks, for a caller that adds them with its own XORs). */
GC_FN void aes_bitsliced8_decrypt_planes_unkeyed(const GC_PRIVATE aes_bitsliced8_key* ks,
                                                 GC_PRIVATE uint32_t* q, int num_rounds) {
#if defined(__CUDA_ARCH__) && AES_BITSLICED8_GPU_ROUNDS_PER_STEP > 0
  int round = num_rounds - 1;
  GC_UNROLL
  for (int k = 0; k < AES_BITSLICED8_GPU_ROUNDS_PER_STEP - 1; ++k)
    if (k < (num_rounds - 1) % AES_BITSLICED8_GPU_ROUNDS_PER_STEP) aes_bitsliced8_decrypt_round(q, ks, round--);
  #pragma unroll 1
  for (; round >= 1; round -= AES_BITSLICED8_GPU_ROUNDS_PER_STEP) {
    GC_UNROLL
    for (int k = 0; k < AES_BITSLICED8_GPU_ROUNDS_PER_STEP; ++k) aes_bitsliced8_decrypt_round(q, ks, round - k);
  }
#else
  AES_BITSLICED_MIDDLE_ROUNDS_DOWN(aes_bitsliced8_decrypt_round, q, ks, num_rounds);
#endif
  aes_bitsliced8_inv_sub_bytes(q);
  aes_bitsliced8_inv_shift_rows(q);
}

GC_FN void aes_bitsliced8_decrypt_planes(const GC_PRIVATE aes_bitsliced8_key* ks,
                                         GC_PRIVATE uint32_t* q, int num_rounds) {
  aes_bitsliced8_add_round_key(q, ks->rk + AES_BITSLICED8_WORDS * num_rounds);
  aes_bitsliced8_decrypt_planes_unkeyed(ks, q, num_rounds);
  aes_bitsliced8_add_round_key(q, ks->rk);
}

/* aes_bitsliced8_encrypt_rounds / aes_bitsliced8_decrypt_rounds: AES_BITSLICED8_BLOCKS blocks in
 * place; num_rounds as above (a literal at the call site). */
GC_FN void aes_bitsliced8_encrypt_rounds(const GC_PRIVATE aes_bitsliced8_key* ks,
                                         GC_PRIVATE gc_block* blocks, int num_rounds) {
  uint32_t q[AES_BITSLICED8_WORDS];
  aes_bitsliced8_load(q, blocks);
  aes_bitsliced8_encrypt_planes(ks, q, num_rounds);
  aes_bitsliced8_store(q, blocks);
}

GC_FN void aes_bitsliced8_decrypt_rounds(const GC_PRIVATE aes_bitsliced8_key* ks,
                                         GC_PRIVATE gc_block* blocks, int num_rounds) {
  uint32_t q[AES_BITSLICED8_WORDS];
  aes_bitsliced8_load(q, blocks);
  aes_bitsliced8_decrypt_planes(ks, q, num_rounds);
  aes_bitsliced8_store(q, blocks);
}

/* aes_bitsliced8_encrypt_rounds_unkeyed / aes_bitsliced8_decrypt_rounds_unkeyed: the same without
 * the first and the last AddRoundKey, which the caller adds to the blocks (encryption: ks->key0
 * before, ks->key_last after; decryption the other way round). XTS adds them with its tweak, where
 * they merge into its XORs: in bit planes they were 64 XORs for 8 blocks. */
GC_FN void aes_bitsliced8_encrypt_rounds_unkeyed(const GC_PRIVATE aes_bitsliced8_key* ks,
                                                 GC_PRIVATE gc_block* blocks, int num_rounds) {
  uint32_t q[AES_BITSLICED8_WORDS];
  aes_bitsliced8_load(q, blocks);
  aes_bitsliced8_encrypt_keyed_planes_but_last_key(ks, q, num_rounds);
  aes_bitsliced8_store(q, blocks);
}

GC_FN void aes_bitsliced8_decrypt_rounds_unkeyed(const GC_PRIVATE aes_bitsliced8_key* ks,
                                                 GC_PRIVATE gc_block* blocks, int num_rounds) {
  uint32_t q[AES_BITSLICED8_WORDS];
  aes_bitsliced8_load(q, blocks);
  aes_bitsliced8_decrypt_planes_unkeyed(ks, q, num_rounds);
  aes_bitsliced8_store(q, blocks);
}

/* aes_bitsliced8_counter_planes: the state aes_bitsliced8_load and AddRoundKey 0 would make of the
 * 8 CTR counter blocks first + 32 b (b = 0..7, 128-bit big-endian counters), built without
 * making the blocks or transposing them. first's bytes 12..14 must not all be 0xff (then the
 * carry could reach byte 11; aes_bitsliced8_ctr_stride32 takes the transposing path there).
 *
 * Why it is cheap: the 8 counters differ only where adding 32 b changes them. Byte 15 is
 * l + 32 b mod 256 (l its value in block 0): bits 0..4 stay l's, and bits 5..7 count
 * (l >> 5) + b mod 8, so across the 8 blocks each of those bits is a fixed pattern (0xaa, 0xcc,
 * 0xf0 for a plain count) rotated by l >> 5. Blocks b >= 8 - (l >> 5) carry one into bytes
 * 12..14, which flips the low bits of that big-endian number up to its lowest zero. Every other
 * bit is the same in all 8 blocks, so its plane byte is 0x00 or 0xff: a byte sign-spread of the
 * bit shifted to the top of its byte. Per 8 blocks that is 32 spreads, 24 carry corrections and
 * a few setup operations, against 256 transpose instructions and 8 counter additions.
 *
 * Constant-time: the counter is not secret, and the key enters only through XORs. */
GC_FN void aes_bitsliced8_counter_planes(GC_PRIVATE uint32_t* q, const GC_PRIVATE aes_bitsliced8_key* ks,
                                         gc_block first) {
  const uint32_t l5 = first.w[3] >> 29; /* bits 5..7 of byte 15 */
  /* Block 0's counter with those bits cleared (they vary by block), plus round key 0. */
  const uint32_t a0 = first.w[0] ^ ks->key0[0], a1 = first.w[1] ^ ks->key0[1];
  const uint32_t a2 = first.w[2] ^ ks->key0[2], a3 = (first.w[3] & 0x1fffffffu) ^ ks->key0[3];
  /* The bits of bytes 12..14 that the carry flips, in place, and the blocks it reaches as a mask
   * in byte 3 (column 3, where bytes 12..15 sit in each plane). */
  const uint32_t n = gc_bswap32(first.w[3]) >> 8;
  const uint32_t flips = gc_bswap32((n ^ (n + 1)) << 8);
  const uint32_t carried = (0xff00u >> l5) << 24;
  /* rows[r] byte c = byte (row r, column c) of a: a 4 x 4 byte transpose. */
  uint32_t rows[4];
#if defined(GC_HAS_BYTE_PERM)
  {
    const uint32_t lo01 = gc_byte_perm(a0, a1, 0x5140u), lo23 = gc_byte_perm(a2, a3, 0x5140u);
    const uint32_t hi01 = gc_byte_perm(a0, a1, 0x7362u), hi23 = gc_byte_perm(a2, a3, 0x7362u);
    rows[0] = gc_byte_perm(lo01, lo23, 0x5410u);
    rows[1] = gc_byte_perm(lo01, lo23, 0x7632u);
    rows[2] = gc_byte_perm(hi01, hi23, 0x5410u);
    rows[3] = gc_byte_perm(hi01, hi23, 0x7632u);
  }
#else
  GC_UNROLL
  for (int r = 0; r < 4; ++r)
    rows[r] = ((a0 >> (8 * r)) & 0xffu) | (((a1 >> (8 * r)) & 0xffu) << 8) |
              (((a2 >> (8 * r)) & 0xffu) << 16) | (((a3 >> (8 * r)) & 0xffu) << 24);
#endif
  GC_UNROLL
  for (int r = 0; r < 4; ++r) {
    /* Row r's byte of `flips` in byte 3 (row 3 has none: byte 15 never carries in). */
    const uint32_t row_flips = r < 3 ? (flips >> (8 * r)) << 24 : 0u;
    GC_UNROLL
    for (int i = 0; i < 8; ++i) {
      uint32_t plane = gc_byte_sign_spread(rows[r] << (7 - i));
      if (r < 3) plane ^= gc_byte_sign_spread(row_flips << (7 - i)) & carried;
      q[8 * r + i] = plane;
    }
  }
  /* Bits 5..7 of byte 15: the count (l >> 5) + b mod 8 across the blocks. */
  q[29] ^= ((0xaaaau >> l5) & 0xffu) << 24;
  q[30] ^= ((0xccccu >> l5) & 0xffu) << 24;
  q[31] ^= ((0xf0f0u >> l5) & 0xffu) << 24;
}

/* aes_bitsliced8_ctr_stride32: CTR's keystream (128-bit big-endian counters, FIPS-197 AES) for the
 * 8 counter blocks first + 32 b, b = 0..7, into out[b]: the blocks of one GPU lane when a warp's
 * 32 lanes take consecutive blocks (src/backends/cuda/kernels.cuh). num_rounds as for
 * aes_bitsliced8_encrypt_planes. Counters are built as bit planes (aes_bitsliced8_counter_planes)
 * unless first's bytes 12..14 are all 0xff, one counter in 2^24, where the 8 blocks are made and
 * transposed instead; the branch depends on the counter only, which is public.
 * aes_bitsliced8_ctr_stride32_but_last_key leaves out the last round key (ks->key_last, the same
 * for every block), for a caller that adds it with its data (the CUDA bulk kernels). */
GC_FN void aes_bitsliced8_ctr_stride32_but_last_key(const GC_PRIVATE aes_bitsliced8_key* ks, gc_block first,
                                                    GC_PRIVATE gc_block* out, int num_rounds) {
  uint32_t q[AES_BITSLICED8_WORDS];
  if ((first.w[3] & 0x00ffffffu) != 0x00ffffffu) {
    aes_bitsliced8_counter_planes(q, ks, first);
  } else {
    GC_UNROLL
    for (int b = 0; b < AES_BITSLICED8_BLOCKS; ++b) out[b] = gc_ctr128_add(first, 32u * (uint32_t)b);
    aes_bitsliced8_load(q, out);
    aes_bitsliced8_add_round_key(q, ks->rk);
  }
  aes_bitsliced8_encrypt_keyed_planes_but_last_key(ks, q, num_rounds);
  aes_bitsliced8_store(q, out);
}

GC_FN void aes_bitsliced8_ctr_stride32(const GC_PRIVATE aes_bitsliced8_key* ks, gc_block first,
                                       GC_PRIVATE gc_block* out, int num_rounds) {
  aes_bitsliced8_ctr_stride32_but_last_key(ks, first, out, num_rounds);
  GC_UNROLL
  for (int b = 0; b < AES_BITSLICED8_BLOCKS; ++b) {
    GC_UNROLL
    for (int c = 0; c < 4; ++c) out[b].w[c] ^= ks->key_last[c];
  }
}

/* aes_bitsliced8_encrypt / aes_bitsliced8_decrypt: the same, the round count from the key. */
GC_FN void aes_bitsliced8_encrypt(const GC_PRIVATE aes_bitsliced8_key* ks,
                                  GC_PRIVATE gc_block* blocks) {
  aes_bitsliced8_encrypt_rounds(ks, blocks, ks->num_rounds);
}

GC_FN void aes_bitsliced8_decrypt(const GC_PRIVATE aes_bitsliced8_key* ks,
                                  GC_PRIVATE gc_block* blocks) {
  aes_bitsliced8_decrypt_rounds(ks, blocks, ks->num_rounds);
}

#endif
