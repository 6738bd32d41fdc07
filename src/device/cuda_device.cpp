// cuda_device.cpp: a CUDA GPU as a Device: the CUDA backend (src/backends/cuda: its ciphers, its
// batch executor cuda_batch.cu and its Keccak kernels). Only in builds with a CUDA toolkit.
#if defined(GPUCRYPT_WITH_CUDA)

#include "backends/backend.hpp"
#include "backends/cuda/cuda_batch.hpp"
#include "backends/cuda/device.hpp"
#include "backends/cuda/keccak_cuda.hpp"
#include "device/registry.hpp"

namespace gpucrypt::registry {

namespace {

const IndexedBackendCalls kCudaCalls = GPUCRYPT_INDEXED_BACKEND_CALLS("CUDA", cuda);

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

  // The batch kernels; a plan they cannot run (a variant they lack) goes to the generic executor.
  engine::BatchResult run_batch(const engine::BatchPlan& plan) const override {
    if (auto result = cuda::run_batch(plan, name().index)) return std::move(*result);
    return engine::run_batch_generic(plan, name().canonical);
  }
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
  return b;
}

}  // namespace gpucrypt::registry

#endif  // GPUCRYPT_WITH_CUDA
