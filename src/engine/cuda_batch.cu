// cuda_batch.cu: the CUDA batch executor: a whole BatchPlan in a few launches.
//
// Constant-time position: the variant's. aes_bitsliced adds no secret-dependent index or branch
// (the kernels branch on lengths and indices only, GHASH is gf128.h's constant-time multiplier
// and the tag comparison ORs every byte difference); aes_ttable_smem32, camellia_ttable_smem and
// sc2000_table_smem index tables with secret bytes, in the key schedule as in the rounds.
//
// Data: the packed input, the params (IVs, nonces, AAD) and the raw keys of every group go to the
// device in one copy each through pinned staging; the packed output comes back in one copy. Keys
// are expanded on the device, one thread per distinct key of a group (an expanded AES T-table
// schedule is 15x the key: uploading 32 bytes instead of ~500 per key keeps a batch of 1 KiB
// messages with their own keys from paying half its bytes again over PCIe).
//
// Work: one item per message (per 16 KiB piece in ECB, CTR and CBC/CFB decryption; per tile in
// GCM). Parallel modes give a warp an item and spread its blocks over the lanes (ECB, CTR,
// CBC/CFB decryption, XTS); serial modes (CBC/CFB encryption, OFB) give a thread a message. GCM
// cuts a message into the bulk kernel's tiles under the device's launch policy and runs each
// through the bulk kernel's own tile routine (kernels.cuh's gcm_tile_lane_sum), then joins the
// tile hashes per message (see gcm_prepare_kernel). One launch per group (plus one for key
// expansion, one for XTS tweaks, three or four for GCM). The plan lists a suite's messages
// longest first, so neighbouring warps do alike work. GCM and XTS messages of kBigLen and more go
// through the backend's bulk kernels instead (DeviceGcm / DeviceCipher on the uploaded buffers),
// which spread one message over the whole GPU and fold its tile hashes in a tree.
//
// Hashes run on the CPU (hash::create_hash, as the generic executor does): a plan's hashes are
// few and short next to its ciphers; routing them to keccak_cuda is left to do. A plan with a
// suite no CUDA family here serves (a variant that is not a CUDA variant) is refused (nullopt): the
// CUDA Device hands it whole to the generic executor, which reports the error.
//
// The cipher families are the backend's (backends/cuda/*.cuh, protocol in kernels.cuh): their
// expand makes the schedules here, their fill and bind set up the tables of every CTA and thread.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <array>
#include <unordered_map>

#include "backends/cpu/thread_pool.hpp"
// aes_ttable_smem32.cuh first: it sets the AES table layout before kernels.cuh includes aes.h.
#include "backends/cuda/aes_ttable_smem32.cuh"
#include "backends/cuda/aes_bitsliced.cuh"
#include "backends/cuda/camellia_ttable_smem.cuh"
#include "backends/cuda/device.hpp"
#include "backends/cuda/sc2000_table_smem.cuh"
#include "backends/cuda/workspace_pool.hpp"
#include "gpucrypt/batch.hpp"
#include "gpucrypt/hash.hpp"
#include "modes/padding.hpp"

namespace gpucrypt::cuda {

namespace {

using namespace kernels;

// The batch kernels' CTA size. A work item is one message (serial modes) or one warp-sized slice
// (parallel modes); the launch policies of launch_policy.hpp shape the bulk kernels and the
// batch's GCM tiles (the GCM kernel the file format runs on), not yet the batch's other kernels.
constexpr int kThreads = 256;
using engine::BatchPlan;
using engine::BatchRequest;
using engine::BatchResult;
using engine::Operation;
using engine::RequestStatus;
using engine::Suite;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

using cpu::parallel_copy;
constexpr size_t kCopyPiece = size_t(1) << 20;  // below 2 pieces the copy-out stays on this thread

// ---- work records ---------------------------------------------------------------------------

enum Op : int {
  // parallel kernel
  op_ecb = 0, op_ctr, op_cbc_decrypt, op_cfb_decrypt, op_xts,
  // serial kernel
  op_cbc_encrypt, op_cfb_encrypt, op_ofb, op_xts_tweak,
  // GCM kernel
  op_gcm,
};

struct Item {
  uint64_t in_offset, out_offset;
  uint64_t len;                     // message bytes (GCM open: without the tag)
  uint64_t begin_block, end_block;  // the piece of the message this item covers
  uint64_t iv_offset, aad_offset, aad_len;
  uint32_t iv_len, schedule, request;
  uint32_t message;                 // GCM: the message's index in its group (GcmMessage, first_items)
};

// GCM: what gcm_prepare_kernel derives once per message for its tiles and its tag.
struct GcmMessage {
  gc_block j0;            // the pre-counter block J0; data block i runs under inc32^(i+1)(J0)
  gc_block tag_mask;      // E_K(J0)
  gc_gf128 h;             // the hash subkey E_K(0)
  gc_gf128 lane_pow[32];  // H^(32 - L) for lane L (lane 0: H^32, the Horner step of a lane)
};

struct KernelParams {
  const uint8_t* in;
  uint8_t* out;
  const uint8_t* params;
  const void* schedules;  // Family::Cipher[], this group's
  const Item* items;      // this group's
  uint64_t num_items;
  gc_block* tweaks;       // XTS: E_K2(tweak) per item
  uint8_t* status;        // per request (GCM open)
  int op;
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

struct ExpandParams {
  const uint8_t* keys;  // num_keys * key_stride bytes
  void* schedules;
  uint32_t num_keys, key_len, key_stride, xts;
};

// Packed-form offsets and AAD are not 16-byte aligned: kernels.cuh's load16_any/store16_any.
__device__ __forceinline__ gc_block ld(const uint8_t* p) { return load16_any(p); }
__device__ __forceinline__ void st(uint8_t* p, gc_block b) { store16_any(p, b); }
__device__ __forceinline__ gc_block ld_upto(const uint8_t* p, uint64_t n) {
  return n >= 16 ? ld(p) : load_partial_block(p, static_cast<size_t>(n));
}

constexpr int kSteps = 2;  // rows of 32 blocks a warp works on at once (a 1 KiB message = 2 rows)
constexpr uint64_t kPieceBlocks = 1024;
// GCM and XTS give a message one warp; a message this long instead goes through the backend's
// bulk kernels (DeviceGcm / DeviceCipher on the uploaded buffers), which spread it over the GPU.
constexpr uint64_t kBigLen = 256 * 1024;

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

template <bool kDecrypt, class Cipher>
__device__ void blocks_item(const Cipher& c, int op, gc_block iv, const uint8_t* in, uint8_t* out, uint64_t len,
                            uint64_t b0, uint64_t b1) {
  const uint64_t num_full = len / 16;
  const unsigned lane = lane_id();
  for (uint64_t t = b0; t < b1; t += 32 * kSteps) {
    gc_block x[kSteps], data[kSteps];
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const uint64_t i = t + lane + 32 * s;
      const gc_block own = i < num_full ? ld(in + 16 * i) : modes::zero_block();
      const gc_block previous = i == 0 ? iv : (i - 1 < num_full ? ld(in + 16 * (i - 1)) : modes::zero_block());
      if (op == op_ecb || op == op_cbc_decrypt) x[s] = own;
      if (op == op_cbc_decrypt) data[s] = previous;
      if (op == op_ctr) x[s] = gc_ctr128_add(iv, i);
      if (op == op_cfb_decrypt) x[s] = previous;
      if (op == op_ctr || op == op_cfb_decrypt) data[s] = own;
    }
#pragma unroll
    for (int s = 0; s < kSteps; s += Cipher::kBlocksPerCall) run_cipher<Cipher, kDecrypt>(c, x + s);
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const uint64_t i = t + lane + 32 * s;
      if (i >= b1) continue;
      if (op == op_ecb) {
        if (i < num_full) st(out + 16 * i, x[s]);
      } else if (i < num_full) {
        st(out + 16 * i, gc_block_xor(x[s], data[s]));
      } else if (16 * i < len) {  // CTR/CFB: the ragged end
        xor_partial_block(in + 16 * i, out + 16 * i, len - 16 * i, x[s]);
      }
    }
  }
}

template <bool kDecrypt, class Cipher>
__device__ void xts_item(const Cipher& c, gc_block t0, const uint8_t* in, uint8_t* out, uint64_t len) {
  const uint64_t num_full = len / 16, tail_len = len % 16;
  const uint64_t num_bulk = tail_len != 0 ? num_full - 1 : num_full;  // the last full block is stolen from
  const unsigned lane = lane_id();
  gc_block tweak = gc_xts_tweak_at(t0, lane);
  for (uint64_t row = 0; 32 * row < num_bulk; row += kSteps) {
    gc_block x[kSteps], tweaks[kSteps];
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const uint64_t i = 32 * (row + s) + lane;
      tweaks[s] = tweak;
      tweak = xts_mul_x32(tweak);
      x[s] = gc_block_xor(i < num_bulk ? ld(in + 16 * i) : modes::zero_block(), tweaks[s]);
    }
#pragma unroll
    for (int s = 0; s < kSteps; s += Cipher::kBlocksPerCall) run_cipher<Cipher, kDecrypt>(c, x + s);
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const uint64_t i = 32 * (row + s) + lane;
      if (i < num_bulk) st(out + 16 * i, gc_block_xor(x[s], tweaks[s]));
    }
  }
  if (tail_len != 0 && lane == 0) {
    const uint64_t offset = 16 * num_bulk;
    if constexpr (kDecrypt) modes::xts_decrypt_range(c, t0, num_bulk, in + offset, out + offset, 16 + tail_len);
    else modes::xts_encrypt_range(c, t0, num_bulk, in + offset, out + offset, 16 + tail_len);
  }
}

template <class F, bool kDecrypt>
__global__ void __launch_bounds__(kThreads) parallel_kernel(const __grid_constant__ KernelParams p) {
  using Cipher = typename F::Cipher;
  extern __shared__ uint4 shared_words[];
  uint32_t* shared = reinterpret_cast<uint32_t*>(shared_words);
  F::fill(shared, kDecrypt);
  __syncthreads();
  const Cipher* schedules = static_cast<const Cipher*>(p.schedules);
  for (uint64_t w = global_warp<kThreads>(); w < p.num_items; w += num_warps<kThreads>()) {
    const Item it = p.items[w];
    Cipher c = schedules[it.schedule];
    F::bind(c, shared, kDecrypt);
    const uint8_t* in = p.in + it.in_offset;
    uint8_t* out = p.out + it.out_offset;
    if (p.op == op_xts) {
      xts_item<kDecrypt>(c, p.tweaks[w], in, out, it.len);
    } else {
      const gc_block iv = it.iv_len == 16 ? gc_block_load(p.params + it.iv_offset) : modes::zero_block();
      blocks_item<kDecrypt>(c, p.op, iv, in, out, it.len, it.begin_block, it.end_block);
    }
  }
}

template <class F>
__global__ void __launch_bounds__(kThreads) serial_kernel(const __grid_constant__ KernelParams p) {
  using Cipher = typename F::Cipher;
  extern __shared__ uint4 shared_words[];
  uint32_t* shared = reinterpret_cast<uint32_t*>(shared_words);
  F::fill(shared, false);  // all four encrypt
  __syncthreads();
  const Cipher* schedules = static_cast<const Cipher*>(p.schedules);
  for (uint64_t k = blockIdx.x * uint64_t(kThreads) + threadIdx.x; k < p.num_items;
       k += uint64_t(gridDim.x) * kThreads) {
    const Item it = p.items[k];
    Cipher c = schedules[it.schedule + (p.op == op_xts_tweak ? 1 : 0)];
    F::bind(c, shared, false);
    const gc_block iv = gc_block_load(p.params + it.iv_offset);
    const uint8_t* in = p.in + it.in_offset;
    uint8_t* out = p.out + it.out_offset;
    switch (p.op) {
      case op_cbc_encrypt: modes::cbc_encrypt_blocks(c, iv, in, out, it.len / 16); break;
      case op_cfb_encrypt: modes::cfb_encrypt(c, iv, in, out, it.len); break;
      case op_ofb: modes::ofb_xor(c, iv, in, out, it.len); break;
      default: p.tweaks[k] = modes::xts_encrypted_tweak(c, iv); break;
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
  extern __shared__ uint4 shared_words[];
  uint32_t* shared = reinterpret_cast<uint32_t*>(shared_words);
  F::fill(shared, false);
  __syncthreads();
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
      message.h = h;
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
  extern __shared__ uint4 shared_words[];
  uint32_t* shared = reinterpret_cast<uint32_t*>(shared_words);
  F::fill(shared, false);
  __syncthreads();
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
    const gc_gf128 h = message.h;
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

// ---- launching ------------------------------------------------------------------------------

struct GroupWork {
  uint32_t suite, group;
  int op;
  bool open;            // GCM: verify instead of seal
  bool decrypt_kernel;  // parallel kernel in the decryption direction
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

template <class F>
struct Launcher {
  using Cipher = typename F::Cipher;
  static size_t schedule_bytes() { return sizeof(Cipher); }

  // Blocks per GCM tile under the current device's launch policy (the host cuts messages into them).
  static uint64_t gcm_tile_blocks() {
    return current_launch_policy() == PolicyName::sm90 ? 32 * gcm_steps<Cipher, Sm90Policy>()
                                                       : 32 * gcm_steps<Cipher, DefaultPolicy>();
  }

  static void run(const GroupWork& g, const Device& d, int tag_len, cudaStream_t stream) {
    ExpandParams e{d.keys + g.key_offset, d.schedules + g.schedule_offset, static_cast<uint32_t>(g.num_keys),
                   g.key_len, g.key_stride, g.xts ? 1u : 0u};
    const int expand_grid = static_cast<int>((g.num_keys + kThreads - 1) / kThreads);
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
    p.op = g.op;
    p.decrypt = (g.op == op_gcm ? g.open : g.decrypt_kernel) ? 1 : 0;
    p.tag_len = tag_len;
    const size_t smem = F::smem_bytes(g.decrypt_kernel);
    if (g.op == op_xts) {
      KernelParams t = p;
      t.op = op_xts_tweak;
      serial(t, stream);
    }
    if (g.op >= op_cbc_encrypt && g.op <= op_ofb) return serial(p, stream);
    if (g.op == op_gcm) {
      p.messages = d.gcm_messages + g.first_message;
      p.first_items = d.gcm_first_items + g.first_message;
      p.num_messages = g.num_messages;
      p.tile_hashes = d.tile_hashes + g.first_item;
      if (current_launch_policy() == PolicyName::sm90) gcm<Sm90Policy>(p, g.open, stream);
      else gcm<DefaultPolicy>(p, g.open, stream);
      return;
    }
    auto* kernel = g.decrypt_kernel ? parallel_kernel<F, true> : parallel_kernel<F, false>;
    launch<kThreads>(kernel, grid_for<kThreads>(reinterpret_cast<const void*>(kernel), smem, g.num_items), smem, p, stream,
           "batch kernel launch");
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

  static void serial(const KernelParams& p, cudaStream_t stream) {
    auto* kernel = serial_kernel<F>;
    const size_t smem = F::smem_bytes(false);  // all four encrypt
    launch<kThreads>(kernel, grid_for<kThreads>(reinterpret_cast<const void*>(kernel), smem, (p.num_items + 31) / 32), smem, p, stream,
           "batch serial kernel launch");
  }
};

struct FamilyOps {
  const char* variant;
  size_t (*schedule_bytes)();
  uint64_t (*gcm_tile_blocks)();
  void (*run)(const GroupWork&, const Device&, int, cudaStream_t);
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

// The CUDA variant a suite runs on (the backend's default first, as device.cu registers them),
// or nothing when the requested variant is not one of these.
bool family_for(const Suite& suite, FamilyOps* out) {
  const std::string& v = suite.variant;
  const int bits = suite.cipher.key_bits;
  switch (suite.cipher.algorithm) {
    case Algorithm::aes:
      if (v.empty() || v == "aes_ttable_smem32") {
        *out = ops_for_key_bits<AesTTableSmem32>(bits, "aes_ttable_smem32");
        return true;
      }
      // The batch kernels give each lane its own message, so they run the 2-block bitslice for
      // every constant-time name (the 32- and 8-block ones need 32 or 8 blocks of one key per
      // lane); the result reports "aes_bitsliced", what ran.
      if (v == "aes_bitsliced" || v == "aes_bitsliced32" || v == "aes_bitsliced8") {
        *out = ops_for_key_bits<AesBitslicedFamily>(bits, "aes_bitsliced");
        return true;
      }
      return false;
    case Algorithm::camellia:
      if (!v.empty() && v != "camellia_ttable_smem") return false;
      *out = ops_for_key_bits<CamelliaTTableSmem>(bits, "camellia_ttable_smem");
      return true;
    case Algorithm::sc2000:
      if (!v.empty() && v != "sc2000_table_smem") return false;
      *out = ops_for_key_bits<Sc2000TableSmem>(bits, "sc2000_table_smem");
      return true;
  }
  return false;
}

// ---- buffers --------------------------------------------------------------------------------

// Device and pinned buffers, kept per device and lent to one call at a time; grown on demand and
// zeroed (the used part) before they are lent again.
struct Buffer {
  uint8_t* ptr = nullptr;
  size_t capacity = 0, used = 0;
  bool pinned = false;
  // Grows with a quarter to spare, or to exactly n when the spare does not fit (a nearly full
  // GPU); failing that, OutOfMemory names the bytes needed and free.
  void reserve(size_t n) {
    if (n > capacity) {
      release();
      const size_t cap = std::max<size_t>(n + n / 4, 1 << 16);
      const char* what = pinned ? "cudaMallocHost (batch)" : "cudaMalloc (batch)";
      auto allocate = [&](size_t bytes) { return pinned ? cudaMallocHost(&ptr, bytes) : cudaMalloc(&ptr, bytes); };
      if (allocate(cap) == cudaSuccess) {
        capacity = cap;
      } else {
        (void)cudaGetLastError();
        check_allocation(allocate(n), what, n, pinned);
        capacity = n;
      }
    }
    used = n;  // only once the memory is there: wipe() zeroes `used` bytes
  }
  void wipe(cudaStream_t stream) {
    if (used == 0) return;
    if (pinned) parallel_copy(ptr, nullptr, used);
    else check(cudaMemsetAsync(ptr, 0, used, stream), "cudaMemset");
    used = 0;
  }
  void release() {
    if (ptr) pinned ? cudaFreeHost(ptr) : cudaFree(ptr);
    ptr = nullptr;
    capacity = 0;
  }
};

// One call's buffers and stream, lent by the backend's one workspace pool (workspace_pool.hpp).
class Workspace {
 public:
  explicit Workspace(int device_index) : device_index_(device_index) {
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~Workspace() {  // pooled workspaces live as long as the process: only a dropped one gets here
    cudaStreamSynchronize(stream);
    for (Buffer* b : buffers()) b->release();
    cudaStreamDestroy(stream);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  int device_index() const { return device_index_; }
  void wipe() {
    for (Buffer* b : buffers()) b->wipe(stream);
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }

  cudaStream_t stream = nullptr;
  Buffer staging_in{nullptr, 0, 0, true}, staging_out{nullptr, 0, 0, true};
  Buffer in, out, params, keys, schedules, items, tweaks, status;
  Buffer gcm_messages, gcm_first_items, tile_hashes;  // GCM: per message, per message, per tile

 private:
  std::array<Buffer*, 13> buffers() {
    return {&staging_in, &staging_out, &in, &out,   &params,          &keys,       &schedules,
            &items,      &tweaks,      &status, &gcm_messages, &gcm_first_items, &tile_hashes};
  }
  int device_index_;
};

uint64_t align16(uint64_t n) { return (n + 15) / 16 * 16; }

int op_for(const Suite& s, bool* decrypt_kernel) {
  const bool decrypt = s.operation == Operation::decrypt;
  *decrypt_kernel = false;
  switch (s.cipher.mode) {
    case Mode::ecb: *decrypt_kernel = decrypt; return op_ecb;
    case Mode::ctr: return op_ctr;
    case Mode::cbc: *decrypt_kernel = decrypt; return decrypt ? op_cbc_decrypt : op_cbc_encrypt;
    case Mode::cfb: return decrypt ? op_cfb_decrypt : op_cfb_encrypt;
    case Mode::ofb: return op_ofb;
    case Mode::xts: *decrypt_kernel = decrypt; return op_xts;
    case Mode::gcm: return op_gcm;
  }
  return op_ecb;
}

}  // namespace

std::optional<engine::BatchResult> run_batch(const engine::BatchPlan& plan, int device_index) {
  const auto start = Clock::now();
  std::vector<FamilyOps> families(plan.suites.size());
  for (const auto& group : plan.groups) {
    const Suite& suite = plan.suites[group.suite];
    if (suite.operation != Operation::hash && !family_for(suite, &families[group.suite])) return std::nullopt;
  }
  BatchResult result;
  result.reset(plan);
  result.device = "cuda:" + std::to_string(device_index);
  result.executor = "cuda";

  DeviceGuard guard(device_index, DeviceGuard::Failure::unavailable);

  // Items, raw keys and schedule space per group, in execution order.
  std::vector<GroupWork> work;
  std::vector<Item> items;
  items.reserve(plan.requests.size());
  std::vector<uint8_t> key_upload;
  std::vector<uint32_t> slot_to_local(plan.keys.size(), UINT32_MAX);
  std::vector<uint32_t> hash_requests;
  std::vector<uint32_t> big_requests;  // GCM/XTS messages of kBigLen and more
  std::vector<uint64_t> gcm_first_items;  // per GCM message: its first tile's item in its group
  uint64_t schedule_bytes = 0;
  for (size_t group_index = 0; group_index < plan.groups.size(); ++group_index) {
    const auto& group = plan.groups[group_index];
    const Suite& suite = plan.suites[group.suite];
    if (suite.operation == Operation::hash) {
      for (uint32_t k = 0; k < group.count; ++k) hash_requests.push_back(plan.order[group.first + k]);
      continue;
    }
    const FamilyOps& family = families[group.suite];
    result.suite_variants[group.suite] = family.variant;
    GroupWork g{};
    g.suite = group.suite;
    g.group = static_cast<uint32_t>(group_index);
    g.open = suite.operation == Operation::open;
    g.op = op_for(suite, &g.decrypt_kernel);
    g.xts = suite.cipher.mode == Mode::xts;
    g.key_len = suite.cipher.key_bits / 8;
    g.key_stride = g.xts ? 2 * g.key_len : g.key_len;
    g.key_offset = key_upload.size();
    g.first_item = items.size();
    g.first_message = gcm_first_items.size();
    std::vector<uint32_t> used_slots;
    const bool open = g.open;
    for (uint32_t k = 0; k < group.count; ++k) {
      const uint32_t index = plan.order[group.first + k];
      const BatchRequest& r = plan.requests[index];
      if (open && r.input_len < suite.tag_len) {
        result.status[index] = RequestStatus::authentication_failed;
        continue;
      }
      uint32_t& local = slot_to_local[r.key];
      if (local == UINT32_MAX) {
        local = static_cast<uint32_t>(used_slots.size());
        used_slots.push_back(r.key);
        const uint8_t* key = plan.key_of(plan.keys[r.key]);
        key_upload.insert(key_upload.end(), key, key + g.key_stride);
      }
      Item it{};
      it.in_offset = r.input_offset;
      it.out_offset = r.output_offset;
      it.len = open ? r.input_len - suite.tag_len : r.input_len;
      it.iv_offset = r.iv_offset;
      it.iv_len = r.iv_len;
      it.aad_offset = r.aad_offset;
      it.aad_len = r.aad_len;
      it.schedule = local * (g.xts ? 2 : 1);
      it.request = index;
      const uint64_t num_blocks = (it.len + 15) / 16;
      if (g.op <= op_cfb_decrypt) {  // pieces of at most kPieceBlocks
        for (uint64_t b = 0; b < num_blocks; b += kPieceBlocks) {
          it.begin_block = b;
          it.end_block = std::min(num_blocks, b + kPieceBlocks);
          items.push_back(it);
        }
      } else if ((g.op == op_gcm || g.op == op_xts) && it.len >= kBigLen) {
        big_requests.push_back(index);
      } else if (g.op == op_gcm) {  // the message's tiles, and where they start
        it.message = static_cast<uint32_t>(gcm_first_items.size() - g.first_message);
        gcm_first_items.push_back(items.size() - g.first_item);
        it.end_block = gcm_num_tiles(it.len, family.gcm_tile_blocks());
        for (it.begin_block = 0; it.begin_block < it.end_block; ++it.begin_block) items.push_back(it);
      } else if (it.len > 0) {
        items.push_back(it);
      }
    }
    for (uint32_t slot : used_slots) slot_to_local[slot] = UINT32_MAX;
    g.num_items = items.size() - g.first_item;
    g.num_messages = gcm_first_items.size() - g.first_message;
    g.num_keys = used_slots.size();
    g.schedule_offset = schedule_bytes;
    schedule_bytes += align16(family.schedule_bytes() * g.num_keys * (g.xts ? 2 : 1));
    if (g.num_keys > 0) work.push_back(g);
  }
  result.timings.key_setup_s = seconds_since(start);

  Lease<Workspace> ws(device_index);
  cudaStream_t stream = ws->stream;
  const size_t in_len = plan.input.size(), out_len = plan.output.size();
  if (!work.empty()) {
    auto h2d_start = Clock::now();
    // Page-locked caller memory (the stream engine's buffers) moves to and from the GPU in place;
    // the device output has plan.output's layout, so it can come back in one copy.
    const bool direct_in = in_len > 0 && cuda::is_page_locked(plan.input.data(), in_len);
    const bool direct_out = out_len > 0 && cuda::is_page_locked(plan.output.data(), out_len);
    ws->staging_in.reserve((direct_in ? 0 : in_len) + plan.params.size() + key_upload.size() +
                           items.size() * sizeof(Item) + gcm_first_items.size() * sizeof(uint64_t));
    ws->staging_out.reserve((direct_out ? 0 : out_len) + plan.requests.size());
    ws->in.reserve(in_len);
    ws->out.reserve(out_len);
    ws->params.reserve(plan.params.size());
    ws->keys.reserve(key_upload.size());
    ws->schedules.reserve(schedule_bytes);
    ws->items.reserve(items.size() * sizeof(Item));
    ws->tweaks.reserve(items.size() * sizeof(gc_block));
    ws->status.reserve(plan.requests.size());
    ws->gcm_messages.reserve(gcm_first_items.size() * sizeof(GcmMessage));
    ws->gcm_first_items.reserve(gcm_first_items.size() * sizeof(uint64_t));
    ws->tile_hashes.reserve(gcm_first_items.empty() ? 0 : items.size() * sizeof(gc_gf128));
    uint8_t* staged = ws->staging_in.ptr;
    auto upload = [&](Buffer& to, const void* from, size_t n) {
      if (n == 0) return;
      parallel_copy(staged, from, n);
      check(cudaMemcpyAsync(to.ptr, staged, n, cudaMemcpyHostToDevice, stream), "copy to device");
      staged += n;
    };
    if (direct_in)
      check(cudaMemcpyAsync(ws->in.ptr, plan.input.data(), in_len, cudaMemcpyHostToDevice, stream), "copy to device");
    else
      upload(ws->in, plan.input.data(), in_len);
    upload(ws->params, plan.params.data(), plan.params.size());
    upload(ws->keys, key_upload.data(), key_upload.size());
    upload(ws->items, items.data(), items.size() * sizeof(Item));
    upload(ws->gcm_first_items, gcm_first_items.data(), gcm_first_items.size() * sizeof(uint64_t));
    gpucrypt::secure_zero(key_upload.data(), key_upload.size());
    check(cudaMemsetAsync(ws->status.ptr, 0, plan.requests.size(), stream), "cudaMemset");
    check(cudaStreamSynchronize(stream), "copy to device");
    result.timings.h2d_s = seconds_since(h2d_start);

    const auto compute_start = Clock::now();
    const Device d{ws->in.ptr,        ws->out.ptr,
                   ws->params.ptr,    ws->keys.ptr,
                   ws->schedules.ptr, reinterpret_cast<const Item*>(ws->items.ptr),
                   reinterpret_cast<gc_block*>(ws->tweaks.ptr), ws->status.ptr,
                   reinterpret_cast<GcmMessage*>(ws->gcm_messages.ptr),
                   reinterpret_cast<const uint64_t*>(ws->gcm_first_items.ptr),
                   reinterpret_cast<gc_gf128*>(ws->tile_hashes.ptr)};
    for (const GroupWork& g : work) families[g.suite].run(g, d, plan.suites[g.suite].tag_len, stream);
    std::vector<uint8_t> big_tags(16 * big_requests.size());
    for (size_t b = 0; b < big_requests.size(); ++b) {
      const uint32_t index = big_requests[b];
      const BatchRequest& r = plan.requests[index];
      const Suite& suite = plan.suites[r.suite];
      const engine::KeySlot& slot = plan.keys[r.key];
      const ByteSpan key(plan.key_of(slot), slot.key_len), iv(plan.iv_of(r), r.iv_len);
      const std::string variant = families[r.suite].variant;
      if (suite.cipher.mode == Mode::xts) {
        DeviceCipher::create(suite.cipher, suite.operation == Operation::encrypt ? Direction::encrypt : Direction::decrypt,
                             key, variant, device_index)
            ->process(iv, d.in + r.input_offset, d.out + r.output_offset, r.input_len, stream);
        continue;
      }
      auto gcm = DeviceGcm::create(suite.cipher, key, variant, device_index);
      const ByteSpan aad(plan.aad_of(r), r.aad_len);
      if (suite.operation == Operation::seal) {
        gcm->seal(iv, aad, d.in + r.input_offset, d.out + r.output_offset, r.input_len, &big_tags[16 * b],
                  suite.tag_len, stream);
      } else {
        const uint64_t data_len = r.input_len - suite.tag_len;
        if (!gcm->open(iv, aad, d.in + r.input_offset, d.out + r.output_offset, data_len,
                       ByteSpan(plan.input_of(r) + data_len, suite.tag_len), stream))
          result.status[index] = RequestStatus::authentication_failed;
      }
    }
    check(cudaStreamSynchronize(stream), "batch kernels");
    result.timings.compute_s = seconds_since(compute_start);

    const auto d2h_start = Clock::now();
    // Statuses first: a failed open's output range must keep the caller's bytes, so it is never
    // copied back (the kernels write nothing there; the device buffer holds no data of its own).
    uint8_t* const status_back = ws->staging_out.ptr + (direct_out ? 0 : out_len);
    check(cudaMemcpyAsync(status_back, ws->status.ptr, plan.requests.size(), cudaMemcpyDeviceToHost, stream),
          "copy to host");
    check(cudaStreamSynchronize(stream), "copy to host");
    bool any_open_failed = false;
    for (size_t index = 0; index < plan.requests.size(); ++index) {
      if (plan.suites[plan.requests[index].suite].operation != Operation::open) continue;
      if (status_back[index] != 0) result.status[index] = RequestStatus::authentication_failed;
      if (result.status[index] != RequestStatus::ok) any_open_failed = true;
    }
    if (!direct_out) {
      check(cudaMemcpyAsync(ws->staging_out.ptr, ws->out.ptr, out_len, cudaMemcpyDeviceToHost, stream), "copy to host");
    } else if (!any_open_failed) {
      check(cudaMemcpyAsync(plan.output.data(), ws->out.ptr, out_len, cudaMemcpyDeviceToHost, stream), "copy to host");
    } else {  // straight into the caller's memory, around the failed opens
      for (const GroupWork& g : work) {
        const engine::RequestGroup& group = plan.groups[g.group];
        for (size_t k = 0; k < group.count; ++k) {
          const uint32_t index = plan.order[group.first + k];
          const BatchRequest& r = plan.requests[index];
          if (result.status[index] == RequestStatus::ok && r.output_len > 0)
            check(cudaMemcpyAsync(plan.output_of(r), ws->out.ptr + r.output_offset, r.output_len,
                                  cudaMemcpyDeviceToHost, stream),
                  "copy to host");
        }
      }
    }
    check(cudaStreamSynchronize(stream), "copy to host");
    // Only the GPU requests' outputs: hashes are written below, and in the packed form the
    // caller's output is exactly the requests' outputs back to back.
    for (const GroupWork& g : work) {
      const Suite& suite = plan.suites[g.suite];
      const engine::RequestGroup& group = plan.groups[g.group];
      auto copy_out = [&](size_t first, size_t last) {
      for (size_t k = first; k < last; ++k) {
        const uint32_t index = plan.order[group.first + k];
        const BatchRequest& r = plan.requests[index];
        if (result.status[index] != RequestStatus::ok) continue;  // a failed open: nothing to copy
        if (!direct_out) std::memcpy(plan.output_of(r), ws->staging_out.ptr + r.output_offset, r.output_len);
        if (suite.pkcs7 && suite.operation == Operation::decrypt && r.input_len >= 16) {
          size_t tail_len = 0;
          const bool ok = modes::pkcs7_unpadded_len(plan.output_of(r) + r.input_len - 16, &tail_len);
          result.output_len[index] = r.input_len - 16 + tail_len;
          if (!ok) result.status[index] = RequestStatus::invalid_padding;
        }
      }
      };
      if (group.total_input_len < 2 * kCopyPiece) copy_out(0, group.count);
      else cpu::ThreadPool::global().parallel_for(group.count, 64, copy_out);
    }
    for (size_t b = 0; b < big_requests.size(); ++b) {  // sealed tags came back to the host
      const BatchRequest& r = plan.requests[big_requests[b]];
      const Suite& suite = plan.suites[r.suite];
      if (suite.operation == Operation::seal) std::memcpy(plan.output_of(r) + r.input_len, &big_tags[16 * b], suite.tag_len);
    }
    gpucrypt::secure_zero(big_tags.data(), big_tags.size());
    result.timings.d2h_s = seconds_since(d2h_start);
  }
  for (uint32_t index : hash_requests) {  // on the CPU, as the generic executor does
    const BatchRequest& r = plan.requests[index];
    const Suite& suite = plan.suites[r.suite];
    auto context = hash::create_hash(suite.hash_name, suite.hash_params, suite.variant);
    context->update(plan.input_of(r), r.input_len);
    context->finalize(plan.output_of(r), suite.hash_out_len);
    result.suite_variants[r.suite] = context->variant();
  }
  engine::wipe_failed_outputs(plan, result);
  result.timings.total_s = seconds_since(start);
  return result;
}

}  // namespace gpucrypt::cuda
