/* gcm_siv.h: the two pieces of AES-GCM-SIV (RFC 8452) that are not AES: POLYVAL, and the counter
 * that counts in the block's first 4 bytes as a little-endian integer. Portable C for every target
 * (host, CUDA and OpenCL C read this one file).
 *
 * Constant-time. POLYVAL is computed as GHASH through RFC 8452 appendix A's identity,
 *   POLYVAL(H, X_1..X_n) = ByteReverse(GHASH(mulX_GHASH(ByteReverse(H)), ByteReverse(X_1), ...)),
 * on gf128.h's constant-time multiplier; the byte reversals are word moves (a POLYVAL block's two
 * little-endian halves are the GHASH element's two words) and mulX_GHASH reduces with a mask, not
 * a branch. No table, secret-dependent branch or secret-dependent index. Lengths are public.
 *
 * Field elements here are gc_gf128 in GHASH's bit order (gf128.h), so gc_ghash_block, gc_ghash_combine
 * and gc_ghash_shift combine POLYVAL chunks exactly as they combine GHASH chunks. */
#ifndef GPUCRYPT_CORE_GCM_SIV_H
#define GPUCRYPT_CORE_GCM_SIV_H

#include "gf128.h"

/* gc_polyval_from_block: a 16-byte POLYVAL block (gc_block: word i = little-endian bytes 4i..4i+3)
 * as the GHASH element of its byte reversal. */
GC_FN gc_gf128 gc_polyval_from_block(gc_block b) {
  return gc_gf128_make(((uint64_t)b.w[3] << 32) | b.w[2], ((uint64_t)b.w[1] << 32) | b.w[0]);
}

/* gc_polyval_to_block: the inverse: the POLYVAL value's 16 bytes. */
GC_FN gc_block gc_polyval_to_block(gc_gf128 x) {
  gc_block b;
  b.w[0] = (uint32_t)x.lo;
  b.w[1] = (uint32_t)(x.lo >> 32);
  b.w[2] = (uint32_t)x.hi;
  b.w[3] = (uint32_t)(x.hi >> 32);
  return b;
}

/* gc_polyval_key: POLYVAL's H as the GHASH key of the identity: mulX_GHASH(ByteReverse(H)), the
 * multiplication by x in GHASH's bit order (gf128.h's gc_gf128_mul_x). */
GC_FN gc_gf128 gc_polyval_key(gc_block h) { return gc_gf128_mul_x(gc_polyval_from_block(h)); }

/* gc_polyval_bytes: continues POLYVAL from y over len bytes, a final partial block zero-padded
 * (how RFC 8452 pads the AAD and the plaintext); key from gc_polyval_key. */
GC_FN gc_gf128 gc_polyval_bytes(gc_gf128 y, gc_gf128 key, const GC_GLOBAL uint8_t* data, size_t len) {
  while (len > 0) {
    size_t n = len < 16 ? len : 16;
    gc_block b;
    size_t i;
    b.w[0] = b.w[1] = b.w[2] = b.w[3] = 0;
    for (i = 0; i < n; ++i) b.w[i >> 2] |= (uint32_t)data[i] << (8 * (i & 3));
    y = gc_ghash_block(y, key, gc_polyval_from_block(b));
    data += n;
    len -= n;
  }
  return y;
}

/* gc_polyval_length_block: the final POLYVAL input, LE64(bit length of AAD) || LE64(bit length of
 * plaintext). */
GC_FN gc_gf128 gc_polyval_length_block(uint64_t aad_len, uint64_t data_len) {
  return gc_gf128_make(data_len * 8, aad_len * 8);
}

/* gc_ctr32le_add: RFC 8452's counter: the block's first 4 bytes as a little-endian integer plus
 * offset, mod 2^32; bytes 4..15 unchanged. */
GC_FN gc_block gc_ctr32le_add(gc_block counter, uint64_t offset) {
  counter.w[0] += (uint32_t)offset;
  return counter;
}

#endif
