// sc2000_table_smem.cu: the CUDA variant "sc2000_table_smem", table SC2000 (sc2000.h) with the
// six MS tables (1 KiB) in shared memory.
//
// NOT constant-time: the S-box/M layer looks up tables with bits of the secret state, and bank
// conflicts between the lanes of a warp make the time depend on them. sc2000.h indexes its tables
// directly, so they are not replicated per bank.
#include "backends/cuda/kernels.cuh"

namespace gpucrypt::cuda {

namespace {

__device__ const uint32_t kSc2000Ms[GC_SC2000_MS_WORDS] = {GC_SC2000_MS_DATA};

template <int kKeyBits>
struct Sc2000Family {
  using Cipher = modes::Sc2000Table;
  static Cipher make_host(const uint8_t* key, int key_len) { return Cipher::make_host(key, key_len); }
  static constexpr size_t smem_bytes(bool) { return GC_SC2000_MS_WORDS * sizeof(uint32_t); }
  __device__ static void prepare(Cipher& cipher, uint32_t* shared, bool) {
    for (int w = threadIdx.x; w < GC_SC2000_MS_WORDS; w += blockDim.x) shared[w] = kSc2000Ms[w];
    cipher.tables = sc2000_tables_at(shared);
    // Literal round count (6 for 128-bit keys, 7 otherwise): the round loop unrolls.
    cipher.ks.num_rounds = kKeyBits == 128 ? 6 : 7;
    cipher.ks.key_bits = kKeyBits;
  }
};

}  // namespace

std::unique_ptr<KeyedCipher> make_sc2000_table_smem(const uint8_t* key, int key_bits) {
  return kernels::make_keyed<Sc2000Family>(key, key_bits);
}

}  // namespace gpucrypt::cuda
