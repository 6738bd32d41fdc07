// side.cu: one side of scripts/kernel-ab, the same-call A/B of the aes_bitsliced8 bulk kernels of
// two source trees. scripts/kernel-ab compiles this file twice, once against each tree's src/
// (-I), with AB_SIDE naming the side (old_ or new_); each build exports one launcher, and main.cu
// times both on the same buffers. Each side is also built with the namespace gpucrypt renamed
// (-Dgpucrypt=gpucrypt_old_, ...): the two trees' classes share names but not layouts (a key
// schedule may gain a field), and the linker would otherwise keep one side's inline functions
// for both.
#include "backends/cuda/aes_bitsliced.cuh"

#include <cstring>

namespace gpucrypt::cuda {

// The two launch-support functions kernels.cuh's launch_bulk calls, defined in the library's
// device.cu; the same queries here, without the library.
int current_sm_count() {
  int device = 0, count = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return count;
}
int max_resident_blocks(const void* kernel, size_t smem_bytes, int threads_per_block) {
  int blocks = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads_per_block, smem_bytes),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return blocks;
}

namespace {

template <int kKeyBits>
int run(const char* mode, const uint8_t* key, const uint8_t* in, uint8_t* out, size_t len, const uint8_t* iv16,
        cudaStream_t stream) {
  using F = AesBitsliced8Family<kKeyBits>;
  const typename F::Cipher cipher = F::make_host(key, kKeyBits / 8);
  gc_block iv = gc_block_load(iv16);
  if (std::strcmp(mode, "ctr") == 0) {
    kernels::launch_bulk<F, BitslicedWidePolicy, kernels::Bulk::ctr>(cipher, in, out, len, iv, stream);
  } else if (std::strcmp(mode, "ecb_encrypt") == 0) {
    kernels::launch_bulk<F, BitslicedWidePolicy, kernels::Bulk::ecb_encrypt>(cipher, in, out, len, iv, stream);
  } else if (std::strcmp(mode, "ecb_decrypt") == 0) {
    kernels::launch_bulk<F, BitslicedWidePolicy, kernels::Bulk::ecb_decrypt>(cipher, in, out, len, iv, stream);
  } else {
    return -1;
  }
  return 0;
}

}  // namespace
}  // namespace gpucrypt::cuda

#define KERNEL_AB_CAT2(a, b) a##b
#define KERNEL_AB_CAT(a, b) KERNEL_AB_CAT2(a, b)

// Launches aes_bitsliced8's bulk kernel for `mode` (ctr, ecb_encrypt, ecb_decrypt) on `stream`;
// key_bits 128 or 256. Returns 0, or -1 for a mode or key size it does not know.
extern "C" int KERNEL_AB_CAT(AB_SIDE, launch)(const char* mode, int key_bits, const uint8_t* key, const uint8_t* in,
                                              uint8_t* out, size_t len, const uint8_t* iv16, cudaStream_t stream) {
  if (key_bits == 128) return gpucrypt::cuda::run<128>(mode, key, in, out, len, iv16, stream);
  if (key_bits == 256) return gpucrypt::cuda::run<256>(mode, key, in, out, len, iv16, stream);
  return -1;
}
