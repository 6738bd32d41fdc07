// aes_ttable_smem32.cu: the CUDA variant "aes_ttable_smem32", T-table AES with the table
// replicated 32 times across the shared-memory banks (Tezcan, IEEE Access 2021).
//
// NOT constant-time: every round looks up Te0/Td0 with bytes of the secret state. The 32 copies
// remove bank conflicts (lane L reads only copy L, which lives entirely in bank L), and with them
// the conflict-timing channel of Jiang, Fei and Kaeli (HPCA 2016); the addresses themselves are
// still secret-dependent, so this variant is not offered as constant-time. Use aes_bitsliced.
//
// Layout (aes.h): entry i of the copy for lane L at word 32 i + L; the kernel passes te0 + lane
// and aes.h reads table[index * GC_AES_TABLE_STRIDE]. Encryption needs Te0 only (32 KiB; the last
// round takes its S-box bytes out of Te0); decryption Td0 and the inverse S-box words (64 KiB).
// Round keys stay in the kernel's parameter bank: the round count is a template argument, every
// round-key index is a constant, and the XORs read them as constant-bank operands.
#define GC_AES_TABLE_STRIDE 32
#include "backends/cuda/kernels.cuh"

namespace gpucrypt::cuda {

namespace {

__device__ const uint32_t kTe0[256] = {GC_AES_TE0_DATA};
__device__ const uint32_t kTd0[256] = {GC_AES_TD0_DATA};
__device__ const uint32_t kInvSboxWords[256] = {GC_AES_INV_SBOX_WORDS_DATA};

constexpr int kCopies = GC_AES_TABLE_STRIDE;
constexpr int kReplicatedWords = 256 * kCopies;

// Word w of the replicated table is entry w / 32 (the copies interleave). Consecutive threads
// write consecutive words and read one entry 32 times, which the cache serves as a broadcast.
__device__ void fill_replicated(uint32_t* shared, const uint32_t* table) {
  for (int w = threadIdx.x; w < kReplicatedWords; w += blockDim.x) shared[w] = table[w / kCopies];
}

template <int kKeyBits>
struct AesTTableSmem32 {
  using Cipher = modes::AesTTable<kKeyBits / 32 + 6>;
  // Host expansion; the table pointers are set by prepare (AesTTable's own make_host exists only
  // where tables are not replicated).
  static Cipher make_host(const uint8_t* key, int key_len) {
    Cipher cipher{};
    aes_expand_key_enc(&cipher.enc, key, key_len, gc_aes_sbox);
    aes_expand_key_dec(&cipher.dec, key, key_len, gc_aes_sbox);
    return cipher;
  }
  static constexpr size_t smem_bytes(bool decrypt) {
    return (decrypt ? 2 : 1) * kReplicatedWords * sizeof(uint32_t);
  }
  __device__ static void prepare(Cipher& cipher, uint32_t* shared, bool decrypt) {
    const unsigned lane = threadIdx.x % 32;
    if (decrypt) {
      fill_replicated(shared, kTd0);
      fill_replicated(shared + kReplicatedWords, kInvSboxWords);
      cipher.td0 = shared + lane;
      cipher.inv_sbox_words = shared + kReplicatedWords + lane;
    } else {
      fill_replicated(shared, kTe0);
      cipher.te0 = shared + lane;
    }
  }
};

}  // namespace

std::unique_ptr<KeyedCipher> make_aes_ttable_smem32(const uint8_t* key, int key_bits) {
  return kernels::make_keyed<AesTTableSmem32>(key, key_bits);
}

}  // namespace gpucrypt::cuda
