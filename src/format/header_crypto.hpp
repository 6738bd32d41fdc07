// header_crypto.hpp: the hashes and KDFs of the file format's headers (versions 1 and 2), one
// OpenSSL call site each; the library's internals only (format.cpp, recipients.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpucrypt/cipher.hpp"

namespace gpucrypt::format::detail {

// HKDF-SHA256(ikm, salt, info) into out[0 .. len). std::runtime_error without OpenSSL.
void hkdf_sha256(ByteSpan ikm, ByteSpan salt, ByteSpan info, uint8_t* out, size_t len);
void hmac_sha256(ByteSpan key, ByteSpan data, uint8_t out[32]);
void sha256(ByteSpan data, uint8_t out[32]);

}  // namespace gpucrypt::format::detail
