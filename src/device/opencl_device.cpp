// opencl_device.cpp: an OpenCL device (any vendor's GPU, or a CPU through PoCL) as a Device: the
// OpenCL backend (src/backends/opencl). It has no batch kernels yet, so a batch runs on the generic
// executor (Device::run_batch's default). Only in builds with the OpenCL headers.
#if defined(GPUCRYPT_WITH_OPENCL)

#include "backends/opencl/opencl.hpp"
#include "device/registry.hpp"

namespace gpucrypt::registry {

namespace {

class OpenclDevice final : public Device {
 public:
  explicit OpenclDevice(DeviceName name) : Device(std::move(name)) {}

  DeviceInfo info() const override {
    for (DeviceInfo& d : opencl::devices())
      if (d.name == name().canonical) return d;
    const std::string reason = opencl::unavailable_reason();
    throw device_unavailable(name().canonical, reason.empty() ? "no such OpenCL device (" +
                                                                    std::to_string(opencl::device_count()) + " listed)"
                                                              : reason);
  }
  const std::vector<VariantInfo>& variants() const override { return opencl::variants(); }

  std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& cipher, Direction direction, ByteSpan key,
                                                     ByteSpan iv, std::string_view variant) const override {
    return opencl::create_cipher_stream(cipher, direction, key, iv, variant, name().index);
  }
  std::unique_ptr<GcmCipher> create_gcm(const CipherName& cipher, ByteSpan key,
                                        std::string_view variant) const override {
    return opencl::create_gcm(cipher, key, variant, name().index);
  }

  void hash_many(std::string_view hash_name, const uint8_t* const* messages, const size_t* lens,
                 size_t num_messages, uint8_t* out, size_t out_len_each) const override {
    opencl::hash_many(hash_name, messages, lens, num_messages, out, out_len_each, name().index);
  }
  void tree_hash(std::string_view hash_name, const hash::HashParams& params, const uint8_t* data, size_t len,
                 uint8_t* out, size_t out_len) const override {
    opencl::tree_hash(hash_name, params, data, len, out, out_len, name().index);
  }

 protected:
  VariantInfo default_variant(Algorithm algorithm, Mode) const override {
    return opencl::default_variant(algorithm);
  }
};

}  // namespace

DeviceBackend opencl_backend() {
  DeviceBackend b;
  b.kind = "opencl";
  b.unavailable_reason = &opencl::unavailable_reason;
  b.devices = &opencl::devices;
  b.variants = &opencl::variants;
  // No check here: the OpenCL runtime is loaded on first use, and a missing library, platform or
  // device is reported by the backend when the device is used (opencl_runtime.cpp device()).
  b.open = [](const DeviceName& where, std::string_view) -> std::unique_ptr<Device> {
    return std::make_unique<OpenclDevice>(where);
  };
  return b;
}

}  // namespace gpucrypt::registry

#endif  // GPUCRYPT_WITH_OPENCL
