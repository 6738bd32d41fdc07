// header_crypto.cpp: see header_crypto.hpp.
#include "format/header_crypto.hpp"

#include <stdexcept>
#include <string>

#include "gpucrypt/format.hpp"

#if defined(GPUCRYPT_WITH_OPENSSL)
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#endif

namespace gpucrypt::format::detail {

#if defined(GPUCRYPT_WITH_OPENSSL)
void hkdf_sha256(ByteSpan ikm, ByteSpan salt, ByteSpan info, uint8_t* out, size_t len) {
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  EVP_KDF_CTX* ctx = kdf ? EVP_KDF_CTX_new(kdf) : nullptr;
  EVP_KDF_free(kdf);
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<uint8_t*>(ikm.data()), ikm.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<uint8_t*>(salt.data()), salt.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<uint8_t*>(info.data()), info.size()),
      OSSL_PARAM_construct_end()};
  const bool ok = ctx && EVP_KDF_derive(ctx, out, len, params) == 1;
  EVP_KDF_CTX_free(ctx);
  if (!ok) throw std::runtime_error("HKDF-SHA256 failed (OpenSSL)");
}

void hmac_sha256(ByteSpan key, ByteSpan data, uint8_t out[32]) {
  unsigned int mac_len = 0;
  if (!HMAC(EVP_sha256(), key.data(), int(key.size()), data.data(), data.size(), out, &mac_len) || mac_len != 32)
    throw std::runtime_error("HMAC-SHA256 failed (OpenSSL)");
}

void sha256(ByteSpan data, uint8_t out[32]) {
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out, &len, EVP_sha256(), nullptr) != 1 || len != 32)
    throw std::runtime_error("SHA-256 failed (OpenSSL)");
}
void scrypt(ByteSpan passphrase, ByteSpan salt, int log2n, uint8_t out[32]) {
  const uint64_t n = uint64_t(1) << log2n;
  // OpenSSL refuses work needing more than maxmem: allow the V array (128 r N bytes) and its
  // other buffers, once the memory check passed (a process limit it cannot see ends below).
  check_scrypt_memory(log2n);
  const uint64_t needed = 128 * kScryptR * (n + 2) + 128 * kScryptR * kScryptP;
  if (EVP_PBE_scrypt(reinterpret_cast<const char*>(passphrase.data()), passphrase.size(), salt.data(), salt.size(), n,
                     kScryptR, kScryptP, needed + (1 << 20), out, 32) != 1)
    throw FormatError("scrypt work factor 2^" + std::to_string(log2n) + " needs " + std::to_string(needed >> 20) +
                      " MiB of memory, more than this process could allocate");
}
#else
void scrypt(ByteSpan, ByteSpan, int, uint8_t*) {
  throw std::runtime_error("the file format's scrypt needs OpenSSL (this build has none)");
}
void hkdf_sha256(ByteSpan, ByteSpan, ByteSpan, uint8_t*, size_t) {
  throw std::runtime_error("the file format's header needs OpenSSL (HKDF, HMAC); this build has none");
}
void hmac_sha256(ByteSpan, ByteSpan, uint8_t*) {
  throw std::runtime_error("the file format's header needs OpenSSL (HKDF, HMAC); this build has none");
}
void sha256(ByteSpan, uint8_t*) {
  throw std::runtime_error("the file format's header needs OpenSSL (SHA-256); this build has none");
}
#endif

}  // namespace gpucrypt::format::detail
