/* counter.h: every counter and tweak computation of the block-cipher modes, in one place.
 *
 *   CTR     the whole 16-byte block is one 128-bit big-endian counter (SP 800-38A, B.1 with
 *           m = 128; what OpenSSL's CTR does); adding an offset carries across all 128 bits and
 *           wraps modulo 2^128.
 *   GCM     inc32: only the last 4 bytes are a big-endian counter, wrapping modulo 2^32 without
 *           touching the first 12 bytes (SP 800-38D, 6.2).
 *   XTS     the tweak is an element of GF(2^128) in IEEE 1619's little-endian convention (byte 0
 *           bit 0 is x^0), and block j of a data unit uses T * alpha^j, alpha = x, modulus
 *           x^128 + x^7 + x^2 + x + 1.
 *
 * Every function takes a starting value and an offset, so a GPU thread or CPU chunk that starts
 * at block j computes its own counter or tweak directly instead of walking from block 0.
 *
 * Constant-time. Counters are public (they derive from the IV), but the arithmetic has no
 * data-dependent branch anyway. The XTS tweak is secret (it is E_K2(i)); it is only shifted,
 * masked and multiplied with gf128.h's constant-time multiplier. alpha^j is computed from j alone
 * (a public block index) and may branch on j.
 */
#ifndef GPUCRYPT_CORE_COUNTER_H
#define GPUCRYPT_CORE_COUNTER_H

#include "platform.h"
#include "gf128.h"

/* gc_ctr128_add: counter + offset, the block read as a 128-bit big-endian integer, mod 2^128. */
GC_FN gc_block gc_ctr128_add(gc_block counter, uint64_t offset) {
  /* word 3 holds bytes 12..15, the least significant big-endian word */
  uint64_t low = ((uint64_t)gc_block_be_word(counter, 2) << 32) | gc_block_be_word(counter, 3);
  uint64_t high = ((uint64_t)gc_block_be_word(counter, 0) << 32) | gc_block_be_word(counter, 1);
  uint64_t new_low = low + offset;
  high += (uint64_t)(new_low < low); /* carry out of the low 64 bits */
  gc_block_set_be_word(&counter, 0, (uint32_t)(high >> 32));
  gc_block_set_be_word(&counter, 1, (uint32_t)high);
  gc_block_set_be_word(&counter, 2, (uint32_t)(new_low >> 32));
  gc_block_set_be_word(&counter, 3, (uint32_t)new_low);
  return counter;
}

/* gc_ctr32_add: GCM's inc32 applied offset times: the last 4 bytes as a big-endian integer plus
 * offset, mod 2^32; bytes 0..11 unchanged. Offsets of 2^32 or more wrap the same way. */
GC_FN gc_block gc_ctr32_add(gc_block counter, uint64_t offset) {
  gc_block_set_be_word(&counter, 3, gc_block_be_word(counter, 3) + (uint32_t)offset);
  return counter;
}

/* gc_xts_mul_alpha: tweak * alpha (IEEE 1619 "doubling"): shift the 128-bit little-endian value
 * left by one and fold the bit shifted out back in as x^7 + x^2 + x + 1 = 0x87. */
GC_FN gc_block gc_xts_mul_alpha(gc_block t) {
  uint32_t carry = t.w[3] >> 31;
  t.w[3] = (t.w[3] << 1) | (t.w[2] >> 31);
  t.w[2] = (t.w[2] << 1) | (t.w[1] >> 31);
  t.w[1] = (t.w[1] << 1) | (t.w[0] >> 31);
  t.w[0] = (t.w[0] << 1) ^ (0x87u & (0u - carry));
  return t;
}

/* gc_spread32: bit i of x moves to bit 2i (squaring a binary polynomial is exactly this). */
GC_FN uint64_t gc_spread32(uint32_t x) {
  uint64_t v = x;
  v = (v | (v << 16)) & 0x0000FFFF0000FFFFull;
  v = (v | (v << 8)) & 0x00FF00FF00FF00FFull;
  v = (v | (v << 4)) & 0x0F0F0F0F0F0F0F0Full;
  v = (v | (v << 2)) & 0x3333333333333333ull;
  v = (v | (v << 1)) & 0x5555555555555555ull;
  return v;
}

/* gc_xts_square: t^2 in the XTS convention. Squaring needs no multiplier: spread the bits, then
 * fold the high 128 bits in with x^128 = x^7 + x^2 + x + 1. The 7 bits that the fold pushes past
 * x^127 are added to the high half first, which folds them in the same pass. */
GC_FN gc_block gc_xts_square(gc_block t) {
  uint64_t p0 = gc_spread32(t.w[0]), p1 = gc_spread32(t.w[1]);
  uint64_t p2 = gc_spread32(t.w[2]), p3 = gc_spread32(t.w[3]);
  uint64_t overflow = (p3 >> 63) ^ (p3 >> 62) ^ (p3 >> 57);
  uint64_t h_lo = p2 ^ overflow, h_hi = p3;
  uint64_t r_lo = p0 ^ h_lo ^ (h_lo << 1) ^ (h_lo << 2) ^ (h_lo << 7);
  uint64_t r_hi = p1 ^ h_hi ^ (h_hi << 1) ^ (h_hi << 2) ^ (h_hi << 7) ^ (h_lo >> 63) ^ (h_lo >> 62) ^
                  (h_lo >> 57);
  gc_block r;
  r.w[0] = (uint32_t)r_lo;
  r.w[1] = (uint32_t)(r_lo >> 32);
  r.w[2] = (uint32_t)r_hi;
  r.w[3] = (uint32_t)(r_hi >> 32);
  return r;
}

/* XTS and GCM use the same field and modulus but mirrored bit orders: reversing all 128 bits of
 * the little-endian XTS integer gives the big-endian GCM integer of the same element. */
GC_FN gc_gf128 gc_xts_to_gf128(gc_block t) {
  uint64_t t_lo = (uint64_t)t.w[0] | ((uint64_t)t.w[1] << 32);
  uint64_t t_hi = (uint64_t)t.w[2] | ((uint64_t)t.w[3] << 32);
  return gc_gf128_make(gc_rev64(t_lo), gc_rev64(t_hi));
}

GC_FN gc_block gc_gf128_to_xts(gc_gf128 x) {
  uint64_t t_lo = gc_rev64(x.hi), t_hi = gc_rev64(x.lo);
  gc_block t;
  t.w[0] = (uint32_t)t_lo;
  t.w[1] = (uint32_t)(t_lo >> 32);
  t.w[2] = (uint32_t)t_hi;
  t.w[3] = (uint32_t)(t_hi >> 32);
  return t;
}

/* gc_xts_mul: a * b in the XTS convention (constant-time, gf128.h's multiplier). */
GC_FN gc_block gc_xts_mul(gc_block a, gc_block b) {
  return gc_gf128_to_xts(gc_gf128_mul(gc_xts_to_gf128(a), gc_xts_to_gf128(b)));
}

/* gc_xts_alpha_pow: alpha^j. Left-to-right over the bits of j: square, and multiply by alpha
 * (one doubling) where the bit is set; about 50 integer operations per bit of j, no multiplier.
 * j is a public block index. */
GC_FN gc_block gc_xts_alpha_pow(uint64_t j) {
  gc_block r;
  int bit = 63;
  r.w[0] = 1u;
  r.w[1] = r.w[2] = r.w[3] = 0u;
  while (bit >= 0 && ((j >> bit) & 1u) == 0) --bit;
  /* The top 7 bits of j give an exponent below 128, which is a single bit: start from it. */
  if (bit >= 0) {
    int start = bit >= 6 ? bit - 6 : 0;
    uint32_t e = (uint32_t)(j >> start); /* < 128 */
    r.w[0] = 0u;
    r.w[e >> 5] = 1u << (e & 31);
    for (bit = start - 1; bit >= 0; --bit) {
      r = gc_xts_square(r);
      if ((j >> bit) & 1u) r = gc_xts_mul_alpha(r);
    }
  }
  return r;
}

/* 128-bit shifts of hi:lo by 0..127 bits (m is public). */
GC_FN gc_gf128 gc_u128_shl(gc_gf128 x, unsigned m) {
  if (m == 0) return x;
  if (m < 64) return gc_gf128_make((x.hi << m) | (x.lo >> (64 - m)), x.lo << m);
  return gc_gf128_make(x.lo << (m - 64), 0);
}
GC_FN gc_gf128 gc_u128_shr(gc_gf128 x, unsigned m) {
  if (m == 0) return x;
  if (m < 64) return gc_gf128_make(x.hi >> m, (x.lo >> m) | (x.hi << (64 - m)));
  return gc_gf128_make(0, x.hi >> (m - 64));
}

/* gc_xts_mul_alpha_pow_small: t * alpha^m for 0 <= m <= GC_XTS_SMALL_SHIFT_MAX, in about 40 integer
 * operations: shift the 128-bit value left by m and fold the m bits that fall off back in with
 * x^128 = x^7 + x^2 + x + 1 (their product with 0x87 stays below x^128 while m <= 120). */
#define GC_XTS_SMALL_SHIFT_MAX 120u
GC_FN gc_block gc_xts_mul_alpha_pow_small(gc_block t, unsigned m) {
  gc_gf128 v = gc_gf128_make((uint64_t)t.w[2] | ((uint64_t)t.w[3] << 32), (uint64_t)t.w[0] | ((uint64_t)t.w[1] << 32));
  if (m == 0) return t;
  gc_gf128 overflow = gc_u128_shr(v, 128u - m);
  v = gc_u128_shl(v, m);
  v = gc_gf128_xor(v, overflow);
  v = gc_gf128_xor(v, gc_u128_shl(overflow, 1));
  v = gc_gf128_xor(v, gc_u128_shl(overflow, 2));
  v = gc_gf128_xor(v, gc_u128_shl(overflow, 7));
  t.w[0] = (uint32_t)v.lo;
  t.w[1] = (uint32_t)(v.lo >> 32);
  t.w[2] = (uint32_t)v.hi;
  t.w[3] = (uint32_t)(v.hi >> 32);
  return t;
}

/* gc_xts_funnel_left: the high word of (hi:lo) << m for 0 <= m < 32, without a branch (lo >> 32 is
 * undefined in C, so it is shifted in two steps); one funnel shift on NVIDIA GPUs. */
GC_FN uint32_t gc_xts_funnel_left(uint32_t hi, uint32_t lo, unsigned m) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_l(lo, hi, m);
#else
  return (hi << m) | ((lo >> 1) >> (31u - m));
#endif
}

/* gc_xts_mul_alpha_pow_below32: t * alpha^m for 0 <= m < 32, as gc_xts_mul_alpha_pow_small but in
 * about 15 word operations and no branch: where a data unit starts inside a GPU lane's walk,
 * neighbouring lanes restart at different m, and a branch on m would run each lane's path in turn.
 * The m bits that fall off the top (o = w3 >> (32 - m), below 2^31) fold back in as
 * o * (x^7 + x^2 + x + 1), which reaches 38 bits: its low word goes into w0 and bits 32..37
 * (o >> 30 from x^2, o >> 25 from x^7) into w1. */
GC_FN gc_block gc_xts_mul_alpha_pow_below32(gc_block t, unsigned m) {
  const uint32_t overflow = gc_xts_funnel_left(0u, t.w[3], m);
  gc_block r;
  r.w[3] = gc_xts_funnel_left(t.w[3], t.w[2], m);
  r.w[2] = gc_xts_funnel_left(t.w[2], t.w[1], m);
  r.w[1] = gc_xts_funnel_left(t.w[1], t.w[0], m) ^ (overflow >> 30) ^ (overflow >> 25);
  r.w[0] = (t.w[0] << m) ^ overflow ^ (overflow << 1) ^ (overflow << 2) ^ (overflow << 7);
  return r;
}

/* gc_xts_tweak_at: the tweak of block j of a data unit whose block-0 tweak (E_K2 of the sector
 * tweak) is t0: t0 * alpha^j. Call it once per range and walk on with gc_xts_mul_alpha.
 * Cost: for j up to 4 * 120 (data units up to 7.5 KiB, every disk sector size) at most four small
 * shifts; beyond that alpha^j by squarings (about 60 operations per bit of j) and one
 * constant-time multiply. */
GC_FN gc_block gc_xts_tweak_at(gc_block t0, uint64_t j) {
  if (j <= 4u * GC_XTS_SMALL_SHIFT_MAX) {
    while (j > GC_XTS_SMALL_SHIFT_MAX) {
      t0 = gc_xts_mul_alpha_pow_small(t0, GC_XTS_SMALL_SHIFT_MAX);
      j -= GC_XTS_SMALL_SHIFT_MAX;
    }
    return gc_xts_mul_alpha_pow_small(t0, (unsigned)j);
  }
  return gc_xts_mul(t0, gc_xts_alpha_pow(j));
}

#endif
