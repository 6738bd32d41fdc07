// camellia_sbox_smem32.cuh: the CUDA variant "camellia_sbox_smem32", table Camellia (camellia.h)
// with its four S-boxes packed into one table of 256 words (entry x = s1(x), s2(x), s3(x), s4(x)),
// replicated once per shared-memory bank like aes_ttable_smem32's Te0 (64 KiB, pitch 64: entry x
// of lane L's copy at byte x * 256 + L * 4, one byte permute per address). Each lookup places its
// byte where the SP table would have it with a second byte permute. Against camellia_ttable_smem
// (four unreplicated SP tables, 4 KiB) this trades one permute per lookup for conflict-free banks.
//
// NOT constant-time: F looks up the table with bytes of (state ^ subkey). With one copy per bank
// no two lanes of a warp ever conflict, which removes the bank-conflict timing channel (Jiang, Fei,
// Kaeli, HPCA 2016), but the addresses still depend on secrets.
// Keys are expanded on the host with the SP tables (modes::camellia_host_expand_key), or for the
// batch executor on the device by the SP-table unit (batch::expand_camellia_keys).
//
// The layout is chosen by macros before camellia.h is first included: a translation unit includes
// this header first. The family lives here so that the batch executor runs its kernels over it
// (cuda_batch_camellia_sbox.cu); camellia_sbox_smem32.cu instantiates it for the backend.
#pragma once

#define GC_CAMELLIA_SBOX_WORDS 1
#define GC_CAMELLIA_TABLE_STRIDE 64
#define GC_CAMELLIA_LANE (threadIdx.x & 31u)
#include "backends/cuda/kernels.cuh"

namespace gpucrypt::cuda {

namespace {

__device__ const uint32_t kCamelliaSp[GC_CAMELLIA_SP_WORDS] = {GC_CAMELLIA_SP_DATA};

constexpr int kCamelliaSboxPitch = GC_CAMELLIA_TABLE_STRIDE;
constexpr int kCamelliaSboxRowWords = 256 * kCamelliaSboxPitch;

template <int kKeyBits>
struct CamelliaSboxSmem32 {
  using Cipher = modes::CamelliaTTable;
  static Cipher make_host(const uint8_t* key, int key_len) { return Cipher::make_host(key, key_len); }
  static constexpr size_t smem_bytes(bool) { return kCamelliaSboxRowWords * sizeof(uint32_t); }
  __device__ static void fill(uint32_t* shared, bool) {
    // Every slot of row x holds entry x (slots 32..63 are the pitch's padding, filled alike).
    for (int w = threadIdx.x; w < kCamelliaSboxRowWords; w += blockDim.x) shared[w] = camellia_sbox_word(kCamelliaSp, w / kCamelliaSboxPitch);
  }
  __device__ static void bind(Cipher& cipher, uint32_t* shared, bool) { cipher.tables.sbox_words = shared + threadIdx.x % 32; }
  __device__ static void prepare(Cipher& cipher, uint32_t* shared, bool decrypt) {
    fill(shared, decrypt);
    bind(cipher, shared, decrypt);
    cipher.set_literal_key_bits(kKeyBits);
  }
};

}  // namespace

}  // namespace gpucrypt::cuda
