// header_crypto.hpp: the hashes and KDFs of the file format's headers (versions 1 and 2), one
// OpenSSL call site each; the library's internals only (format.cpp, recipients.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpucrypt/cipher.hpp"

namespace gpucrypt::format::detail {

// The header fields both versions share (docs/file-format.md): magic, version byte 8, suite byte
// 9, the salt at 16..48 (the end of version 1's MAC-covered prefix and of version 2's fixed
// part), and a 32-byte HMAC-SHA256 at the end.
inline constexpr char kMagic[8] = {'G', 'P', 'U', 'C', 'R', 'Y', 'P', 'T'};
inline constexpr uint8_t kSuiteAes256Gcm = 1;
// Byte 8: version 1 (a passphrase or raw key, format.cpp), version 2 (recipient stanzas, recipients.cpp).
inline constexpr uint8_t kVersionKey = 1, kVersionRecipients = 2;
inline constexpr uint8_t kScryptStanza = 1;  // version 2's passphrase stanza type (recipients.cpp has the others)
inline constexpr size_t kSaltOffset = 16, kSaltLen = 32, kFixedLen = kSaltOffset + kSaltLen, kMacLen = 32;

// HKDF-SHA256(ikm, salt, info) into out[0 .. len). std::runtime_error without OpenSSL.
void hkdf_sha256(ByteSpan ikm, ByteSpan salt, ByteSpan info, uint8_t* out, size_t len);
void hmac_sha256(ByteSpan key, ByteSpan data, uint8_t out[32]);
void sha256(ByteSpan data, uint8_t out[32]);
// scrypt(passphrase, salt, N = 2^log2n, r = 8, p = 1) into out[0 .. 32): version 1's passphrase
// key and version 2's scrypt stanza. FormatError naming the memory when OpenSSL cannot have it.
inline constexpr uint64_t kScryptR = 8, kScryptP = 1;
void scrypt(ByteSpan passphrase, ByteSpan salt, int log2n, uint8_t out[32]);
// FormatError unless 1 <= log2n <= max_log2n (format.cpp).
void check_scrypt_log2n(int log2n, int max_log2n);

// Version 2's stanzas (recipients.cpp): the `count` stanzas after the fixed part, each checked
// (known type, its body length, one scrypt stanza at most, its work factor within max_log2n),
// and where the MAC starts; FormatError names what is wrong. parse_header's half for version 2.
struct StanzaAt {
  uint8_t type;
  size_t offset, len;  // of the body, in the header
};
std::vector<StanzaAt> parse_stanzas(ByteSpan header, size_t& mac_offset, int max_log2n);

}  // namespace gpucrypt::format::detail
