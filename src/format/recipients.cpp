// recipients.cpp: format version 2's header in the library (docs/file-format.md, "Version 2";
// Python: gpucrypt/recipients.py, the reference). A random file key wrapped once per recipient in
// stanzas; the header MAC and the payload key derived from it over every stanza.
//
// Here: x25519 stanzas (built and opened) through OpenSSL's EVP_PKEY, HKDF-SHA256 through EVP_KDF,
// the wraps with AES-256-GCM through EVP, no hand-written asymmetric code. The mlkem768x25519
// hybrid needs ML-KEM-768, which OpenSSL has from 3.5: a hybrid recipient or identity is refused
// with a FormatError saying so; a file with hybrid stanzas still opens with an X25519 identity.
// scrypt and key-file stanzas are parsed (so the MAC and the framing are checked) but not opened:
// the C library takes no passphrase, and its raw keys write version 1.
//
// Constant-time: the wraps are GCM (OpenSSL), the MAC comparison modes::constant_time_equal;
// branches depend on stanza types and lengths, which are public.
#include <cstring>
#include <string>
#include <vector>

#include "format/header_crypto.hpp"
#include "gpucrypt/format.hpp"
#include "modes/block_cipher.hpp"

#if defined(GPUCRYPT_WITH_OPENSSL)
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/opensslv.h>
#include <openssl/rand.h>
#endif

namespace gpucrypt::format {

namespace {

using detail::kFixedLen;
using detail::kMacLen;
using detail::kMagic;
using detail::kSaltLen;
using detail::kSaltOffset;
using detail::kSuiteAes256Gcm;
using detail::kVersionRecipients;
constexpr size_t kMaxStanzas = 1024;
constexpr uint8_t kScrypt = detail::kScryptStanza, kKeyFile = 2, kX25519 = 3, kHybrid = 4;
constexpr size_t kWrappedLen = kKeyLen + kTagLen;
constexpr char kKeysLabel[] = "gpucrypt/v2/keys";
constexpr char kX25519Label[] = "gpucrypt/v2/x25519";
constexpr char kX25519Recipient[] = "gpucrypt-x25519";
constexpr char kHybridRecipient[] = "gpucrypt-mlkem768x25519";
constexpr char kX25519Identity[] = "GPUCRYPT-X25519-IDENTITY";
constexpr char kHybridIdentity[] = "GPUCRYPT-MLKEM768X25519-IDENTITY";

size_t body_len(uint8_t type) {
  switch (type) {
    case kScrypt: return 1 + 16 + kWrappedLen;
    case kKeyFile: return 16 + kWrappedLen;
    case kX25519: return 32 + kWrappedLen;
    case kHybrid: return 1088 + 32 + kWrappedLen;
    default: return 0;
  }
}

const char* stanza_name(uint8_t type) {
  switch (type) {
    case kScrypt: return "scrypt";
    case kKeyFile: return "key-file";
    case kX25519: return "x25519";
    case kHybrid: return "mlkem768x25519";
    default: return "unknown";
  }
}

std::string hybrid_unsupported() {
#if defined(GPUCRYPT_WITH_OPENSSL)
  const std::string have = OpenSSL_version(OPENSSL_VERSION_STRING);
#else
  const std::string have = "none";
#endif
  return "the mlkem768x25519 (ML-KEM-768 + X25519) recipient is not supported by this build of the C library: "
         "it needs OpenSSL 3.5 or later for ML-KEM (this is OpenSSL " + have +
         "); use x25519 recipients here, or the Python package (pyca/cryptography)";
}

// ---- key strings: PREFIX ':' base64url(key || SHA-256(PREFIX || key)[0..3]), no padding ----

int base64url_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

std::vector<uint8_t> base64url_decode(std::string_view text, const std::string& what) {
  std::vector<uint8_t> out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    const int value = base64url_value(c);
    if (value < 0) throw FormatError(what + " is not valid base64url");
    buffer = (buffer << 6) | uint32_t(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(uint8_t(buffer >> bits));
    }
  }
  return out;
}

// The key of `text` under `prefix` (key_len bytes), its checksum verified.
std::vector<uint8_t> decode_key(std::string_view text, std::string_view prefix, size_t key_len, const std::string& what) {
  std::vector<uint8_t> raw = base64url_decode(text.substr(prefix.size() + 1), what);
  if (raw.size() != key_len + 4)
    throw FormatError(what + " holds " + std::to_string(raw.size() < 4 ? 0 : raw.size() - 4) + " key bytes; " +
                      std::string(prefix) + " takes " + std::to_string(key_len));
  std::vector<uint8_t> hashed(prefix.begin(), prefix.end());
  hashed.insert(hashed.end(), raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(key_len));
  uint8_t digest[32];
  detail::sha256(hashed, digest);
  if (std::memcmp(digest, raw.data() + key_len, 4) != 0) throw FormatError(what + " has a wrong checksum (mistyped or cut short)");
  raw.resize(key_len);
  return raw;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.size() > prefix.size() && text.substr(0, prefix.size()) == prefix && text[prefix.size()] == ':';
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

// ---- OpenSSL pieces ----

#if defined(GPUCRYPT_WITH_OPENSSL)
struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

Pkey x25519_private(const uint8_t secret[32]) {
  Pkey key(EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, secret, 32));
  if (!key) throw std::runtime_error("X25519 private key failed (OpenSSL)");
  return key;
}

void x25519_public(EVP_PKEY* key, uint8_t out[32]) {
  size_t len = 32;
  if (EVP_PKEY_get_raw_public_key(key, out, &len) != 1 || len != 32)
    throw std::runtime_error("X25519 public key failed (OpenSSL)");
}

// X25519(private, peer); false when OpenSSL refuses (an all-zero result: a low-order point).
bool x25519_shared(EVP_PKEY* private_key, const uint8_t peer[32], uint8_t out[32]) {
  Pkey peer_key(EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, peer, 32));
  if (!peer_key) return false;
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new(private_key, nullptr);
  size_t len = 32;
  const bool ok = ctx && EVP_PKEY_derive_init(ctx) == 1 && EVP_PKEY_derive_set_peer(ctx, peer_key.get()) == 1 &&
                  EVP_PKEY_derive(ctx, out, &len) == 1 && len == 32;
  EVP_PKEY_CTX_free(ctx);
  return ok;
}

// AES-256-GCM with the all-zero nonce: each wrapping key is used once.
void wrap(const uint8_t wrap_key[kKeyLen], const uint8_t file_key[kKeyLen], uint8_t out[kWrappedLen]) {
  static const uint8_t nonce[12] = {};
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int len = 0;
  const bool ok = ctx && EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, wrap_key, nonce) == 1 &&
                  EVP_EncryptUpdate(ctx, out, &len, file_key, int(kKeyLen)) == 1 &&
                  EVP_EncryptFinal_ex(ctx, out + len, &len) == 1 &&
                  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, int(kTagLen), out + kKeyLen) == 1;
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) throw std::runtime_error("AES-256-GCM failed (OpenSSL)");
}

bool unwrap(const uint8_t wrap_key[kKeyLen], const uint8_t wrapped[kWrappedLen], uint8_t file_key[kKeyLen]) {
  static const uint8_t nonce[12] = {};
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int len = 0;
  uint8_t tag[kTagLen];
  std::memcpy(tag, wrapped + kKeyLen, kTagLen);
  const bool ok = ctx && EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, wrap_key, nonce) == 1 &&
                  EVP_DecryptUpdate(ctx, file_key, &len, wrapped, int(kKeyLen)) == 1 &&
                  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, int(kTagLen), tag) == 1 &&
                  EVP_DecryptFinal_ex(ctx, file_key + len, &len) == 1;
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) secure_zero(file_key, kKeyLen);
  return ok;
}

// The x25519 stanza's wrapping key: HKDF-SHA256(s, salt = share || pk, "gpucrypt/v2/x25519").
void x25519_wrap_key(const uint8_t shared[32], const uint8_t share[32], const uint8_t pk[32], uint8_t out[kKeyLen]) {
  uint8_t salt[64];
  std::memcpy(salt, share, 32);
  std::memcpy(salt + 32, pk, 32);
  detail::hkdf_sha256(ByteSpan(shared, 32), ByteSpan(salt, sizeof salt),
                      ByteSpan(reinterpret_cast<const uint8_t*>(kX25519Label), sizeof kX25519Label - 1), out, kKeyLen);
}
#endif

void require_openssl() {
#if !defined(GPUCRYPT_WITH_OPENSSL)
  throw std::runtime_error("format version 2 (recipients) needs OpenSSL (X25519, HKDF, AES-GCM); this build has none");
#endif
}

// (header MAC key, payload key) = HKDF-SHA256(file key, salt, "gpucrypt/v2/keys" || prefix), 64 bytes.
void derive_v2_keys(const uint8_t file_key[kKeyLen], ByteSpan prefix, uint8_t mac_key[kKeyLen], uint8_t payload_key[kKeyLen]) {
  std::vector<uint8_t> info(kKeysLabel, kKeysLabel + sizeof kKeysLabel - 1);
  info.insert(info.end(), prefix.begin(), prefix.end());
  uint8_t okm[2 * kKeyLen];
  detail::hkdf_sha256(ByteSpan(file_key, kKeyLen), prefix.subspan(kSaltOffset, kSaltLen), info, okm, sizeof okm);
  std::memcpy(mac_key, okm, kKeyLen);
  std::memcpy(payload_key, okm + kKeyLen, kKeyLen);
  secure_zero(okm, sizeof okm);
}

// The X25519 secret keys (32 bytes each) of identity lines; each string may be a whole identity
// file (blank lines and # comments skipped). Hybrid identities are skipped; only hybrid ones is
// the FormatError of hybrid_unsupported.
std::vector<uint8_t> x25519_identities(const std::vector<std::string>& identities) {
  std::vector<uint8_t> secrets;
  bool hybrid = false;
  for (const std::string& text : identities) {
    std::string_view rest = text;
    size_t found = 0;
    while (!rest.empty()) {
      const size_t end = rest.find('\n');
      const std::string_view line = trimmed(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
      if (line.empty() || line.front() == '#') continue;
      if (starts_with(line, kHybridIdentity)) {  // skipped: an X25519 identity beside it may still open the file
        hybrid = true;
        ++found;
        continue;
      }
      if (!starts_with(line, kX25519Identity))
        throw FormatError("not a gpucrypt identity (expected " + std::string(kX25519Identity) + ":...)");
      const std::vector<uint8_t> secret = decode_key(line, kX25519Identity, 32, "the identity");
      secrets.insert(secrets.end(), secret.begin(), secret.end());
      ++found;
    }
    if (found == 0) throw FormatError("no identity in the text given");
  }
  if (secrets.empty()) throw FormatError(hybrid ? hybrid_unsupported() : std::string("no identity given"));
  return secrets;
}

}  // namespace

std::vector<detail::StanzaAt> detail::parse_stanzas(ByteSpan header, size_t& mac_offset, int max_log2n) {
  const size_t count = size_t(header[10]) << 8 | header[11];
  if (count == 0 || count > kMaxStanzas)
    throw FormatError("invalid header: " + std::to_string(count) + " stanzas (a version 2 file has 1 .. " +
                      std::to_string(kMaxStanzas) + ")");
  std::vector<StanzaAt> stanzas;
  size_t offset = kFixedLen, scrypt_stanzas = 0;
  for (size_t index = 0; index < count; ++index) {
    if (offset + 3 > header.size())
      throw FormatError("file truncated inside the header (stanza " + std::to_string(index) + " of " + std::to_string(count) + ")");
    const uint8_t type = header[offset];
    const size_t length = size_t(header[offset + 1]) << 8 | header[offset + 2];
    if (body_len(type) == 0)
      throw FormatError("stanza " + std::to_string(index) + " has unknown type " + std::to_string(type) +
                        ": this file is for a recipient this version of gpucrypt cannot open (refused rather than skipped)");
    if (length != body_len(type))
      throw FormatError("damaged header: stanza " + std::to_string(index) + " (" + stanza_name(type) + ") is " +
                        std::to_string(length) + " bytes, not " + std::to_string(body_len(type)));
    if (offset + 3 + length > header.size())
      throw FormatError("file truncated inside the header (stanza " + std::to_string(index) + " of " + std::to_string(count) + ")");
    if (type == kScrypt) {
      if (++scrypt_stanzas > 1) throw FormatError("invalid header: more than one scrypt stanza");
      check_scrypt_log2n(header[offset + 3], max_log2n);  // its first body byte
    }
    stanzas.push_back({type, offset + 3, length});
    offset += 3 + length;
  }
  if (offset + kMacLen > header.size())
    throw FormatError("file truncated inside the header (" + std::to_string(header.size()) + " of " +
                      std::to_string(offset + kMacLen) + " bytes)");
  mac_offset = offset;
  return stanzas;
}

void seal_v2_header(std::vector<uint8_t>& header, ByteSpan file_key, uint8_t payload_key[kKeyLen]) {
  require_openssl();
  if (file_key.size() != kKeyLen) throw std::invalid_argument("the file key is " + std::to_string(kKeyLen) + " bytes");
  uint8_t mac_key[kKeyLen];
  derive_v2_keys(file_key.data(), header, mac_key, payload_key);
  const size_t at = header.size();
  header.resize(at + kMacLen);
  detail::hmac_sha256(ByteSpan(mac_key, kKeyLen), ByteSpan(header.data(), at), header.data() + at);
  secure_zero(mac_key, sizeof mac_key);
}

void open_v2_header(ByteSpan header, ByteSpan file_key, uint8_t payload_key[kKeyLen]) {
  require_openssl();
  if (file_key.size() != kKeyLen) throw std::invalid_argument("the file key is " + std::to_string(kKeyLen) + " bytes");
  if (header.size() < kFixedLen + kMacLen) throw FormatError("file truncated inside the header");
  const ByteSpan prefix = header.first(header.size() - kMacLen);
  uint8_t mac_key[kKeyLen], mac[kMacLen];
  derive_v2_keys(file_key.data(), prefix, mac_key, payload_key);
  detail::hmac_sha256(ByteSpan(mac_key, kKeyLen), prefix, mac);
  secure_zero(mac_key, sizeof mac_key);
  if (!modes::constant_time_equal(mac, header.data() + prefix.size(), kMacLen)) {
    secure_zero(payload_key, kKeyLen);
    throw DecryptionError("header authentication failed: a stanza opened, but the header MAC does not match (the header "
                          "was modified, or the stanza was copied from another file)",
                          UINT64_MAX);
  }
}

std::pair<size_t, bool> header_len_known(ByteSpan data) {
  if (data.size() < kFixedLen || data[8] != kVersionRecipients) return {kHeaderLen, data.size() >= kFixedLen};
  const size_t count = std::min<size_t>(size_t(data[10]) << 8 | data[11], kMaxStanzas);
  size_t offset = kFixedLen;
  for (size_t index = 0; index < count; ++index) {
    if (offset + 3 > data.size()) return {offset + 3, false};
    const uint8_t type = data[offset];
    const size_t length = size_t(data[offset + 1]) << 8 | data[offset + 2];
    if (body_len(type) == 0 || length != body_len(type)) return {offset, true};  // the parser names it
    offset += 3 + length;
  }
  return {offset + kMacLen, true};
}

std::vector<uint8_t> build_v2_header(uint32_t chunk_len, const std::vector<HeaderFields::Stanza>& stanzas,
                                     ByteSpan file_key, uint8_t payload_key[kKeyLen]) {
  require_openssl();
  check_chunk_len(chunk_len);
  if (stanzas.empty()) throw FormatError("no recipient given");
  if (stanzas.size() > kMaxStanzas) throw FormatError("more than " + std::to_string(kMaxStanzas) + " recipients");
  std::vector<uint8_t> header(kFixedLen);
  std::memcpy(header.data(), kMagic, sizeof kMagic);
  header[8] = kVersionRecipients;
  header[9] = kSuiteAes256Gcm;
  header[10] = uint8_t(stanzas.size() >> 8);
  header[11] = uint8_t(stanzas.size());
  for (int i = 0; i < 4; ++i) header[12 + i] = uint8_t(chunk_len >> (24 - 8 * i));
#if defined(GPUCRYPT_WITH_OPENSSL)
  if (RAND_bytes(header.data() + kSaltOffset, int(kSaltLen)) != 1) throw std::runtime_error("RAND_bytes failed (OpenSSL)");
#endif
  for (const HeaderFields::Stanza& stanza : stanzas) {  // type, 16-bit body length, body
    if (body_len(stanza.type) == 0 || stanza.body.size() != body_len(stanza.type))
      throw std::invalid_argument("a stanza of type " + std::to_string(stanza.type) + " with a body of " +
                                  std::to_string(stanza.body.size()) + " bytes");
    header.push_back(stanza.type);
    header.push_back(uint8_t(stanza.body.size() >> 8));
    header.push_back(uint8_t(stanza.body.size()));
    header.insert(header.end(), stanza.body.begin(), stanza.body.end());
  }
  seal_v2_header(header, file_key, payload_key);
  return header;
}

std::vector<uint8_t> build_header_for_recipients(const std::vector<std::string>& recipients, uint32_t chunk_len,
                                                 uint8_t payload_key[kKeyLen]) {
  require_openssl();
  check_chunk_len(chunk_len);
  std::vector<std::vector<uint8_t>> public_keys;
  for (const std::string& text : recipients) {
    const std::string_view recipient = trimmed(text);
    if (starts_with(recipient, kHybridRecipient)) throw FormatError(hybrid_unsupported());
    if (!starts_with(recipient, kX25519Recipient))
      throw FormatError(starts_with(recipient, kX25519Identity) || starts_with(recipient, kHybridIdentity)
                            ? "that is an identity (a secret key), not a recipient"
                            : "not a gpucrypt recipient (expected " + std::string(kX25519Recipient) + ":...)");
    public_keys.push_back(decode_key(recipient, kX25519Recipient, 32, "the recipient"));
  }
  if (public_keys.empty()) throw FormatError("no recipient given");
  if (public_keys.size() > kMaxStanzas) throw FormatError("more than " + std::to_string(kMaxStanzas) + " recipients");
#if defined(GPUCRYPT_WITH_OPENSSL)
  uint8_t file_key[kKeyLen];
  if (RAND_bytes(file_key, int(kKeyLen)) != 1) throw std::runtime_error("RAND_bytes failed (OpenSSL)");
  std::vector<uint8_t> bodies(public_keys.size() * body_len(kX25519));
  std::vector<HeaderFields::Stanza> stanzas;
  std::vector<uint8_t> header;
  try {
    for (size_t i = 0; i < public_keys.size(); ++i) {
      const std::vector<uint8_t>& pk = public_keys[i];
      uint8_t* body = bodies.data() + i * body_len(kX25519);
      uint8_t secret[32], shared[32], wrap_key[kKeyLen];
      if (RAND_bytes(secret, sizeof secret) != 1) throw std::runtime_error("RAND_bytes failed (OpenSSL)");
      Pkey ephemeral = x25519_private(secret);
      secure_zero(secret, sizeof secret);
      x25519_public(ephemeral.get(), body);  // the ephemeral share, then the wrapped file key
      if (!x25519_shared(ephemeral.get(), pk.data(), shared))
        throw FormatError("the recipient's X25519 key is a low-order point");
      x25519_wrap_key(shared, body, pk.data(), wrap_key);
      secure_zero(shared, sizeof shared);
      wrap(wrap_key, file_key, body + 32);
      secure_zero(wrap_key, sizeof wrap_key);
      stanzas.push_back({kX25519, ByteSpan(body, body_len(kX25519))});
    }
    header = build_v2_header(chunk_len, stanzas, ByteSpan(file_key, kKeyLen), payload_key);
  } catch (...) {
    secure_zero(file_key, sizeof file_key);
    throw;
  }
  secure_zero(file_key, sizeof file_key);
  return header;
#else
  (void)payload_key;
  return {};
#endif
}

OpenedHeader open_header_with_identities(ByteSpan header, const std::vector<std::string>& identities,
                                         uint8_t payload_key[kKeyLen]) {
  require_openssl();
  const HeaderFields fields = parse_header(header, kMaxScryptLog2n);  // the one parser: FormatError for the rest
  if (fields.version == detail::kVersionKey)
    throw FormatError("this file (format version 1) was encrypted with a passphrase or key file, not to recipients: "
                      "identities cannot open it");
  const uint32_t chunk_len = fields.chunk_len;
  const size_t mac_offset = fields.header_len - kMacLen;
  const std::vector<HeaderFields::Stanza>& stanzas = fields.stanzas;
  std::vector<uint8_t> secrets = x25519_identities(identities);
#if defined(GPUCRYPT_WITH_OPENSSL)
  uint8_t file_key[kKeyLen];
  bool found = false;
  for (const HeaderFields::Stanza& stanza : stanzas) {
    if (stanza.type != kX25519) continue;
    const uint8_t* share = stanza.body.data();
    for (size_t at = 0; at < secrets.size() && !found; at += 32) {
      Pkey identity = x25519_private(secrets.data() + at);
      uint8_t pk[32], shared[32], wrap_key[kKeyLen];
      x25519_public(identity.get(), pk);
      if (!x25519_shared(identity.get(), share, shared))
        throw FormatError("damaged x25519 stanza: its X25519 share is a low-order point");
      x25519_wrap_key(shared, share, pk, wrap_key);
      secure_zero(shared, sizeof shared);
      found = unwrap(wrap_key, share + 32, file_key);
      secure_zero(wrap_key, sizeof wrap_key);
    }
    if (found) break;
  }
  secure_zero(secrets.data(), secrets.size());
  if (!found) {
    std::string present;
    for (const HeaderFields::Stanza& stanza : stanzas)
      if (present.find(stanza_name(stanza.type)) == std::string::npos)
        present += std::string(present.empty() ? "" : ", ") + stanza_name(stanza.type);
    throw DecryptionError("no identity given matches a recipient of this file (its stanzas: " + present +
                              "; given: x25519); the identity is wrong or missing, or the stanza was damaged",
                          UINT64_MAX);
  }
  try {
    open_v2_header(header.first(mac_offset + kMacLen), ByteSpan(file_key, kKeyLen), payload_key);
  } catch (...) {
    secure_zero(file_key, sizeof file_key);
    throw;
  }
  secure_zero(file_key, sizeof file_key);
#else
  (void)payload_key;
#endif
  return {chunk_len, mac_offset + kMacLen};
}

}  // namespace gpucrypt::format
