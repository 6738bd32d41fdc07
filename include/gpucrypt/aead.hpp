// aead.hpp: AEADs by name (BoringSSL's EVP_AEAD is the model): "aes-128-gcm", "aes-256-gcm",
// "camellia-*-gcm", "sc2000-*-gcm", "aes-128-gcm-siv", "aes-256-gcm-siv". Each name states its
// key, nonce and tag lengths and its message limits (AeadName); create_aead gives a keyed Aead
// (gpucrypt/cipher.hpp) on any device, each backend supplying its implementation through its
// Device (Device::create_aead). The Aead interface itself is declared in cipher.hpp, next to GCM,
// whose implementations are Aeads.
//
// Ownership and errors as in cipher.hpp: std::invalid_argument for an unknown name or a bad key,
// nonce or tag length (naming the rule); DeviceError for a missing device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpucrypt/cipher.hpp"

namespace gpucrypt {

// The construction an AEAD runs over its block cipher.
enum class AeadConstruction {
  gcm,      // NIST SP 800-38D
  gcm_siv,  // RFC 8452 (nonce-misuse resistant; AES only)
};

// An AEAD name taken apart, with its length rules (inclusive ranges).
struct AeadName {
  std::string canonical;  // lower-case: "aes-256-gcm-siv"
  Algorithm algorithm;
  int key_bits;
  AeadConstruction construction;
  size_t key_len;
  uint64_t nonce_min, nonce_max;  // GCM: 1 .. 2^61-1 (12 recommended); GCM-SIV: exactly 12
  size_t tag_min, tag_max;        // GCM: 4 .. 16; GCM-SIV: exactly 16
  uint64_t max_plaintext;         // GCM: 2^32-2 blocks; GCM-SIV: 2^36 bytes
  uint64_t max_aad;               // GCM: 2^61-1 bytes; GCM-SIV: 2^36 bytes
  // The cipher name GCM's existing entry points take ("aes-256-gcm"); for the other constructions
  // the block cipher in ECB ("aes-256-ecb"), which names the key schedule a backend expands.
  CipherName cipher() const;
};

// parse_aead_name: any case; throws std::invalid_argument("unknown AEAD 'x': expected ...")
// naming the accepted forms (a cipher name in a non-AEAD mode is told to use Cipher).
AeadName parse_aead_name(std::string_view name);
// The construction's part of a name, as in the canonical names: "gcm", "gcm-siv".
std::string_view aead_construction_name(AeadConstruction construction);
// Every AEAD name this library knows, canonical.
std::vector<std::string> list_aeads();
// check_aead_arguments: the name's rules for one message, as the error every backend raises
// (std::invalid_argument naming the rule: nonce length, tag length, message or AAD too long).
void check_aead_arguments(const AeadName& name, uint64_t nonce_len, uint64_t aad_len, uint64_t data_len,
                          size_t tag_len);

// check_aead_key: the name's key length, as the error every entry point raises
// (std::invalid_argument "aes-256-gcm-siv needs a 32-byte key, got 16 bytes").
void check_aead_key(const AeadName& name, size_t key_len);

// create_aead: the keyed AEAD `name` on `device` ("cpu", "cuda:N", "opencl:N"; "auto" is resolved
// by the caller), `variant` "" for the device's default for the construction. Checks the key's
// length first.
std::unique_ptr<Aead> create_aead(std::string_view name, ByteSpan key, std::string_view variant = "",
                                  std::string_view device = "cpu");

}  // namespace gpucrypt
