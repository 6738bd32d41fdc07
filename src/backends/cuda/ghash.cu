// ghash.cu: GHASH on the GPU for GCM: folding the per-tile partials the GCM kernel in
// kernels.cuh writes, and a GHASH-only pass over a ciphertext (GCM open verifies before it
// deciphers).
//
// Constant-time: every multiply is gf128.h's constant-time one; the powers of H are computed on
// the host with the same multiplier and indexed by lane number only; the number of levels and
// the padding depend on lengths, which are public.
//
// Partials P_0 .. P_{n-1}, each GHASH (from zero) over `span` blocks, combine to
// sum_r P_r * H^(span * (n - 1 - r)). One level gives each warp 32 consecutive partials: lane L
// multiplies its partial by (H^span)^(31 - L) and the warp XORs them, which is the GHASH of
// 32 * span blocks. Zero partials in front (padding to a multiple of 32) change nothing. Levels
// repeat until one value is left: log32(n) launches.
#include "backends/cuda/kernels.cuh"

namespace gpucrypt::cuda {

namespace {

struct ReduceParams {
  const gc_gf128* in;
  gc_gf128* out;
  uint64_t count;       // partials in
  uint64_t pad;         // zero partials in front
  uint64_t num_groups;  // partials out = (pad + count) / 32
  gc_gf128 lane_pow[32];
};

// A small pass over the tile hashes (one per 512+ blocks): 256-thread CTAs.
constexpr int kReduceThreads = 256;

__global__ void __launch_bounds__(kReduceThreads) ghash_reduce_kernel(const __grid_constant__ ReduceParams p) {
  const unsigned lane = kernels::lane_id();
  const gc_gf128* lane_pows = p.lane_pow;
  const gc_gf128 lane_pow = lane_pows[lane];
  for (uint64_t group = kernels::global_warp<kReduceThreads>(); group < p.num_groups; group += kernels::num_warps<kReduceThreads>()) {
    const uint64_t u = group * 32 + lane;
    gc_gf128 v = u >= p.pad ? p.in[u - p.pad] : gc_gf128_make(0, 0);
    v = kernels::warp_xor(gc_gf128_mul(v, lane_pow));
    if (lane == 0) p.out[group] = v;
  }
}

uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// GHASH alone over data already in GPU memory (GCM open hashes the ciphertext before it writes
// any plaintext). Tiles of kGcmMinTileBlocks blocks, laid out as the GCM kernel's (lane L takes
// blocks L, L + 32, ... of its tile, Horner with H^32, one multiply by H^(32 - L), zero blocks in
// front; kernels.cuh's ghash_tile_lane_sum, which the batch executor's GCM open runs too), so
// ghash_reduce folds them the same way. No cipher work: the pass costs the multiplies and one
// read of the data.
struct HashTilesParams {
  const uint8_t* data;
  uint64_t len;
  uint64_t pad_blocks;
  uint64_t num_tiles;
  gc_gf128* tile_hashes;
  GcmSegment powers;  // h_pow32 and lane_pow only
};

constexpr int kHashThreads = 256;
constexpr int kHashSteps = kGcmMinTileBlocks / 32;

__global__ void __launch_bounds__(kHashThreads) ghash_tiles_kernel(const __grid_constant__ HashTilesParams p) {
  const unsigned lane = kernels::lane_id();
  const gc_gf128* lane_pows = p.powers.lane_pow;
  const gc_gf128 lane_pow = lane_pows[lane];
  for (uint64_t tile = kernels::global_warp<kHashThreads>(); tile < p.num_tiles;
       tile += kernels::num_warps<kHashThreads>()) {
    gc_gf128 sum = kernels::ghash_tile_lane_sum<kHashSteps, false, false>(p.data, p.len, p.pad_blocks, tile,
                                                                          p.powers.h_pow32);
    sum = kernels::warp_xor(gc_gf128_mul(sum, lane_pow));
    if (lane == 0) p.tile_hashes[tile] = sum;
  }
}

}  // namespace

size_t ghash_reduce_scratch(size_t num_hashes) {
  size_t total = 0;
  for (size_t count = num_hashes; count > 1; count = div_up(count, 32)) total += div_up(count, 32);
  return total;
}

void ghash_reduce(const gc_gf128* hashes, size_t num_hashes, uint64_t span_blocks, gc_gf128 hash_subkey,
                  gc_gf128* scratch, gc_gf128* result, cudaStream_t stream) {
  if (num_hashes == 1) {
    check(cudaMemcpyAsync(result, hashes, sizeof(gc_gf128), cudaMemcpyDeviceToDevice, stream),
          "GHASH result copy");
    return;
  }
  const gc_gf128* in = hashes;
  uint64_t count = num_hashes;
  uint64_t span = span_blocks;
  const void* kernel = reinterpret_cast<const void*>(ghash_reduce_kernel);
  while (count > 1) {
    ReduceParams params{};
    params.in = in;
    params.count = count;
    params.num_groups = div_up(count, 32);
    params.pad = params.num_groups * 32 - count;
    params.out = params.num_groups == 1 ? result : scratch;
    const gc_gf128 step = gc_gf128_pow(hash_subkey, span);  // H^span
    params.lane_pow[31] = gc_gf128_one();
    for (int lane = 30; lane >= 0; --lane) params.lane_pow[lane] = gc_gf128_mul(params.lane_pow[lane + 1], step);
    const int grid = kernels::grid_for<kReduceThreads>(kernel, 0, params.num_groups);
    checked_launch("GHASH reduce kernel launch",
                   [&] { ghash_reduce_kernel<<<grid, kReduceThreads, 0, stream>>>(params); });
    secure_zero(&params.lane_pow, sizeof params.lane_pow);
    in = params.out;
    scratch += params.num_groups;
    count = params.num_groups;
    span *= 32;
  }
}

void ghash_tiles(const uint8_t* data, size_t len, uint64_t pad_blocks, const GcmSegment& powers,
                 gc_gf128* tile_hashes, int max_ctas_per_sm, cudaStream_t stream) {
  HashTilesParams params{};
  params.data = data;
  params.len = len;
  params.pad_blocks = pad_blocks;
  params.num_tiles = div_up(pad_blocks + (len + 15) / 16, kGcmMinTileBlocks);
  params.tile_hashes = tile_hashes;
  params.powers = powers;
  const void* kernel = reinterpret_cast<const void*>(ghash_tiles_kernel);
  const int grid = kernels::grid_for<kHashThreads>(kernel, 0, params.num_tiles, max_ctas_per_sm);
  checked_launch("GHASH kernel launch", [&] { ghash_tiles_kernel<<<grid, kHashThreads, 0, stream>>>(params); });
  secure_zero(&params.powers, sizeof params.powers);
}

uint64_t ghash_tiles_per_wave(int max_ctas_per_sm) {
  const void* kernel = reinterpret_cast<const void*>(ghash_tiles_kernel);
  int per_sm = max_resident_blocks(kernel, 0, kHashThreads);
  if (max_ctas_per_sm > 0 && max_ctas_per_sm < per_sm) per_sm = max_ctas_per_sm;
  return static_cast<uint64_t>(per_sm) * static_cast<uint64_t>(current_sm_count()) * (kHashThreads / 32);
}

void ghash_device(const uint8_t* data, size_t len, const GcmSegment& powers, gc_gf128 hash_subkey, gc_gf128* hashes,
                  gc_gf128* result, cudaStream_t stream) {
  const uint64_t num_tiles = gcm_num_tiles(len);
  ghash_tiles(data, len, num_tiles * kGcmMinTileBlocks - (len + 15) / 16, powers, hashes, 0, stream);
  ghash_reduce(hashes, num_tiles, kGcmMinTileBlocks, hash_subkey, hashes + num_tiles, result, stream);
}

void gcm_segment_powers(gc_gf128 hash_subkey, GcmSegment* segment) {
  // lane_pow[L] = H^(32 - L): lane 31 gets H, lane 0 gets H^32.
  segment->lane_pow[31] = hash_subkey;
  for (int lane = 30; lane >= 0; --lane)
    segment->lane_pow[lane] = gc_gf128_mul(segment->lane_pow[lane + 1], hash_subkey);
  segment->h_pow32 = segment->lane_pow[0];
}

}  // namespace gpucrypt::cuda
