// gcm_cpu.cpp: GCM on the CPU. AES goes through our VAES + VPCLMULQDQ code where the CPU has it
// (aes_vaes_gcm, vaes_gcm.hpp: constant-time, about 8 GB/s a core for AES-256 on a Zen 4 core),
// else through OpenSSL (aes_openssl: AES-NI + PCLMULQDQ, constant-time; openssl_gcm.hpp); every
// other cipher, and AES when a portable variant is asked for, goes through the generic GCM in
// src/modes/gcm.hpp (portable_engine.cpp). Every open verifies the tag before it writes any
// plaintext.
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/backend.hpp"
#include "backends/block_engine.hpp"
#include "backends/cpu/openssl_gcm.hpp"
#include "backends/cpu/vaes_gcm.hpp"
#include "backends/cpu/variants.hpp"
#include "modes/gcm.hpp"

namespace gpucrypt::cpu {

namespace {

void check_gcm_arguments(ByteSpan nonce, size_t tag_len) { modes::gcm_check_arguments(nonce.size(), 0, 0, tag_len); }

// aes_vaes_gcm: one keyed context serves every thread (it keeps no state between calls).
class VaesGcm final : public GcmCipher {
 public:
  VaesGcm(const CipherName& name, ByteSpan key, const vaes_gcm::Kernels& kernels)
      : context_(kernels), variant_(&variant_info("aes_vaes_gcm")) {
    context_.set_key(name.key_bits, key.data());
  }
  const VariantInfo& variant() const override { return *variant_; }
  std::string device() const override { return "cpu"; }

  void seal(ByteSpan nonce, ByteSpan aad, ByteSpan plaintext, size_t tag_len, uint8_t* out) override {
    check_gcm_arguments(nonce, tag_len);
    context_.seal(nonce, aad, plaintext.data(), out, plaintext.size(), out + plaintext.size(), tag_len);
  }
  bool open(ByteSpan nonce, ByteSpan aad, ByteSpan input, size_t tag_len, uint8_t* out) override {
    check_gcm_arguments(nonce, tag_len);
    if (input.size() < tag_len) return false;
    const size_t ct_len = input.size() - tag_len;
    return context_.open(nonce, aad, input.data(), out, ct_len, input.data() + ct_len, tag_len);
  }

 private:
  vaes_gcm::Context context_;
  const VariantInfo* variant_;
};

#if defined(GPUCRYPT_WITH_OPENSSL)
// Keyed contexts (openssl_gcm.hpp) are lent from a small pool, one per concurrent call: the key
// schedule is expanded once per context, not once per message, and one AEAD object may be used
// from several threads.
class OpenSslGcm final : public GcmCipher {
 public:
  OpenSslGcm(const CipherName& name, ByteSpan key)
      : name_(name), key_(key.begin(), key.end()), variant_(&variant_info("aes_openssl")) {
    give_back(make_context());  // a bad key size or a missing cipher fails here, not on first use
  }
  ~OpenSslGcm() override { secure_zero(key_.data(), key_.size()); }
  const VariantInfo& variant() const override { return *variant_; }
  std::string device() const override { return "cpu"; }

  void seal(ByteSpan nonce, ByteSpan aad, ByteSpan plaintext, size_t tag_len,
            uint8_t* out) override {
    check_gcm_arguments(nonce, tag_len);
    if (nonce.size() > kOpenSslGcmMaxIvLen) return long_nonce().seal(nonce, aad, plaintext, tag_len, out);
    Lease context(*this);
    context->seal(nonce, aad, plaintext.data(), out, plaintext.size(), out + plaintext.size(), tag_len);
  }

  bool open(ByteSpan nonce, ByteSpan aad, ByteSpan input, size_t tag_len, uint8_t* out) override {
    check_gcm_arguments(nonce, tag_len);
    if (nonce.size() > kOpenSslGcmMaxIvLen) return long_nonce().open(nonce, aad, input, tag_len, out);
    if (input.size() < tag_len) return false;
    const size_t ct_len = input.size() - tag_len;
    Lease context(*this);
    return context->open(nonce, aad, input.data(), out, ct_len, input.data() + ct_len, tag_len);
  }

 private:
  std::unique_ptr<OpenSslGcmContext> make_context() const {
    auto context = std::make_unique<OpenSslGcmContext>();
    context->set_key(name_.key_bits, key_.data());
    return context;
  }
  std::unique_ptr<OpenSslGcmContext> take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        auto context = std::move(idle_.back());
        idle_.pop_back();
        return context;
      }
    }
    return make_context();
  }
  void give_back(std::unique_ptr<OpenSslGcmContext> context) {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(std::move(context));
  }
  // One context for the length of one call; returned to the pool on every exit (a context whose
  // call threw is re-initialised with the IV by its next call, like any other).
  class Lease {
   public:
    explicit Lease(OpenSslGcm& owner) : owner_(owner), context_(owner.take()) {}
    ~Lease() { owner_.give_back(std::move(context_)); }
    OpenSslGcmContext* operator->() { return context_.get(); }

   private:
    OpenSslGcm& owner_;
    std::unique_ptr<OpenSslGcmContext> context_;
  };

  // Nonces OpenSSL refuses go through the constant-time bitsliced AES with the generic GCM, so
  // aes_openssl keeps both its constant-time property and the full IV range.
  GcmCipher& long_nonce() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!long_nonce_) long_nonce_ = make_portable_gcm(name_, key_, "aes_bitsliced");
    return *long_nonce_;
  }

  CipherName name_;
  std::vector<uint8_t> key_;
  const VariantInfo* variant_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<OpenSslGcmContext>> idle_;
  std::unique_ptr<GcmCipher> long_nonce_;
};
#endif

}  // namespace

std::unique_ptr<GcmCipher> create_gcm(const CipherName& name, ByteSpan key,
                                      std::string_view variant) {
  const VariantInfo& v = select_variant_for(name, variant);
  if (v.name == "aes_vaes_gcm") return std::make_unique<VaesGcm>(name, key, *vaes_gcm::best_kernels());
#if defined(GPUCRYPT_WITH_OPENSSL)
  if (v.name == "aes_openssl") return std::make_unique<OpenSslGcm>(name, key);
#endif
  return make_portable_gcm(name, key, v.name);
}

}  // namespace gpucrypt::cpu
