// openssl_engine.cpp: the CPU fast path through OpenSSL's libcrypto (EVP).
//
// Constant-time position: AES here runs on AES-NI/VAES instructions, which take no secret-dependent
// table lookups, so the aes_openssl variant is constant-time. OpenSSL's Camellia is table-based
// (camellia_openssl is NOT constant-time). Keys are copied into the engine and wiped on
// destruction; each call builds a short-lived EVP context, so calls are safe from many threads.
#include "backends/block_engine.hpp"

#if !defined(GPUCRYPT_WITH_OPENSSL)
namespace gpucrypt::cpu {
bool openssl_supports(const CipherName&) { return false; }
}  // namespace gpucrypt::cpu
#else

#include <openssl/evp.h>

#include <cstring>
#include <string>
#include <vector>

#include "backends/block_engine.hpp"
#include "backends/cpu/variants.hpp"

namespace gpucrypt::cpu {

namespace {

struct EvpContextDeleter {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using EvpContext = std::unique_ptr<EVP_CIPHER_CTX, EvpContextDeleter>;
struct EvpCipherDeleter {
  void operator()(EVP_CIPHER* c) const { EVP_CIPHER_free(c); }
};
using EvpCipher = std::unique_ptr<EVP_CIPHER, EvpCipherDeleter>;

EvpCipher fetch(const CipherName& name, std::string_view mode) {
  std::string id = std::string(algorithm_name(name.algorithm)) + "-" +
                   std::to_string(name.key_bits) + "-" + std::string(mode);
  return EvpCipher(EVP_CIPHER_fetch(nullptr, id.c_str(), nullptr));
}

[[noreturn]] void openssl_failed(const char* what) {
  throw std::runtime_error(std::string("OpenSSL failed in ") + what);
}

class OpenSslEngine final : public BlockEngine {
 public:
  OpenSslEngine(const CipherName& name, ByteSpan key)
      : key_(key.begin(), key.end()),
        variant_(&variant_info(name.algorithm == Algorithm::aes ? "aes_openssl" : "camellia_openssl")) {
    if (name.mode == Mode::xts) {
      xts_ = fetch(name, "xts");
      if (!xts_) openssl_failed("EVP_CIPHER_fetch(xts)");
      // encrypt_block and the rest are not used for XTS engines.
      return;
    }
    ecb_ = fetch(name, "ecb");
    cbc_ = fetch(name, "cbc");
    cfb_ = fetch(name, "cfb");
    ofb_ = fetch(name, "ofb");
    ctr_ = fetch(name, "ctr");
    if (!ecb_ || !cbc_ || !cfb_ || !ofb_ || !ctr_) openssl_failed("EVP_CIPHER_fetch");
  }
  ~OpenSslEngine() override { secure_zero(key_.data(), key_.size()); }

  const VariantInfo& variant() const override {
    return *variant_;
  }

  void encrypt_block(const uint8_t in[16], uint8_t out[16]) const override {
    run(ecb_.get(), 1, nullptr, in, out, 16);
  }
  void ecb(Direction d, const uint8_t* in, uint8_t* out, size_t n) const override {
    run(ecb_.get(), d == Direction::encrypt, nullptr, in, out, n * 16);
  }
  void ctr(const uint8_t counter[16], const uint8_t* in, uint8_t* out, size_t n) const override {
    run(ctr_.get(), 1, counter, in, out, n * 16);
  }
  void cbc_decrypt(const uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n) const override {
    run(cbc_.get(), 0, iv, in, out, n * 16);
  }
  void cfb_decrypt(const uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n) const override {
    run(cfb_.get(), 0, iv, in, out, n * 16);
  }
  void cbc_encrypt(uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n) const override {
    if (n == 0) return;
    run(cbc_.get(), 1, iv, in, out, n * 16);
    std::memcpy(iv, out + (n - 1) * 16, 16);
  }
  void cfb_encrypt(uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n) const override {
    if (n == 0) return;
    run(cfb_.get(), 1, iv, in, out, n * 16);
    std::memcpy(iv, out + (n - 1) * 16, 16);
  }
  void ofb(uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n) const override {
    if (n == 0) return;
    // The new OFB register is the last keystream block = last output xor last input; read the
    // input block first because in and out may alias.
    uint8_t last_in[16];
    std::memcpy(last_in, in + (n - 1) * 16, 16);
    run(ofb_.get(), 1, iv, in, out, n * 16);
    for (int i = 0; i < 16; ++i) iv[i] = out[(n - 1) * 16 + i] ^ last_in[i];
  }
  void xts(Direction d, const uint8_t tweak[16], const uint8_t* in, uint8_t* out,
           size_t len) const override {
    run(xts_.get(), d == Direction::encrypt, tweak, in, out, len);
  }

 private:
  void run(EVP_CIPHER* cipher, int encrypt, const uint8_t* iv, const uint8_t* in, uint8_t* out,
           size_t len) const {
    if (len == 0) return;
    EvpContext ctx(EVP_CIPHER_CTX_new());
    if (!ctx || !EVP_CipherInit_ex2(ctx.get(), cipher, key_.data(), iv, encrypt, nullptr))
      openssl_failed("EVP_CipherInit_ex2");
    EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
    // EVP lengths are int: feed at most 1 GiB per call.
    constexpr size_t kMaxPerCall = size_t(1) << 30;
    while (len > 0) {
      const size_t step = len < kMaxPerCall ? len : kMaxPerCall;
      int written = 0;
      if (!EVP_CipherUpdate(ctx.get(), out, &written, in, static_cast<int>(step)) ||
          static_cast<size_t>(written) != step)
        openssl_failed("EVP_CipherUpdate");
      in += step;
      out += step;
      len -= step;
    }
  }

  std::vector<uint8_t> key_;
  EvpCipher ecb_, cbc_, cfb_, ofb_, ctr_, xts_;
  const VariantInfo* variant_;
};

}  // namespace

bool openssl_supports(const CipherName& name) {
  if (name.algorithm == Algorithm::sc2000 || name.mode == Mode::gcm) return false;
  if (name.algorithm == Algorithm::camellia && name.mode == Mode::xts) return false;
  return static_cast<bool>(fetch(name, mode_name(name.mode)));
}

std::unique_ptr<BlockEngine> make_openssl_engine(const CipherName& name, ByteSpan key) {
  return std::make_unique<OpenSslEngine>(name, key);
}

}  // namespace gpucrypt::cpu

#endif  // GPUCRYPT_WITH_OPENSSL
