// keccak_openssl.cpp: variant "keccak_openssl": SHA3-224..512 and SHAKE128/256 through
// libcrypto's EVP_MD_CTX (OpenSSL's assembly Keccak is the fastest CPU code we have).
//
// Constant-time: OpenSSL's Keccak-f[1600] has no data-dependent branches or table lookups; this
// wrapper branches only on lengths.
//
// Built without OpenSSL (GPUCRYPT_WITH_OPENSSL unset), the variant simply is not available.
#include "hash_internal.hpp"

#if defined(GPUCRYPT_WITH_OPENSSL)

#include <openssl/evp.h>

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace gpucrypt::hash::detail {

namespace {

// fetch_md returns the process-wide EVP_MD for a name, or nullptr when the loaded providers lack
// it (a FIPS-only configuration, say). Explicit fetching once avoids OpenSSL 3's implicit fetch
// on every EVP_DigestInit_ex. The fetched objects live until exit: the map is never destroyed,
// so contexts alive during static destruction stay valid (and leak checkers see it reachable).
// Keyed by the name's address: the names are the spec table's literals, so no string is built
// per lookup (every one-shot hash comes through here).
const EVP_MD* fetch_md(const char* openssl_name) {
  static std::mutex mutex;
  static auto* fetched = new std::unordered_map<const char*, EVP_MD*>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = fetched->find(openssl_name);
  if (it == fetched->end()) it = fetched->emplace(openssl_name, EVP_MD_fetch(nullptr, openssl_name, nullptr)).first;
  return it->second;
}

struct EvpMdCtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using EvpMdCtxPtr = std::unique_ptr<EVP_MD_CTX, EvpMdCtxDeleter>;

[[noreturn]] void throw_openssl_failure(const char* what) {
  throw std::runtime_error(std::string("OpenSSL ") + what + " failed");
}

class OpensslContext final : public KeccakContext {
 public:
  OpensslContext(const HashSpec& spec, const EVP_MD* md) : KeccakContext(spec, variant_openssl()), md_(md) {
    ctx_.reset(EVP_MD_CTX_new());
    if (!ctx_) throw std::bad_alloc();
    restart();
  }
  OpensslContext(const OpensslContext& other) : KeccakContext(other), md_(other.md_) {
    ctx_.reset(EVP_MD_CTX_new());
    if (!ctx_) throw std::bad_alloc();
    if (EVP_MD_CTX_copy_ex(ctx_.get(), other.ctx_.get()) != 1) throw_openssl_failure("EVP_MD_CTX_copy_ex");
  }
  std::unique_ptr<HashContext> clone() const override { return std::make_unique<OpensslContext>(*this); }

 protected:
  void absorb(const uint8_t* data, size_t len) override {
    if (len != 0 && EVP_DigestUpdate(ctx_.get(), data, len) != 1) throw_openssl_failure("EVP_DigestUpdate");
  }
  void produce_output(uint8_t* out, size_t out_len) override {
    if (spec().info.is_xof) {
      if (EVP_DigestFinalXOF(ctx_.get(), out, out_len) != 1) throw_openssl_failure("EVP_DigestFinalXOF");
    } else {
      if (EVP_DigestFinal_ex(ctx_.get(), out, nullptr) != 1) throw_openssl_failure("EVP_DigestFinal_ex");
    }
  }
  void restart() override {
    if (EVP_DigestInit_ex(ctx_.get(), md_, nullptr) != 1) throw_openssl_failure("EVP_DigestInit_ex");
  }

 private:
  const EVP_MD* md_;
  EvpMdCtxPtr ctx_;
};

}  // namespace

bool openssl_available(const HashSpec& spec) {
  return spec.openssl_name != nullptr && fetch_md(spec.openssl_name) != nullptr;
}

std::unique_ptr<KeccakContext> create_openssl(const HashSpec& spec) {
  return std::make_unique<OpensslContext>(spec, fetch_md(spec.openssl_name));
}

}  // namespace gpucrypt::hash::detail

#else  // !GPUCRYPT_WITH_OPENSSL

#include <stdexcept>

namespace gpucrypt::hash::detail {

bool openssl_available(const HashSpec&) { return false; }

std::unique_ptr<KeccakContext> create_openssl(const HashSpec&) {
  throw std::logic_error("keccak_openssl: built without OpenSSL");
}

}  // namespace gpucrypt::hash::detail

#endif
