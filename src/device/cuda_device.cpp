// cuda_device.cpp: a CUDA GPU as a Device: the CUDA backend (src/backends/cuda: its ciphers, its
// batch executor cuda_batch.cu, its Keccak kernels and its device-pointer API device.hpp). Only in
// builds with a CUDA toolkit.
#if defined(GPUCRYPT_WITH_CUDA)

#include <cuda_runtime.h>

#include <map>
#include <mutex>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_batch.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/device.hpp"
#include "backends/cuda/keccak_cuda.hpp"
#include "device/registry.hpp"

namespace gpucrypt::registry {

namespace {

const IndexedBackendCalls kCudaCalls = GPUCRYPT_INDEXED_BACKEND_CALLS("CUDA", cuda);

using cuda::check;  // the backend's one runtime check (cuda_check.hpp)
using cuda::stream_of;

bool is_tree_hash(std::string_view hash_name) {
  const std::string& name = hash::hash_info(hash_name).name;
  return name.starts_with("parallelhash") || name.starts_with("kt");
}

class CudaDevice final : public IndexedDevice {
 public:
  explicit CudaDevice(DeviceName name) : IndexedDevice(std::move(name), kCudaCalls) {}

  // Page-locked memory: the batch executor copies it to and from the GPU directly (no staging).
  bool offers_host_memory() const override { return true; }
  void* alloc_host(size_t len) const override {
    if (void* memory = cuda::alloc_page_locked(len)) return memory;
    throw DeviceError("cudaHostAlloc refused " + std::to_string(len) + " bytes of page-locked memory");
  }
  void free_host(void* memory, size_t len) const override { cuda::free_page_locked(memory, len); }
  bool holds_host_memory(const void* memory, size_t len) const override { return cuda::is_page_locked(memory, len); }

  // Device pointers: the backend's device-pointer API (backends/cuda/device.hpp), whose
  // DeviceCipher and DeviceGcm are the ResidentCipher and ResidentGcm.
  bool resident_memory() const override { return true; }
  std::unique_ptr<ResidentCipher> create_resident_cipher(const CipherName& cipher, Direction direction, ByteSpan key,
                                                         std::string_view variant) const override {
    return cuda::DeviceCipher::create(cipher, direction, key, variant, name().index);
  }
  std::unique_ptr<ResidentGcm> create_resident_gcm(const CipherName& cipher, ByteSpan key,
                                                   std::string_view variant) const override {
    return cuda::DeviceGcm::create(cipher, key, variant, name().index);
  }
  void* alloc_device(size_t len) const override {
    info();  // DeviceError naming the device when this index has none
    check(cudaSetDevice(name().index), "cudaSetDevice");
    void* memory = nullptr;
    cuda::check_allocation(cudaMalloc(&memory, len == 0 ? 1 : len), "cudaMalloc", len);
    return memory;
  }
  void free_device(void* memory) const override { cudaFree(memory); }
  void copy_to_device(void* device_memory, const void* host, size_t len) const override {
    check(cudaMemcpy(device_memory, host, len, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  void synchronize(StreamHandle stream) const override {
    check(cudaStreamSynchronize(stream_of(stream)), "cudaStreamSynchronize");
  }
  // The Keccak kernels run on the current device: the caller's, as for every device-pointer call.
  void resident_hash(std::string_view hash_name, const void* data, size_t len, void* digest, size_t out_len,
                     StreamHandle stream) const override {
    const auto* message = static_cast<const uint8_t*>(data);
    if (is_tree_hash(hash_name)) {  // the final node on the host: the digest arrives in host memory
      std::vector<uint8_t> host_digest(out_len);
      cuda::tree_hash_device(hash_name, {}, message, len, host_digest.data(), out_len, stream_of(stream));
      return copy_to_device(digest, host_digest.data(), out_len);
    }
    cuda::hash_many_device(hash_name, message, offsets_of(len), nullptr, 1, static_cast<uint8_t*>(digest), out_len,
                           stream_of(stream));
  }

  // The batch kernels; a plan they cannot run (a variant they lack) goes to the generic executor.
  // They plan ciphers, GCM and hashes: other AEADs (GCM-SIV) are taken apart first and run per
  // message through this device's Aead (batch_run.cpp), so cuda_batch.cu never sees them.
  engine::BatchResult run_batch(const engine::BatchPlan& plan) const override {
    return run_batch_aeads_apart(plan, *this, [this](const engine::BatchPlan& rest) {
      if (auto result = cuda::run_batch(rest, name().index)) return std::move(*result);
      return engine::run_batch_generic(rest, name().canonical);
    });
  }

 private:
  // resident_hash's message table {0, len} in device memory, one per length, written once and
  // never changed: a kernel still queued keeps reading the table it was given.
  const uint64_t* offsets_of(size_t len) const {
    std::lock_guard lock(offsets_mutex_);
    auto [it, added] = offsets_.try_emplace(len, nullptr);
    if (added) {
      const uint64_t table[2] = {0, len};
      try {
        it->second = static_cast<uint64_t*>(alloc_device(sizeof table));
        copy_to_device(it->second, table, sizeof table);
      } catch (...) {
        if (it->second != nullptr) free_device(it->second);
        offsets_.erase(it);
        throw;
      }
    }
    return it->second;
  }
  mutable std::mutex offsets_mutex_;
  mutable std::map<size_t, uint64_t*> offsets_;
};

}  // namespace

DeviceBackend cuda_backend() {
  DeviceBackend b = indexed_backend("cuda", kCudaCalls);
  b.open = [](const DeviceName& where, std::string_view as_named) -> std::unique_ptr<Device> {
    // Without any working GPU every CUDA name fails here, before variant checks; an index past
    // the last GPU is the backend's error when the device is used (require_device in device.cu).
    if (cuda::device_count() == 0) throw device_unavailable(as_named, cuda::unavailable_reason());
    return std::make_unique<CudaDevice>(where);
  };
  b.start_up = cuda::start_up;
  return b;
}

}  // namespace gpucrypt::registry

#endif  // GPUCRYPT_WITH_CUDA
