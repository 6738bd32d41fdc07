// gcm_cpu.cpp: GCM on the CPU. AES goes through OpenSSL (AES-NI + PCLMULQDQ: constant-time, about
// 13-15 GB/s a core); every other cipher, and AES when a portable variant is asked for, goes
// through the generic GCM in src/modes/gcm.hpp (portable_engine.cpp).
#include <cstring>
#include <vector>

#include "backends/backend.hpp"
#include "backends/block_engine.hpp"
#include "backends/cpu/variants.hpp"

#if defined(GPUCRYPT_WITH_OPENSSL)
#include <openssl/evp.h>
#endif

namespace gpucrypt::cpu {

namespace {

void check_gcm_arguments(ByteSpan nonce, size_t tag_len) {
  if (nonce.empty()) throw std::invalid_argument("GCM nonce must be at least 1 byte");
  if (tag_len < 4 || tag_len > 16)
    throw std::invalid_argument("GCM tag length must be 4..16 bytes, got " + std::to_string(tag_len));
}

#if defined(GPUCRYPT_WITH_OPENSSL)
class OpenSslGcm final : public GcmCipher {
 public:
  OpenSslGcm(const CipherName& name, ByteSpan key)
      : name_(name), key_(key.begin(), key.end()), variant_(&variant_info("aes_openssl")) {
    std::string id = "aes-" + std::to_string(name.key_bits) + "-gcm";
    cipher_ = EVP_CIPHER_fetch(nullptr, id.c_str(), nullptr);
    if (!cipher_) throw std::runtime_error("OpenSSL has no " + id);
  }
  ~OpenSslGcm() override {
    secure_zero(key_.data(), key_.size());
    EVP_CIPHER_free(cipher_);
  }
  const VariantInfo& variant() const override { return *variant_; }
  std::string device() const override { return "cpu"; }

  void seal(ByteSpan nonce, ByteSpan aad, ByteSpan plaintext, size_t tag_len,
            uint8_t* out) override {
    check_gcm_arguments(nonce, tag_len);
    if (nonce.size() > kOpenSslMaxIvLen) return long_nonce().seal(nonce, aad, plaintext, tag_len, out);
    Context ctx(*this, nonce, 1);
    ctx.aad(aad);
    ctx.data(plaintext.data(), out, plaintext.size());
    int written = 0;
    if (!EVP_CipherFinal_ex(ctx.get(), out + plaintext.size(), &written)) fail("final");
    uint8_t tag[16];
    if (!EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, 16, tag)) fail("get tag");
    std::memcpy(out + plaintext.size(), tag, tag_len);
  }

  bool open(ByteSpan nonce, ByteSpan aad, ByteSpan input, size_t tag_len, uint8_t* out) override {
    check_gcm_arguments(nonce, tag_len);
    if (nonce.size() > kOpenSslMaxIvLen) return long_nonce().open(nonce, aad, input, tag_len, out);
    if (input.size() < tag_len) return false;
    const size_t ct_len = input.size() - tag_len;
    Context ctx(*this, nonce, 0);
    ctx.aad(aad);
    ctx.data(input.data(), out, ct_len);
    // OpenSSL compares the (possibly truncated) tag in constant time (CRYPTO_memcmp).
    uint8_t tag[16];
    std::memcpy(tag, input.data() + ct_len, tag_len);
    if (!EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(tag_len), tag))
      fail("set tag");
    int written = 0;
    if (EVP_CipherFinal_ex(ctx.get(), out + ct_len, &written) != 1) {
      secure_zero(out, ct_len);  // never hand out unauthenticated plaintext
      return false;
    }
    return true;
  }

 private:
  [[noreturn]] static void fail(const char* what) {
    throw std::runtime_error(std::string("OpenSSL GCM failed: ") + what);
  }

  class Context {
   public:
    Context(const OpenSslGcm& gcm, ByteSpan nonce, int encrypt) : ctx_(EVP_CIPHER_CTX_new()) {
      if (!ctx_) fail("context");
      if (!EVP_CipherInit_ex2(ctx_, gcm.cipher_, nullptr, nullptr, encrypt, nullptr)) fail("init");
      if (!EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce.size()), nullptr))
        fail("iv length");
      if (!EVP_CipherInit_ex2(ctx_, nullptr, gcm.key_.data(), nonce.data(), encrypt, nullptr))
        fail("key");
    }
    ~Context() { EVP_CIPHER_CTX_free(ctx_); }
    EVP_CIPHER_CTX* get() { return ctx_; }
    void aad(ByteSpan a) {
      int written = 0;
      if (!a.empty() && !EVP_CipherUpdate(ctx_, nullptr, &written, a.data(), static_cast<int>(a.size())))
        fail("aad");
    }
    void data(const uint8_t* in, uint8_t* out, size_t len) {
      constexpr size_t kMaxPerCall = size_t(1) << 30;  // EVP takes int lengths
      while (len > 0) {
        const size_t step = len < kMaxPerCall ? len : kMaxPerCall;
        int written = 0;
        if (!EVP_CipherUpdate(ctx_, out, &written, in, static_cast<int>(step))) fail("update");
        in += step;
        out += step;
        len -= step;
      }
    }

   private:
    EVP_CIPHER_CTX* ctx_;
  };

  // OpenSSL refuses GCM IVs over 128 bytes (GCM_IV_MAX_SIZE); SP 800-38D allows up to 2^61-1.
  // Such nonces go through the constant-time bitsliced AES with the generic GCM, so aes_openssl
  // keeps both its constant-time property and the full IV range.
  static constexpr size_t kOpenSslMaxIvLen = 128;
  GcmCipher& long_nonce() {
    if (!long_nonce_) long_nonce_ = make_portable_gcm(name_, key_, "aes_bitsliced");
    return *long_nonce_;
  }

  CipherName name_;
  std::vector<uint8_t> key_;
  EVP_CIPHER* cipher_ = nullptr;
  const VariantInfo* variant_;
  std::unique_ptr<GcmCipher> long_nonce_;
};
#endif

}  // namespace

std::unique_ptr<GcmCipher> create_gcm(const CipherName& name, ByteSpan key,
                                      std::string_view variant) {
  const VariantInfo& v = select_variant_for(name, variant);
#if defined(GPUCRYPT_WITH_OPENSSL)
  if (v.name == "aes_openssl") return std::make_unique<OpenSslGcm>(name, key);
#endif
  return make_portable_gcm(name, key, v.name);
}

}  // namespace gpucrypt::cpu
