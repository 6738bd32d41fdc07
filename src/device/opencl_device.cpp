// opencl_device.cpp: an OpenCL device (any vendor's GPU, or a CPU through PoCL) as a Device: the
// OpenCL backend (src/backends/opencl), with its kernel timing and counters. It has no batch
// kernels yet, so a batch runs on the generic executor (Device::run_batch's default). Only in
// builds with the OpenCL headers.
#if defined(GPUCRYPT_WITH_OPENCL)

#include "backends/opencl/opencl.hpp"
#include "device/registry.hpp"

namespace gpucrypt::registry {

namespace {

const IndexedBackendCalls kOpenclCalls = GPUCRYPT_INDEXED_BACKEND_CALLS("OpenCL", opencl);

class OpenclDevice final : public IndexedDevice {
 public:
  explicit OpenclDevice(DeviceName name) : IndexedDevice(std::move(name), kOpenclCalls) {}

  KernelTiming time_kernel(const CipherName& cipher, std::string_view variant, size_t bytes,
                           int repeats) const override {
    return opencl::time_resident(cipher, variant, name().index, bytes, repeats);
  }
  bool kernel_timing() const override { return true; }
  std::vector<std::pair<std::string, uint64_t>> counters() const override {
    const opencl::KernelStats s = opencl::kernel_stats();
    return {{"programs_built", s.programs_built},
            {"programs_cached", s.programs_cached},
            {"kernels_run", s.kernels_run},
            {"programs_rejected", s.programs_rejected}};
  }
};

}  // namespace

DeviceBackend opencl_backend() {
  DeviceBackend b = indexed_backend("opencl", kOpenclCalls);
  // No check here: the OpenCL runtime is loaded on first use, and a missing library, platform or
  // device is reported by the backend when the device is used (opencl_runtime.cpp device()).
  b.open = [](const DeviceName& where, std::string_view) -> std::unique_ptr<Device> {
    return std::make_unique<OpenclDevice>(where);
  };
  return b;
}

}  // namespace gpucrypt::registry

#endif  // GPUCRYPT_WITH_OPENCL
