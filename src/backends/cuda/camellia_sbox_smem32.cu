// camellia_sbox_smem32.cu: the CUDA variant "camellia_sbox_smem32" for the backend (the family,
// its table layout and its constant-time position: camellia_sbox_smem32.cuh).
#include "backends/cuda/camellia_sbox_smem32.cuh"

namespace gpucrypt::cuda {

std::unique_ptr<KeyedCipher> make_camellia_sbox_smem32(const uint8_t* key, int key_bits) {
  return kernels::make_keyed<CamelliaSboxSmem32>(key, key_bits);
}

}  // namespace gpucrypt::cuda
