// cpu_device.cpp: the CPU as a Device: the CPU backend (src/backends/cpu, its batch executor
// cpu_batch.cpp included) and the hash registry (src/hash), all on the thread pool.
#include <algorithm>
#include <thread>

#include "backends/backend.hpp"
#include "backends/cpu/cpu_batch.hpp"
#include "backends/cpu/variants.hpp"
#include "device/registry.hpp"
#include "gpucrypt/hash.hpp"

namespace gpucrypt::registry {

namespace {

DeviceInfo cpu_info() {
  DeviceInfo d;
  d.name = "cpu";
  d.kind = "cpu";
  d.type = "cpu";
  d.num_compute_units = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  d.description = std::to_string(d.num_compute_units) + " hardware threads";
  return d;
}

class CpuDevice final : public Device {
 public:
  explicit CpuDevice(DeviceName name) : Device(std::move(name)) {}

  DeviceInfo info() const override { return cpu_info(); }
  const std::vector<VariantInfo>& variants() const override { return cpu::registered_variants(); }

  std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& cipher, Direction direction, ByteSpan key,
                                                     ByteSpan iv, std::string_view variant) const override {
    return cpu::create_cipher_stream(cipher, direction, key, iv, variant);
  }
  std::unique_ptr<GcmCipher> create_gcm(const CipherName& cipher, ByteSpan key,
                                        std::string_view variant) const override {
    return cpu::create_gcm(cipher, key, variant);
  }
  std::unique_ptr<Aead> create_aead(const AeadName& aead, ByteSpan key, std::string_view variant) const override {
    if (aead.construction == AeadConstruction::gcm) return Device::create_aead(aead, key, variant);
    return cpu::create_aead(aead, key, variant);
  }
  engine::BatchResult run_batch(const engine::BatchPlan& plan) const override {
    return run_batch_aeads_apart(plan, *this, [](const engine::BatchPlan& rest) { return cpu::run_batch(rest); });
  }

  void hash_many(std::string_view hash_name, const uint8_t* const* messages, const size_t* lens,
                 size_t num_messages, uint8_t* out, size_t out_len_each) const override {
    hash::hash_many(hash_name, hash::HashParams{}, messages, lens, num_messages, out, out_len_each);
  }
  void tree_hash(std::string_view hash_name, const hash::HashParams& params, const uint8_t* data, size_t len,
                 uint8_t* out, size_t out_len) const override {
    hash::tree_shape(hash_name, params);  // sequential hashes are an error here, as on the GPUs
    auto context = hash::create_hash(hash_name, params, "");
    context->update(data, len);
    context->finalize(out, out_len);
  }
  void tree_leaves(std::string_view hash_name, const hash::HashParams& params, const uint8_t* data,
                   size_t num_leaves, uint8_t* out) const override {
    hash::tree_leaves(hash_name, params, data, num_leaves, out);  // on the thread pool
  }

 protected:
  VariantInfo default_variant(Algorithm algorithm, Mode mode) const override {
    // Which variants implement a mode does not depend on the key size, so any valid one asks.
    const CipherName cipher =
        parse_cipher_name(std::string(algorithm_name(algorithm)) + "-128-" + std::string(mode_name(mode)));
    return cpu::select_variant_for(cipher, "");
  }
};

}  // namespace

DeviceBackend cpu_backend() {
  DeviceBackend b;
  b.kind = "cpu";
  b.takes_index = false;
  b.unavailable_reason = [] { return std::string(); };
  b.devices = [] { return std::vector<DeviceInfo>{cpu_info()}; };
  b.variants = &cpu::registered_variants;
  // Jobs large enough to amortise a call over every core, small enough to stay in cache: measured
  // best (gpucrypt/stream.py), 2 MiB on 2 cores, 8 MiB on 16; 512 KiB per core between. One
  // worker: each of its calls already uses every core.
  const uint64_t cores = std::max(1u, std::thread::hardware_concurrency());
  b.traits = {false, std::min<uint64_t>(8 << 20, std::max<uint64_t>(2 << 20, cores << 19)), 1};
  b.open = [](const DeviceName& where, std::string_view) -> std::unique_ptr<Device> {
    return std::make_unique<CpuDevice>(where);
  };
  return b;
}

}  // namespace gpucrypt::registry
