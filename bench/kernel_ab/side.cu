// side.cu: one side of scripts/kernel-ab, the same-call A/B of the aes_bitsliced8 bulk and GCM
// kernels, and of the GHASH tile pass, of two source trees. scripts/kernel-ab compiles this file twice, once against each tree's src/
// (-I), with AB_SIDE naming the side (old_ or new_); each build exports one launcher, and main.cu
// times both on the same buffers. Each side is also built with the namespace gpucrypt renamed
// (-Dgpucrypt=gpucrypt_old_, ...): the two trees' classes share names but not layouts (a key
// schedule may gain a field), and the linker would otherwise keep one side's inline functions
// for both.
#include "backends/cuda/aes_bitsliced.cuh"

#include <cstdlib>
#include <cstring>

namespace gpucrypt::cuda {

// The two launch-support functions kernels.cuh's launch_bulk calls, defined in the library's
// device.cu; the same queries here, without the library.
int current_sm_count() {
  int device = 0, count = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return count;
}
int max_resident_blocks(const void* kernel, size_t smem_bytes, int threads_per_block) {
  int blocks = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads_per_block, smem_bytes),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return blocks;
}

namespace {

// GHASH alone, as ghash.cu's tile pass (which lives in that file's anonymous namespace): the tree's
// tile loop and multiply, the hashes of 512-block tiles.
constexpr int kHashThreads = 256;
__global__ void __launch_bounds__(kHashThreads)
    ghash_tiles(const uint8_t* data, uint64_t len, uint64_t num_tiles, const __grid_constant__ GcmSegment powers,
                gc_gf128* tile_hashes) {
  const unsigned lane = kernels::lane_id();
  for (uint64_t tile = kernels::global_warp<kHashThreads>(); tile < num_tiles;
       tile += kernels::num_warps<kHashThreads>()) {
    gc_gf128 sum = kernels::ghash_tile_lane_sum<kGcmMinTileBlocks / 32, false, false>(data, len, 0, tile, powers.h_pow32);
    sum = kernels::warp_xor(gc_gf128_mul(sum, powers.lane_pow[lane]));
    if (lane == 0) tile_hashes[tile] = sum;
  }
}

// The GCM modes' layout of out: the ciphertext of whole 512-block tiles, then their tile hashes,
// then zeros to the end, so that both sides write every byte of out.
struct GcmLayout {
  size_t data_len, num_tiles;
  explicit GcmLayout(size_t len) : data_len(len / (kGcmMinTileBlocks * 16 + 16) * (kGcmMinTileBlocks * 16)),
                                   num_tiles(data_len / (kGcmMinTileBlocks * 16)) {}
};

// gcm (the fused GCM kernel) and ghash (the tile pass over in), with H taken from the key bytes.
template <int kKeyBits, class F>
int run_gcm(const char* mode, const typename F::Cipher& cipher, const uint8_t* key, const uint8_t* in, uint8_t* out,
            size_t len, gc_block counter, cudaStream_t stream) {
  GcmSegment segment{};
  segment.first_counter = counter;
  segment.encrypt = true;
  segment.lane_pow[31] = gc_gf128_make(0, 0);
  std::memcpy(&segment.lane_pow[31], key, 16);  // H: any field element does for timing and comparing
  for (int lane = 30; lane >= 0; --lane) segment.lane_pow[lane] = gc_gf128_mul(segment.lane_pow[lane + 1], segment.lane_pow[31]);
  segment.h_pow32 = segment.lane_pow[0];
  const GcmLayout layout(len);
  auto* hashes = reinterpret_cast<gc_gf128*>(out + layout.data_len);
  if (std::strcmp(mode, "gcm") == 0) {
    kernels::launch_gcm<F, BitslicedWidePolicy>(cipher, segment, in, out, layout.data_len, hashes, stream);
  } else {
    check(cudaMemsetAsync(out, 0, layout.data_len, stream), "cudaMemsetAsync");
    const void* kernel = reinterpret_cast<const void*>(ghash_tiles);
    const int grid = kernels::grid_for<kHashThreads>(kernel, 0, layout.num_tiles);
    ghash_tiles<<<grid, kHashThreads, 0, stream>>>(in, layout.data_len, layout.num_tiles, segment, hashes);
    check(cudaGetLastError(), "GHASH kernel launch");
  }
  const size_t written = layout.data_len + layout.num_tiles * 16;
  check(cudaMemsetAsync(out + written, 0, len - written, stream), "cudaMemsetAsync");
  return 0;
}

template <int kKeyBits>
int run(const char* mode, const uint8_t* key, const uint8_t* in, uint8_t* out, size_t len, const uint8_t* iv16,
        cudaStream_t stream) {
  using F = AesBitsliced8Family<kKeyBits>;
  const typename F::Cipher cipher = F::make_host(key, kKeyBits / 8);
  gc_block iv = gc_block_load(iv16);
  if (std::strcmp(mode, "gcm") == 0 || std::strcmp(mode, "ghash") == 0) {
    return run_gcm<kKeyBits, F>(mode, cipher, key, in, out, len, iv, stream);
  } else if (std::strcmp(mode, "ctr") == 0) {
    kernels::launch_bulk<F, BitslicedWidePolicy, kernels::Bulk::ctr>(cipher, in, out, len, iv, stream);
  } else if (std::strcmp(mode, "ecb_encrypt") == 0) {
    kernels::launch_bulk<F, BitslicedWidePolicy, kernels::Bulk::ecb_encrypt>(cipher, in, out, len, iv, stream);
  } else if (std::strcmp(mode, "ecb_decrypt") == 0) {
    kernels::launch_bulk<F, BitslicedWidePolicy, kernels::Bulk::ecb_decrypt>(cipher, in, out, len, iv, stream);
  } else if (std::strcmp(mode, "xts_encrypt") == 0) {  // one data unit of the whole buffer
    kernels::launch_xts<F, BitslicedWidePolicy, true>(cipher, iv, 0, in, out, len, stream);
  } else if (std::strncmp(mode, "xts_units", 9) == 0) {
    // xts_units<BYTES>_{encrypt,decrypt}: units of BYTES back to back; their block-0 tweaks are
    // the input's first blocks (any values do for timing, and both sides read the same).
    const uint64_t unit_blocks = std::strtoull(mode + 9, nullptr, 10) / 16;
    if (unit_blocks == 0) return -1;
    const size_t units_len = len / (16 * unit_blocks) * (16 * unit_blocks);
    const auto* unit_tweaks = reinterpret_cast<const gc_block*>(in);
    if (std::strstr(mode, "_decrypt") != nullptr)
      kernels::launch_xts_units<F, BitslicedWidePolicy, false>(cipher, unit_tweaks, unit_blocks, in, out, units_len, stream);
    else
      kernels::launch_xts_units<F, BitslicedWidePolicy, true>(cipher, unit_tweaks, unit_blocks, in, out, units_len, stream);
    if (units_len < len) check(cudaMemsetAsync(out + units_len, 0, len - units_len, stream), "cudaMemsetAsync");
  } else {
    return -1;
  }
  return 0;
}

}  // namespace
}  // namespace gpucrypt::cuda

#define KERNEL_AB_CAT2(a, b) a##b
#define KERNEL_AB_CAT(a, b) KERNEL_AB_CAT2(a, b)

// Launches aes_bitsliced8's bulk kernel for `mode` (ctr, ecb_encrypt, ecb_decrypt), its XTS kernels
// (xts_encrypt: one data unit; xts_units512_encrypt, xts_units4096_decrypt, ...: many), its fused
// GCM kernel (gcm) or the GHASH tile pass (ghash) on `stream`;
// key_bits 128 or 256. Returns 0, or -1 for a mode or key size it does not know.
extern "C" int KERNEL_AB_CAT(AB_SIDE, launch)(const char* mode, int key_bits, const uint8_t* key, const uint8_t* in,
                                              uint8_t* out, size_t len, const uint8_t* iv16, cudaStream_t stream) {
  if (key_bits == 128) return gpucrypt::cuda::run<128>(mode, key, in, out, len, iv16, stream);
  if (key_bits == 256) return gpucrypt::cuda::run<256>(mode, key, in, out, len, iv16, stream);
  return -1;
}
