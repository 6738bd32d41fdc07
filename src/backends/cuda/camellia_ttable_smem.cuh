// camellia_ttable_smem.cuh: the CUDA variant "camellia_ttable_smem", table Camellia (camellia.h)
// with the four SP tables (4 KiB) in shared memory. The family lives in this header so that the
// batch executor (cuda_batch.cu) runs its kernels over it; camellia_ttable_smem.cu
// instantiates it for the backend.
//
// NOT constant-time: F looks up the SP tables with bytes of (state ^ subkey); shared-memory bank
// conflicts between the lanes of a warp make the time depend on those bytes (Jiang, Fei, Kaeli,
// HPCA 2016 exploit exactly this for AES). camellia.h indexes its tables directly (no stride), so
// the tables are not replicated per bank. The key schedule looks up the same tables.
#pragma once

#include "backends/cuda/kernels.cuh"

namespace gpucrypt::cuda {

namespace {

__device__ const uint32_t kCamelliaSp[GC_CAMELLIA_SP_WORDS] = {GC_CAMELLIA_SP_DATA};

template <int kKeyBits>
struct CamelliaTTableSmem {
  using Cipher = modes::CamelliaTTable;
  static Cipher make_host(const uint8_t* key, int key_len) { return Cipher::make_host(key, key_len); }
  // Device expansion (the batch executor's), with the SP tables in global memory.
  __device__ static void expand(Cipher& cipher, const uint8_t* key, int key_len) {
    cipher.tables = camellia_tables_at(kCamelliaSp);
    camellia_expand_key(&cipher.ks, key, key_len, &cipher.tables);
  }
  static constexpr size_t smem_bytes(bool) { return GC_CAMELLIA_SP_WORDS * sizeof(uint32_t); }
  __device__ static void fill(uint32_t* shared, bool) {
    for (int w = threadIdx.x; w < GC_CAMELLIA_SP_WORDS; w += blockDim.x) shared[w] = kCamelliaSp[w];
  }
  __device__ static void bind(Cipher& cipher, uint32_t* shared, bool) { cipher.tables = camellia_tables_at(shared); }
  __device__ static void prepare(Cipher& cipher, uint32_t* shared, bool decrypt) {
    fill(shared, decrypt);
    bind(cipher, shared, decrypt);
    cipher.set_literal_key_bits(kKeyBits);
  }
};

}  // namespace

}  // namespace gpucrypt::cuda
