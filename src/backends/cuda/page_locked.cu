// page_locked.cu: host memory the GPU reads and writes in place (device.hpp): telling it from
// pageable memory, allocating it and giving it back wiped. Its own unit so that the tree hashes'
// benchmark (bench/run_keccak_bench.sh), which builds the Keccak kernels alone, links it too.
//
// Constant-time: nothing here reads the memory's contents; free_page_locked zeroes all of it.
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/device.hpp"
#include "modes/block_cipher.hpp"  // modes::secure_zero: header-only, so the Keccak benchmark links without src/base

namespace gpucrypt::cuda {

bool is_page_locked(const void* ptr, size_t len) {
  if (ptr == nullptr || len == 0) return false;
  // A Python buffer is one allocation, so its first and last bytes settle the whole range.
  for (const void* p : {ptr, static_cast<const void*>(static_cast<const uint8_t*>(ptr) + len - 1)}) {
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky-free error so the next call does not report it
      return false;
    }
    if (attributes.type != cudaMemoryTypeHost) return false;
  }
  return true;
}

void* alloc_page_locked(size_t bytes) {
  void* ptr = nullptr;
  if (cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return ptr;
}

void free_page_locked(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  modes::secure_zero(ptr, bytes);
  cudaFreeHost(ptr);
}

}  // namespace gpucrypt::cuda
