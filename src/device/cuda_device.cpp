// cuda_device.cpp: a CUDA GPU as a Device: the CUDA backend (src/backends/cuda), its batch
// executor (src/engine/cuda_batch.cu) and its Keccak kernels. Only in builds with a CUDA toolkit.
#if defined(GPUCRYPT_WITH_CUDA)

#include "backends/backend.hpp"
#include "backends/cuda/keccak_cuda.hpp"
#include "device/registry.hpp"
#include "gpucrypt/batch.hpp"

namespace gpucrypt::registry {

namespace {

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(DeviceName name) : Device(std::move(name)) {}

  DeviceInfo info() const override {
    for (DeviceInfo& d : cuda::devices())
      if (d.name == name().canonical) return d;
    throw device_unavailable(name().canonical, "no such CUDA device (" + std::to_string(cuda::device_count()) +
                                                   " listed)");
  }
  const std::vector<VariantInfo>& variants() const override { return cuda::variants(); }

  std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& cipher, Direction direction, ByteSpan key,
                                                     ByteSpan iv, std::string_view variant) const override {
    return cuda::create_cipher_stream(cipher, direction, key, iv, variant, name().index);
  }
  std::unique_ptr<GcmCipher> create_gcm(const CipherName& cipher, ByteSpan key,
                                        std::string_view variant) const override {
    return cuda::create_gcm(cipher, key, variant, name().index);
  }
#if defined(GPUCRYPT_WITH_CUDA_BATCH)
  engine::BatchResult run_batch(const engine::BatchPlan& plan) const override {
    if (auto result = cuda::run_batch(plan, name().index)) return std::move(*result);
    return engine::run_batch_generic(plan, name().canonical);
  }
#endif

  void hash_many(std::string_view hash_name, const uint8_t* const* messages, const size_t* lens,
                 size_t num_messages, uint8_t* out, size_t out_len_each) const override {
    cuda::hash_many(hash_name, messages, lens, num_messages, out, out_len_each, name().index);
  }
  void tree_hash(std::string_view hash_name, const hash::HashParams& params, const uint8_t* data, size_t len,
                 uint8_t* out, size_t out_len) const override {
    cuda::tree_hash(hash_name, params, data, len, out, out_len, name().index);
  }

 protected:
  VariantInfo default_variant(Algorithm algorithm, Mode) const override { return cuda::default_variant(algorithm); }
};

}  // namespace

DeviceBackend cuda_backend() {
  DeviceBackend b;
  b.kind = "cuda";
  b.unavailable_reason = &cuda::unavailable_reason;
  b.devices = &cuda::devices;
  b.variants = &cuda::variants;
  b.open = [](const DeviceName& where, std::string_view as_named) -> std::unique_ptr<Device> {
    // Without any working GPU every CUDA name fails here, before variant checks; an index past
    // the last GPU is the backend's error when the device is used (require_device in device.cu).
    if (cuda::device_count() == 0) throw device_unavailable(as_named, cuda::unavailable_reason());
    return std::make_unique<CudaDevice>(where);
  };
  return b;
}

}  // namespace gpucrypt::registry

#endif  // GPUCRYPT_WITH_CUDA
