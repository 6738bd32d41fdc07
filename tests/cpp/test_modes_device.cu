// test_modes_device.cu: the generic modes compiled into CUDA kernels, and run there when a GPU is
// present, with every result compared byte for byte with the same templates run on the host.
//
// The cipher is a toy ARX permutation (NOT a real cipher): the point is to prove that the mode
// code compiles for the device and that the device build (which multiplies GF(2^128) with the
// ctmul32 variant) computes what the host build (ctmul64) computes, with one GPU thread per block
// range as the kernels will use them. AES itself is compared with OpenSSL in test_modes.cpp.
//
// Compile check: nvcc -std=c++20 -arch=sm_90 -c tests/cpp/test_modes_device.cu
// Run:           nvcc -std=c++20 -arch=sm_90 -o test_modes_device tests/cpp/test_modes_device.cu && ./test_modes_device
// Prints "N passed, M failed" (exit 1 on failure); without a GPU it says so and exits 0.
#include <cstdio>
#include <cstring>
#include <vector>

#include "../../src/modes/modes.hpp"

using namespace gpucrypt::modes;

// Toy keyed ARX permutation over kLanes blocks per call, invertible so decryption paths run too.
template <int kLanes>
struct ToyCipher {
  static constexpr int kBlocksPerCall = kLanes;
  uint32_t round_keys[4][4];

  GC_METHOD static ToyCipher make(uint32_t seed) {
    ToyCipher c;
    for (int r = 0; r < 4; ++r)
      for (int i = 0; i < 4; ++i) c.round_keys[r][i] = seed = seed * 747796405u + 2891336453u;
    return c;
  }
  GC_METHOD void encrypt_blocks(gc_block* blocks) const {
    for (int lane = 0; lane < kLanes; ++lane) {
      uint32_t a = blocks[lane].w[0], b = blocks[lane].w[1], c = blocks[lane].w[2], d = blocks[lane].w[3];
      for (int r = 0; r < 4; ++r) {
        a ^= round_keys[r][0]; b ^= round_keys[r][1]; c ^= round_keys[r][2]; d ^= round_keys[r][3];
        a += b; b = gc_rotl32(b, 7) ^ a;
        c += d; d = gc_rotl32(d, 13) ^ c;
        uint32_t t = a; a = b; b = c; c = d; d = t;
      }
      blocks[lane].w[0] = a; blocks[lane].w[1] = b; blocks[lane].w[2] = c; blocks[lane].w[3] = d;
    }
  }
  GC_METHOD void decrypt_blocks(gc_block* blocks) const {
    for (int lane = 0; lane < kLanes; ++lane) {
      uint32_t a = blocks[lane].w[0], b = blocks[lane].w[1], c = blocks[lane].w[2], d = blocks[lane].w[3];
      for (int r = 3; r >= 0; --r) {
        uint32_t t = d; d = c; c = b; b = a; a = t;
        d = gc_rotr32(d ^ c, 13); c -= d;
        b = gc_rotr32(b ^ a, 7); a -= b;
        a ^= round_keys[r][0]; b ^= round_keys[r][1]; c ^= round_keys[r][2]; d ^= round_keys[r][3];
      }
      blocks[lane].w[0] = a; blocks[lane].w[1] = b; blocks[lane].w[2] = c; blocks[lane].w[3] = d;
    }
  }
};

// Message layout shared by host and device: len bytes, split into ranges of kBlocksPerThread
// blocks, one range per thread.
constexpr size_t kBlocksPerThread = 5;
// Ragged on purpose, and laid out so the last thread holds the last full block with the partial
// one, as XTS ciphertext stealing requires (1002 blocks, 5 per thread: the last thread gets 2).
constexpr size_t kMessageLen = 16 * 1001 + 7;
constexpr size_t kNumBlocks = (kMessageLen + 15) / 16;
constexpr size_t kNumThreads = (kNumBlocks + kBlocksPerThread - 1) / kBlocksPerThread;
static_assert(kNumBlocks % kBlocksPerThread != 1, "XTS: the last range needs a full block besides the partial one");
constexpr size_t kSerialMessageLen = 100;  // one message per thread for the serial modes

struct Outputs {
  uint8_t ctr[kMessageLen];
  uint8_t xts_enc[kMessageLen];
  uint8_t xts_dec[kMessageLen];
  uint8_t gcm_ct[kMessageLen];
  uint8_t gcm_ctr_only[kMessageLen];
  gc_gf128 gcm_partials[kNumThreads];
  uint8_t cbc_dec[kNumBlocks * 16];
  uint8_t cfb_dec[kMessageLen];
  uint8_t ecb[kNumBlocks * 16];
  uint8_t serial_gcm[kNumThreads][kSerialMessageLen + 16];
  uint8_t serial_cbc[kNumThreads][kSerialMessageLen / 16 * 16];
  uint8_t serial_cfb[kNumThreads][kSerialMessageLen];
  uint8_t serial_ofb[kNumThreads][kSerialMessageLen];
  int statuses[kNumThreads];
};

// One thread's work; the kernel and the host loop both call this.
template <BlockCipher Cipher>
GC_METHOD void thread_work(const Cipher& cipher, const Cipher& tweak_cipher, size_t thread, const uint8_t* in,
                           gc_block iv, GcmContext gcm, Outputs* out) {
  size_t first = thread * kBlocksPerThread;
  if (first >= kNumBlocks) return;
  size_t count = kNumBlocks - first < kBlocksPerThread ? kNumBlocks - first : kBlocksPerThread;
  size_t offset = 16 * first;
  size_t range_len = kMessageLen - offset < 16 * count ? kMessageLen - offset : 16 * count;
  size_t full_blocks = range_len / 16;

  ctr_xor_range(cipher, iv, first, in + offset, out->ctr + offset, range_len);

  gc_block encrypted_tweak = xts_encrypted_tweak(tweak_cipher, iv);
  int status = (int)xts_encrypt_range(cipher, encrypted_tweak, first, in + offset, out->xts_enc + offset, range_len);
  status |= (int)xts_decrypt_range(cipher, encrypted_tweak, first, in + offset, out->xts_dec + offset, range_len);

  gc_gf128 range_hash = gcm_encrypt_range(cipher, gcm, first, in + offset, out->gcm_ct + offset, range_len);
  out->gcm_partials[thread] = gc_ghash_shift(range_hash, gcm.hash_subkey, kNumBlocks - first - count);
  gcm_ctr_xor_range(cipher, gcm.pre_counter, first, in + offset, out->gcm_ctr_only + offset, range_len);
  gc_gf128 separate_hash = gcm_ghash_range(gcm.hash_subkey, out->gcm_ctr_only + offset, range_len);
  status |= (separate_hash.hi != range_hash.hi || separate_hash.lo != range_hash.lo) ? 64 : 0;

  cbc_decrypt_range(cipher, chain_block_before(iv, in, first), in + offset, out->cbc_dec + offset, full_blocks);
  cfb_decrypt_range(cipher, chain_block_before(iv, in, first), in + offset, out->cfb_dec + offset, range_len);
  ecb_encrypt_blocks(cipher, in + offset, out->ecb + offset, full_blocks);

  // Serial modes: this thread's own message (bytes thread .. thread + 100 of the input), its own IV.
  const uint8_t* message = in + thread;
  gc_block own_iv = gc_ctr128_add(iv, thread);
  uint8_t nonce[16];
  store_block(nonce, own_iv);  // the first 12 bytes are the GCM nonce
  status |= (int)gcm_encrypt(cipher, nonce, 12, message, 13, message, out->serial_gcm[thread], kSerialMessageLen,
                             out->serial_gcm[thread] + kSerialMessageLen, 16);
  cbc_encrypt_blocks(cipher, own_iv, message, out->serial_cbc[thread], kSerialMessageLen / 16);
  cfb_encrypt(cipher, own_iv, message, out->serial_cfb[thread], kSerialMessageLen);
  ofb_xor(cipher, own_iv, message, out->serial_ofb[thread], kSerialMessageLen);
  out->statuses[thread] = status;
}

template <BlockCipher Cipher>
__global__ void modes_kernel(Cipher cipher, Cipher tweak_cipher, const uint8_t* in, gc_block iv, GcmContext gcm,
                             Outputs* out) {
  size_t thread = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (thread < kNumThreads) thread_work(cipher, tweak_cipher, thread, in, iv, gcm, out);
}

// Instantiations for the compile check, also with a 2-lane cipher (the bitsliced AES shape).
template __global__ void modes_kernel<ToyCipher<1>>(ToyCipher<1>, ToyCipher<1>, const uint8_t*, gc_block, GcmContext, Outputs*);
template __global__ void modes_kernel<ToyCipher<2>>(ToyCipher<2>, ToyCipher<2>, const uint8_t*, gc_block, GcmContext, Outputs*);

static int g_passed = 0, g_failed = 0;
static void check(bool ok, const char* what, int lanes) {
  if (ok) {
    ++g_passed;
  } else {
    ++g_failed;
    std::printf("FAIL (%d lanes): %s\n", lanes, what);
  }
}

template <int kLanes>
static bool run_case(const std::vector<uint8_t>& input) {
  using Cipher = ToyCipher<kLanes>;
  Cipher cipher = Cipher::make(1), tweak_cipher = Cipher::make(2);
  gc_block iv = gc_block_load(input.data() + 3);
  uint8_t gcm_iv[12];
  std::memcpy(gcm_iv, input.data() + 40, 12);
  GcmContext gcm;
  gcm_setup(cipher, gcm_iv, 12, &gcm);

  auto* host = new Outputs();
  for (size_t t = 0; t < kNumThreads; ++t) thread_work(cipher, tweak_cipher, t, input.data(), iv, gcm, host);

  uint8_t* device_in = nullptr;
  Outputs* device_out = nullptr;
  if (cudaMalloc(&device_in, input.size()) != cudaSuccess || cudaMalloc(&device_out, sizeof(Outputs)) != cudaSuccess) {
    std::printf("cudaMalloc failed\n");
    return false;
  }
  cudaMemcpy(device_in, input.data(), input.size(), cudaMemcpyHostToDevice);
  cudaMemset(device_out, 0, sizeof(Outputs));
  modes_kernel<<<(kNumThreads + 127) / 128, 128>>>(cipher, tweak_cipher, device_in, iv, gcm, device_out);
  cudaError_t error = cudaDeviceSynchronize();
  auto* device = new Outputs();
  cudaMemcpy(device, device_out, sizeof(Outputs), cudaMemcpyDeviceToHost);
  cudaFree(device_in);
  cudaFree(device_out);
  check(error == cudaSuccess, "kernel ran", kLanes);

  check(std::memcmp(host->ctr, device->ctr, kMessageLen) == 0, "ctr ranges", kLanes);
  check(std::memcmp(host->xts_enc, device->xts_enc, kMessageLen) == 0, "xts encrypt ranges", kLanes);
  check(std::memcmp(host->xts_dec, device->xts_dec, kMessageLen) == 0, "xts decrypt ranges", kLanes);
  check(std::memcmp(host->gcm_ct, device->gcm_ct, kMessageLen) == 0, "gcm fused encrypt ranges", kLanes);
  check(std::memcmp(device->gcm_ctr_only, device->gcm_ct, kMessageLen) == 0, "gcm ctr-only ranges", kLanes);
  check(std::memcmp(host->gcm_partials, device->gcm_partials, sizeof host->gcm_partials) == 0,
        "gcm ghash partials (device ctmul32 vs host ctmul64)", kLanes);
  check(std::memcmp(host->cbc_dec, device->cbc_dec, sizeof host->cbc_dec) == 0, "cbc decrypt ranges", kLanes);
  check(std::memcmp(host->cfb_dec, device->cfb_dec, kMessageLen) == 0, "cfb decrypt ranges", kLanes);
  check(std::memcmp(host->ecb, device->ecb, sizeof host->ecb) == 0, "ecb ranges", kLanes);
  check(std::memcmp(host->serial_gcm, device->serial_gcm, sizeof host->serial_gcm) == 0, "serial gcm per thread", kLanes);
  check(std::memcmp(host->serial_cbc, device->serial_cbc, sizeof host->serial_cbc) == 0, "serial cbc per thread", kLanes);
  check(std::memcmp(host->serial_cfb, device->serial_cfb, sizeof host->serial_cfb) == 0, "serial cfb per thread", kLanes);
  check(std::memcmp(host->serial_ofb, device->serial_ofb, sizeof host->serial_ofb) == 0, "serial ofb per thread", kLanes);
  bool statuses_ok = true;
  for (size_t t = 0; t < kNumThreads; ++t) statuses_ok = statuses_ok && host->statuses[t] == 0 && device->statuses[t] == 0;
  check(statuses_ok, "every status ok", kLanes);

  // The ranged pieces assemble to the one-shot host results.
  std::vector<uint8_t> expected(kMessageLen + 16);
  gcm_encrypt(cipher, gcm_iv, 12, nullptr, 0, input.data(), expected.data(), kMessageLen, expected.data() + kMessageLen, 16);
  gc_gf128 ciphertext_hash = gc_gf128_make(0, 0);
  for (size_t t = 0; t < kNumThreads; ++t) ciphertext_hash = gc_gf128_xor(ciphertext_hash, device->gcm_partials[t]);
  uint8_t tag[16];
  gcm_tag_from_hashes(gcm, gc_gf128_make(0, 0), ciphertext_hash, 0, kMessageLen, tag, 16);
  check(std::memcmp(expected.data(), device->gcm_ct, kMessageLen) == 0 &&
            std::memcmp(expected.data() + kMessageLen, tag, 16) == 0,
        "device gcm pieces + host tag equal one-shot gcm_encrypt", kLanes);
  std::vector<uint8_t> round_trip(kMessageLen);
  xts_decrypt(cipher, tweak_cipher, iv, device->xts_enc, round_trip.data(), kMessageLen);
  check(std::memcmp(round_trip.data(), input.data(), kMessageLen) == 0, "device xts ranges decrypt on the host", kLanes);
  delete host;
  delete device;
  return true;
}

int main() {
  int num_devices = 0;
  if (cudaGetDeviceCount(&num_devices) != cudaSuccess || num_devices == 0) {
    std::printf("no CUDA device: compile check only\n");
    return 0;
  }
  std::vector<uint8_t> input(kMessageLen + kNumThreads + kSerialMessageLen);
  uint32_t x = 12345;
  for (auto& b : input) b = (uint8_t)((x = x * 1103515245u + 12345u) >> 24);
  run_case<1>(input);
  run_case<2>(input);
  std::printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
