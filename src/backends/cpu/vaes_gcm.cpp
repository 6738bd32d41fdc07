// vaes_gcm.cpp: see vaes_gcm.hpp. The GCM construction (J0, CTR from inc32(J0), GHASH over padded
// AAD, ciphertext and the length block, tag = E_K(J0) xor GHASH) over one width's kernels.
// Constant-time: yes (no branch or index on key, data or tag; the kernels' statement applies).
#include "backends/cpu/vaes_gcm.hpp"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/aes_bitsliced.h"
#include "gpucrypt/cipher.hpp"
#include "modes/block_cipher.hpp"

namespace gpucrypt::cpu::vaes_gcm {

namespace {

// Seal hashes each piece of ciphertext right after the CTR pass wrote it, while it is still in
// L1; 8 KiB keeps input, output and the round keys well inside a 32-48 KiB L1.
constexpr size_t kSealPiece = 8 * 1024;

bool cpu_runs(const char* isa) {
#if defined(GPUCRYPT_WITH_VAES_GCM)
  __builtin_cpu_init();
  const bool common = __builtin_cpu_supports("vaes") && __builtin_cpu_supports("vpclmulqdq") &&
                      __builtin_cpu_supports("aes") && __builtin_cpu_supports("pclmul") &&
                      __builtin_cpu_supports("avx2");
  if (std::string_view(isa) == "avx2") return common;
  return common && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
#else
  (void)isa;
  return false;
#endif
}

// counter + blocks, inc32 (the low 32 bits wrap, the rest of the block is the nonce part).
void add_to_counter(const uint8_t base[16], uint64_t blocks, uint8_t out[16]) {
  std::memcpy(out, base, 12);
  const uint32_t low = (uint32_t(base[12]) << 24 | uint32_t(base[13]) << 16 | uint32_t(base[14]) << 8 | base[15]) +
                       static_cast<uint32_t>(blocks);
  out[12] = uint8_t(low >> 24);
  out[13] = uint8_t(low >> 16);
  out[14] = uint8_t(low >> 8);
  out[15] = uint8_t(low);
}

void store_be64(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = uint8_t(v);
}

}  // namespace

// gpucrypt::secure_zero (a memset the compiler may not drop), not modes::secure_zero's volatile
// byte loop (portable to CUDA), which took about 600 cycles for the 576 bytes of tail buffers a
// short message passes through, 16% of a 64-byte seal.
void wipe(void* p, size_t len) { gpucrypt::secure_zero(p, len); }

const Kernels* best_kernels() {
  static const Kernels* const chosen = []() -> const Kernels* {
    const char* forced = std::getenv("GPUCRYPT_CPU_GCM_ISA");
    const bool want_avx2_only = forced && std::string_view(forced) == "avx2";
    if (!want_avx2_only && avx512_kernels() && cpu_runs("avx512")) return avx512_kernels();
    if (avx2_kernels() && cpu_runs("avx2")) return avx2_kernels();
    return nullptr;
  }();
  return chosen;
}

Context::~Context() { wipe(&key_, sizeof key_); }

void Context::set_key(int key_bits, const uint8_t* key) {
  // The FIPS-197 schedule from aes_bitsliced's constant-time expansion: its words sit in the even
  // slots before the transpose, and the transpose (aes_bitsliced_ortho) is its own inverse.
  aes_bitsliced_key sliced;
  if (aes_bitsliced_expand_key(&sliced, key, key_bits / 8) != 0)
    throw std::invalid_argument("AES key must be 16, 24 or 32 bytes, got " + std::to_string(key_bits / 8));
  key_.rounds = sliced.num_rounds;
  for (int r = 0; r <= sliced.num_rounds; ++r) {
    uint32_t* q = sliced.sk + 8 * r;
    aes_bitsliced_ortho(q);
    for (int i = 0; i < 4; ++i) gc_store_le32(key_.round_keys + 16 * r + 4 * i, q[2 * i]);
  }
  wipe(&sliced, sizeof sliced);
  kernels_->init_powers(key_);
}

void Context::counter_block(ByteSpan nonce, uint8_t j0[16]) const {
  if (nonce.size() == 12) {
    std::memcpy(j0, nonce.data(), 12);
    j0[12] = j0[13] = j0[14] = 0;
    j0[15] = 1;
    return;
  }
  // SP 800-38D: J0 = GHASH(nonce || 0^s || 0^64 || [len(nonce)]_64).
  std::memset(j0, 0, 16);
  kernels_->ghash(key_, j0, nonce.data(), nonce.size());
  uint8_t length_block[16] = {};
  store_be64(length_block + 8, uint64_t(nonce.size()) * 8);
  kernels_->ghash(key_, j0, length_block, 16);
}

void Context::finish_tag(uint8_t state[16], uint64_t aad_len, uint64_t len, const uint8_t j0[16],
                         uint8_t tag[16]) const {
  uint8_t length_block[16];
  store_be64(length_block, aad_len * 8);
  store_be64(length_block + 8, len * 8);
  kernels_->ghash(key_, state, length_block, 16);
  uint8_t mask[16];
  kernels_->encrypt_block(key_, j0, mask);
  for (int i = 0; i < 16; ++i) tag[i] = state[i] ^ mask[i];
  wipe(mask, sizeof mask);
}

void Context::seal(ByteSpan nonce, ByteSpan aad, const uint8_t* in, uint8_t* out, size_t len, uint8_t* tag,
                   size_t tag_len) const {
  uint8_t j0[16], counter[16], state[16] = {}, full_tag[16];
  counter_block(nonce, j0);
  kernels_->ghash(key_, state, aad.data(), aad.size());
  for (size_t done = 0; done < len; done += kSealPiece) {
    const size_t piece = std::min(kSealPiece, len - done);
    add_to_counter(j0, 1 + done / 16, counter);
    kernels_->ctr(key_, counter, in + done, out + done, piece);
    kernels_->ghash(key_, state, out + done, piece);
  }
  finish_tag(state, aad.size(), len, j0, full_tag);
  std::memcpy(tag, full_tag, tag_len);
  wipe(full_tag, sizeof full_tag);
}

bool Context::open(ByteSpan nonce, ByteSpan aad, const uint8_t* in, uint8_t* out, size_t len, const uint8_t* tag,
                   size_t tag_len) const {
  uint8_t j0[16], counter[16], state[16] = {}, expected[16];
  counter_block(nonce, j0);
  kernels_->ghash(key_, state, aad.data(), aad.size());
  kernels_->ghash(key_, state, in, len);
  finish_tag(state, aad.size(), len, j0, expected);
  const bool tag_ok = modes::constant_time_equal(expected, tag, tag_len);
  wipe(expected, sizeof expected);
  if (!tag_ok) return false;
  add_to_counter(j0, 1, counter);
  kernels_->ctr(key_, counter, in, out, len);
  return true;
}

}  // namespace gpucrypt::cpu::vaes_gcm
