// openssl_gcm.hpp: AES-GCM through OpenSSL's EVP interface, shared by the AEAD object
// (gcm_cpu.cpp) and the CPU batch executor (cpu_batch.cpp).
//
// open verifies the tag BEFORE any plaintext is written, so a failed open leaves the output
// (in place or a caller's buffer) exactly as it was. EVP has no GHASH-only call, so the tag is
// computed with GCM itself: the padded AAD and the padded ciphertext are fed to a GCM encryption
// of zero bytes as its AAD, which runs OpenSSL's GHASH (PCLMULQDQ, no AES over the data) over
// exactly the blocks the real tag hashes; only the final length block differs, and GHASH is
// linear, so the real tag is that tag XOR (L_real XOR L_fed) * H, with H = E_K(0^128) from an ECB
// encryption kept per key. The plaintext pass (a normal EVP decryption, whose own tag check must
// agree) runs only after the tag verified. Cost: one GHASH pass more than a plain decryption
// (bench/gcm_open_cost.py measures it). Messages of at most kScratchOpenMaxLen bytes, where the
// per-call setup outweighs the data, are instead deciphered in one pass into a per-context
// scratch buffer and copied to out only after EVP's tag check (the scratch is wiped after).
//
// Contexts are keyed once (EVP_CipherInit_ex2 with the key) and re-initialised per message with
// the IV only: the AES key schedule and GHASH table are not redone per call.
#pragma once

#if defined(GPUCRYPT_WITH_OPENSSL)
#include <openssl/evp.h>

#include "core/gf128.h"
#include "gpucrypt/cipher.hpp"

namespace gpucrypt::cpu {

// OpenSSL refuses GCM IVs over 128 bytes (GCM_IV_MAX_SIZE); SP 800-38D allows up to 2^61-1.
// Callers route longer nonces to the portable GCM.
inline constexpr size_t kOpenSslGcmMaxIvLen = 128;

// The fetched "aes-N-gcm" and "aes-N-ecb" ciphers (process-wide, fetched once).
const EVP_CIPHER* openssl_aes_gcm_cipher(int key_bits);

// An AES key as the GCM code needs it: a context keyed for GCM and H = E_K(0^128). Not thread-safe:
// one per thread, or lent by a pool (OpenSslGcm in gcm_cpu.cpp).
class OpenSslGcmContext {
 public:
  OpenSslGcmContext();
  ~OpenSslGcmContext();
  OpenSslGcmContext(const OpenSslGcmContext&) = delete;
  OpenSslGcmContext& operator=(const OpenSslGcmContext&) = delete;

  // Expands the key schedule (once per key) and computes H.
  void set_key(int key_bits, const uint8_t* key);
  // nonce: 1..kOpenSslGcmMaxIvLen bytes. Writes ciphertext to out and tag_len bytes to tag.
  void seal(ByteSpan nonce, ByteSpan aad, const uint8_t* in, uint8_t* out, size_t len, uint8_t* tag,
            size_t tag_len);
  // Verifies tag (tag_len bytes, constant-time) over the ciphertext first; only then writes len
  // bytes of plaintext to out (which may be in). Returns false and writes nothing on a mismatch.
  bool open(ByteSpan nonce, ByteSpan aad, const uint8_t* in, uint8_t* out, size_t len, const uint8_t* tag,
            size_t tag_len);

 private:
  static constexpr size_t kScratchOpenMaxLen = 16 * 1024;
  bool open_through_scratch(ByteSpan nonce, ByteSpan aad, const uint8_t* in, uint8_t* out, size_t len,
                            const uint8_t* tag, size_t tag_len);
  void start(ByteSpan nonce, int encrypt);
  void expected_tag(ByteSpan nonce, ByteSpan aad, const uint8_t* ciphertext, size_t len, uint8_t tag[16]);

  EVP_CIPHER_CTX* ctx_;
  gc_gf128 hash_subkey_{};
  size_t iv_len_ = 0;
  uint8_t scratch_[kScratchOpenMaxLen];  // plaintext of a short open until its tag verified
};

}  // namespace gpucrypt::cpu
#endif
