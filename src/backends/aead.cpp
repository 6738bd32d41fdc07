// aead.cpp: the AEAD names and their rules (gpucrypt/aead.hpp): which names exist, what each
// takes (key, nonce and tag lengths, message limits) and the one error each rule raises. Every
// backend's AEAD and every entry point (C++, C API, Python) reads the rules from here.
#include <stdexcept>
#include <string>

#include "gpucrypt/aead.hpp"
#include "modes/gcm.hpp"

namespace gpucrypt {

namespace {

constexpr std::string_view kSivSuffix = "-gcm-siv";
// RFC 8452 section 6: P_MAX = A_MAX = 2^36 bytes.
constexpr uint64_t kGcmSivMaxLen = uint64_t{1} << 36;
constexpr size_t kGcmSivNonceLen = 12, kGcmSivTagLen = 16;

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

[[noreturn]] void bad_aead_name(std::string_view name, std::string_view why) {
  throw std::invalid_argument("unknown AEAD '" + std::string(name) + "': " + std::string(why) +
                              " (expected ALGORITHM-KEYBITS-gcm for aes, camellia or sc2000, or "
                              "aes-128-gcm-siv / aes-256-gcm-siv)");
}

}  // namespace

AeadName parse_aead_name(std::string_view name) {
  const std::string text = lower(name);
  AeadName aead{};
  if (text.size() > kSivSuffix.size() && text.ends_with(kSivSuffix)) {
    // The block cipher before the suffix: parsed as its GCM name so that its algorithm and key
    // size are read by the one cipher-name parser.
    CipherName gcm;
    try {
      gcm = parse_cipher_name(text.substr(0, text.size() - kSivSuffix.size()) + "-gcm");
    } catch (const std::invalid_argument&) {
      bad_aead_name(name, "not a GCM-SIV cipher");
    }
    if (gcm.algorithm != Algorithm::aes || gcm.key_bits == 192)
      bad_aead_name(name, "RFC 8452 defines GCM-SIV for AES-128 and AES-256 only");
    aead.algorithm = gcm.algorithm;
    aead.key_bits = gcm.key_bits;
    aead.construction = AeadConstruction::gcm_siv;
    aead.nonce_min = aead.nonce_max = kGcmSivNonceLen;
    aead.tag_min = aead.tag_max = kGcmSivTagLen;
    aead.max_plaintext = aead.max_aad = kGcmSivMaxLen;
  } else {
    CipherName cipher;
    try {
      cipher = parse_cipher_name(text);
    } catch (const std::invalid_argument&) {
      bad_aead_name(name, "not an AEAD name");
    }
    if (cipher.mode != Mode::gcm) throw std::invalid_argument(cipher.canonical + " is not an AEAD: use Cipher (an AEAD is a -gcm or -gcm-siv name)");
    aead.algorithm = cipher.algorithm;
    aead.key_bits = cipher.key_bits;
    aead.construction = AeadConstruction::gcm;
    aead.nonce_min = 1;
    aead.nonce_max = modes::kGcmMaxIvLen;
    aead.tag_min = modes::kGcmMinTagLen;
    aead.tag_max = modes::kGcmMaxTagLen;
    aead.max_plaintext = modes::kGcmMaxDataLen;
    aead.max_aad = modes::kGcmMaxAadLen;
  }
  aead.key_len = static_cast<size_t>(aead.key_bits) / 8;
  aead.canonical = std::string(algorithm_name(aead.algorithm)) + "-" + std::to_string(aead.key_bits) +
                   (aead.construction == AeadConstruction::gcm ? "-gcm" : std::string(kSivSuffix));
  return aead;
}

CipherName AeadName::cipher() const {
  const std::string block_cipher = std::string(algorithm_name(algorithm)) + "-" + std::to_string(key_bits);
  return parse_cipher_name(block_cipher + (construction == AeadConstruction::gcm ? "-gcm" : "-ecb"));
}

std::vector<std::string> list_aeads() {
  std::vector<std::string> names;
  for (const char* algorithm : {"aes", "camellia", "sc2000"})
    for (const char* bits : {"128", "192", "256"}) names.push_back(std::string(algorithm) + "-" + bits + "-gcm");
  names.push_back("aes-128-gcm-siv");
  names.push_back("aes-256-gcm-siv");
  return names;
}

void check_aead_arguments(const AeadName& name, uint64_t nonce_len, uint64_t aad_len, uint64_t data_len,
                          size_t tag_len) {
  if (name.construction == AeadConstruction::gcm) return modes::gcm_check_arguments(nonce_len, aad_len, data_len, tag_len);
  if (nonce_len < name.nonce_min || nonce_len > name.nonce_max)
    throw std::invalid_argument(name.canonical + " nonce must be " + std::to_string(name.nonce_min) +
                                " bytes, got " + std::to_string(nonce_len));
  if (tag_len < name.tag_min || tag_len > name.tag_max)
    throw std::invalid_argument(name.canonical + " tag length must be " + std::to_string(name.tag_min) +
                                " bytes, got " + std::to_string(tag_len));
  if (aad_len > name.max_aad) throw std::invalid_argument(name.canonical + " AAD is longer than 2^36 bytes");
  if (data_len > name.max_plaintext)
    throw std::invalid_argument(name.canonical + " can encrypt at most 2^36 bytes (64 GiB) per message");
}

}  // namespace gpucrypt
