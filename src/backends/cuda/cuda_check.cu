// cuda_check.cu: the definitions behind cuda_check.hpp (the one way the CUDA code checks the
// runtime), in a file of their own so that tools built from a few sources (bench/keccak_bench.cu)
// link without the whole backend. Constant-time: not applicable (error paths only).
#include <cstdio>
#include <string>

#include "backends/cuda/cuda_check.hpp"

namespace gpucrypt::cuda {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();  // see cuda_check.hpp: the next, unrelated check must not see it
  throw DeviceError(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(status));
}

std::string describe_bytes(size_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) value /= 1024, ++unit;
  char text[64];
  if (unit == 0) std::snprintf(text, sizeof text, "%zu bytes", bytes);
  else std::snprintf(text, sizeof text, "%.1f %s (%zu bytes)", value, units[unit], bytes);
  return text;
}

DeviceGuard::DeviceGuard(int device_index, Failure failure) {
  const cudaError_t got = cudaGetDevice(&previous_);
  const cudaError_t set = got != cudaSuccess || previous_ == device_index ? cudaSuccess : cudaSetDevice(device_index);
  if (got == cudaSuccess && set == cudaSuccess) return;
  if (failure == Failure::unavailable) {
    (void)cudaGetLastError();
    throw DeviceError("device 'cuda:" + std::to_string(device_index) +
                      "' is not available: " + cudaGetErrorString(got != cudaSuccess ? got : set));
  }
  check(got, "cudaGetDevice");
  check(set, "cudaSetDevice");
}

DeviceGuard::~DeviceGuard() {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
}

void check_allocation(cudaError_t status, const char* what, size_t bytes, bool host) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();
  std::string message = std::string("CUDA error in ") + what + ": " + cudaGetErrorString(status) + " (needed " +
                        describe_bytes(bytes) + (host ? " of page-locked host memory" : " of GPU memory");
  if (!host) {
    size_t free_bytes = 0, total_bytes = 0;
    int device = -1;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess && cudaGetDevice(&device) == cudaSuccess)
      message += ", " + describe_bytes(free_bytes) + " free of " + describe_bytes(total_bytes) + " on cuda:" +
                 std::to_string(device);
    (void)cudaGetLastError();
  }
  message += ")";
  if (status == cudaErrorMemoryAllocation) throw OutOfMemory(message);
  throw DeviceError(message);
}

}  // namespace gpucrypt::cuda
