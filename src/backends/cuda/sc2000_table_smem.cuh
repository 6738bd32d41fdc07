// sc2000_table_smem.cuh: the CUDA variant "sc2000_table_smem", table SC2000 (sc2000.h) with the
// six MS tables (1 KiB) in shared memory. The family lives in this header so that the batch
// executor (cuda_batch.cu) runs its kernels over it; sc2000_table_smem.cu instantiates it
// for the backend.
//
// NOT constant-time: the S-box/M layer looks up tables with bits of the secret state, and bank
// conflicts between the lanes of a warp make the time depend on them. sc2000.h indexes its tables
// directly, so they are not replicated per bank. The key schedule looks up the same tables.
#pragma once

#include "backends/cuda/kernels.cuh"

namespace gpucrypt::cuda {

namespace {

__device__ const uint32_t kSc2000Ms[GC_SC2000_MS_WORDS] = {GC_SC2000_MS_DATA};

template <int kKeyBits>
struct Sc2000TableSmem {
  using Cipher = modes::Sc2000Table;
  static Cipher make_host(const uint8_t* key, int key_len) { return Cipher::make_host(key, key_len); }
  // Device expansion (the batch executor's), with the MS tables in global memory.
  __device__ static void expand(Cipher& cipher, const uint8_t* key, int key_len) {
    cipher.tables = sc2000_tables_at(kSc2000Ms);
    sc2000_expand_key(&cipher.ks, key, key_len, &cipher.tables);
  }
  static constexpr size_t smem_bytes(bool) { return GC_SC2000_MS_WORDS * sizeof(uint32_t); }
  __device__ static void fill(uint32_t* shared, bool) {
    for (int w = threadIdx.x; w < GC_SC2000_MS_WORDS; w += blockDim.x) shared[w] = kSc2000Ms[w];
  }
  __device__ static void bind(Cipher& cipher, uint32_t* shared, bool) { cipher.tables = sc2000_tables_at(shared); }
  __device__ static void prepare(Cipher& cipher, uint32_t* shared, bool decrypt) {
    fill(shared, decrypt);
    bind(cipher, shared, decrypt);
    // Literal round count (6 for 128-bit keys, 7 otherwise): the round loop unrolls.
    cipher.ks.num_rounds = kKeyBits == 128 ? 6 : 7;
    cipher.ks.key_bits = kKeyBits;
  }
};

}  // namespace

}  // namespace gpucrypt::cuda
