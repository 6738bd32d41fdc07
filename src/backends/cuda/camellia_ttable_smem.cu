// camellia_ttable_smem.cu: the CUDA variant "camellia_ttable_smem", table Camellia (camellia.h)
// with the four SP tables (4 KiB) in shared memory.
//
// NOT constant-time: F looks up the SP tables with bytes of (state ^ subkey); shared-memory bank
// conflicts between the lanes of a warp make the time depend on those bytes (Jiang, Fei, Kaeli,
// HPCA 2016 exploit exactly this for AES). camellia.h indexes its tables directly (no stride), so
// the tables are not replicated per bank.
#include "backends/cuda/kernels.cuh"

namespace gpucrypt::cuda {

namespace {

__device__ const uint32_t kCamelliaSp[GC_CAMELLIA_SP_WORDS] = {GC_CAMELLIA_SP_DATA};

template <int kKeyBits>
struct CamelliaFamily {
  using Cipher = modes::CamelliaTTable;
  static Cipher make_host(const uint8_t* key, int key_len) { return Cipher::make_host(key, key_len); }
  static constexpr size_t smem_bytes(bool) { return GC_CAMELLIA_SP_WORDS * sizeof(uint32_t); }
  __device__ static void prepare(Cipher& cipher, uint32_t* shared, bool) {
    for (int w = threadIdx.x; w < GC_CAMELLIA_SP_WORDS; w += blockDim.x) shared[w] = kCamelliaSp[w];
    cipher.tables = camellia_tables_at(shared);
    cipher.set_literal_key_bits(kKeyBits);
  }
};

}  // namespace

std::unique_ptr<KeyedCipher> make_camellia_ttable_smem(const uint8_t* key, int key_bits) {
  return kernels::make_keyed<CamelliaFamily>(key, key_bits);
}

}  // namespace gpucrypt::cuda
