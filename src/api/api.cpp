// api.cpp: the public API's way to a backend (argument checks, then the Device the registry in
// src/device/ gives for the device name) and the lists of variants and devices. Name parsing is
// below it: cipher names in src/base/names.cpp, device names in src/device/device_name.cpp.
#include "backends/block_engine.hpp"
#include "device/registry.hpp"
#include "gpucrypt/aead.hpp"
#include "gpucrypt/device.hpp"
#include "gpucrypt/cipher.hpp"

namespace gpucrypt {

std::vector<VariantInfo> list_variants() {
  std::vector<VariantInfo> all;
  for (const registry::DeviceBackend& b : registry::backends())
    all.insert(all.end(), b.variants().begin(), b.variants().end());
  return all;
}

std::string constant_time_variant(std::string_view algorithm, std::string_view device, std::string_view mode) {
  // The backend's variants, not a Device's: the choice is the build's, so it is answered for a
  // backend whose device is absent too (a CUDA build on a machine without a GPU), and the name is
  // read only up to ':' as it always was.
  static const std::vector<VariantInfo> none;
  const registry::DeviceBackend* backend = registry::find_backend(device.substr(0, device.find(':')));
  return registry::fastest_constant_time(backend ? backend->variants() : none, algorithm, mode, device).name;
}

std::string cuda_unavailable_reason() { return registry::find_backend("cuda")->unavailable_reason(); }

std::string opencl_unavailable_reason() { return registry::find_backend("opencl")->unavailable_reason(); }

std::vector<std::pair<std::string, std::string>> backend_unavailable_reasons() {
  std::vector<std::pair<std::string, std::string>> reasons;
  for (const registry::DeviceBackend& b : registry::backends()) reasons.emplace_back(b.kind, b.unavailable_reason());
  return reasons;
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> all;
  for (const registry::DeviceBackend& b : registry::backends())
    for (DeviceInfo& d : b.devices()) all.push_back(std::move(d));
  return all;
}

std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& name, Direction direction,
                                                   ByteSpan key, ByteSpan iv,
                                                   std::string_view variant,
                                                   std::string_view device) {
  if (name.mode == Mode::gcm)
    throw std::invalid_argument(name.canonical + " is an AEAD: use AEAD, not Cipher");
  check_cipher_key(name, key);
  check_cipher_iv(name, iv);
  return gpucrypt::device(device).create_cipher_stream(name, direction, key, iv, variant);
}

std::unique_ptr<GcmCipher> create_gcm(const CipherName& name, ByteSpan key,
                                      std::string_view variant, std::string_view device) {
  if (name.mode != Mode::gcm)
    throw std::invalid_argument(name.canonical + " is not an AEAD (use a -gcm name)");
  check_cipher_key(name, key);
  return gpucrypt::device(device).create_gcm(name, key, variant);
}

std::unique_ptr<Aead> create_aead(std::string_view name, ByteSpan key, std::string_view variant,
                                  std::string_view device) {
  const AeadName aead = parse_aead_name(name);
  check_aead_key(aead, key.size());
  return gpucrypt::device(device).create_aead(aead, key, variant);
}

}  // namespace gpucrypt
