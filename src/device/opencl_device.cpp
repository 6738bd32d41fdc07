// opencl_device.cpp: an OpenCL device (any vendor's GPU, or a CPU through PoCL) as a Device: the
// OpenCL backend (src/backends/opencl). It has no batch kernels yet, so a batch runs on the generic
// executor (Device::run_batch's default). Only in builds with the OpenCL headers.
#if defined(GPUCRYPT_WITH_OPENCL)

#include "backends/opencl/opencl.hpp"
#include "device/registry.hpp"

namespace gpucrypt::registry {

namespace {

const IndexedBackendCalls kOpenclCalls = GPUCRYPT_INDEXED_BACKEND_CALLS("OpenCL", opencl);

}  // namespace

DeviceBackend opencl_backend() {
  DeviceBackend b = indexed_backend("opencl", kOpenclCalls);
  // No check here: the OpenCL runtime is loaded on first use, and a missing library, platform or
  // device is reported by the backend when the device is used (opencl_runtime.cpp device()).
  b.open = [](const DeviceName& where, std::string_view) -> std::unique_ptr<Device> {
    return std::make_unique<IndexedDevice>(where, kOpenclCalls);
  };
  return b;
}

}  // namespace gpucrypt::registry

#endif  // GPUCRYPT_WITH_OPENCL
