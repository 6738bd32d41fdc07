/* Uses the installed C API: SHA3-256("abc") against FIPS 202's answer, a GCM round trip, and an
 * output that overlaps its input only partially (refused by the AEAD calls, taken by a raw cipher
 * update as if the input had been copied first). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpucrypt/gpucrypt.h>

int main(void) {
  static const uint8_t expected[32] = {0x3a, 0x98, 0x5d, 0xa7, 0x4f, 0xe2, 0x25, 0xb2, 0x04, 0x5c, 0x17,
                                       0x2d, 0x6b, 0xd3, 0x90, 0xbd, 0x85, 0x5f, 0x08, 0x6e, 0x3e, 0x9d,
                                       0x52, 0x5b, 0x46, 0xbf, 0xe2, 0x45, 0x11, 0x43, 0x15, 0x32};
  uint8_t digest[32];
  if (gc_hash("sha3-256", (const uint8_t*)"abc", 3, digest, sizeof digest) != GC_OK ||
      memcmp(digest, expected, 32) != 0) {
    fprintf(stderr, "sha3-256 failed: %s\n", gc_last_error());
    return 1;
  }
  uint8_t key[32] = {7}, nonce[12] = {9}, sealed[5 + 16], opened[5];
  gc_aead* aead = NULL;
  if (gc_aead_new(&aead, "aes-256-gcm", key, sizeof key, NULL, NULL) != GC_OK ||
      gc_aead_seal(aead, nonce, 12, NULL, 0, (const uint8_t*)"hello", 5, 16, sealed) != GC_OK ||
      gc_aead_open(aead, nonce, 12, NULL, 0, sealed, sizeof sealed, 16, opened) != GC_OK ||
      memcmp(opened, "hello", 5) != 0) {
    fprintf(stderr, "aes-256-gcm failed: %s\n", gc_last_error());
    return 1;
  }
  sealed[0] ^= 1;
  if (gc_aead_open(aead, nonce, 12, NULL, 0, sealed, sizeof sealed, 16, opened) != GC_ERROR_AUTHENTICATION) {
    fprintf(stderr, "a tampered message opened\n");
    return 1;
  }
  /* out = in - 16 bytes: a shifted view of one buffer. */
  uint8_t buffer[16 + 64 + 16], before[sizeof buffer];
  for (size_t i = 0; i < sizeof buffer; ++i) buffer[i] = (uint8_t)(i * 7 + 1);
  memcpy(before, buffer, sizeof buffer);
  if (gc_aead_seal(aead, nonce, 12, NULL, 0, buffer + 16, 64, 16, buffer) != GC_ERROR_ARGUMENT ||
      memcmp(buffer, before, sizeof buffer) != 0) {
    fprintf(stderr, "a partially overlapping seal was not refused, or wrote\n");
    return 1;
  }
  gc_aead_free(aead);
  /* out = in + 16 over 4 MiB: written straight, each batch of blocks (and each thread's range)
   * would overwrite input not yet read. */
  const size_t len = (size_t)4 << 20;
  uint8_t* data = malloc(len + 16);
  uint8_t* expected_out = malloc(len);
  if (!data || !expected_out) return 1;
  for (size_t i = 0; i < len + 16; ++i) data[i] = (uint8_t)(i * 131 + (i >> 9));
  const uint8_t iv[16] = {1, 2, 3};
  gc_cipher *reference = NULL, *shifted = NULL;
  if (gc_cipher_new(&reference, "aes-128-ctr", 1, key, 16, iv, 16, NULL, NULL) != GC_OK ||
      gc_cipher_new(&shifted, "aes-128-ctr", 1, key, 16, iv, 16, NULL, NULL) != GC_OK ||
      gc_cipher_update(reference, data, expected_out, len) != GC_OK ||
      gc_cipher_update(shifted, data, data + 16, len) != GC_OK || memcmp(data + 16, expected_out, len) != 0) {
    fprintf(stderr, "aes-128-ctr into a shifted view of its input failed: %s\n", gc_last_error());
    return 1;
  }
  gc_cipher_free(reference);
  gc_cipher_free(shifted);
  free(data);
  free(expected_out);
  puts("installed gpucrypt: ok");
  return 0;
}
