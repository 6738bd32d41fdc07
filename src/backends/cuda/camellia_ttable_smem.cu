// camellia_ttable_smem.cu: the CUDA variant "camellia_ttable_smem" (table Camellia, SP tables in
// shared memory): its kernels for every key size and launch policy. Family and constant-time
// position: camellia_ttable_smem.cuh.
#include "backends/cuda/camellia_ttable_smem.cuh"

namespace gpucrypt::cuda {

std::unique_ptr<KeyedCipher> make_camellia_ttable_smem(const uint8_t* key, int key_bits) {
  return kernels::make_keyed<CamelliaTTableSmem>(key, key_bits);
}

}  // namespace gpucrypt::cuda
