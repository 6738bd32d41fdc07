// backend.hpp: what the cpu and cuda backends offer to their Devices (src/device/); the OpenCL
// backend's counterpart is opencl/opencl.hpp.
#pragma once

#include "gpucrypt/aead.hpp"
#include "gpucrypt/cipher.hpp"

namespace gpucrypt::cpu {
std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& name, Direction direction,
                                                   ByteSpan key, ByteSpan iv,
                                                   std::string_view variant);
std::unique_ptr<GcmCipher> create_gcm(const CipherName& name, ByteSpan key,
                                      std::string_view variant);
// The AEADs beyond GCM (backends/aead.cpp: each construction's CPU implementation).
std::unique_ptr<Aead> create_aead(const AeadName& name, ByteSpan key, std::string_view variant);
}  // namespace gpucrypt::cpu

#if defined(GPUCRYPT_WITH_CUDA)
namespace gpucrypt::cuda {
int device_count();               // 0 when no driver or no device
std::string unavailable_reason();  // "" when device_count() > 0
std::vector<DeviceInfo> devices();
const std::vector<VariantInfo>& variants();
// The variant used when the caller names none: the first registered for the algorithm (every CUDA
// variant implements every mode).
const VariantInfo& default_variant(Algorithm algorithm);
std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& name, Direction direction,
                                                   ByteSpan key, ByteSpan iv,
                                                   std::string_view variant, int device_index);
std::unique_ptr<GcmCipher> create_gcm(const CipherName& name, ByteSpan key,
                                      std::string_view variant, int device_index);
// The AEADs beyond GCM (cuda/aeads.cpp: each construction's CUDA implementation).
std::unique_ptr<Aead> create_aead(const AeadName& name, ByteSpan key, std::string_view variant, int device_index);
}  // namespace gpucrypt::cuda
#endif
