// backend.hpp: what each backend (cpu, cuda) offers to the dispatch layer in src/api/.
#pragma once

#include "gpucrypt/gpucrypt.hpp"

namespace gpucrypt::cpu {
std::vector<VariantInfo> variants();
// The variant used when the caller names none: the fastest one registered for the algorithm.
const VariantInfo& default_variant(Algorithm algorithm);
std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& name, Direction direction,
                                                   ByteSpan key, ByteSpan iv,
                                                   std::string_view variant);
std::unique_ptr<GcmCipher> create_gcm(const CipherName& name, ByteSpan key,
                                      std::string_view variant);
}  // namespace gpucrypt::cpu

#if defined(GPUCRYPT_WITH_CUDA)
namespace gpucrypt::cuda {
int device_count();               // 0 when no driver or no device
std::string unavailable_reason();  // "" when device_count() > 0
std::vector<DeviceInfo> devices();
std::vector<VariantInfo> variants();
std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& name, Direction direction,
                                                   ByteSpan key, ByteSpan iv,
                                                   std::string_view variant, int device_index);
std::unique_ptr<GcmCipher> create_gcm(const CipherName& name, ByteSpan key,
                                      std::string_view variant, int device_index);
}  // namespace gpucrypt::cuda
#endif
