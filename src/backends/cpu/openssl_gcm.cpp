// openssl_gcm.cpp: see openssl_gcm.hpp.
#include "backends/cpu/openssl_gcm.hpp"

#if defined(GPUCRYPT_WITH_OPENSSL)
#include <algorithm>
#include <cstring>
#include <string>

#include <openssl/crypto.h>

#include "modes/gcm.hpp"

namespace gpucrypt::cpu {

namespace {

[[noreturn]] void fail(const char* what) { throw std::runtime_error(std::string("OpenSSL GCM failed: ") + what); }

struct FetchedAes {
  EVP_CIPHER* gcm[3] = {};
  EVP_CIPHER* ecb[3] = {};
};

// EVP_CIPHER objects are immutable and shareable; fetching takes a lock and a lookup, so each is
// fetched once per process and never freed (they outlive every context).
const FetchedAes& fetched_aes() {
  static const FetchedAes fetched = [] {
    FetchedAes f;
    const int bits[3] = {128, 192, 256};
    for (int i = 0; i < 3; ++i) {
      const std::string prefix = "aes-" + std::to_string(bits[i]);
      f.gcm[i] = EVP_CIPHER_fetch(nullptr, (prefix + "-gcm").c_str(), nullptr);
      f.ecb[i] = EVP_CIPHER_fetch(nullptr, (prefix + "-ecb").c_str(), nullptr);
    }
    return f;
  }();
  return fetched;
}

int key_size_index(int key_bits) {
  if (key_bits != 128 && key_bits != 192 && key_bits != 256)
    throw std::invalid_argument("AES key size must be 128, 192 or 256 bits, got " + std::to_string(key_bits));
  return (key_bits - 128) / 64;
}

// EVP lengths are int: feed at most 1 GiB per call. out == nullptr feeds AAD.
void update(EVP_CIPHER_CTX* ctx, const uint8_t* in, uint8_t* out, size_t len) {
  constexpr size_t kMaxPerCall = size_t(1) << 30;
  while (len > 0) {
    const size_t step = std::min(len, kMaxPerCall);
    int written = 0;
    if (!EVP_CipherUpdate(ctx, out, &written, in, static_cast<int>(step))) fail(out ? "update" : "aad");
    in += step;
    if (out) out += step;
    len -= step;
  }
}

size_t padding_to_block(size_t len) { return (16 - len % 16) % 16; }

}  // namespace

const EVP_CIPHER* openssl_aes_gcm_cipher(int key_bits) {
  const EVP_CIPHER* cipher = fetched_aes().gcm[key_size_index(key_bits)];
  if (!cipher) throw std::runtime_error("OpenSSL has no aes-" + std::to_string(key_bits) + "-gcm");
  return cipher;
}

OpenSslGcmContext::OpenSslGcmContext() : ctx_(EVP_CIPHER_CTX_new()) {
  if (!ctx_) fail("context");
}

OpenSslGcmContext::~OpenSslGcmContext() {
  EVP_CIPHER_CTX_free(ctx_);  // OpenSSL cleanses the key schedule
  secure_zero(&hash_subkey_, sizeof hash_subkey_);
}

void OpenSslGcmContext::set_key(int key_bits, const uint8_t* key) {
  if (!EVP_CipherInit_ex2(ctx_, openssl_aes_gcm_cipher(key_bits), key, nullptr, 1, nullptr)) fail("key");
  iv_len_ = 12;  // a fresh GCM context's IV length
  // H = E_K(0^128), for the length-block correction in expected_tag.
  const EVP_CIPHER* ecb = fetched_aes().ecb[key_size_index(key_bits)];
  if (!ecb) throw std::runtime_error("OpenSSL has no aes-" + std::to_string(key_bits) + "-ecb");
  EVP_CIPHER_CTX* ecb_ctx = EVP_CIPHER_CTX_new();
  if (!ecb_ctx) fail("context");
  uint8_t block[16] = {};
  int written = 0;
  const bool ok = EVP_EncryptInit_ex2(ecb_ctx, ecb, key, nullptr, nullptr) && EVP_CIPHER_CTX_set_padding(ecb_ctx, 0) &&
                  EVP_EncryptUpdate(ecb_ctx, block, &written, block, 16) && written == 16;
  EVP_CIPHER_CTX_free(ecb_ctx);
  if (!ok) fail("hash subkey");
  hash_subkey_ = gc_gf128_from_block(gc_block_load(block));
  secure_zero(block, sizeof block);
}

void OpenSslGcmContext::start(ByteSpan nonce, int encrypt) {
  if (nonce.empty() || nonce.size() > kOpenSslGcmMaxIvLen) fail("nonce length");
  if (iv_len_ != nonce.size()) {
    if (!EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce.size()), nullptr))
      fail("iv length");
    iv_len_ = nonce.size();
  }
  if (!EVP_CipherInit_ex2(ctx_, nullptr, nullptr, nonce.data(), encrypt, nullptr)) fail("iv");
}

void OpenSslGcmContext::seal(ByteSpan nonce, ByteSpan aad, const uint8_t* in, uint8_t* out, size_t len,
                             uint8_t* tag, size_t tag_len) {
  start(nonce, 1);
  update(ctx_, aad.data(), nullptr, aad.size());
  update(ctx_, in, out, len);
  uint8_t full_tag[16];
  int written = 0;
  if (!EVP_CipherFinal_ex(ctx_, full_tag, &written)) fail("final");
  if (!EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_GET_TAG, 16, full_tag)) fail("get tag");
  std::memcpy(tag, full_tag, tag_len);
}

void OpenSslGcmContext::expected_tag(ByteSpan nonce, ByteSpan aad, const uint8_t* ciphertext, size_t len,
                                     uint8_t tag[16]) {
  static const uint8_t kZeros[16] = {};
  start(nonce, 1);
  // GHASH over pad16(AAD) || pad16(C) || [8 * fed_len]_64 || 0^64: the real tag's blocks but its last.
  update(ctx_, aad.data(), nullptr, aad.size());
  update(ctx_, kZeros, nullptr, padding_to_block(aad.size()));
  update(ctx_, ciphertext, nullptr, len);
  update(ctx_, kZeros, nullptr, padding_to_block(len));
  int written = 0;
  if (!EVP_CipherFinal_ex(ctx_, tag, &written)) fail("final");
  if (!EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_GET_TAG, 16, tag)) fail("get tag");
  const uint64_t fed_len = aad.size() + padding_to_block(aad.size()) + len + padding_to_block(len);
  const gc_gf128 length_difference = gc_gf128_xor(modes::gcm_length_block(aad.size(), len),
                                                  gc_gf128_make(fed_len * 8, 0));
  uint8_t correction[16];
  gc_block_store(correction, gc_gf128_to_block(gc_gf128_mul(length_difference, hash_subkey_)));
  for (int i = 0; i < 16; ++i) tag[i] ^= correction[i];
  secure_zero(correction, sizeof correction);
}

bool OpenSslGcmContext::open(ByteSpan nonce, ByteSpan aad, const uint8_t* in, uint8_t* out, size_t len,
                             const uint8_t* tag, size_t tag_len) {
  if (len <= kScratchOpenMaxLen) return open_through_scratch(nonce, aad, in, out, len, tag, tag_len);
  uint8_t expected[16];
  expected_tag(nonce, aad, in, len, expected);
  const bool tag_ok = modes::constant_time_equal(expected, tag, tag_len);
  secure_zero(expected, sizeof expected);
  if (!tag_ok) return false;
  start(nonce, 0);
  update(ctx_, aad.data(), nullptr, aad.size());
  update(ctx_, in, out, len);
  uint8_t tag_copy[16];
  std::memcpy(tag_copy, tag, tag_len);
  if (!EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_SET_TAG, static_cast<int>(tag_len), tag_copy)) fail("set tag");
  int written = 0;
  if (EVP_CipherFinal_ex(ctx_, tag_copy, &written) != 1) {
    // Only when the input changed between the two passes (another thread writing it): the
    // plaintext pass saw other ciphertext than the verified one.
    secure_zero(out, len);
    return false;
  }
  return true;
}

bool OpenSslGcmContext::open_through_scratch(ByteSpan nonce, ByteSpan aad, const uint8_t* in, uint8_t* out,
                                             size_t len, const uint8_t* tag, size_t tag_len) {
  start(nonce, 0);
  update(ctx_, aad.data(), nullptr, aad.size());
  update(ctx_, in, scratch_, len);
  uint8_t tag_copy[16];
  std::memcpy(tag_copy, tag, tag_len);
  if (!EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_SET_TAG, static_cast<int>(tag_len), tag_copy)) fail("set tag");
  int written = 0;
  const bool ok = EVP_CipherFinal_ex(ctx_, tag_copy, &written) == 1;  // CRYPTO_memcmp inside
  if (ok && len) std::memcpy(out, scratch_, len);  // out may be null for an empty message
  OPENSSL_cleanse(scratch_, len);  // word-wide; secure_zero's byte loop cost 0.3 us per KiB here
  return ok;
}

}  // namespace gpucrypt::cpu
#endif
