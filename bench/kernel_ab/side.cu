// side.cu: one side of scripts/kernel-ab, the same-call A/B of the aes_bitsliced8 bulk and GCM
// kernels, of the GHASH tile pass and of the whole GCM seal (CTR + GHASH: two passes, or overlapped
// where the tree has gcm_overlap.hpp), of two source trees. scripts/kernel-ab compiles this file twice, once against each tree's src/
// (-I), with AB_SIDE naming the side (old_ or new_); each build exports one launcher, and main.cu
// times both on the same buffers. Each side is also built with the namespace gpucrypt renamed
// (-Dgpucrypt=gpucrypt_old_, ...): the two trees' classes share names but not layouts (a key
// schedule may gain a field), and the linker would otherwise keep one side's inline functions
// for both.
#include "backends/cuda/aes_bitsliced.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// The overlapped seal (gcm_overlap.hpp, built with ghash.cu and gcm_overlap.cu by scripts/kernel-ab
// where the tree has them); a tree without it seals in two passes.
#if __has_include("backends/cuda/gcm_overlap.hpp")
#include "backends/cuda/gcm_overlap.hpp"
#define KERNEL_AB_HAS_GCM_OVERLAP 1
#else
#define KERNEL_AB_HAS_GCM_OVERLAP 0
#endif
// The tensor-core GHASH (ghash_mma.hpp: ghash.cu's tile pass where GcmSegment carries the key's
// tables); a tree without it hashes on the integer pipe.
#if __has_include("backends/cuda/ghash_mma.hpp")
#define KERNEL_AB_HAS_GHASH_MMA 1
#include <memory>
#else
#define KERNEL_AB_HAS_GHASH_MMA 0
#endif

namespace gpucrypt {
// ghash.cu wipes its kernel parameters with the library's secure_zero (base/names.cpp); the same here.
void secure_zero(void* p, size_t len) {
  if (len == 0) return;
  std::memset(p, 0, len);
  asm volatile("" : : "r"(p) : "memory");
}
}  // namespace gpucrypt

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
  if (smem_bytes > 48 * 1024)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_bytes)),
          "cudaFuncSetAttribute");
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
    ghash_tile_pass(const uint8_t* data, uint64_t len, uint64_t num_tiles, const __grid_constant__ GcmSegment powers,
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

// The tree's tensor-core GHASH tables for H, as GcmKey makes them, kept for the run: made at the
// first (untimed) call with that H, not in the timed ones.
void attach_ghash_tables(gc_gf128 h, GcmSegment* powers) {
#if KERNEL_AB_HAS_GHASH_MMA
  static std::unique_ptr<DeviceGhashTables> tables;
  static gc_gf128 tables_h{};
  if (!tables || tables_h.hi != h.hi || tables_h.lo != h.lo) {
    tables.reset();
    tables = std::make_unique<DeviceGhashTables>(h);
    tables_h = h;
  }
  powers->ghash_tables = tables->get();
#else
  (void)h;
  (void)powers;
#endif
}

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
#if KERNEL_AB_HAS_GHASH_MMA
    // The tree's own tile pass (ghash.cu: on the tensor cores with the key's tables).
    attach_ghash_tables(segment.lane_pow[31], &segment);
    const int cap = std::strcmp(mode, "ghash_capped") != 0
                        ? 0
                        : gcm_overlap_shape_from_env().value_or(GcmOverlapShape{}).hash_ctas_per_sm;
    ghash_tiles(in, layout.data_len, 0, segment, hashes, cap, stream);
#else
    const void* kernel = reinterpret_cast<const void*>(ghash_tile_pass);
#if KERNEL_AB_HAS_GCM_OVERLAP
    // ghash_capped: the grid the overlapped seal gives the tile pass beside CTR, here alone.
    const int cap = std::strcmp(mode, "ghash_capped") != 0
                        ? 0
                        : gcm_overlap_shape_from_env().value_or(GcmOverlapShape{}).hash_ctas_per_sm;
    const int grid = kernels::grid_for<kHashThreads>(kernel, 0, layout.num_tiles, cap);
#else
    const int grid = kernels::grid_for<kHashThreads>(kernel, 0, layout.num_tiles);
#endif
    ghash_tile_pass<<<grid, kHashThreads, 0, stream>>>(in, layout.data_len, layout.num_tiles, segment, hashes);
    check(cudaGetLastError(), "GHASH kernel launch");
#endif
  }
  const size_t written = layout.data_len + layout.num_tiles * 16;
  check(cudaMemsetAsync(out + written, 0, len - written, stream), "cudaMemsetAsync");
  return 0;
}

// ---- the whole seal: gcm_seal (overlapped where the tree has that route) and gcm_seal_2pass ----

// The seal modes' layout of out: the ciphertext of a ragged length (not a multiple of 16, of a tile
// or of a segment: both routes' ends are exercised), its GHASH at the next 16-byte boundary, then
// zeros to the end, so that both sides write every byte of out.
constexpr size_t kSealShortBy = kGcmMinTileBlocks * 16 + 3;
struct SealLayout {
  size_t data_len, hash_offset;
  explicit SealLayout(size_t len) : data_len(len - kSealShortBy), hash_offset((len - kSealShortBy + 15) / 16 * 16) {}
};

// GHASH scratch of a seal (gcm_num_tiles + ghash_reduce_scratch + the result), kept across calls
// so that no timed run allocates.
gc_gf128* seal_scratch(size_t len) {
  static gc_gf128* scratch = nullptr;
  static size_t capacity = 0;
  const size_t tiles = gcm_num_tiles(len);
  const size_t need = tiles + ghash_reduce_scratch(tiles) + 1;
  if (need > capacity) {
    if (scratch != nullptr) check(cudaFree(scratch), "cudaFree");
    check(cudaMalloc(&scratch, need * sizeof(gc_gf128)), "cudaMalloc (GHASH scratch)");
    capacity = need;
  }
  return scratch;
}

// H from the key bytes and its powers (any field element does for timing and comparing).
GcmSegment seal_powers(const uint8_t* key, gc_gf128* hash_subkey) {
  *hash_subkey = gc_gf128_make(gc_gf128_load_be64(key), gc_gf128_load_be64(key + 8));
  GcmSegment powers{};
  gcm_segment_powers(*hash_subkey, &powers);
  attach_ghash_tables(*hash_subkey, &powers);
  return powers;
}

// The two-pass seal as GcmKey::enqueue runs it: the bulk CTR kernel, then ghash_device.
template <class F>
void seal_two_passes(const typename F::Cipher& cipher, const GcmSegment& powers, gc_gf128 hash_subkey,
                     const uint8_t* in, uint8_t* out, size_t len, gc_block counter, gc_gf128* hashes,
                     gc_gf128* result, cudaStream_t stream) {
  kernels::launch_bulk<F, BitslicedWidePolicy, kernels::Bulk::ctr>(cipher, in, out, len, counter, stream);
  ghash_device(out, len, powers, hash_subkey, hashes, result, stream);
}

#if KERNEL_AB_HAS_GCM_OVERLAP
// GcmOverlap::seal takes a KeyedCipher; this one has CTR only (the library's KeyedCipherImpl would
// instantiate every kernel of the family here). The same launch_bulk as KeyedCipherImpl's.
template <class F>
class CtrOnlyCipher final : public KeyedCipher {
 public:
  explicit CtrOnlyCipher(const typename F::Cipher& cipher) : cipher_(cipher) {}
  void bulk(Mode mode, Direction direction, gc_block start, const uint8_t* in, uint8_t* out, size_t len,
            cudaStream_t stream) const override {
    if (mode != Mode::ctr || direction != Direction::encrypt) std::abort();
    kernels::launch_bulk<F, BitslicedWidePolicy, kernels::Bulk::ctr>(cipher_, in, out, len, start, stream);
  }
  void ctr_beside(gc_block counter, const uint8_t* in, uint8_t* out, size_t len, int max_ctas_per_sm,
                  cudaStream_t stream) const override {
    kernels::launch_bulk<F, BitslicedWidePolicy, kernels::Bulk::ctr>(cipher_, in, out, len, counter, stream,
                                                                      max_ctas_per_sm);
  }
  void xts(Direction, gc_block, uint64_t, const uint8_t*, uint8_t*, size_t, cudaStream_t) const override { std::abort(); }
  void xts_units(Direction, const gc_block*, uint64_t, const uint8_t*, uint8_t*, size_t, cudaStream_t) const override {
    std::abort();
  }
  void serial(SerialMode, gc_block, const gc_block*, gc_block*, const uint8_t*, uint8_t*, size_t,
              cudaStream_t) const override {
    std::abort();
  }
  uint64_t gcm_tile_blocks() const override { return kGcmMinTileBlocks; }
  void gcm(const GcmSegment&, const uint8_t*, uint8_t*, size_t, gc_gf128*, cudaStream_t) const override { std::abort(); }
  bool gcm_seal_in_two_passes() const override { return true; }

 private:
  typename F::Cipher cipher_;
};

// One GcmOverlap (side stream, event) for the whole run, as a GcmKey keeps one.
GcmOverlap& side_overlap() {
  static GcmOverlap overlap;
  return overlap;
}

// The shape: GPUCRYPT_CUDA_GCM_OVERLAP's, as the library reads it, or the defaults.
GcmOverlapShape overlap_shape() { return gcm_overlap_shape_from_env().value_or(GcmOverlapShape{}); }
#endif

template <class F>
int run_seal(const char* mode, const typename F::Cipher& cipher, const uint8_t* key, const uint8_t* in, uint8_t* out,
             size_t len, gc_block counter, cudaStream_t stream) {
  if (len < 2 * kSealShortBy) return -1;
  const SealLayout layout(len);
  gc_gf128 hash_subkey;
  const GcmSegment powers = seal_powers(key, &hash_subkey);
  gc_gf128* hashes = seal_scratch(layout.data_len);
  const size_t num_hashes = gcm_num_tiles(layout.data_len) + ghash_reduce_scratch(gcm_num_tiles(layout.data_len)) + 1;
  gc_gf128* result = hashes + num_hashes - 1;
  const bool two_passes = std::strcmp(mode, "gcm_seal_2pass") == 0 || !KERNEL_AB_HAS_GCM_OVERLAP;
  if (two_passes) {
    seal_two_passes<F>(cipher, powers, hash_subkey, in, out, layout.data_len, counter, hashes, result, stream);
  } else {
#if KERNEL_AB_HAS_GCM_OVERLAP
    const CtrOnlyCipher<F> ctr_cipher(cipher);
    side_overlap().seal(ctr_cipher, counter, powers, hash_subkey, in, out, layout.data_len, hashes, result, stream,
                        overlap_shape());
#endif
  }
  check(cudaMemsetAsync(out + layout.data_len, 0, len - layout.data_len, stream), "cudaMemsetAsync");
  check(cudaMemcpyAsync(out + layout.hash_offset, result, 16, cudaMemcpyDeviceToDevice, stream), "copy GHASH");
  return 0;
}

template <int kKeyBits>
int run(const char* mode, const uint8_t* key, const uint8_t* in, uint8_t* out, size_t len, const uint8_t* iv16,
        cudaStream_t stream) {
  using F = AesBitsliced8Family<kKeyBits>;
  const typename F::Cipher cipher = F::make_host(key, kKeyBits / 8);
  gc_block iv = gc_block_load(iv16);
  if (std::strcmp(mode, "ctr_capped") == 0) {
    // CTR on the grid the overlapped seal gives it beside GHASH, here alone (a tree without it:
    // the whole GPU), so that the A/B shows what the cap costs the pass by itself.
#if KERNEL_AB_HAS_GCM_OVERLAP
    const int cap = gcm_overlap_shape_from_env().value_or(GcmOverlapShape{}).ctr_ctas_per_sm;
    kernels::launch_bulk<F, BitslicedWidePolicy, kernels::Bulk::ctr>(cipher, in, out, len, iv, stream, cap);
#else
    kernels::launch_bulk<F, BitslicedWidePolicy, kernels::Bulk::ctr>(cipher, in, out, len, iv, stream);
#endif
    return 0;
  }
  if (std::strcmp(mode, "gcm_seal") == 0 || std::strcmp(mode, "gcm_seal_2pass") == 0) {
    // GCM's 32-bit counter must not wrap over the range (GcmKey takes this route only then): a
    // 12-byte nonce's counter, the IV's first 12 bytes and 2.
    iv.w[3] = 0;
    iv = gc_ctr32_add(iv, 2);
    return run_seal<F>(mode, cipher, key, in, out, len, iv, stream);
  }
  if constexpr (kKeyBits == 192) {
    return -1;  // 192-bit keys: the seal modes only (XTS has none, and each mode is minutes of ptxas)
  } else if (std::strcmp(mode, "gcm") == 0 || std::strcmp(mode, "ghash") == 0 || std::strcmp(mode, "ghash_capped") == 0) {
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

#if KERNEL_AB_HAS_GCM_OVERLAP
// ---- the overlapped seal's own check: byte for byte against the two-pass seal -----------------

std::string overlap_shape_json(const GcmOverlapShape& shape) {
  const size_t segment_len = shape.segment_len;
  char text[160];
  std::snprintf(text, sizeof text, "{\"segment_len\": %zu, \"ctr_ctas_per_sm\": %d, \"hash_ctas_per_sm\": %d}",
                segment_len, shape.ctr_ctas_per_sm, shape.hash_ctas_per_sm);
  return text;
}

// Seals of many lengths (not multiples of 16, of a tile or of a segment; shorter than one segment,
// which the route hands to the two passes) under several shapes (one-tile segments, which make
// every segment boundary a case, up to the default), out of place and in place: the ciphertext and
// the GHASH must equal the two-pass seal's, and nothing past the end may be written. Returns the
// number of failures; appends a JSON object to report.
template <int kKeyBits>
int check_overlap_bits(const uint8_t* key, const uint8_t* in, const uint8_t* iv16, uint8_t* a, uint8_t* b,
                       gc_gf128* hashes_a, gc_gf128* hashes_b, size_t capacity, cudaStream_t stream,
                       std::string& report) {
  using F = AesBitsliced8Family<kKeyBits>;
  const typename F::Cipher cipher = F::make_host(key, kKeyBits / 8);
  const CtrOnlyCipher<F> ctr_cipher(cipher);
  gc_block counter = gc_block_load(iv16);
  counter.w[3] = 0;
  counter = gc_ctr32_add(counter, 2);
  gc_gf128 hash_subkey;
  const GcmSegment powers = seal_powers(key, &hash_subkey);
  constexpr size_t kMiB = size_t(1) << 20, kTile = kGcmMinTileBlocks * 16;
  const size_t lengths[] = {0, 1, 15, 16, 17, kTile - 1, kTile, kTile + 1, 3 * kTile + 5, 8 * kTile,
                            kMiB - 3, 33 * kMiB + 77, 100 * kMiB + 5};
  std::vector<GcmOverlapShape> shapes = {{kTile, 2, 1}, {2 * kTile, 2, 1}, {3 * kTile, 1, 2}, {kTile, 1, 2},
                                         {kMiB, 2, 1}, {0, 2, 1}, {0, 1, 2}};
  if (auto env = gcm_overlap_shape_from_env()) shapes.push_back(*env);
  std::vector<uint8_t> host_a, host_b;
  int cases = 0, failures = 0;
  std::string failed;
  for (const size_t len : lengths) {
    if (len + 16 > capacity) continue;
    const size_t num_hashes = gcm_num_tiles(len) + ghash_reduce_scratch(gcm_num_tiles(len)) + 1;
    // The reference: the two-pass seal, A poisoned 0xA5 first.
    check(cudaMemsetAsync(a, 0xA5, len + 16, stream), "poison");
    check(cudaMemsetAsync(hashes_a, 0x3c, num_hashes * sizeof(gc_gf128), stream), "poison");
    seal_two_passes<F>(cipher, powers, hash_subkey, in, a, len, counter, hashes_a, hashes_a + num_hashes - 1, stream);
    check(cudaMemcpyAsync(a + len, hashes_a + num_hashes - 1, 16, cudaMemcpyDeviceToDevice, stream), "copy");
    check(cudaStreamSynchronize(stream), "two-pass seal");
    host_a.resize(len + 16);
    check(cudaMemcpy(host_a.data(), a, len + 16, cudaMemcpyDeviceToHost), "copy");
    for (const GcmOverlapShape& shape : shapes) {
      // One-tile segments over 100 MiB are 12,800 segments: enough boundaries below 40 MiB.
      if (shape.segment_len != 0 && shape.segment_len < kMiB && len > 40 * kMiB) continue;
      for (const bool in_place : {false, true}) {
        check(cudaMemsetAsync(b, 0x5A, len + 32, stream), "poison");
        if (in_place) check(cudaMemcpyAsync(b, in, len, cudaMemcpyDeviceToDevice, stream), "copy in");
        check(cudaMemsetAsync(hashes_b, 0xc3, num_hashes * sizeof(gc_gf128), stream), "poison");
        side_overlap().seal(ctr_cipher, counter, powers, hash_subkey, in_place ? b : in, b, len, hashes_b,
                            hashes_b + num_hashes - 1, stream, shape);
        check(cudaStreamSynchronize(stream), "overlapped seal");
        host_b.resize(len + 32);
        check(cudaMemcpy(host_b.data(), b, len + 32, cudaMemcpyDeviceToHost), "copy");
        gc_gf128 result_b;
        check(cudaMemcpy(&result_b, hashes_b + num_hashes - 1, 16, cudaMemcpyDeviceToHost), "copy");
        bool ok = std::memcmp(host_a.data(), host_b.data(), len) == 0 &&
                  std::memcmp(host_a.data() + len, &result_b, 16) == 0;
        for (size_t i = len; i < len + 32; ++i) ok = ok && host_b[i] == 0x5A;  // nothing written past the end
        ++cases;
        if (!ok) {
          ++failures;
          char line[200];
          std::snprintf(line, sizeof line, "%s\"len %zu, segment %zu, ctas %d+%d%s\"", failed.empty() ? "" : ", ",
                        len, shape.segment_len, shape.ctr_ctas_per_sm, shape.hash_ctas_per_sm,
                        in_place ? ", in place" : "");
          if (failures <= 20) failed += line;
        }
      }
    }
  }
  char head[160];
  std::snprintf(head, sizeof head, "{\"key_bits\": %d, \"cases\": %d, \"failures\": %d, \"failed\": [", kKeyBits,
                cases, failures);
  report += head + failed + "]}";
  return failures;
}

// Registers and CTAs per SM of the two kernels the route runs side by side, and whether the
// shape's CTAs of both fit in one SM's register file (ptxas's counts, as the runtime reports them).
template <int kKeyBits>
std::string overlap_occupancy_json(const GcmOverlapShape& shape) {
  using F = AesBitsliced8Family<kKeyBits>;
  constexpr int kThreads = BitslicedWidePolicy::kBulkThreads;
  const void* ctr = reinterpret_cast<const void*>(kernels::bulk_kernel<F, BitslicedWidePolicy, kernels::Bulk::ctr>);
  const void* hash = reinterpret_cast<const void*>(ghash_tile_pass);  // this file's copy of ghash.cu's tile kernel
  cudaFuncAttributes ctr_attr{}, hash_attr{};
  check(cudaFuncGetAttributes(&ctr_attr, ctr), "cudaFuncGetAttributes");
  check(cudaFuncGetAttributes(&hash_attr, hash), "cudaFuncGetAttributes");
  int device = 0, regs_per_sm = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&regs_per_sm, cudaDevAttrMaxRegistersPerMultiprocessor, device), "attribute");
  const int ctr_alone = max_resident_blocks(ctr, 0, kThreads);
  const int hash_alone = static_cast<int>(ghash_tiles_per_wave(0) / current_sm_count() / (kHashThreads / 32));
  const long regs = long(shape.ctr_ctas_per_sm) * kThreads * ctr_attr.numRegs +
                    long(shape.hash_ctas_per_sm) * kHashThreads * hash_attr.numRegs;
  char text[512];
  std::snprintf(text, sizeof text,
                "{\"key_bits\": %d, \"ctr_regs\": %d, \"ctr_local_bytes\": %zu, \"ctr_ctas_per_sm_alone\": %d, "
                "\"ghash_regs\": %d, \"ghash_ctas_per_sm_alone\": %d, \"regs_per_sm\": %d, "
                "\"shape_regs\": %ld, \"shape_fits\": %s}",
                kKeyBits, ctr_attr.numRegs, ctr_attr.localSizeBytes, ctr_alone, hash_attr.numRegs, hash_alone,
                regs_per_sm, regs, regs <= regs_per_sm ? "true" : "false");
  return text;
}
#endif

}  // namespace
}  // namespace gpucrypt::cuda

#define KERNEL_AB_CAT2(a, b) a##b
#define KERNEL_AB_CAT(a, b) KERNEL_AB_CAT2(a, b)

// Launches aes_bitsliced8's bulk kernel for `mode` (ctr, ecb_encrypt, ecb_decrypt), its XTS kernels
// (xts_encrypt: one data unit; xts_units512_encrypt, xts_units4096_decrypt, ...: many), its fused
// GCM kernel (gcm), the GHASH tile pass (ghash) or the whole GCM seal (gcm_seal: the overlapped route,
// where the tree has one; gcm_seal_2pass: two passes on either tree) on `stream`; ctr_capped
// and ghash_capped: CTR and the tile pass alone on the overlapped seal's capped grids (a tree
// without the overlapped seal: uncapped);
// key_bits 128 or 256, or 192 for the seal modes. Returns 0, or -1 for a mode or key size it does not know.
extern "C" int KERNEL_AB_CAT(AB_SIDE, launch)(const char* mode, int key_bits, const uint8_t* key, const uint8_t* in,
                                              uint8_t* out, size_t len, const uint8_t* iv16, cudaStream_t stream) {
  if (key_bits == 128) return gpucrypt::cuda::run<128>(mode, key, in, out, len, iv16, stream);
  if (key_bits == 192) return gpucrypt::cuda::run<192>(mode, key, in, out, len, iv16, stream);
  if (key_bits == 256) return gpucrypt::cuda::run<256>(mode, key, in, out, len, iv16, stream);
  return -1;
}

// The overlapped seal's check (check_overlap_bits) for 128-, 192- and 256-bit keys over in (random,
// at least 101 MiB), and the occupancy of its kernels, as one JSON object into report (NUL
// terminated, truncated to report_len). Returns the number of failures, or -1 where this side's
// tree has no overlapped seal (report "null").
extern "C" int KERNEL_AB_CAT(AB_SIDE, gcm_overlap_check)(const uint8_t* key, const uint8_t* in, size_t in_len,
                                                         const uint8_t* iv16, cudaStream_t stream, char* report,
                                                         size_t report_len) {
  std::string text = "null";
  int failures = -1;
#if KERNEL_AB_HAS_GCM_OVERLAP
  using namespace gpucrypt::cuda;
  const size_t capacity = in_len < (size_t(101) << 20) ? in_len : (size_t(101) << 20);
  uint8_t *a = nullptr, *b = nullptr;
  gc_gf128 *hashes_a = nullptr, *hashes_b = nullptr;
  const size_t num_hashes = gcm_num_tiles(capacity) + ghash_reduce_scratch(gcm_num_tiles(capacity)) + 1;
  check(cudaMalloc(&a, capacity + 32), "cudaMalloc");
  check(cudaMalloc(&b, capacity + 32), "cudaMalloc");
  check(cudaMalloc(&hashes_a, num_hashes * sizeof(gc_gf128)), "cudaMalloc");
  check(cudaMalloc(&hashes_b, num_hashes * sizeof(gc_gf128)), "cudaMalloc");
  const GcmOverlapShape shape = overlap_shape();
  text = "{\"shape\": " + overlap_shape_json(shape) + ", \"occupancy\": [" + overlap_occupancy_json<128>(shape) +
         ", " + overlap_occupancy_json<256>(shape) + "], \"checks\": [";
  failures = check_overlap_bits<128>(key, in, iv16, a, b, hashes_a, hashes_b, capacity - 32, stream, text);
  text += ", ";
  failures += check_overlap_bits<192>(key, in, iv16, a, b, hashes_a, hashes_b, capacity - 32, stream, text);
  text += ", ";
  failures += check_overlap_bits<256>(key, in, iv16, a, b, hashes_a, hashes_b, capacity - 32, stream, text);
  text += "]}";
  cudaFree(a);
  cudaFree(b);
  cudaFree(hashes_a);
  cudaFree(hashes_b);
#else
  (void)key, (void)in, (void)in_len, (void)iv16, (void)stream;
#endif
  if (report_len > 0) {
    std::strncpy(report, text.c_str(), report_len - 1);
    report[report_len - 1] = '\0';
  }
  return failures;
}
