// cuda_check.hpp: the one way the CUDA code checks the runtime (cuda_check.cu defines it).
//
// The runtime keeps a per-thread "last error" that a failed call sets even when it returns the
// error too, and that the next cudaGetLastError reports. A failed cudaMalloc (out of memory) left
// there would make the next, unrelated launch check fail with "out of memory". So every failure
// is cleared where it is reported (check), a launch clears whatever is left from before it
// (a non-sticky error of an earlier call, ours or another library's in the same thread) and then
// reports only its own (checked_launch). Sticky errors (a kernel fault) cannot be cleared; every
// later call reports them, which is right: the context is gone.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "gpucrypt/cipher.hpp"

namespace gpucrypt::cuda {

// An allocation the GPU (or the host's page-locked memory) could not satisfy; callers that can do
// with less (staging buffers) catch it and retry smaller.
class OutOfMemory : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

// Throws DeviceError("CUDA error in <what>: <cudaGetErrorString>") unless status is cudaSuccess;
// clears the runtime's last error first.
void check(cudaError_t status, const char* what);
// "1.5 GiB (1610612736 bytes)": sizes in error messages.
std::string describe_bytes(size_t bytes);

// As check, for an allocation of `bytes` (device memory unless `host`): an out-of-memory error
// throws OutOfMemory naming the bytes asked for and, for device memory, how much is free
// (cudaMemGetInfo).
void check_allocation(cudaError_t status, const char* what, size_t bytes, bool host = false);

// Makes device_index the calling thread's current device and restores the previous one on exit
// (one guard for the backend, the Keccak kernels and the batch executor). A failure to switch
// throws check's DeviceError ("CUDA error in cudaSetDevice: ..."), or with
// DeviceGuard::Failure::unavailable the batch's "device 'cuda:N' is not available: <cuda error>".
class DeviceGuard {
 public:
  enum class Failure { cuda_error, unavailable };
  explicit DeviceGuard(int device_index, Failure failure = Failure::cuda_error);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

// Calls a kernel launch (a lambda with one <<<...>>>) and throws DeviceError naming `what` if the
// launch itself failed; a stale error from before the launch is not this launch's.
template <class Launch>
void checked_launch(const char* what, Launch&& launch) {
  (void)cudaGetLastError();
  launch();
  check(cudaGetLastError(), what);
}

}  // namespace gpucrypt::cuda
