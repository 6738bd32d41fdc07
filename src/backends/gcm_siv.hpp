// gcm_siv.hpp: AES-GCM-SIV (RFC 8452) written once for every backend. The per-nonce key
// derivation, the POLYVAL of the AAD, the tag and its check run here on the host through the
// constant-time bitsliced AES (a few blocks per message); a backend supplies a Body, the bulk
// work over the message: POLYVAL of the data and CTR with RFC 8452's counter under the message's
// derived key (CPU: any CPU AES engine; OpenCL and CUDA: kernels over src/core/gcm_siv.h).
//
// Side channels: constant-time when the Body's AES is (every default is): the host AES is
// bitsliced, POLYVAL is gcm_siv.h's constant-time multiplier, the tag comparison is
// constant-time. open decrypts into its own buffer and writes plaintext only after the tag
// verifies (a GCM-SIV tag is computed over the plaintext, so decryption must come first).
#pragma once

#include <memory>
#include <string>

#include "core/gcm_siv.h"
#include "gpucrypt/aead.hpp"

namespace gpucrypt::gcm_siv {

// Body: one backend's bulk work; const methods may run on several threads at once.
class Body {
 public:
  virtual ~Body() = default;
  // POLYVAL (as a GHASH-order element, gcm_siv.h) of len bytes from the zero state, the final
  // partial block zero-padded, under key (gc_polyval_key). The default runs on the host.
  virtual gc_gf128 polyval(gc_gf128 key, const uint8_t* data, size_t len) const;
  // out = in xor the keystream of AES under enc_key (16 or 32 bytes) from counter block
  // `counter`, the counter counting in its first 4 bytes (gc_ctr32le_add). in == out allowed.
  virtual void ctr(ByteSpan enc_key, gc_block counter, const uint8_t* in, uint8_t* out, size_t len) const = 0;
  virtual const VariantInfo& variant() const = 0;
  virtual std::string device() const = 0;
};

// make_aead: the Aead of a gcm-siv AeadName over `body`; the caller has checked the key length.
std::unique_ptr<Aead> make_aead(const AeadName& name, ByteSpan key, std::unique_ptr<Body> body);

}  // namespace gpucrypt::gcm_siv

namespace gpucrypt::cpu {
// AES-GCM-SIV on the CPU (gcm_siv.cpp): CTR through the CPU AES variant `variant` ("" = the
// default for AES in ECB: aes_openssl where OpenSSL has AES, constant-time with AES-NI).
std::unique_ptr<Aead> create_gcm_siv(const AeadName& name, ByteSpan key, std::string_view variant);
}  // namespace gpucrypt::cpu

#if defined(GPUCRYPT_WITH_CUDA)
namespace gpucrypt::cuda {
// AES-GCM-SIV on cuda:device_index (cuda/gcm_siv.cu): the constant-time bitsliced AES only.
std::unique_ptr<Aead> create_gcm_siv(const AeadName& name, ByteSpan key, std::string_view variant, int device_index);
}  // namespace gpucrypt::cuda
#endif
