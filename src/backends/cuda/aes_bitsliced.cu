// aes_bitsliced.cu: the CUDA variant "aes_bitsliced", AES as a Boolean circuit (aes_bitsliced.h,
// after BearSSL's aes_ct), two blocks per call.
//
// Constant-time: no tables and no memory access whose address depends on key or data; every
// instruction is AND/XOR/NOT/shift/rotate by constants, whose timing on NVIDIA GPUs does not
// depend on operand values. The key schedule is expanded on the host (also table-free) and read
// from the kernel's parameter bank with constant indices.
#include "backends/cuda/kernels.cuh"

namespace gpucrypt::cuda {

namespace {

template <int kKeyBits>
struct AesBitslicedFamily {
  // The round count as a template argument: aes_bitsliced_*_rounds unrolls with constant
  // round-key indices.
  using Cipher = modes::AesBitsliced<kKeyBits / 32 + 6>;
  static Cipher make_host(const uint8_t* key, int key_len) { return Cipher::make_host(key, key_len); }
  static constexpr size_t smem_bytes(bool) { return 0; }
  __device__ static void prepare(Cipher&, uint32_t*, bool) {}
};

}  // namespace

std::unique_ptr<KeyedCipher> make_aes_bitsliced(const uint8_t* key, int key_bits) {
  return kernels::make_keyed<AesBitslicedFamily>(key, key_bits);
}

}  // namespace gpucrypt::cuda
