// aes_ttable_smem32.cuh: the CUDA variant "aes_ttable_smem32", T-table AES with the table
// replicated 32 times across the shared-memory banks (Tezcan, IEEE Access 2021).
//
// NOT constant-time: every round looks up Te0/Td0 with bytes of the secret state. The 32 copies
// remove bank conflicts (lane L reads only copy L, which lives entirely in bank L), and with them
// the conflict-timing channel of Jiang, Fei and Kaeli (HPCA 2016); the addresses themselves are
// still secret-dependent, so this variant is not offered as constant-time. Use aes_bitsliced.
//
// Layout (aes.h): entry i of the copy for lane L at word i * GC_AES_TABLE_STRIDE + L; the kernel
// passes table + lane and aes.h reads table[index * GC_AES_TABLE_STRIDE]. With a pitch of 32
// words the copies fill the rows: Te0 takes 32 KiB; decryption's Td0 and inverse S-box words take
// 32 KiB each. With a pitch of 64, Td0 and the inverse S-box words share the rows (slots 0..31 and
// 32..63, 64 KiB for both) and every lookup address is (byte << 8) | (lane << 2): one byte
// permute (aes.h's aes_table_lookup_byte with GC_AES_LANE; AES-128-CTR 2.84 -> 4.68 Tbps on
// an H200, docs/performance.md).
// The family lives in this header so bench/shape_sweep*.cu can time its kernels under other launch
// policies and the batch executor (cuda_batch.cu) runs its kernels over it;
// aes_ttable_smem32.cu instantiates it for the backend.
// Round keys stay in the kernel's parameter bank: the round count is a template argument, every
// round-key index is a constant, and the XORs read them as constant-bank operands.
#pragma once

#define GC_AES_TABLE_STRIDE 64
#define GC_AES_LANE (threadIdx.x & 31u)
#include "backends/cuda/kernels.cuh"

namespace gpucrypt::cuda {

namespace {

__device__ const uint8_t kAesSbox[256] = {GC_AES_SBOX_DATA};
__device__ const uint32_t kTe0[256] = {GC_AES_TE0_DATA};
__device__ const uint32_t kTd0[256] = {GC_AES_TD0_DATA};
__device__ const uint32_t kInvSboxWords[256] = {GC_AES_INV_SBOX_WORDS_DATA};

constexpr int kPitch = GC_AES_TABLE_STRIDE;  // words from entry i to entry i + 1 of one copy
constexpr int kRowWords = 256 * kPitch;
static_assert(kPitch == 32 || kPitch == 64, "one copy per bank: a pitch of 32 or 64 words");

// Slots 0..31 of every row get `low`, slots 32..63 (pitch 64 only) `high`. Consecutive threads
// write consecutive words and read one entry many times, which the cache serves as a broadcast.
__device__ void fill_rows(uint32_t* shared, const uint32_t* low, const uint32_t* high) {
  for (int w = threadIdx.x; w < kRowWords; w += blockDim.x) shared[w] = (w % kPitch < 32 ? low : high)[w / kPitch];
}

template <int kKeyBits>
struct AesTTableSmem32 {
  using Cipher = modes::AesTTable<kKeyBits / 32 + 6>;
  // Host expansion; the table pointers are set by bind (AesTTable's own make_host exists only
  // where tables are not replicated).
  static Cipher make_host(const uint8_t* key, int key_len) {
    Cipher cipher{};
    expand_with(cipher, key, key_len, gc_aes_sbox);
    return cipher;
  }
  // Device expansion (the batch executor's: raw keys go up, schedules are made on the GPU).
  __device__ static void expand(Cipher& cipher, const uint8_t* key, int key_len) {
    expand_with(cipher, key, key_len, kAesSbox);
  }
  static constexpr size_t smem_bytes(bool decrypt) {
    return (decrypt && kPitch == 32 ? 2 : 1) * kRowWords * sizeof(uint32_t);
  }
  __device__ static void fill(uint32_t* shared, bool decrypt) {
    if (decrypt) {
      fill_rows(shared, kTd0, kInvSboxWords);
      if (kPitch == 32) fill_rows(shared + kRowWords, kInvSboxWords, kInvSboxWords);
    } else {
      fill_rows(shared, kTe0, kTe0);
    }
  }
  __device__ static void bind(Cipher& cipher, uint32_t* shared, bool decrypt) {
    const unsigned lane = threadIdx.x % 32;
    if (decrypt) {
      uint32_t* inv_sbox_rows = kPitch == 64 ? shared + 32 : shared + kRowWords;
      cipher.td0 = shared + lane;
      cipher.inv_sbox_words = inv_sbox_rows + lane;
    } else {
      cipher.te0 = shared + lane;
    }
  }
  // bind before fill: bind only computes pointers, and in this order the kernels' lane arithmetic
  // stays where it was before fill and bind were split out of prepare.
  __device__ static void prepare(Cipher& cipher, uint32_t* shared, bool decrypt) {
    bind(cipher, shared, decrypt);
    fill(shared, decrypt);
  }

 private:
  __host__ __device__ static void expand_with(Cipher& cipher, const uint8_t* key, int key_len, const uint8_t* sbox) {
    aes_expand_key_enc(&cipher.enc, key, key_len, sbox);
    aes_expand_key_dec(&cipher.dec, key, key_len, sbox);
  }
};

}  // namespace

}  // namespace gpucrypt::cuda
