// sc2000_table_smem.cu: the CUDA variant "sc2000_table_smem" (table SC2000, MS tables in shared
// memory): its kernels for every key size and launch policy. Family and constant-time position:
// sc2000_table_smem.cuh.
#include "backends/cuda/sc2000_table_smem.cuh"

namespace gpucrypt::cuda {

std::unique_ptr<KeyedCipher> make_sc2000_table_smem(const uint8_t* key, int key_bits) {
  return kernels::make_keyed<Sc2000TableSmem>(key, key_bits);
}

}  // namespace gpucrypt::cuda
