// cuda_batch_kernels.cuh: the CUDA batch executor's kernels and their launcher, over any cipher
// family of the backend (backends/cuda/*.cuh, protocol in kernels.cuh). cuda_batch.cu includes it
// for the families of the default table layouts and runs the plans; a family whose table layout
// is a translation-unit macro (camellia_sbox_smem32) gets a unit of its own that includes its
// family header first, then this (cuda_batch_camellia_sbox.cu). The types the units hand each
// other (work records, group work, device pointers, FamilyOps) are named in gpucrypt::cuda::batch;
// the kernels and the launcher are each unit's own (an unnamed namespace).
//
// Constant-time position: the family's (cuda_batch.cu says which are).
#pragma once

#include <cstdint>
#include <type_traits>

#include "backends/cuda/kernels.cuh"
#include "backends/cuda/launch_policy.hpp"

namespace gpucrypt::cuda::batch {

// ---- work records ---------------------------------------------------------------------------

// A group's work is its mode's kind in its direction (modes::kind): the bulk kind runs the
// parallel kernel of its shape (bulk_items_kernel), the serial kind the serial kernel told which
// mode by its modes::serial_op code (KernelParams::op), XTS the XTS kernels after its tweaks (the
// serial kernel with op kXtsTweak), an AEAD (GCM) the GCM kernels.
constexpr int kXtsTweak = -1;

struct Item {
  uint64_t in_offset, out_offset;
  uint64_t len;                     // message bytes (GCM open: without the tag)
  uint64_t begin_block, end_block;  // the piece of the message this item covers (GCM: its tile, the message's tiles)
  uint64_t iv_offset, aad_offset, aad_len;
  uint32_t iv_len, schedule, request;
  uint32_t message;                 // GCM: the message's index in its group (GcmMessage, first_items)
};

// GCM: what gcm_prepare_kernel derives once per message for its tiles and its tag.
struct GcmMessage {
  gc_block j0;            // the pre-counter block J0; data block i runs under inc32^(i+1)(J0)
  gc_block tag_mask;      // E_K(J0)
  gc_gf128 lane_pow[32];  // H^(32 - L) for lane L (lane 0: H^32, the Horner step of a lane;
                          // lane 31: H, the hash subkey E_K(0))
};

struct ExpandParams {
  const uint8_t* keys;  // num_keys * key_stride bytes
  void* schedules;
  uint32_t num_keys, key_len, key_stride, xts;
};

// ECB, CTR and CBC/CFB decryption cut a message into pieces of this many blocks (16 KiB), a warp
// each: a whole number of the bulk kernels' tiles under every launch policy.
constexpr uint64_t kPieceBlocks = 1024;
// XTS gives a message one warp and GCM a warp per tile; a message this long instead goes through
// the backend's bulk kernels (DeviceGcm / DeviceCipher on the uploaded buffers), which spread it
// over the whole GPU and fold its tile hashes in a tree rather than in one warp.
constexpr uint64_t kBigLen = 256 * 1024;

struct GroupWork {
  uint32_t suite, group;
  Mode mode;
  Direction direction;
  modes::ModeKind kind;  // of the mode in that direction
  bool open;             // GCM: verify instead of seal
  uint64_t first_item, num_items;
  uint64_t first_message, num_messages;  // GCM: the group's messages (items are their tiles)
  uint64_t key_offset, num_keys;    // raw keys in the key upload
  uint64_t schedule_offset;         // bytes in the device schedule buffer
  uint32_t key_len, key_stride;
  bool xts;
};

struct Device {
  const uint8_t* in;
  uint8_t* out;
  const uint8_t* params;
  const uint8_t* keys;
  uint8_t* schedules;
  const Item* items;
  gc_block* tweaks;
  uint8_t* status;
  GcmMessage* gcm_messages;
  const uint64_t* gcm_first_items;
  gc_gf128* tile_hashes;
};

struct FamilyOps {
  const char* variant;
  size_t (*schedule_bytes)();
  uint64_t (*gcm_tile_blocks)();
  void (*run)(const GroupWork&, const Device&, int, cudaStream_t);
};

// Families whose keys another unit expands (camellia_sbox_smem32: camellia.h compiles no key
// schedule under the S-box word layout) say `static void launch_expand(const ExpandParams&, int
// grid, cudaStream_t)`; expand_camellia_keys is that for Camellia (cuda_batch.cu, SP tables).
void expand_camellia_keys(const ExpandParams& params, int grid, cudaStream_t stream);

// The launchers of camellia_sbox_smem32, the default Camellia (cuda_batch_camellia_sbox.cu).
FamilyOps camellia_sbox_smem32_ops(int key_bits);

namespace {

using namespace kernels;

// The CTA size of the batch's kernels. The ones that encipher data run the bulk kernels' per-warp
// routines with the launch policy's tile shapes (launch_policy.hpp), but not its 512-thread CTAs
// for ECB/CTR/XTS: a batch warp copies each message's key schedule from global memory into
// registers (the bulk kernels read theirs in place from the parameter bank), and at 512 threads'
// 128 registers the bitsliced AES-256 schedule spills (528 bytes in the XTS kernel, nvcc 13.0).
// GCM tiles and the serial modes take the policy's CTA size, 256 on every policy today.
constexpr int kThreads = 256;

template <class F, class = void>
struct expands_elsewhere : std::false_type {};
template <class F>
struct expands_elsewhere<F, std::void_t<decltype(&F::launch_expand)>> : std::true_type {};

struct KernelParams {
  const uint8_t* in;
  uint8_t* out;
  const uint8_t* params;
  const void* schedules;  // Family::Cipher[], this group's
  const Item* items;      // this group's
  uint64_t num_items;
  gc_block* tweaks;       // XTS: E_K2(tweak) per item
  uint8_t* status;        // per request (GCM open)
  int op;                 // the serial kernel: the modes::serial_op code, or kXtsTweak
  int decrypt;            // GCM: open
  int tag_len;
  // GCM: items are tiles of messages (begin_block = the tile, end_block = the message's tiles)
  GcmMessage* messages;          // per message of the group
  const uint64_t* first_items;   // per message: its first tile's item
  uint64_t num_messages;
  gc_gf128* tile_hashes;         // per item
  uint64_t tile_blocks;          // blocks per tile (the launch policy's, as the bulk kernel's)
  GcmTileHash tile_hash;
};

// IV and AAD blocks in the params, which are not 16-byte aligned (kernels.cuh's load16_any); the
// last may be partial.
__device__ __forceinline__ gc_block ld_upto(const uint8_t* p, uint64_t n) {
  return n >= 16 ? load16_any(p) : load_partial_block(p, static_cast<size_t>(n));
}

// The family's tables in the CTA's shared memory, filled by all its threads before any uses them.
template <class F>
__device__ __forceinline__ uint32_t* filled_tables(bool decrypt) {
  extern __shared__ uint4 shared_words[];
  uint32_t* shared = reinterpret_cast<uint32_t*>(shared_words);
  F::fill(shared, decrypt);
  __syncthreads();
  return shared;
}

template <class F>
__global__ void __launch_bounds__(kThreads) expand_kernel(const __grid_constant__ ExpandParams p) {
  using Cipher = typename F::Cipher;
  Cipher* out = static_cast<Cipher*>(p.schedules);
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < p.num_keys;
       k += uint64_t(gridDim.x) * blockDim.x) {
    const uint8_t* key = p.keys + k * p.key_stride;
    Cipher c{};
    F::expand(c, key, static_cast<int>(p.key_len));
    out[k * (p.xts ? 2 : 1)] = c;
    if (p.xts) {
      F::expand(c, key + p.key_len, static_cast<int>(p.key_len));
      out[k * 2 + 1] = c;
    }
  }
}

// The parallel modes: a warp per item, which runs the bulk kernel's tiles (kernels.cuh's
// bulk_tile, the launch policy's tile shape) over its piece of a message. Pieces are at most
// kPieceBlocks long, so long messages spread over many warps as in the bulk kernel.
template <class F, class P, Bulk kMode>
__global__ void __launch_bounds__(kThreads) bulk_items_kernel(const __grid_constant__ KernelParams p) {
  using Cipher = typename F::Cipher;
  constexpr bool kDecrypt = modes::bulk_decrypts(kMode);
  constexpr uint64_t kTileBlocks = 32 * bulk_steps<Cipher, P>();
  uint32_t* shared = filled_tables<F>(kDecrypt);
  const Cipher* schedules = static_cast<const Cipher*>(p.schedules);
  for (uint64_t w = global_warp<kThreads>(); w < p.num_items; w += num_warps<kThreads>()) {
    const Item it = p.items[w];
    Cipher c = schedules[it.schedule];
    F::bind(c, shared, kDecrypt);
    // ECB has no IV (the requests' validation gives every other mode here 16 bytes).
    const gc_block iv = it.iv_len == 16 ? gc_block_load(p.params + it.iv_offset) : modes::zero_block();
    for (uint64_t first = it.begin_block; first < it.end_block; first += kTileBlocks)
      bulk_tile<Cipher, P, kMode, true>(c, p.in + it.in_offset, p.out + it.out_offset, it.len, iv, first,
                                        it.end_block);
  }
}

// XTS: a warp per message (below kBigLen), which runs the bulk kernel's tiles (kernels.cuh's
// xts_tile) one after another; its T_0 = E_K2(tweak) came from serial_items_kernel.
template <class F, class P, bool kEncrypt>
__global__ void __launch_bounds__(kThreads) xts_items_kernel(const __grid_constant__ KernelParams p) {
  using Cipher = typename F::Cipher;
  constexpr uint64_t kTileBlocks = 32 * xts_steps<Cipher, P>();
  uint32_t* shared = filled_tables<F>(!kEncrypt);
  const Cipher* schedules = static_cast<const Cipher*>(p.schedules);
  for (uint64_t w = global_warp<kThreads>(); w < p.num_items; w += num_warps<kThreads>()) {
    const Item it = p.items[w];
    Cipher c = schedules[it.schedule];
    F::bind(c, shared, !kEncrypt);
    const uint8_t* in = p.in + it.in_offset;
    uint8_t* out = p.out + it.out_offset;
    const uint64_t num_full = it.len / 16, tail_len = it.len % 16;
    const uint64_t num_bulk = tail_len != 0 ? num_full - 1 : num_full;  // the last full block is stolen from
    gc_block tweak = gc_xts_tweak_at(p.tweaks[w], lane_id());
    for (uint64_t first = 0; first < num_bulk; first += kTileBlocks)
      tweak = xts_tile<Cipher, P, kEncrypt, true>(c, tweak, in, out, num_bulk, first);
    if (tail_len != 0 && lane_id() == 0)  // ciphertext stealing (xts.hpp), as xts_kernel
      modes::detail::xts_range<kEncrypt>(c, p.tweaks[w], num_bulk, in + 16 * num_bulk, out + 16 * num_bulk,
                                         16 + tail_len);
  }
}

// The serial modes, a thread per message (kernels.cuh's serial_message, as the bulk serial
// kernel), and XTS's T_0 = E_K2(tweak) per message.
template <class F, class P>
__global__ void __launch_bounds__(P::kSerialThreads) serial_items_kernel(const __grid_constant__ KernelParams p) {
  using Cipher = typename F::Cipher;
  uint32_t* shared = filled_tables<F>(false);  // all four encrypt
  const Cipher* schedules = static_cast<const Cipher*>(p.schedules);
  for (uint64_t k = blockIdx.x * uint64_t(P::kSerialThreads) + threadIdx.x; k < p.num_items;
       k += uint64_t(gridDim.x) * P::kSerialThreads) {
    const Item it = p.items[k];
    Cipher c = schedules[it.schedule + (p.op == kXtsTweak ? 1 : 0)];
    F::bind(c, shared, false);
    const gc_block iv = gc_block_load(p.params + it.iv_offset);
    if (p.op == kXtsTweak) {
      p.tweaks[k] = modes::xts_encrypted_tweak(c, iv);
    } else {
      // CBC's length is whole blocks (validated); CFB and OFB may end in a partial one.
      serial_message<Cipher, P, true>(c, static_cast<SerialMode>(p.op), iv, p.in + it.in_offset,
                                      p.out + it.out_offset, it.len);
    }
  }
}

__device__ __forceinline__ uint64_t shfl64(uint64_t v, int from) {
  return __shfl_sync(0xffffffffu, v, from);
}

// GHASH from zero over `num_blocks` blocks block(0..num_blocks) of one message, by the whole
// warp: zero blocks in front make the count a multiple of 32; lane L takes positions L, L+32, ...
template <class Block>
__device__ gc_gf128 warp_ghash(uint64_t num_blocks, Block block, gc_gf128 h_pow32, gc_gf128 lane_pow) {
  const uint64_t pad = (32 - num_blocks % 32) % 32;
  const unsigned lane = lane_id();
  gc_gf128 sum = gc_gf128_make(0, 0);
  for (uint64_t row = 0; 32 * row < pad + num_blocks; ++row) {
    const uint64_t v = 32 * row + lane;
    const gc_block x = v >= pad ? block(v - pad) : modes::zero_block();
    sum = gc_gf128_xor(gc_gf128_mul(sum, h_pow32), gc_gf128_from_block(x));
  }
  return warp_xor(gc_gf128_mul(sum, lane_pow));
}

// ---- GCM: a message in tiles -----------------------------------------------------------------
// A GCM message is cut into the launch policy's tiles (32 * steps blocks, as in the bulk kernel;
// the first tile of a message holds its padding in front), one warp each, so that a batch of
// 64 KiB file-format chunks gives the GPU 8 warps a chunk instead of one. Per group:
//   gcm_prepare_kernel     a warp per message: H = E_K(0), J0, E_K(J0), the lane powers of H
//   gcm_tiles_kernel       a warp per tile: GCTR and the tile's hash (kernels.cuh's
//                          gcm_tile_lane_sum, the bulk kernel's tile)
//   gcm_hash_tiles_kernel  a warp per tile: the tile's hash alone, of the ciphertext received
//   gcm_finish_kernel      a warp per message: GHASH(A || C || lengths) from the tile hashes, and
//                          the tag, written (seal) or compared (open)
// Sealing runs prepare, tiles, finish. Opening runs prepare, hash tiles, finish, then tiles
// without hashing for the messages whose tag verified: a failed open writes nothing (in place
// included), as the bulk path.

template <class F>
__global__ void __launch_bounds__(kThreads) gcm_prepare_kernel(const __grid_constant__ KernelParams p) {
  using Cipher = typename F::Cipher;
  constexpr int kLanes = Cipher::kBlocksPerCall;
  uint32_t* shared = filled_tables<F>(false);
  const Cipher* schedules = static_cast<const Cipher*>(p.schedules);
  const unsigned lane = lane_id();
  for (uint64_t m = global_warp<kThreads>(); m < p.num_messages; m += num_warps<kThreads>()) {
    const Item it = p.items[p.first_items[m]];
    Cipher c = schedules[it.schedule];
    F::bind(c, shared, false);
    const uint8_t* iv = p.params + it.iv_offset;

    gc_block x[kLanes] = {};
    c.encrypt_blocks(x);
    const gc_gf128 h = gc_gf128_from_block(x[0]);
    const gc_gf128 lane_pow = gc_gf128_pow(h, 32 - lane);  // H^(32 - L)
    const gc_gf128 h_pow32 = gc_gf128_make(shfl64(lane_pow.hi, 0), shfl64(lane_pow.lo, 0));

    gc_block j0;
    if (it.iv_len == 12) {
      uint8_t bytes[16] = {};
      for (int b = 0; b < 12; ++b) bytes[b] = iv[b];
      bytes[15] = 1;
      j0 = gc_block_load(bytes);
    } else {
      const uint64_t iv_blocks = (it.iv_len + 15) / 16;
      j0 = gc_gf128_to_block(warp_ghash(
          iv_blocks + 1,
          [&](uint64_t j) {
            return j < iv_blocks ? ld_upto(iv + 16 * j, it.iv_len - 16 * j)
                                 : gc_gf128_to_block(gc_gf128_make(0, uint64_t(it.iv_len) * 8));
          },
          h_pow32, lane_pow));
    }
    gc_block mask[kLanes] = {};
    mask[0] = j0;
    c.encrypt_blocks(mask);

    GcmMessage& message = p.messages[m];
    message.lane_pow[lane] = lane_pow;
    if (lane == 0) {
      message.j0 = j0;
      message.tag_mask = mask[0];
    }
  }
}

// Where a tile starts: the zero blocks in front of its message so that tiles divide it evenly.
__device__ __forceinline__ uint64_t gcm_pad_blocks(const Item& it, uint64_t tile_blocks) {
  return it.end_block * tile_blocks - (it.len + 15) / 16;
}

template <class F, class P>
__global__ void __launch_bounds__(P::kGcmThreads, P::kGcmMinCtasPerSm)
    gcm_tiles_kernel(const __grid_constant__ KernelParams p) {
  using Cipher = typename F::Cipher;
  constexpr uint64_t kTileBlocks = 32 * gcm_steps<Cipher, P>();
  uint32_t* shared = filled_tables<F>(false);
  const Cipher* schedules = static_cast<const Cipher*>(p.schedules);
  const unsigned lane = lane_id();
  for (uint64_t w = global_warp<P::kGcmThreads>(); w < p.num_items; w += num_warps<P::kGcmThreads>()) {
    const Item it = p.items[w];
    if (p.decrypt && p.status[it.request] != 0) continue;  // opening: only verified messages
    const GcmMessage& message = p.messages[it.message];
    Cipher c = schedules[it.schedule];
    F::bind(c, shared, false);
    gc_gf128 sum = gcm_tile_lane_sum<Cipher, P, true, true>(
        c, gc_ctr32_add(message.j0, 1), message.lane_pow[0], p.tile_hash, p.in + it.in_offset,
        p.out + it.out_offset, it.len, gcm_pad_blocks(it, kTileBlocks), it.begin_block);
    if (p.tile_hash != GcmTileHash::none) {
      sum = warp_xor(gc_gf128_mul(sum, message.lane_pow[lane]));
      if (lane == 0) p.tile_hashes[w] = sum;
    }
  }
}

template <int kSteps>
__global__ void __launch_bounds__(kThreads) gcm_hash_tiles_kernel(const __grid_constant__ KernelParams p) {
  const unsigned lane = lane_id();
  for (uint64_t w = global_warp<kThreads>(); w < p.num_items; w += num_warps<kThreads>()) {
    const Item it = p.items[w];
    const GcmMessage& message = p.messages[it.message];
    gc_gf128 sum = ghash_tile_lane_sum<kSteps, true, true>(p.in + it.in_offset, it.len,
                                                           gcm_pad_blocks(it, 32 * kSteps), it.begin_block,
                                                           message.lane_pow[0]);
    sum = warp_xor(gc_gf128_mul(sum, message.lane_pow[lane]));
    if (lane == 0) p.tile_hashes[w] = sum;
  }
}

__global__ void __launch_bounds__(kThreads) gcm_finish_kernel(const __grid_constant__ KernelParams p) {
  const unsigned lane = lane_id();
  for (uint64_t m = global_warp<kThreads>(); m < p.num_messages; m += num_warps<kThreads>()) {
    const uint64_t first = p.first_items[m];
    const Item it = p.items[first];
    const GcmMessage& message = p.messages[m];
    const gc_gf128 h = message.lane_pow[31];  // H^(32 - 31)
    const uint64_t len = it.len, num_blocks = (len + 15) / 16, num_tiles = it.end_block;

    // GHASH(C) = sum of tile hash t * (H^tile_blocks)^(tiles after t) (as ghash.cu folds the bulk's).
    const gc_gf128 h_tile = num_tiles > 1 ? gc_gf128_pow(h, p.tile_blocks) : gc_gf128_one();
    gc_gf128 data_hash = gc_gf128_make(0, 0);
    for (uint64_t t = lane; t < num_tiles; t += 32)
      data_hash = gc_gf128_xor(data_hash, gc_gf128_mul(p.tile_hashes[first + t], gc_gf128_pow(h_tile, num_tiles - 1 - t)));
    data_hash = warp_xor(data_hash);

    const uint8_t* aad = p.params + it.aad_offset;
    const uint64_t aad_blocks = (it.aad_len + 15) / 16;
    const gc_gf128 aad_hash =
        aad_blocks == 0 ? gc_gf128_make(0, 0)
                        : warp_ghash(aad_blocks, [&](uint64_t j) { return ld_upto(aad + 16 * j, it.aad_len - 16 * j); },
                                     message.lane_pow[0], message.lane_pow[lane]);
    // GHASH(A || C || L) = GHASH(A || C) * H xor L * H, with GHASH(A || C) from the two halves.
    const gc_gf128 lengths = gc_gf128_make(it.aad_len * 8, len * 8);
    const gc_gf128 body = aad_blocks == 0 ? data_hash : gc_ghash_combine(aad_hash, gc_gf128_pow(h, num_blocks), data_hash);
    const gc_gf128 s = gc_ghash_block(body, h, lengths);

    if (lane == 0) {
      const uint8_t* in = p.in + it.in_offset;
      uint8_t* out = p.out + it.out_offset;
      uint8_t tag[16];
      gc_block_store(tag, gc_block_xor(gc_gf128_to_block(s), message.tag_mask));
      if (!p.decrypt) {
        for (int b = 0; b < p.tag_len; ++b) out[len + b] = tag[b];
      } else {
        uint8_t diff = 0;  // every byte compared, whatever differs
        for (int b = 0; b < p.tag_len; ++b) diff |= static_cast<uint8_t>(tag[b] ^ in[len + b]);
        p.status[it.request] = diff == 0 ? 0 : 1;
      }
    }
  }
}

template <class F>
struct Launcher {
  using Cipher = typename F::Cipher;
  static size_t schedule_bytes() { return sizeof(Cipher); }

  // Blocks per GCM tile under the current device's launch policy (the host cuts messages into them).
  static uint64_t gcm_tile_blocks() {
    return with_launch_policy([](auto policy) -> uint64_t { return 32 * gcm_steps<Cipher, decltype(policy)>(); });
  }

  static void run(const GroupWork& g, const Device& d, int tag_len, cudaStream_t stream) {
    ExpandParams e{d.keys + g.key_offset, d.schedules + g.schedule_offset, static_cast<uint32_t>(g.num_keys),
                   g.key_len, g.key_stride, g.xts ? 1u : 0u};
    const int expand_grid = static_cast<int>((g.num_keys + kThreads - 1) / kThreads);
    if constexpr (expands_elsewhere<F>::value)
      F::launch_expand(e, expand_grid, stream);
    else
      checked_launch("key expansion launch", [&] { expand_kernel<F><<<expand_grid, kThreads, 0, stream>>>(e); });
    if (g.num_items == 0) return;
    KernelParams p{};
    p.in = d.in;
    p.out = d.out;
    p.params = d.params;
    p.schedules = d.schedules + g.schedule_offset;
    p.items = d.items + g.first_item;
    p.num_items = g.num_items;
    p.tweaks = d.tweaks + g.first_item;
    p.status = d.status;
    p.op = g.kind == modes::ModeKind::serial ? static_cast<int>(modes::serial_op(g.mode, g.direction)) : 0;
    p.decrypt = g.kind == modes::ModeKind::aead && g.open ? 1 : 0;  // the other kernels take the direction as a template argument
    p.tag_len = tag_len;
    if (g.kind == modes::ModeKind::aead) {  // (a batch without GCM has no buffers for these)
      p.messages = d.gcm_messages + g.first_message;
      p.first_items = d.gcm_first_items + g.first_message;
      p.num_messages = g.num_messages;
      p.tile_hashes = d.tile_hashes + g.first_item;
    }
    with_launch_policy([&](auto policy) { run_items<decltype(policy)>(g, p, stream); });
  }

  // The group's kernels under the current device's launch policy P.
  template <class P>
  static void run_items(const GroupWork& g, const KernelParams& p, cudaStream_t stream) {
    switch (g.kind) {
      case modes::ModeKind::bulk:  // the kernel of the mode's shape (its traits' bulk_op)
        modes::visit_op<modes::ModeKind::bulk>(g.mode, g.direction, [&](auto op) {
          using Op = decltype(op);
          bulk<P, Op::ModeTraits::bulk_op(Op::kDirection)>(p, stream);
        });
        return;
      case modes::ModeKind::xts: {
        KernelParams tweaks = p;  // T_0 per message first
        tweaks.op = kXtsTweak;
        serial<P>(tweaks, stream);
        return g.direction == Direction::decrypt ? xts<P, false>(p, stream) : xts<P, true>(p, stream);
      }
      case modes::ModeKind::aead: return gcm<P>(p, g.open, stream);
      case modes::ModeKind::serial: return serial<P>(p, stream);  // CBC/CFB encryption, OFB
    }
  }

  template <class P, Bulk kMode>
  static void bulk(const KernelParams& p, cudaStream_t stream) {
    constexpr bool kDecrypt = modes::bulk_decrypts(kMode);
    auto* kernel = bulk_items_kernel<F, P, kMode>;
    const size_t smem = F::smem_bytes(kDecrypt);
    launch<kThreads>(kernel, grid_for<kThreads>(reinterpret_cast<const void*>(kernel), smem, p.num_items), smem, p,
                     stream, "batch kernel launch");
  }

  template <class P, bool kEncrypt>
  static void xts(const KernelParams& p, cudaStream_t stream) {
    auto* kernel = xts_items_kernel<F, P, kEncrypt>;
    const size_t smem = F::smem_bytes(!kEncrypt);
    launch<kThreads>(kernel, grid_for<kThreads>(reinterpret_cast<const void*>(kernel), smem, p.num_items), smem, p,
                     stream, "batch XTS launch");
  }

  template <class P>
  static void serial(const KernelParams& p, cudaStream_t stream) {
    auto* kernel = serial_items_kernel<F, P>;
    const size_t smem = F::smem_bytes(false);  // all four encrypt
    launch<P::kSerialThreads>(
        kernel, grid_for<P::kSerialThreads>(reinterpret_cast<const void*>(kernel), smem, (p.num_items + 31) / 32), smem,
        p, stream, "batch serial kernel launch");
  }

  // The GCM kernels of one group (see gcm_prepare_kernel): the tiles under the launch policy P.
  template <class P>
  static void gcm(KernelParams p, bool open, cudaStream_t stream) {
    constexpr int kSteps = gcm_steps<Cipher, P>();
    p.tile_blocks = 32 * kSteps;
    const size_t smem = F::smem_bytes(false);
    auto* prepare = gcm_prepare_kernel<F>;
    launch<kThreads>(prepare, grid_for<kThreads>(reinterpret_cast<const void*>(prepare), smem, p.num_messages), smem, p,
                     stream, "batch GCM prepare launch");
    auto* tiles = gcm_tiles_kernel<F, P>;
    const int tiles_grid = grid_for<P::kGcmThreads>(reinterpret_cast<const void*>(tiles), smem, p.num_items);
    auto* finish = gcm_finish_kernel;
    const int finish_grid = grid_for<kThreads>(reinterpret_cast<const void*>(finish), 0, p.num_messages);
    if (!open) {
      p.tile_hash = GcmTileHash::output;
      launch<P::kGcmThreads>(tiles, tiles_grid, smem, p, stream, "batch GCM tiles launch");
      launch<kThreads>(finish, finish_grid, 0, p, stream, "batch GCM finish launch");
      return;
    }
    auto* hash = gcm_hash_tiles_kernel<kSteps>;
    launch<kThreads>(hash, grid_for<kThreads>(reinterpret_cast<const void*>(hash), 0, p.num_items), 0, p, stream,
                     "batch GCM hash launch");
    launch<kThreads>(finish, finish_grid, 0, p, stream, "batch GCM finish launch");
    p.tile_hash = GcmTileHash::none;  // decipher the messages whose tag verified
    launch<P::kGcmThreads>(tiles, tiles_grid, smem, p, stream, "batch GCM tiles launch");
  }

};

template <class F>
FamilyOps ops(const char* variant) {
  return {variant, &Launcher<F>::schedule_bytes, &Launcher<F>::gcm_tile_blocks, &Launcher<F>::run};
}

// The family for the suite's key size (the backend's families take it as a template argument).
template <template <int> class F>
FamilyOps ops_for_key_bits(int key_bits, const char* variant) {
  return key_bits == 128 ? ops<F<128>>(variant) : key_bits == 192 ? ops<F<192>>(variant) : ops<F<256>>(variant);
}

}  // namespace

}  // namespace gpucrypt::cuda::batch
