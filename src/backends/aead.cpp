// aead.cpp: the AEAD names and their rules (gpucrypt/aead.hpp): which names exist, what each
// takes (key, nonce and tag lengths, message limits) and the one error each rule raises, and the
// CPU's AEAD of each construction. Every backend's AEAD and every entry point (C++, C API, Python)
// reads the rules from here.
//
// GCM is a mode of every block cipher and takes its rules from the cipher-name parser and
// modes/gcm.hpp. Every other construction is one row of kConstructions: adding an AEAD adds a row
// here (its rules and its CPU implementation), not a branch elsewhere.
#include <stdexcept>
#include <string>

#include "backends/backend.hpp"
#include "backends/gcm_siv.hpp"
#include "gpucrypt/aead.hpp"
#include "modes/gcm.hpp"

namespace gpucrypt {

namespace {

// The AEADs beyond GCM: fixed nonce and tag lengths, one limit for the message and the AAD.
struct Construction {
  AeadConstruction id;
  std::string_view name;       // the name's last part: "aes-256-" + name
  Algorithm algorithm;         // the block cipher it is defined for
  bool takes_192 = false;      // whether 192-bit keys are defined
  uint64_t nonce_len = 0;
  size_t tag_len = 0;
  int max_len_log2 = 0;        // message and AAD limit: 2^max_len_log2 bytes
  std::string_view max_len_text;  // the limit as a user reads it
  std::string_view defined_for;   // the refusal of another block cipher or key size
  std::unique_ptr<Aead> (*create_on_cpu)(const AeadName&, ByteSpan key, std::string_view variant);
};

// RFC 8452 section 6: 12-byte nonces, 16-byte tags, P_MAX = A_MAX = 2^36 bytes; AES-128 and AES-256.
constexpr Construction kConstructions[] = {
    {AeadConstruction::gcm_siv, "gcm-siv", Algorithm::aes, false, 12, 16, 36, "2^36 bytes (64 GiB)",
     "RFC 8452 defines GCM-SIV for AES-128 and AES-256 only", &cpu::create_gcm_siv},
};

const Construction* construction_of(AeadConstruction id) {
  for (const Construction& c : kConstructions)
    if (c.id == id) return &c;
  return nullptr;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::string expected_names() {
  std::string text = "expected ALGORITHM-KEYBITS-gcm for aes, camellia or sc2000";
  for (const Construction& c : kConstructions)
    text += std::string(", or ") + std::string(algorithm_name(c.algorithm)) + "-KEYBITS-" + std::string(c.name);
  return text;
}

[[noreturn]] void bad_aead_name(std::string_view name, std::string_view why) {
  throw std::invalid_argument("unknown AEAD '" + std::string(name) + "': " + std::string(why) + " (" +
                              expected_names() + ")");
}

// The construction whose name `text` ends with ("-" + its name), or nullptr (GCM or unknown).
const Construction* construction_named_in(std::string_view text) {
  for (const Construction& c : kConstructions) {
    const std::string suffix = "-" + std::string(c.name);
    if (text.size() > suffix.size() && text.ends_with(suffix)) return &c;
  }
  return nullptr;
}

}  // namespace

std::string_view aead_construction_name(AeadConstruction construction) {
  if (construction == AeadConstruction::gcm) return "gcm";
  const Construction* c = construction_of(construction);
  if (c == nullptr) throw std::invalid_argument("unknown AEAD construction");
  return c->name;
}

AeadName parse_aead_name(std::string_view name) {
  const std::string text = lower(name);
  AeadName aead{};
  if (const Construction* c = construction_named_in(text)) {
    // The block cipher before the construction's name, parsed as its GCM name so that its
    // algorithm and key size are read by the one cipher-name parser.
    CipherName gcm;
    try {
      gcm = parse_cipher_name(text.substr(0, text.size() - c->name.size()) + "gcm");
    } catch (const std::invalid_argument&) {
      bad_aead_name(name, "not a " + std::string(c->name) + " cipher");
    }
    if (gcm.algorithm != c->algorithm || (gcm.key_bits == 192 && !c->takes_192))
      bad_aead_name(name, c->defined_for);
    aead.algorithm = gcm.algorithm;
    aead.key_bits = gcm.key_bits;
    aead.construction = c->id;
    aead.nonce_min = aead.nonce_max = c->nonce_len;
    aead.tag_min = aead.tag_max = c->tag_len;
    aead.max_plaintext = aead.max_aad = uint64_t{1} << c->max_len_log2;
  } else {
    CipherName cipher;
    try {
      cipher = parse_cipher_name(text);
    } catch (const std::invalid_argument&) {
      bad_aead_name(name, "not an AEAD name");
    }
    if (cipher.mode != Mode::gcm)
      throw std::invalid_argument(cipher.canonical + " is not an AEAD: use Cipher (" + expected_names() + ")");
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
  aead.canonical = std::string(algorithm_name(aead.algorithm)) + "-" + std::to_string(aead.key_bits) + "-" +
                   std::string(aead_construction_name(aead.construction));
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
  for (const Construction& c : kConstructions)
    for (int bits : {128, 192, 256})
      if (bits != 192 || c.takes_192)
        names.push_back(std::string(algorithm_name(c.algorithm)) + "-" + std::to_string(bits) + "-" +
                        std::string(c.name));
  return names;
}

void check_aead_arguments(const AeadName& name, uint64_t nonce_len, uint64_t aad_len, uint64_t data_len,
                          size_t tag_len) {
  if (name.construction == AeadConstruction::gcm) return modes::gcm_check_arguments(nonce_len, aad_len, data_len, tag_len);
  const Construction* c = construction_of(name.construction);
  if (nonce_len < name.nonce_min || nonce_len > name.nonce_max)
    throw std::invalid_argument(name.canonical + " nonce must be " + std::to_string(name.nonce_min) +
                                " bytes, got " + std::to_string(nonce_len));
  if (tag_len < name.tag_min || tag_len > name.tag_max)
    throw std::invalid_argument(name.canonical + " tag length must be " + std::to_string(name.tag_min) +
                                " bytes, got " + std::to_string(tag_len));
  if (aad_len > name.max_aad)
    throw std::invalid_argument(name.canonical + " AAD is longer than " + std::string(c->max_len_text));
  if (data_len > name.max_plaintext)
    throw std::invalid_argument(name.canonical + " can encrypt at most " + std::string(c->max_len_text) +
                                " per message");
}

void check_aead_key(const AeadName& name, size_t key_len) {
  if (key_len != name.key_len)
    throw std::invalid_argument(name.canonical + " needs a " + std::to_string(name.key_len) + "-byte key, got " +
                                std::to_string(key_len) + " bytes");
}

namespace cpu {

std::unique_ptr<Aead> create_aead(const AeadName& name, ByteSpan key, std::string_view variant) {
  const Construction* c = construction_of(name.construction);
  if (c == nullptr) throw std::invalid_argument(name.canonical + ": GCM is made by create_gcm");
  return c->create_on_cpu(name, key, variant);
}

}  // namespace cpu

}  // namespace gpucrypt
