/* Uses the installed C API: SHA3-256("abc") against FIPS 202's answer, and a GCM round trip. */
#include <stdio.h>
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
  gc_aead_free(aead);
  puts("installed gpucrypt: ok");
  return 0;
}
