/* gf128.h: multiplication in GF(2^128) for GHASH (GCM) and, through counter.h, for XTS tweaks.
 *
 * Constant-time. Carry-less products are built from ordinary integer multiplications whose
 * operands keep only every fourth bit ("holes", Thomas Pornin's BearSSL ghash_ctmul and
 * ghash_ctmul64): the carries of an integer product then pile up inside the holes and are masked
 * away, so no table, no secret-dependent branch and no secret-dependent index is used. This
 * assumes the hardware multiplier takes the same time for every operand, which holds on x86-64
 * and on NVIDIA GPUs (not on some small embedded cores).
 *
 * Bit order is GCM's (NIST SP 800-38D): a field element is a 16-byte string read as one 128-bit
 * big-endian integer V, and the coefficient of x^i is bit 127 - i of V, so the "first" bit of the
 * string is x^0. Multiplying two such integers as plain binary polynomials gives the true product
 * reflected (bit k of the 255-bit result is the coefficient of x^(254-k)); one shift left lines it
 * up as 256 reflected bits and the reduction by x^128 + x^7 + x^2 + x + 1 then runs from the low
 * end. No bit reversal of the data is needed for GHASH itself.
 *
 * Two carry-less multipliers, chosen per target by gc_clmul64_full:
 *   ctmul64  64x64->64 multiplies, high halves through bit reversal (best on 64-bit CPUs);
 *   ctmul32  32x32->64 multiplies with Karatsuba (GPUs: one wide IMAD each, no 64-bit multiply).
 * Both are compiled on every target so the host tests check both.
 */
#ifndef GPUCRYPT_CORE_GF128_H
#define GPUCRYPT_CORE_GF128_H

#include "platform.h"

/* A field element in GCM bit order: hi = bytes 0..7 and lo = bytes 8..15, each big-endian.
 * Also used as a plain 128-bit container (hi:lo) for intermediate carry-less products. */
typedef struct gc_gf128 {
  uint64_t hi;
  uint64_t lo;
} gc_gf128;

GC_FN gc_gf128 gc_gf128_make(uint64_t hi, uint64_t lo) {
  gc_gf128 r;
  r.hi = hi;
  r.lo = lo;
  return r;
}

GC_FN gc_gf128 gc_gf128_xor(gc_gf128 a, gc_gf128 b) { return gc_gf128_make(a.hi ^ b.hi, a.lo ^ b.lo); }

/* v * x (NIST SP 800-38D's "rightshift" step, RFC 8452's mulX_GHASH): every coefficient moves up
 * one, so the 128-bit integer shifts right, and x^128 = x^7 + x^2 + x + 1 folds back as 0xE1 in the
 * top byte, masked rather than branched on (constant-time). */
GC_FN gc_gf128 gc_gf128_mul_x(gc_gf128 v) {
  uint64_t carry_mask = (uint64_t)0 - (v.lo & 1u);
  return gc_gf128_make((v.hi >> 1) ^ (carry_mask & 0xE100000000000000ull), (v.lo >> 1) | (v.hi << 63));
}

/* The multiplicative identity: x^0 is the first (most significant) bit. */
GC_FN gc_gf128 gc_gf128_one(void) { return gc_gf128_make((uint64_t)1 << 63, 0); }

GC_FN gc_gf128 gc_gf128_from_block(gc_block b) {
  return gc_gf128_make(((uint64_t)gc_bswap32(b.w[0]) << 32) | gc_bswap32(b.w[1]),
                       ((uint64_t)gc_bswap32(b.w[2]) << 32) | gc_bswap32(b.w[3]));
}

GC_FN gc_block gc_gf128_to_block(gc_gf128 x) {
  gc_block b;
  b.w[0] = gc_bswap32((uint32_t)(x.hi >> 32));
  b.w[1] = gc_bswap32((uint32_t)x.hi);
  b.w[2] = gc_bswap32((uint32_t)(x.lo >> 32));
  b.w[3] = gc_bswap32((uint32_t)x.lo);
  return b;
}

GC_FN uint64_t gc_gf128_load_be64(const GC_GLOBAL uint8_t* p) {
  uint64_t v = 0;
  int i;
  for (i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

/* gc_rev64 reverses the bit order of a 64-bit word. */
GC_FN uint64_t gc_rev64(uint64_t x) {
  x = ((x & 0x5555555555555555ull) << 1) | ((x >> 1) & 0x5555555555555555ull);
  x = ((x & 0x3333333333333333ull) << 2) | ((x >> 2) & 0x3333333333333333ull);
  x = ((x & 0x0F0F0F0F0F0F0F0Full) << 4) | ((x >> 4) & 0x0F0F0F0F0F0F0F0Full);
  x = ((x & 0x00FF00FF00FF00FFull) << 8) | ((x >> 8) & 0x00FF00FF00FF00FFull);
  x = ((x & 0x0000FFFF0000FFFFull) << 16) | ((x >> 16) & 0x0000FFFF0000FFFFull);
  return (x << 32) | (x >> 32);
}

/* gc_bmul64 returns the low 64 bits of the carry-less product x * y. Each of the four masked
 * operands has 16 bits spaced 4 apart; a product bit that is kept collects at most 15 terms below
 * bit 64 (16 only at bit 60, whose carry leaves the word), so carries stay in the masked holes. */
GC_FN uint64_t gc_bmul64(uint64_t x, uint64_t y) {
  const uint64_t m0 = 0x1111111111111111ull, m1 = 0x2222222222222222ull;
  const uint64_t m2 = 0x4444444444444444ull, m3 = 0x8888888888888888ull;
  uint64_t x0 = x & m0, x1 = x & m1, x2 = x & m2, x3 = x & m3;
  uint64_t y0 = y & m0, y1 = y & m1, y2 = y & m2, y3 = y & m3;
  uint64_t z0 = (x0 * y0) ^ (x1 * y3) ^ (x2 * y2) ^ (x3 * y1);
  uint64_t z1 = (x0 * y1) ^ (x1 * y0) ^ (x2 * y3) ^ (x3 * y2);
  uint64_t z2 = (x0 * y2) ^ (x1 * y1) ^ (x2 * y0) ^ (x3 * y3);
  uint64_t z3 = (x0 * y3) ^ (x1 * y2) ^ (x2 * y1) ^ (x3 * y0);
  return (z0 & m0) | (z1 & m1) | (z2 & m2) | (z3 & m3);
}

/* gc_bmul32 returns the full 63-bit carry-less product of two 32-bit words; with 8 bits per
 * masked operand a product bit collects at most 8 terms, which fit in its 4-bit slot. Each
 * product is one 32 x 32 -> 64 multiply (gc_mul_wide_u32, platform.h). */
GC_FN uint64_t gc_bmul32(uint32_t x, uint32_t y) {
  const uint32_t m0 = 0x11111111u, m1 = 0x22222222u, m2 = 0x44444444u, m3 = 0x88888888u;
  uint32_t x0 = x & m0, x1 = x & m1, x2 = x & m2, x3 = x & m3;
  uint32_t y0 = y & m0, y1 = y & m1, y2 = y & m2, y3 = y & m3;
  uint64_t z0 = gc_mul_wide_u32(x0, y0) ^ gc_mul_wide_u32(x1, y3) ^ gc_mul_wide_u32(x2, y2) ^ gc_mul_wide_u32(x3, y1);
  uint64_t z1 = gc_mul_wide_u32(x0, y1) ^ gc_mul_wide_u32(x1, y0) ^ gc_mul_wide_u32(x2, y3) ^ gc_mul_wide_u32(x3, y2);
  uint64_t z2 = gc_mul_wide_u32(x0, y2) ^ gc_mul_wide_u32(x1, y1) ^ gc_mul_wide_u32(x2, y0) ^ gc_mul_wide_u32(x3, y3);
  uint64_t z3 = gc_mul_wide_u32(x0, y3) ^ gc_mul_wide_u32(x1, y2) ^ gc_mul_wide_u32(x2, y1) ^ gc_mul_wide_u32(x3, y0);
  return (z0 & 0x1111111111111111ull) | (z1 & 0x2222222222222222ull) |
         (z2 & 0x4444444444444444ull) | (z3 & 0x8888888888888888ull);
}

/* Full 128-bit carry-less product of two 64-bit words, ctmul64 style: the high half is the
 * reversed low half of the product of the reversed operands, shifted by one. */
GC_FN gc_gf128 gc_clmul64_full_ctmul64(uint64_t x, uint64_t y) {
  return gc_gf128_make(gc_rev64(gc_bmul64(gc_rev64(x), gc_rev64(y))) >> 1, gc_bmul64(x, y));
}

/* Full 128-bit carry-less product of two 64-bit words, ctmul32 style (Karatsuba over halves). */
GC_FN gc_gf128 gc_clmul64_full_ctmul32(uint64_t x, uint64_t y) {
  uint32_t x0 = (uint32_t)x, x1 = (uint32_t)(x >> 32);
  uint32_t y0 = (uint32_t)y, y1 = (uint32_t)(y >> 32);
  uint64_t low = gc_bmul32(x0, y0);
  uint64_t high = gc_bmul32(x1, y1);
  uint64_t middle = gc_bmul32(x0 ^ x1, y0 ^ y1) ^ low ^ high;
  return gc_gf128_make(high ^ (middle >> 32), low ^ (middle << 32));
}

/* gc_gf128_reduce: reflected 255-bit product (v3:v2:v1:v0, v0 lowest) -> field element. The shift
 * by one aligns x^0 with bit 255; the remaining low 128 bits hold x^128..x^255 and are folded in
 * twice with x^128 = x^7 + x^2 + x + 1, written in reflected form as right shifts 1, 2, 7. */
GC_FN gc_gf128 gc_gf128_reduce(uint64_t v3, uint64_t v2, uint64_t v1, uint64_t v0) {
  v3 = (v3 << 1) | (v2 >> 63);
  v2 = (v2 << 1) | (v1 >> 63);
  v1 = (v1 << 1) | (v0 >> 63);
  v0 = v0 << 1;
  v2 ^= v0 ^ (v0 >> 1) ^ (v0 >> 2) ^ (v0 >> 7);
  v1 ^= (v0 << 63) ^ (v0 << 62) ^ (v0 << 57);
  v3 ^= v1 ^ (v1 >> 1) ^ (v1 >> 2) ^ (v1 >> 7);
  v2 ^= (v1 << 63) ^ (v1 << 62) ^ (v1 << 57);
  return gc_gf128_make(v3, v2);
}

/* The 128x128 product is Karatsuba over 64-bit halves: three full 64x64 products. A macro keeps
 * one body for both multipliers without function pointers (which OpenCL C lacks). */
#define GC_GF128_MUL_BODY(clmul64_full)                                                         \
  gc_gf128 low = clmul64_full(a.lo, b.lo);                                                        \
  gc_gf128 high = clmul64_full(a.hi, b.hi);                                                       \
  gc_gf128 middle = clmul64_full(a.lo ^ a.hi, b.lo ^ b.hi);                                       \
  middle.hi ^= low.hi ^ high.hi;                                                                  \
  middle.lo ^= low.lo ^ high.lo;                                                                  \
  return gc_gf128_reduce(high.hi, high.lo ^ middle.hi, low.hi ^ middle.lo, low.lo);

GC_FN gc_gf128 gc_gf128_mul_ctmul64(gc_gf128 a, gc_gf128 b) { GC_GF128_MUL_BODY(gc_clmul64_full_ctmul64) }
GC_FN gc_gf128 gc_gf128_mul_ctmul32(gc_gf128 a, gc_gf128 b) { GC_GF128_MUL_BODY(gc_clmul64_full_ctmul32) }

/* gc_gf128_mul: a * b in GF(2^128), GCM bit order, constant-time, with the multiplier that suits
 * the target (see the file comment). */
GC_FN gc_gf128 gc_gf128_mul(gc_gf128 a, gc_gf128 b) {
#if defined(__CUDA_ARCH__) || defined(__OPENCL_VERSION__)
  return gc_gf128_mul_ctmul32(a, b);
#else
  return gc_gf128_mul_ctmul64(a, b);
#endif
}

/* gc_gf128_pow: h^n by square-and-multiply. Constant-time in h; the exponent is treated as
 * public (it is a block count), so the loop may branch on it. */
GC_FN gc_gf128 gc_gf128_pow(gc_gf128 h, uint64_t n) {
  gc_gf128 result = gc_gf128_one();
  gc_gf128 square = h;
  while (n != 0) {
    if (n & 1u) result = gc_gf128_mul(result, square);
    n >>= 1;
    if (n != 0) square = gc_gf128_mul(square, square);
  }
  return result;
}

/* GHASH (SP 800-38D, 6.4): Y_i = (Y_{i-1} xor X_i) * H, Y_0 = 0.
 *
 * Parallel GHASH: if Y_a is GHASH of blocks A (started from zero) and Y_b is GHASH of the b blocks
 * B that follow (also started from zero), GHASH of A||B is Y_a * H^b xor Y_b. Chunks of one
 * message can therefore be hashed independently and combined in order with gc_ghash_combine; or
 * each chunk can multiply its own result by H^(number of blocks after it) (gc_ghash_shift), after
 * which the chunk results are combined by XOR alone, in any order (a tree or an atomic XOR). */

/* gc_ghash_block: one GHASH step on a 16-byte block given as a field element. */
GC_FN gc_gf128 gc_ghash_block(gc_gf128 y, gc_gf128 h, gc_gf128 x) { return gc_gf128_mul(gc_gf128_xor(y, x), h); }

/* gc_ghash_bytes: continues GHASH from y over len bytes; a final partial block is zero-padded
 * (how GCM pads AAD and ciphertext). The length is public. */
GC_FN gc_gf128 gc_ghash_bytes(gc_gf128 y, gc_gf128 h, const GC_GLOBAL uint8_t* data, size_t len) {
  while (len >= 16) {
    y = gc_ghash_block(y, h, gc_gf128_make(gc_gf128_load_be64(data), gc_gf128_load_be64(data + 8)));
    data += 16;
    len -= 16;
  }
  if (len > 0) {
    uint64_t word[2] = {0, 0};
    size_t i;
    for (i = 0; i < len; ++i) word[i >> 3] |= (uint64_t)data[i] << (56 - 8 * (i & 7));
    y = gc_ghash_block(y, h, gc_gf128_make(word[0], word[1]));
  }
  return y;
}

/* gc_ghash_combine: GHASH of A||B from GHASH(A) = y_a, GHASH(B) = y_b and h_pow_num_blocks_b =
 * H^(number of 16-byte blocks of B, a final partial block counting as one). */
GC_FN gc_gf128 gc_ghash_combine(gc_gf128 y_a, gc_gf128 h_pow_num_blocks_b, gc_gf128 y_b) {
  return gc_gf128_xor(gc_gf128_mul(y_a, h_pow_num_blocks_b), y_b);
}

/* gc_ghash_shift: y * H^num_blocks_after, the contribution of a chunk followed by num_blocks_after
 * blocks; XOR of the shifted results of all chunks equals the GHASH of the whole message. */
GC_FN gc_gf128 gc_ghash_shift(gc_gf128 y, gc_gf128 h, uint64_t num_blocks_after) {
  return gc_gf128_mul(y, gc_gf128_pow(h, num_blocks_after));
}

#endif
