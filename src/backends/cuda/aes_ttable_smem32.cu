// aes_ttable_smem32.cu: the CUDA variant "aes_ttable_smem32" (T-table AES, table replicated per
// shared-memory bank): its kernels for every key size and launch policy. Family, layout and
// constant-time position: aes_ttable_smem32.cuh.
#include "backends/cuda/aes_ttable_smem32.cuh"

namespace gpucrypt::cuda {

std::unique_ptr<KeyedCipher> make_aes_ttable_smem32(const uint8_t* key, int key_bits) {
  return kernels::make_keyed<AesTTableSmem32>(key, key_bits);
}

}  // namespace gpucrypt::cuda
