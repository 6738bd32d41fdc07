// gcm_siv.cpp: AES-GCM-SIV (RFC 8452) for every backend (gcm_siv.hpp), and its CPU Body.
//
// Side channels: constant-time by default. The host AES here (key derivation, tag) is the
// bitsliced AES (no tables); POLYVAL uses gf128.h's constant-time multiplier; the tag comparison
// is constant-time. The CPU Body's CTR is as constant-time as its variant: aes_openssl (AES-NI)
// and aes_bitsliced are, aes_ttable (only when named) is not. Keys, derived keys and decrypted
// plaintext are wiped from our buffers before they are released.
#include "backends/gcm_siv.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

#include "backends/backend.hpp"
#include "backends/block_engine.hpp"
#include "backends/cpu/variants.hpp"
#include "modes/block_cipher.hpp"
#include "modes/ciphers.hpp"

namespace gpucrypt::gcm_siv {

using modes::load_block;
using modes::store_block;

gc_gf128 Body::polyval(gc_gf128 key, const uint8_t* data, size_t len) const {
  return gc_polyval_bytes(gc_gf128_make(0, 0), key, data, len);
}

namespace {

using HostAes = modes::AesBitsliced<>;

// One message's keys (RFC 8452 section 4), wiped when it goes.
struct MessageKeys {
  uint8_t auth_key[16];
  uint8_t enc_key[32];
  size_t enc_key_len;
  ~MessageKeys() { modes::secure_zero(this, sizeof *this); }
};

class GcmSivAead final : public Aead {
 public:
  GcmSivAead(const AeadName& name, ByteSpan key, std::unique_ptr<Body> body)
      : name_(name), key_(HostAes::make_host(key.data(), static_cast<int>(key.size()))), body_(std::move(body)) {}
  ~GcmSivAead() override { modes::secure_zero(&key_, sizeof key_); }
  const VariantInfo& variant() const override { return body_->variant(); }
  std::string device() const override { return body_->device(); }

  void seal(ByteSpan nonce, ByteSpan aad, ByteSpan plaintext, size_t tag_len, uint8_t* out) override {
    check_aead_arguments(name_, nonce.size(), aad.size(), plaintext.size(), tag_len);
    MessageKeys keys = derive(nonce);
    uint8_t tag[16];
    // The tag is computed over the plaintext before CTR may overwrite it (in place).
    compute_tag(keys, nonce, aad, plaintext.data(), plaintext.size(), tag);
    body_->ctr(ByteSpan(keys.enc_key, keys.enc_key_len), counter_of(tag), plaintext.data(), out, plaintext.size());
    std::memcpy(out + plaintext.size(), tag, sizeof tag);
  }

  bool open(ByteSpan nonce, ByteSpan aad, ByteSpan input, size_t tag_len, uint8_t* out) override {
    const size_t len = input.size() >= tag_len ? input.size() - tag_len : 0;
    check_aead_arguments(name_, nonce.size(), aad.size(), len, tag_len);
    if (input.size() < tag_len) return false;
    uint8_t tag[16];
    std::memcpy(tag, input.data() + len, sizeof tag);
    MessageKeys keys = derive(nonce);
    std::vector<uint8_t> plaintext(len);
    body_->ctr(ByteSpan(keys.enc_key, keys.enc_key_len), counter_of(tag), input.data(), plaintext.data(), len);
    uint8_t expected[16];
    compute_tag(keys, nonce, aad, plaintext.data(), len, expected);
    const bool ok = modes::constant_time_equal(expected, tag, sizeof tag);
    if (ok && len > 0) std::memcpy(out, plaintext.data(), len);
    modes::secure_zero(plaintext.data(), len);
    modes::secure_zero(expected, sizeof expected);
    return ok;
  }

 private:
  // derive: message_authentication_key and message_encryption_key, the first 8 bytes of
  // AES_K(LE32(i) || nonce) for i = 0, 1 (authentication) and 2.. (encryption: 2 or 4 blocks).
  MessageKeys derive(ByteSpan nonce) const {
    MessageKeys keys;
    keys.enc_key_len = name_.key_len;
    const size_t num_blocks = 2 + name_.key_len / 8;
    for (size_t i = 0; i < num_blocks; ++i) {
      uint8_t block[16] = {static_cast<uint8_t>(i)};
      std::memcpy(block + 4, nonce.data(), 12);
      store_block(block, modes::encrypt_one(key_, load_block(block)));
      std::memcpy(i < 2 ? keys.auth_key + 8 * i : keys.enc_key + 8 * (i - 2), block, 8);
      modes::secure_zero(block, sizeof block);
    }
    return keys;
  }

  // compute_tag: AES_enc(POLYVAL(auth_key, AAD || plaintext || lengths) xor nonce, top bit clear).
  void compute_tag(const MessageKeys& keys, ByteSpan nonce, ByteSpan aad, const uint8_t* plaintext, size_t len,
                   uint8_t tag[16]) const {
    const gc_gf128 h = gc_polyval_key(load_block(keys.auth_key));
    const gc_gf128 aad_hash = gc_polyval_bytes(gc_gf128_make(0, 0), h, aad.data(), aad.size());
    const gc_gf128 data_hash = len == 0 ? gc_gf128_make(0, 0) : body_->polyval(h, plaintext, len);
    gc_gf128 s = gc_ghash_combine(aad_hash, gc_gf128_pow(h, (len + 15) / 16), data_hash);
    s = gc_ghash_block(s, h, gc_polyval_length_block(aad.size(), len));
    store_block(tag, gc_polyval_to_block(s));
    for (size_t i = 0; i < 12; ++i) tag[i] ^= nonce[i];
    tag[15] &= 0x7f;
    HostAes enc = HostAes::make_host(keys.enc_key, static_cast<int>(keys.enc_key_len));
    store_block(tag, modes::encrypt_one(enc, load_block(tag)));
    modes::secure_zero(&enc, sizeof enc);
  }

  static gc_block counter_of(const uint8_t tag[16]) {
    uint8_t block[16];
    std::memcpy(block, tag, 16);
    block[15] |= 0x80;
    return load_block(block);
  }

  AeadName name_;
  HostAes key_;
  std::unique_ptr<Body> body_;
};

}  // namespace

std::unique_ptr<Aead> make_aead(const AeadName& name, ByteSpan key, std::unique_ptr<Body> body) {
  return std::make_unique<GcmSivAead>(name, key, std::move(body));
}

}  // namespace gpucrypt::gcm_siv

namespace gpucrypt::cpu {

namespace {

// The CPU Body: the CTR keystream as ECB over counter blocks through any CPU AES engine (OpenSSL's
// AES-NI ECB is its fastest AES), a run of blocks at a time.
class CpuBody final : public gcm_siv::Body {
 public:
  CpuBody(CipherName ecb, const VariantInfo& variant) : ecb_(std::move(ecb)), variant_(variant) {}
  const VariantInfo& variant() const override { return variant_; }
  std::string device() const override { return "cpu"; }

  void ctr(ByteSpan enc_key, gc_block counter, const uint8_t* in, uint8_t* out, size_t len) const override {
    if (len == 0) return;
    const std::unique_ptr<BlockEngine> engine = variant_.name == "aes_openssl"
                                                    ? make_openssl_engine(ecb_, enc_key)
                                                    : make_portable_engine(ecb_, enc_key, variant_.name);
    constexpr size_t kRun = 256;  // blocks of keystream per engine call (4 KiB, on the stack)
    uint8_t keystream[kRun * 16];
    for (size_t first = 0; first * 16 < len; first += kRun) {
      const size_t bytes = std::min(kRun * 16, len - first * 16);
      const size_t blocks = (bytes + 15) / 16;
      for (size_t j = 0; j < blocks; ++j) modes::store_block(keystream + 16 * j, gc_ctr32le_add(counter, first + j));
      engine->ecb(Direction::encrypt, keystream, keystream, blocks);
      for (size_t i = 0; i < bytes; ++i) out[16 * first + i] = in[16 * first + i] ^ keystream[i];
    }
    modes::secure_zero(keystream, sizeof keystream);
  }

 private:
  CipherName ecb_;
  const VariantInfo& variant_;
};

}  // namespace

std::unique_ptr<Aead> create_gcm_siv(const AeadName& name, ByteSpan key, std::string_view variant) {
  const CipherName ecb = name.cipher();
  const VariantInfo& v = select_variant_for(ecb, variant);
  return gcm_siv::make_aead(name, key, std::make_unique<CpuBody>(ecb, v));
}

}  // namespace gpucrypt::cpu
