// ghash.cu: GHASH on the GPU for GCM: folding the per-tile partials the GCM kernel in
// kernels.cuh writes, and a GHASH-only pass over a ciphertext (GCM open verifies before it
// deciphers; the wide bitslices seal as CTR, then this pass). The pass runs on the tensor cores
// as binary matrix products where the key has ghash_mma.hpp's tables (GcmKey makes them on sm_80+
// devices once a key has hashed 128 MiB: 2.9 SM-cycles a block against 8.9 on the integer pipe,
// H200), else as the carry-less multiplies of gf128.h; both write the same tile hashes.
//
// Constant-time: every multiply is gf128.h's constant-time one; the powers of H are computed on
// the host with the same multiplier and indexed by lane number only; the number of levels and
// the padding depend on lengths, which are public. The tensor-core pass: ghash_mma.hpp's position
// (fixed instructions and addresses; its tables, secret, wiped from shared memory on exit).
//
// Partials P_0 .. P_{n-1}, each GHASH (from zero) over `span` blocks, combine to
// sum_r P_r * H^(span * (n - 1 - r)). One level gives each warp 32 consecutive partials: lane L
// multiplies its partial by (H^span)^(31 - L) and the warp XORs them, which is the GHASH of
// 32 * span blocks. Zero partials in front (padding to a multiple of 32) change nothing. Levels
// repeat until one value is left: log32(n) launches.
#include "backends/cuda/kernels.cuh"
#include "backends/cuda/ghash_mma.hpp"

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

// The same tile hashes on the tensor cores (ghash_mma.hpp says how and why): a warp two tiles of
// kGcmMinTileBlocks blocks at a time, the CTA's B fragments in shared memory (64 KiB, copied from
// the key's tables once per CTA and wiped before the CTA exits), each warp's 32 chunk hashes
// beside them.
struct MmaTilesParams {
  const uint8_t* data;
  uint64_t len;
  uint64_t pad_blocks;
  uint64_t num_tiles;
  gc_gf128* tile_hashes;
  const ghash_mma::Tables* tables;
};

constexpr int kMmaThreads = 256;
constexpr int kMmaWarps = kMmaThreads / 32;
static_assert(ghash_mma::kTileChunks * ghash_mma::kChunkBlocks == kGcmMinTileBlocks, "a tile is an MMA's rows");
constexpr size_t kMmaSharedBytes =
    sizeof(uint2) * ghash_mma::kFragments + sizeof(uint4) * kMmaWarps * 2 * ghash_mma::kTileChunks;

// Block v of the padded message (kernels.cuh's padded_message_block) as the MMA's operand words.
__device__ __forceinline__ uint4 padded_block(const uint8_t* data, uint64_t num_full, uint64_t tail_len,
                                              uint64_t pad_blocks, uint64_t v) {
  const gc_block b = kernels::padded_message_block<false>(data, num_full, tail_len, pad_blocks, v);
  return make_uint4(b.w[0], b.w[1], b.w[2], b.w[3]);
}

// c += popcount(A AND B) summed over k: D = A (16 x 256 bits) B (256 x 8), PTX's fragments.
__device__ __forceinline__ void bmma_and_popc(int (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                              uint2 b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b.x), "r"(b.y));
#else
  __trap();  // GcmKey makes tables only where the device has sm_80's binary MMA
#endif
}

__global__ void __launch_bounds__(kMmaThreads, 2) ghash_tiles_mma_kernel(const __grid_constant__ MmaTilesParams p) {
  using namespace ghash_mma;
  constexpr int kStepsPerTile = kKSteps / 2;  // one 16-byte load a row feeds two k-steps
  extern __shared__ uint4 mma_shared[];
  uint2* fragments = reinterpret_cast<uint2*>(mma_shared);
  uint32_t(*chunk_hashes)[4] = reinterpret_cast<uint32_t(*)[4]>(fragments + kFragments) +
                               (threadIdx.x / 32) * 2 * kTileChunks;
  const auto* source = reinterpret_cast<const uint2*>(p.tables->fragments);
  for (int i = threadIdx.x; i < kFragments; i += kMmaThreads) fragments[i] = source[i];
  __syncthreads();

  const unsigned lane = kernels::lane_id();
  const unsigned group = lane / 4, t = lane % 4;
  const gc_gf128 chunk_pow = p.tables->chunk_pow[lane % kTileChunks];
  const uint64_t num_full = p.len / 16, tail_len = p.len % 16;
  const uint64_t warp_stride = kernels::num_warps<kMmaThreads>();
  // A tile all of whose blocks are whole message blocks (every one but the first and last, in a
  // long message) loads without the padding tests.
  const uint64_t first_whole_tile = (p.pad_blocks + kGcmMinTileBlocks - 1) / kGcmMinTileBlocks;
  const uint64_t end_whole_tile = (p.pad_blocks + num_full) / kGcmMinTileBlocks;

  // The warp takes tiles `first` and `first + warp_stride` (m = 0, 1) at a time, 2 x 8 steps: step
  // q takes tile m = q / 8's chunks `group` and `group + 8` (its MMA rows), block 4 (q % 8) + t of
  // each. Loads run two steps ahead (the next pair's first steps at the end), in two register sets
  // that alternate, so the MMAs do not wait for memory.
  auto load_step = [&](uint64_t first, int q, uint4& top, uint4& bottom) {
    const uint64_t tile = first + (q / kStepsPerTile) * warp_stride;
    if (tile >= p.num_tiles) return;
    const uint64_t block = tile * kGcmMinTileBlocks + group * kChunkBlocks + 4 * (q % kStepsPerTile) + t;
    if (tile >= first_whole_tile && tile < end_whole_tile) {
      const uint4* whole = reinterpret_cast<const uint4*>(p.data) + (block - p.pad_blocks);
      top = whole[0];
      bottom = whole[8 * kChunkBlocks];
      return;
    }
    top = padded_block(p.data, num_full, tail_len, p.pad_blocks, block);
    bottom = padded_block(p.data, num_full, tail_len, p.pad_blocks, block + 8 * kChunkBlocks);
  };
  auto load_ahead = [&](uint64_t first, int q, uint4& top, uint4& bottom) {
    if (q < 2 * kStepsPerTile) load_step(first, q, top, bottom);
    else load_step(first + 2 * warp_stride, q - 2 * kStepsPerTile, top, bottom);
  };
  int c[kColumnTiles][4];
  auto run_step = [&](int q, uint4 top, uint4 bottom) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int j = 2 * (q % kStepsPerTile) + h;
      const uint32_t a0 = h ? top.z : top.x, a2 = h ? top.w : top.y;  // word_of(j, 0), word_of(j, 1)
      const uint32_t a1 = h ? bottom.z : bottom.x, a3 = h ? bottom.w : bottom.y;
      const uint2* b = fragments + j * kColumnTiles * 32 + lane;
#pragma unroll
      for (int tile_column = 0; tile_column < kColumnTiles; ++tile_column)
        bmma_and_popc(c[tile_column], a0, a1, a2, a3, b[tile_column * 32]);
    }
  };

  // Warp w takes tiles w and w + W, then w + 2W and w + 3W, ... (W warps in the grid).
  uint64_t first = kernels::global_warp<kMmaThreads>();
  uint4 even_top{}, even_bottom{}, odd_top{}, odd_bottom{};
  load_step(first, 0, even_top, even_bottom);
  load_step(first, 1, odd_top, odd_bottom);
  for (; first < p.num_tiles; first += 2 * warp_stride) {
#pragma unroll 1
    for (int q = 0; q < 2 * kStepsPerTile; q += 2) {
      if (q % kStepsPerTile == 0) {
#pragma unroll
        for (int tile_column = 0; tile_column < kColumnTiles; ++tile_column)
          c[tile_column][0] = c[tile_column][1] = c[tile_column][2] = c[tile_column][3] = 0;
      }
      uint4 top = even_top, bottom = even_bottom;
      load_ahead(first, q + 2, even_top, even_bottom);
      run_step(q, top, bottom);
      top = odd_top;
      bottom = odd_bottom;
      load_ahead(first, q + 3, odd_top, odd_bottom);
      run_step(q + 1, top, bottom);
      if (q % kStepsPerTile == kStepsPerTile - 2) {
        // Parities into word t of the two chunk hashes: column 2t (+1) of tile J is bit 2J (+1).
        // (Each bit is added as a multiply-add by its power of two, on the FMA pipe: the bits do
        // not overlap, and the integer ALU pipe keeps only the AND.)
        uint32_t top_word = 0, bottom_word = 0;
#pragma unroll
        for (int tile_column = 0; tile_column < kColumnTiles; ++tile_column) {
          top_word += (c[tile_column][0] & 1u) * (1u << (2 * tile_column)) +
                      (c[tile_column][1] & 1u) * (2u << (2 * tile_column));
          bottom_word += (c[tile_column][2] & 1u) * (1u << (2 * tile_column)) +
                         (c[tile_column][3] & 1u) * (2u << (2 * tile_column));
        }
        const int m = q / kStepsPerTile;
        chunk_hashes[kTileChunks * m + group][t] = top_word;
        chunk_hashes[kTileChunks * m + group + 8][t] = bottom_word;
      }
    }
    __syncwarp();
    // Lane 16 m + c: chunk c of tile m, brought to the tile's end; each half-warp XORs its tile's.
    const gc_block s = {{chunk_hashes[lane][0], chunk_hashes[lane][1], chunk_hashes[lane][2], chunk_hashes[lane][3]}};
    gc_gf128 sum = gc_gf128_mul(gc_gf128_from_block(s), chunk_pow);
#pragma unroll
    for (int offset = kTileChunks / 2; offset > 0; offset >>= 1) {
      sum.hi ^= __shfl_xor_sync(0xffffffffu, sum.hi, offset);
      sum.lo ^= __shfl_xor_sync(0xffffffffu, sum.lo, offset);
    }
    const uint64_t tile = first + (lane / kTileChunks) * warp_stride;
    if (lane % kTileChunks == 0 && tile < p.num_tiles) p.tile_hashes[tile] = sum;
    __syncwarp();  // the next tiles overwrite this warp's chunk hashes
  }
  // The fragments are H in another form: nothing of them stays in shared memory after the CTA.
  __syncthreads();
  for (int i = threadIdx.x; i < kFragments; i += kMmaThreads) fragments[i] = make_uint2(0, 0);
  chunk_hashes[lane][0] = chunk_hashes[lane][1] = chunk_hashes[lane][2] = chunk_hashes[lane][3] = 0;
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
  const uint64_t num_tiles = div_up(pad_blocks + (len + 15) / 16, kGcmMinTileBlocks);
  if (powers.ghash_tables != nullptr) {
    const MmaTilesParams params{data, len, pad_blocks, num_tiles, tile_hashes, powers.ghash_tables};
    const void* kernel = reinterpret_cast<const void*>(ghash_tiles_mma_kernel);
    const int grid = kernels::grid_for<kMmaThreads>(kernel, kMmaSharedBytes, div_up(num_tiles, 2), max_ctas_per_sm);
    checked_launch("GHASH (tensor cores) kernel launch", [&] {
      ghash_tiles_mma_kernel<<<grid, kMmaThreads, kMmaSharedBytes, stream>>>(params);
    });
    return;
  }
  HashTilesParams params{};
  params.data = data;
  params.len = len;
  params.pad_blocks = pad_blocks;
  params.num_tiles = num_tiles;
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

DeviceGhashTables::DeviceGhashTables(gc_gf128 hash_subkey) {
  check(cudaGetDevice(&device_), "cudaGetDevice");
  int major = 0;
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_), "cudaDeviceGetAttribute");
  if (major < 8) return;  // no binary MMA: ghash_tiles keeps the carry-less kernel
  auto host = std::make_unique<ghash_mma::Tables>();
  struct Wipe {
    ghash_mma::Tables* t;
    ~Wipe() { secure_zero(t, sizeof *t); }
  } wipe{host.get()};
  ghash_mma::build_tables(hash_subkey, host.get());
  check_allocation(cudaMalloc(reinterpret_cast<void**>(&tables_), sizeof(ghash_mma::Tables)), "cudaMalloc",
                   sizeof(ghash_mma::Tables));
  try {
    check(cudaMemcpy(tables_, host.get(), sizeof(ghash_mma::Tables), cudaMemcpyHostToDevice),
          "cudaMemcpy (GHASH tables)");
  } catch (...) {
    cudaFree(tables_);
    tables_ = nullptr;
    throw;
  }
}

DeviceGhashTables::~DeviceGhashTables() {
  if (tables_ == nullptr) return;
  // On the tables' device, without DeviceGuard (a destructor must not throw); a failure here has
  // no one to report to. A seal or open enqueued on a caller's stream (device_api.cu: a CuPy or
  // PyTorch stream, perhaps non-blocking) may still be reading the tables when the key goes, so
  // the device finishes its work before they are wiped: a wipe that overtook the GHASH pass
  // would make it hash with zeros, a wrong tag.
  int previous = -1;
  const bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != device_ &&
                        cudaSetDevice(device_) == cudaSuccess;
  cudaDeviceSynchronize();
  cudaMemset(tables_, 0, sizeof(ghash_mma::Tables));
  cudaFree(tables_);
  if (switched) cudaSetDevice(previous);
}

void gcm_segment_powers(gc_gf128 hash_subkey, GcmSegment* segment) {
  // lane_pow[L] = H^(32 - L): lane 31 gets H, lane 0 gets H^32.
  segment->lane_pow[31] = hash_subkey;
  for (int lane = 30; lane >= 0; --lane)
    segment->lane_pow[lane] = gc_gf128_mul(segment->lane_pow[lane + 1], hash_subkey);
  segment->h_pow32 = segment->lane_pow[0];
}

}  // namespace gpucrypt::cuda
