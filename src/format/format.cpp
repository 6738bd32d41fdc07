// format.cpp: see include/gpucrypt/format.hpp and docs/file-format.md.
//
// Constant-time: the header MAC comparison is modes::constant_time_equal; HKDF/HMAC are
// OpenSSL's; chunks run on a constant-time variant unless the caller names another; branches
// depend only on lengths and chunk indices. The known-answer check compares public test data.
#include "gpucrypt/format.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "format/header_crypto.hpp"
#include "gpucrypt/batch.hpp"
#include "modes/block_cipher.hpp"

#if defined(GPUCRYPT_WITH_OPENSSL)
#include <openssl/rand.h>
#endif

namespace gpucrypt::format {

namespace {

using detail::kMagic;
using detail::kSaltLen;
using detail::kSaltOffset;
using detail::kSuiteAes256Gcm;
using detail::kVersionKey;
using detail::kVersionRecipients;
constexpr uint8_t kKdfScrypt = 1;
constexpr uint8_t kKdfRawKey = 2;
constexpr size_t kPrefixLen = detail::kFixedLen;  // the header bytes the MAC covers
constexpr char kHkdfInfoLabel[] = "gpucrypt/v1/keys";
constexpr char kAead[] = "aes-256-gcm";

}  // namespace

std::string suite_name(int suite) {
  if (suite != kSuiteAes256Gcm) throw FormatError("unknown cipher suite " + std::to_string(suite));
  return "AES-256-GCM";
}

int suite_of_aead(std::string_view aead_name) {
  if (aead_name != kAead)
    throw FormatError("unknown cipher suite '" + std::string(aead_name) + "' (known: " + kAead + ")");
  return kSuiteAes256Gcm;
}

namespace {

uint32_t load_be32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }
void store_be32(uint8_t* p, uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) p[i] = uint8_t(v);
}

void check_key(ByteSpan key) {
  if (key.size() != kKeyLen)
    throw FormatError("the file format's raw key is " + std::to_string(kKeyLen) + " bytes, got " +
                      std::to_string(key.size()));
}

// (header MAC key, payload key) = HKDF-SHA256(ikm, salt, "gpucrypt/v1/keys" || prefix), 64 bytes.
void derive_keys(ByteSpan ikm, const uint8_t* prefix, uint8_t mac_key[kKeyLen], uint8_t payload_key[kKeyLen]) {
  std::vector<uint8_t> info(kHkdfInfoLabel, kHkdfInfoLabel + sizeof kHkdfInfoLabel - 1);
  info.insert(info.end(), prefix, prefix + kPrefixLen);
  uint8_t okm[2 * kKeyLen];
  detail::hkdf_sha256(ikm, ByteSpan(prefix + kSaltOffset, kSaltLen), info, okm, sizeof okm);
  std::memcpy(mac_key, okm, kKeyLen);
  std::memcpy(payload_key, okm + kKeyLen, kKeyLen);
  secure_zero(okm, sizeof okm);
}

void header_mac(const uint8_t mac_key[kKeyLen], const uint8_t* prefix, uint8_t mac[32]) {
  detail::hmac_sha256(ByteSpan(mac_key, kKeyLen), ByteSpan(prefix, kPrefixLen), mac);
}

std::string chunk_range_name(uint64_t first, uint64_t count) {
  return "chunks " + std::to_string(first) + ".." + std::to_string(first + count - 1);
}

void check_range(const Layout& layout, uint64_t first, uint64_t count, size_t data_len, bool sealed) {
  if (first + count > layout.num_chunks() || first + count < first)
    throw std::invalid_argument(chunk_range_name(first, count) + " are outside this file's " +
                                std::to_string(layout.num_chunks()) + " chunks");
  const uint64_t expected = (sealed ? layout.sealed_range(first, count) : layout.plaintext_range(first, count)).second;
  if (data_len != expected)
    throw std::invalid_argument(chunk_range_name(first, count) + " are " + std::to_string(expected) + " bytes, got " +
                                std::to_string(data_len));
}

DecryptionError chunk_failure(uint64_t index, const Layout& layout) {
  if (index + 1 == layout.num_chunks())
    return DecryptionError("chunk " + std::to_string(index) +
                               " failed authentication as the final chunk (file truncated, modified, or followed "
                               "by extra data)",
                           index);
  return DecryptionError("chunk " + std::to_string(index) + " failed authentication (modified, reordered or duplicated chunk)",
                         index);
}

std::string resolve_variant(std::string_view device, std::string_view variant) {
  return variant.empty() ? constant_time_variant("aes", device, "gcm") : std::string(variant);
}

// One packed batch of AES-256-GCM messages (no AAD, kTagLen-byte tags) through the engine: message
// i is lengths[i] bytes of `input` (plaintext when sealing, ciphertext || tag when opening), under
// keys[i] and nonces + i * kNonceLen, its output at the same offset of `out` (packed form).
engine::BatchResult run_gcm_batch(bool seal, const std::vector<ByteSpan>& keys, const uint8_t* nonces,
                                  const std::vector<uint64_t>& lengths, ByteSpan input, MutableByteSpan out,
                                  std::string_view device, const std::string& variant) {
  engine::BatchBuilder builder;
  builder.reserve(lengths.size());
  engine::Suite suite;
  suite.operation = seal ? engine::Operation::seal : engine::Operation::open;
  suite.cipher = parse_cipher_name(kAead);
  suite.tag_len = kTagLen;
  suite.variant = variant;
  const uint32_t suite_index = builder.add_suite(suite);
  uint64_t offset = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    builder.add_packed(suite_index, keys[i], ByteSpan(nonces + i * kNonceLen, kNonceLen), {}, offset, lengths[i]);
    offset += lengths[i];
  }
  engine::BatchPlan plan = builder.build_packed(input, out);
  return engine::run_batch(plan, device);
}

// ---- the known-answer check before a device's first chunk ----------------------------------------

std::vector<uint8_t> from_hex(std::string_view hex) {
  std::vector<uint8_t> bytes(hex.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(std::stoi(std::string(hex.substr(2 * i, 2)), nullptr, 16));
  return bytes;
}

std::string to_hex(ByteSpan bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t b : bytes) hex += {kDigits[b >> 4], kDigits[b & 15]};
  return hex;
}

// NIST CAVP gcmEncryptExtIV256.rsp (tests/vectors/nist/aes/GCM), [Keylen = 256] [IVlen = 96]
// [AADlen = 0] [Taglen = 128], Count = 0 of [PTlen = 256] and [PTlen = 408]: the format's suite
// and shape, one message of whole blocks and one ending in a partial block, each with its own key.
constexpr detail::GcmAnswer kGcmAnswers[] = {
    {"268ed1b5d7c9c7304f9cae5fc437b4cd3aebe2ec65f0d85c3918d3d3b5bba89b", "9ed9d8180564e0e945f5e5d4",
     "fe29a40d8ebf57262bdb87191d01843f4ca4b2de97d88273154a0b7d9e2fdb80",
     "791a4a026f16f3a5ea06274bf02baab469860abde5e645f3dd473a5acddeecfc" "05b2b74db0662550435ef1900e136b15"},
    {"1fded32d5999de4a76e0f8082108823aef60417e1896cf4218a2fa90f632ec8a", "1f3afa4711e9474f32e70462",
     "06b2c75853df9aeb17befd33cea81c630b0fc53667ff45199c629c8e15dce41e530aa792f796b8138eeab2e86c7b7bee1d40b0",
     "91fbd061ddc5a7fcc9513fcdfdc9c3a7c5d4d64cedf6a9c24ab8a77c36eefbf1c5dc00bc50121b96456c8cd8b6ff1f8b3e480f"
     "30096d340f3d5c42d82a6f475def23eb"},
};

}  // namespace

namespace detail {

void check_gcm_answers(std::string_view device, const std::string& variant, std::span<const GcmAnswer> answers) {
  std::vector<std::vector<uint8_t>> keys;
  std::vector<ByteSpan> key_spans;
  std::vector<uint8_t> nonces, plaintext, sealed;
  std::vector<uint64_t> plain_lengths, sealed_lengths;
  for (const GcmAnswer& answer : answers) {
    keys.push_back(from_hex(answer.key));
    const auto nonce = from_hex(answer.nonce), plain = from_hex(answer.plaintext), expected = from_hex(answer.sealed);
    nonces.insert(nonces.end(), nonce.begin(), nonce.end());
    plaintext.insert(plaintext.end(), plain.begin(), plain.end());
    sealed.insert(sealed.end(), expected.begin(), expected.end());
    plain_lengths.push_back(plain.size());
    sealed_lengths.push_back(expected.size());
  }
  for (const auto& key : keys) key_spans.emplace_back(key);
  const auto refuse = [&](const std::string& what) {
    throw DeviceError("device '" + std::string(device) + "' failed the file format's known-answer check (" + kAead +
                      ", variant " + variant + ", NIST CAVP records): " + what +
                      "; it is not used for the format's chunks");
  };
  // Seal: ciphertext and tags; open: the plaintext back, every tag accepted. Outputs are poisoned
  // first, so that a kernel that writes nothing cannot pass.
  std::vector<uint8_t> got(sealed.size(), 0xa5);
  engine::BatchResult result = run_gcm_batch(true, key_spans, nonces.data(), plain_lengths, plaintext, got, device, variant);
  if (got != sealed) refuse("sealed " + to_hex(got) + ", expected " + to_hex(sealed));
  std::vector<uint8_t> opened(plaintext.size(), 0x5a);
  result = run_gcm_batch(false, key_spans, nonces.data(), sealed_lengths, sealed, opened, device, variant);
  for (engine::RequestStatus status : result.status)
    if (status != engine::RequestStatus::ok) refuse("a known-good tag was rejected");
  if (opened != plaintext) refuse("opened " + to_hex(opened) + ", expected " + to_hex(plaintext));
}

}  // namespace detail

void check_device_answers(std::string_view device, std::string_view variant) {
  // Each (device, variant) once per process, a device's first check not holding up another's (a
  // GPU's first batch includes its context's start-up). A check that throws is not marked
  // passed, so the next call checks, and fails, again.
  struct Check {
    std::mutex mutex;
    bool passed = false;
  };
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<Check>> checks;
  const std::string resolved = resolve_variant(device, variant);
  std::shared_ptr<Check> check;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto& entry = checks[std::string(device) + '/' + resolved];
    if (!entry) entry = std::make_shared<Check>();
    check = entry;
  }
  std::lock_guard<std::mutex> lock(check->mutex);
  if (check->passed) return;
  detail::check_gcm_answers(device, resolved, kGcmAnswers);
  check->passed = true;
}

namespace {

// One batch of `count` chunks through the engine, after the device's known-answer check.
engine::BatchResult run_chunks(bool seal, ByteSpan payload_key, const Layout& layout, uint64_t first, uint64_t count,
                               ByteSpan input, MutableByteSpan out, std::string_view device, std::string_view variant) {
  const std::string resolved = resolve_variant(device, variant);
  check_device_answers(device, resolved);
  std::vector<uint8_t> nonces(count * kNonceLen);
  std::vector<uint64_t> lengths(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t index = first + i;
    chunk_nonce(index, index + 1 == layout.num_chunks(), nonces.data() + i * kNonceLen);
    lengths[i] = layout.chunk_plaintext_len(index) + (seal ? 0 : kTagLen);
  }
  return run_gcm_batch(seal, std::vector<ByteSpan>(count, payload_key), nonces.data(), lengths, input, out, device,
                       resolved);
}

}  // namespace

std::pair<uint64_t, uint64_t> Layout::plaintext_range(uint64_t first, uint64_t count) const {
  const uint64_t offset = first * chunk_len;
  const uint64_t available = plaintext_len > offset ? plaintext_len - offset : 0;
  return {offset, std::min<uint64_t>(count * chunk_len, available)};
}

std::pair<uint64_t, uint64_t> Layout::sealed_range(uint64_t first, uint64_t count) const {
  const auto [offset, length] = plaintext_range(first, count);
  return {kHeaderLen + offset + kTagLen * first, length + kTagLen * count};
}

void check_chunk_len(uint64_t chunk_len) {
  if (chunk_len < kMinChunkLen || chunk_len > kMaxChunkLen)
    throw FormatError("chunk size " + std::to_string(chunk_len) + " is outside " + std::to_string(kMinChunkLen) +
                      ".." + std::to_string(kMaxChunkLen) + " bytes");
}

Layout layout_for_file(uint64_t file_len, uint32_t chunk_len, uint64_t header_len) {
  check_chunk_len(chunk_len);
  if (file_len < header_len) throw FormatError("file shorter than its " + std::to_string(header_len) + "-byte header");
  const uint64_t body_len = file_len - header_len, full_len = uint64_t(chunk_len) + kTagLen;
  const uint64_t num_full = body_len / full_len, rest = body_len % full_len;
  if (rest == 0)
    throw DecryptionError("file truncated: the final chunk is missing (" +
                              (num_full ? "after chunk " + std::to_string(num_full - 1) : std::string("after the header")) +
                              ")",
                          num_full);
  if (rest < kTagLen)
    throw DecryptionError("file truncated: chunk " + std::to_string(num_full) + " has " + std::to_string(rest) +
                              " bytes, fewer than its " + std::to_string(kTagLen) + "-byte tag",
                          num_full);
  return Layout{chunk_len, num_full * chunk_len + rest - kTagLen};
}

void chunk_nonce(uint64_t index, bool is_final, uint8_t nonce[kNonceLen]) {
  // 11-byte big-endian index: a uint64_t index fills the low 8 bytes, the top 3 are zero.
  std::memset(nonce, 0, kNonceLen);
  for (int i = 10; i >= 3; --i, index >>= 8) nonce[i] = uint8_t(index);
  nonce[11] = is_final ? 1 : 0;
}

ChunkRun run_of(const engine::BatchResult& result) {
  return {result.suite_variants.empty() ? "" : result.suite_variants[0], result.timings.h2d_s, result.timings.compute_s,
          result.timings.d2h_s};
}

ChunkRun seal_chunks(ByteSpan payload_key, const Layout& layout, uint64_t first, uint64_t count, ByteSpan plaintext,
                        MutableByteSpan out, std::string_view device, std::string_view variant) {
  check_range(layout, first, count, plaintext.size(), false);
  if (out.size() < layout.sealed_range(first, count).second)
    throw std::invalid_argument("seal_chunks: output buffer too small");
  engine::BatchResult result = run_chunks(true, payload_key, layout, first, count, plaintext, out, device, variant);
  for (size_t i = 0; i < result.status.size(); ++i)
    if (result.status[i] != engine::RequestStatus::ok) throw std::runtime_error(chunk_range_name(first + i, 1) + ": seal failed");
  return run_of(result);
}

ChunkRun open_chunks(ByteSpan payload_key, const Layout& layout, uint64_t first, uint64_t count, ByteSpan sealed,
                        MutableByteSpan out, std::string_view device, std::string_view variant) {
  check_range(layout, first, count, sealed.size(), true);
  if (out.size() < layout.plaintext_range(first, count).second)
    throw std::invalid_argument("open_chunks: output buffer too small");
  engine::BatchResult result = run_chunks(false, payload_key, layout, first, count, sealed, out, device, variant);
  for (size_t i = 0; i < result.status.size(); ++i)
    if (result.status[i] != engine::RequestStatus::ok) throw chunk_failure(first + i, layout);
  return run_of(result);
}

void detail::check_scrypt_log2n(int log2n, int max_log2n) {
  if (log2n < 1) throw FormatError("invalid scrypt work factor " + std::to_string(log2n));
  if (log2n > max_log2n)
    throw FormatError("scrypt work factor 2^" + std::to_string(log2n) + " exceeds the limit 2^" +
                      std::to_string(max_log2n) + "; refusing to spend that much time and memory on an untrusted file");
}

HeaderFields parse_header(ByteSpan data, int max_scrypt_log2n) {
  const size_t n = data.size();
  const bool magic_ok = n >= sizeof kMagic && std::memcmp(data.data(), kMagic, sizeof kMagic) == 0;
  if (!magic_ok) {
    if (n == 0) throw FormatError("not a gpucrypt file: the input is empty");
    if (n < sizeof kMagic && std::memcmp(data.data(), kMagic, n) == 0)
      throw FormatError("file truncated inside the header (" + std::to_string(n) + " of " + std::to_string(kHeaderLen) +
                        " bytes)");
    throw FormatError("not a gpucrypt file (bad magic)");
  }
  if (n > sizeof kMagic && data[8] != kVersionKey && data[8] != kVersionRecipients)
    throw FormatError("unsupported file format version " + std::to_string(data[8]) + " (this gpucrypt reads versions " +
                      std::to_string(kVersionKey) + " and " + std::to_string(kVersionRecipients) + ")");
  HeaderFields fields;
  if (n >= kPrefixLen && data[8] == kVersionRecipients) {
    fields.version = kVersionRecipients;
    fields.suite = data[9];
    if (fields.suite != kSuiteAes256Gcm) throw FormatError("unknown cipher suite " + std::to_string(fields.suite));
    fields.chunk_len = load_be32(data.data() + 12);
    check_chunk_len(fields.chunk_len);
    size_t mac_offset = 0;
    for (const detail::StanzaAt& at : detail::parse_stanzas(data, mac_offset, max_scrypt_log2n)) {
      fields.stanzas.push_back({at.type, data.subspan(at.offset, at.len)});
      if (at.type == detail::kScryptStanza) fields.scrypt_log2n = data[at.offset];  // its first body byte
    }
    fields.kdf = "recipients";
    fields.header_len = mac_offset + detail::kMacLen;
    fields.salt = data.subspan(kSaltOffset, kSaltLen);
    fields.mac = data.subspan(mac_offset, detail::kMacLen);
    return fields;
  }
  if (n < kHeaderLen)
    throw FormatError("file truncated inside the header (" + std::to_string(n) + " of " + std::to_string(kHeaderLen) +
                      " bytes)");
  fields.version = kVersionKey;
  fields.suite = data[9];
  if (fields.suite != kSuiteAes256Gcm) throw FormatError("unknown cipher suite " + std::to_string(fields.suite));
  if (data[10] != kKdfScrypt && data[10] != kKdfRawKey) throw FormatError("unknown key derivation " + std::to_string(data[10]));
  if (data[10] == kKdfScrypt) {
    detail::check_scrypt_log2n(data[11], max_scrypt_log2n);
    fields.scrypt_log2n = data[11];
  } else if (data[11] != 0) {
    throw FormatError("invalid header: key-file encryption takes no KDF parameter");
  }
  fields.kdf = data[10] == kKdfScrypt ? "scrypt" : "key";
  fields.chunk_len = load_be32(data.data() + 12);
  check_chunk_len(fields.chunk_len);
  fields.header_len = kHeaderLen;
  fields.salt = data.subspan(kSaltOffset, kSaltLen);
  fields.mac = data.subspan(kPrefixLen, kHeaderLen - kPrefixLen);
  return fields;
}

namespace {

constexpr char kScryptSaltLabel[] = "gpucrypt/v1/scrypt";

// A version 1 header's input keying material: the raw key itself, or scrypt of the passphrase
// salted with "gpucrypt/v1/scrypt" || the header's salt at the header's work factor.
ByteSpan input_keying_material(const uint8_t* prefix, ByteSpan secret, uint8_t scratch[kKeyLen]) {
  if (prefix[10] == kKdfRawKey) {
    check_key(secret);
    return secret;
  }
  if (secret.empty()) throw std::invalid_argument("the passphrase is empty");
  std::vector<uint8_t> salt(kScryptSaltLabel, kScryptSaltLabel + sizeof kScryptSaltLabel - 1);
  salt.insert(salt.end(), prefix + kSaltOffset, prefix + kSaltOffset + kSaltLen);
  detail::scrypt(secret, salt, prefix[11], scratch);
  return ByteSpan(scratch, kKeyLen);
}

// Version 1 for a raw key (kdf 2) or a passphrase (kdf 1, scrypt at 2^log2n), fresh salt.
std::vector<uint8_t> build_header_v1(uint8_t kdf, int log2n, ByteSpan secret, uint32_t chunk_len,
                                     uint8_t payload_key[kKeyLen], ByteSpan salt) {
  check_chunk_len(chunk_len);
  if (kdf == kKdfScrypt && (log2n < 1 || log2n > kMaxScryptLog2n))
    throw FormatError("scrypt work factor must be 1.." + std::to_string(kMaxScryptLog2n) + " (log2 N), got " +
                      std::to_string(log2n));
  std::vector<uint8_t> header(kHeaderLen, 0);
  std::memcpy(header.data(), kMagic, sizeof kMagic);
  header[8] = kVersionKey;
  header[9] = kSuiteAes256Gcm;
  header[10] = kdf;
  header[11] = kdf == kKdfScrypt ? uint8_t(log2n) : 0;
  store_be32(header.data() + 12, chunk_len);
  if (!salt.empty()) {
    if (salt.size() != kSaltLen) throw std::invalid_argument("the header's salt is " + std::to_string(kSaltLen) + " bytes");
    std::memcpy(header.data() + kSaltOffset, salt.data(), kSaltLen);
  } else {
#if defined(GPUCRYPT_WITH_OPENSSL)
    if (RAND_bytes(header.data() + kSaltOffset, kSaltLen) != 1) throw std::runtime_error("RAND_bytes failed (OpenSSL)");
#endif
  }
  uint8_t scratch[kKeyLen], mac_key[kKeyLen];
  derive_keys(input_keying_material(header.data(), secret, scratch), header.data(), mac_key, payload_key);
  header_mac(mac_key, header.data(), header.data() + kPrefixLen);
  secure_zero(scratch, sizeof scratch);
  secure_zero(mac_key, sizeof mac_key);
  return header;
}

// Checks a version 1 header and opens it with `secret` of the kind the header names (a
// mismatch is a FormatError saying which was given); returns the chunk length.
uint32_t open_header_v1(ByteSpan header, ByteSpan secret, bool passphrase, int max_log2n,
                        uint8_t payload_key[kKeyLen]) {
  const HeaderFields fields = parse_header(header, max_log2n);  // the one parser: FormatError for what it cannot read
  if (fields.version == kVersionRecipients)
    throw FormatError("this file (format version 2) was encrypted to recipients: open it with an identity, not a " +
                      std::string(passphrase ? "passphrase" : "key"));
  if (fields.kdf == "scrypt" && !passphrase)
    throw FormatError("this file was encrypted with a passphrase, but a key was given");
  if (fields.kdf == "key" && passphrase)
    throw FormatError("this file was encrypted with a key file, but a passphrase was given");
  const uint32_t chunk_len = fields.chunk_len;
  uint8_t scratch[kKeyLen], mac_key[kKeyLen], mac[32];
  derive_keys(input_keying_material(header.data(), secret, scratch), header.data(), mac_key, payload_key);
  header_mac(mac_key, header.data(), mac);
  secure_zero(scratch, sizeof scratch);
  secure_zero(mac_key, sizeof mac_key);
  if (!modes::constant_time_equal(mac, header.data() + kPrefixLen, sizeof mac)) {
    secure_zero(payload_key, kKeyLen);
    throw DecryptionError("wrong passphrase or key (header authentication failed; the header may also have been modified)",
                          UINT64_MAX);
  }
  return chunk_len;
}

}  // namespace

std::vector<uint8_t> build_header_with_key(ByteSpan key, uint32_t chunk_len, uint8_t payload_key[kKeyLen],
                                           ByteSpan salt) {
  check_key(key);
  return build_header_v1(kKdfRawKey, 0, key, chunk_len, payload_key, salt);
}

uint32_t open_header_with_key(ByteSpan header, ByteSpan key, uint8_t payload_key[kKeyLen]) {
  check_key(key);
  return open_header_v1(header, key, false, kMaxScryptLog2n, payload_key);
}

std::vector<uint8_t> build_header_with_passphrase(ByteSpan passphrase, int scrypt_log2n, uint32_t chunk_len,
                                                  uint8_t payload_key[kKeyLen], ByteSpan salt) {
  if (passphrase.empty()) throw std::invalid_argument("the passphrase is empty");
  return build_header_v1(kKdfScrypt, scrypt_log2n, passphrase, chunk_len, payload_key, salt);
}

uint32_t open_header_with_passphrase(ByteSpan header, ByteSpan passphrase, int max_scrypt_log2n,
                                     uint8_t payload_key[kKeyLen]) {
  return open_header_v1(header, passphrase, true, max_scrypt_log2n, payload_key);
}

std::vector<uint8_t> build_header(const HeaderSecret& secret, int scrypt_log2n, uint32_t chunk_len, ByteSpan salt,
                                  std::optional<int64_t> available, uint8_t payload_key[kKeyLen]) {
  using Kind = HeaderSecret::Kind;
  const bool scrypt_runs = secret.wrap || secret.kind == Kind::passphrase;
  if (scrypt_runs && (scrypt_log2n < 1 || scrypt_log2n > kMaxScryptLog2n))
    throw FormatError("scrypt work factor must be 1.." + std::to_string(kMaxScryptLog2n) + " (log2 N), got " +
                      std::to_string(scrypt_log2n));
  if (secret.wrap) {
#if defined(GPUCRYPT_WITH_OPENSSL)
    uint8_t file_key[kKeyLen];
    struct Wipe {
      uint8_t* key;
      ~Wipe() { secure_zero(key, kKeyLen); }
    } wipe{file_key};
    if (RAND_bytes(file_key, int(kKeyLen)) != 1) throw std::runtime_error("RAND_bytes failed (OpenSSL)");
    const auto wrapped = secret.wrap(ByteSpan(file_key, kKeyLen));
    std::vector<HeaderFields::Stanza> stanzas;
    for (const auto& [type, body] : wrapped) stanzas.push_back({type, ByteSpan(body)});
    return build_v2_header(chunk_len, stanzas, ByteSpan(file_key, kKeyLen), payload_key);
#else
    throw std::runtime_error("format version 2 needs OpenSSL (this build has none)");
#endif
  }
  if (secret.kind == Kind::passphrase) {
    check_scrypt_memory(scrypt_log2n, available);
    return build_header_with_passphrase(secret.bytes, scrypt_log2n, chunk_len, payload_key, salt);
  }
  if (secret.kind == Kind::key) return build_header_with_key(secret.bytes, chunk_len, payload_key, salt);
  throw FormatError("a header is built for a passphrase, a key or recipients");
}

OpenedHeader open_header(ByteSpan header, const HeaderSecret& secret, int max_scrypt_log2n,
                         std::optional<int64_t> available, uint8_t payload_key[kKeyLen]) {
  using Kind = HeaderSecret::Kind;
  const HeaderFields fields = parse_header(header, max_scrypt_log2n);
  const ByteSpan whole = header.first(fields.header_len);
  if (fields.version == kVersionRecipients && secret.kind == Kind::file_key) {
    open_v2_header(whole, secret.bytes, payload_key);
    return {fields.chunk_len, fields.header_len};
  }
  if (fields.version == kVersionKey && secret.kind != Kind::passphrase && secret.kind != Kind::key)
    throw FormatError("this file (format version 1) was encrypted with a passphrase or a key file, not to "
                      "recipients: identities cannot open it");
  if (secret.kind == Kind::passphrase && fields.kdf == "scrypt") check_scrypt_memory(fields.scrypt_log2n, available);
  // Version 2 with a passphrase or a key: open_header_v1 names the mismatch.
  const uint32_t chunk_len = open_header_v1(whole, secret.bytes, secret.kind == Kind::passphrase,
                                            max_scrypt_log2n, payload_key);
  return {chunk_len, fields.header_len};
}

void scrypt(ByteSpan passphrase, ByteSpan salt, int log2n, uint8_t out[kKeyLen]) {
  if (log2n < 1 || log2n > 63) throw FormatError("invalid scrypt work factor " + std::to_string(log2n));
  detail::scrypt(passphrase, salt, log2n, out);
}

// ---- streaming ---------------------------------------------------------------------------------

// A one-chunk layout view: chunk `index` of a stream whose length is not known yet. A chunk is
// sealed or opened alone as the only chunk of a range, with the final flag given explicitly.
namespace {
void seal_one(ByteSpan payload_key, uint64_t index, bool is_final, uint32_t chunk_len, ByteSpan plaintext,
                     uint8_t* out, std::string_view device, std::string_view variant) {
  // A layout in which chunk `index` has plaintext.size() bytes and is final exactly when asked.
  const Layout layout{chunk_len, index * uint64_t(chunk_len) + plaintext.size() + (is_final ? 0 : chunk_len)};
  seal_chunks(payload_key, layout, index, 1, plaintext, MutableByteSpan(out, plaintext.size() + kTagLen), device, variant);
}
}  // namespace

Sealer::Sealer(ByteSpan key, uint32_t chunk_len, std::string_view device, std::string_view variant)
    : chunk_len_(chunk_len), device_(device), variant_(variant) {
  header_ = build_header_with_key(key, chunk_len, payload_key_);
  pending_.reserve(chunk_len);
}

Sealer::Sealer(const std::vector<std::string>& recipients, uint32_t chunk_len, std::string_view device,
               std::string_view variant)
    : chunk_len_(chunk_len), device_(device), variant_(variant) {
  header_ = build_header_for_recipients(recipients, chunk_len, payload_key_);
  pending_.reserve(chunk_len);
}

Sealer::~Sealer() {
  secure_zero(payload_key_, sizeof payload_key_);
  secure_zero(pending_.data(), pending_.size());
}

void Sealer::seal_pending(bool is_final, std::vector<uint8_t>& out) {
  const size_t at = out.size();
  out.resize(at + pending_.size() + kTagLen);
  seal_one(ByteSpan(payload_key_, kKeyLen), next_index_, is_final, chunk_len_, pending_, out.data() + at, device_,
           variant_);
  ++next_index_;
  secure_zero(pending_.data(), pending_.size());
  pending_.clear();
}

void Sealer::update(ByteSpan data, std::vector<uint8_t>& out) {
  if (finished_) throw std::logic_error("Sealer::update after finish");
  // A full chunk is sealed as non-final only when more data follows it: keep it until then.
  if (!pending_.empty() || data.size() <= chunk_len_) {
    const size_t take = std::min<size_t>(data.size(), chunk_len_ - pending_.size());
    pending_.insert(pending_.end(), data.begin(), data.begin() + take);
    data = data.subspan(take);
    if (data.empty()) return;
    seal_pending(false, out);
  }
  // Every whole chunk of `data` with a byte after it, straight from the caller's buffer in one
  // run: the batch engine spreads a run over the device (every core of the CPU pool), where one
  // chunk per call would leave all but one core idle and pay the call's fixed cost per chunk.
  const uint64_t run = (data.size() - 1) / chunk_len_;
  if (run > 0) {
    const uint64_t run_len = run * chunk_len_;
    // A layout in which the run's chunks are full and followed by one more chunk: none is final.
    const Layout layout{chunk_len_, (next_index_ + run) * uint64_t(chunk_len_)};
    const size_t at = out.size();
    out.resize(at + run_len + run * kTagLen);
    seal_chunks(ByteSpan(payload_key_, kKeyLen), layout, next_index_, run, data.first(run_len),
                MutableByteSpan(out.data() + at, run_len + run * kTagLen), device_, variant_);
    next_index_ += run;
    data = data.subspan(run_len);
  }
  pending_.insert(pending_.end(), data.begin(), data.end());  // 1 .. chunk_len bytes
}

void Sealer::finish(std::vector<uint8_t>& out) {
  if (finished_) throw std::logic_error("Sealer::finish twice");
  if (pending_.size() == chunk_len_) seal_pending(false, out);  // a full chunk is never final
  seal_pending(true, out);
  finished_ = true;
}

Opener::Opener(ByteSpan key, std::string_view device, std::string_view variant)
    : key_(key.begin(), key.end()), device_(device), variant_(variant) {
  check_key(key);
}

Opener::Opener(std::vector<std::string> identities, std::string_view device, std::string_view variant)
    : identities_(std::move(identities)), device_(device), variant_(variant) {
  if (identities_.empty()) throw FormatError("no identity given");
}

Opener::~Opener() {
  secure_zero(key_.data(), key_.size());
  secure_zero(payload_key_, sizeof payload_key_);
}

void Opener::open_chunk(ByteSpan sealed, bool is_final, std::vector<uint8_t>& out) {
  const size_t plain_len = sealed.size() - kTagLen;
  const Layout layout{chunk_len_, next_index_ * uint64_t(chunk_len_) + plain_len + (is_final ? 0 : chunk_len_)};
  const size_t at = out.size();
  out.resize(at + plain_len);
  try {
    open_chunks(ByteSpan(payload_key_, kKeyLen), layout, next_index_, 1, sealed, MutableByteSpan(out.data() + at, plain_len),
                device_, variant_);
  } catch (...) {
    out.resize(at);  // nothing of a failed chunk is released
    throw;
  }
  ++next_index_;
}

void Opener::update(ByteSpan data, std::vector<uint8_t>& out) {
  if (finished_) throw std::logic_error("Opener::update after finish");
  pending_.insert(pending_.end(), data.begin(), data.end());
  size_t used = 0;
  if (!have_header_) {
    if (identities_.empty()) {
      if (pending_.size() < kHeaderLen) return;
      chunk_len_ = open_header_with_key(ByteSpan(pending_.data(), kHeaderLen), key_, payload_key_);
      used = kHeaderLen;
    } else {
      // A version 2 header's length shows stanza by stanza; 80 bytes or a bad header end the wait
      // (open_header_with_identities then names what is wrong).
      const auto [header_len, known] = header_len_known(pending_);
      if (!known || pending_.size() < header_len) return;
      const OpenedHeader opened = open_header_with_identities(pending_, identities_, payload_key_);
      chunk_len_ = opened.chunk_len;
      used = opened.header_len;
    }
    have_header_ = true;
  }
  const size_t full = size_t(chunk_len_) + kTagLen;
  // A full-length chunk is not final only if at least one more byte follows it. Every such chunk
  // opens in one run (see Sealer::update); a run that fails releases only the chunks before the
  // first failed one, which authenticated, as opening them one by one would have.
  const uint64_t run = (pending_.size() - used) > full ? (pending_.size() - used - 1) / full : 0;
  if (run > 0) {
    const Layout layout{chunk_len_, (next_index_ + run) * uint64_t(chunk_len_)};
    const size_t at = out.size(), run_plain_len = run * chunk_len_;
    out.resize(at + run_plain_len);
    try {
      open_chunks(ByteSpan(payload_key_, kKeyLen), layout, next_index_, run, ByteSpan(pending_.data() + used, run * full),
                  MutableByteSpan(out.data() + at, run_plain_len), device_, variant_);
    } catch (const DecryptionError& failure) {
      const uint64_t good = failure.chunk_index - next_index_;
      secure_zero(out.data() + at + good * chunk_len_, run_plain_len - good * chunk_len_);
      out.resize(at + good * chunk_len_);
      next_index_ = failure.chunk_index;
      throw;
    } catch (...) {
      secure_zero(out.data() + at, run_plain_len);
      out.resize(at);
      throw;
    }
    next_index_ += run;
    used += run * full;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(used));
}

void Opener::finish(std::vector<uint8_t>& out) {
  if (finished_) throw std::logic_error("Opener::finish twice");
  finished_ = true;
  if (!have_header_ && !identities_.empty() && pending_.size() >= sizeof kMagic &&
      std::memcmp(pending_.data(), kMagic, sizeof kMagic) == 0) {
    // A version 2 header is longer than 80 bytes: say how far it got.
    const auto [header_len, known] = header_len_known(pending_);
    throw FormatError("file truncated inside the header (" + std::to_string(pending_.size()) + " of " +
                      (known ? "" : "at least ") + std::to_string(header_len) + " bytes)");
  }
  if (!have_header_)
    throw FormatError("not a gpucrypt file: " + std::to_string(pending_.size()) + " bytes, fewer than the " +
                      std::to_string(kHeaderLen) + "-byte header");
  const size_t full = size_t(chunk_len_) + kTagLen;
  if (pending_.empty())
    throw DecryptionError("file truncated: the final chunk is missing (" +
                              (next_index_ ? "after chunk " + std::to_string(next_index_ - 1) : std::string("after the header")) +
                              ")",
                          next_index_);
  if (pending_.size() == full) {
    // A full chunk at the end: it is not final (full chunks never are), so the final one is missing.
    open_chunk(pending_, false, out);
    throw DecryptionError("file truncated: the final chunk is missing (after chunk " + std::to_string(next_index_ - 1) + ")",
                          next_index_);
  }
  if (pending_.size() < kTagLen)
    throw DecryptionError("file truncated: chunk " + std::to_string(next_index_) + " has " + std::to_string(pending_.size()) +
                              " bytes, fewer than its " + std::to_string(kTagLen) + "-byte tag",
                          next_index_);
  open_chunk(pending_, true, out);
  pending_.clear();
}

}  // namespace gpucrypt::format
