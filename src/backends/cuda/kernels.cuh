// kernels.cuh: the CUDA kernels, written once as templates over a cipher family, and the
// KeyedCipher that launches them. Each family file (aes_ttable_smem32.cu, ...) includes this after
// choosing its table layout and instantiates KeyedCipherImpl for its key sizes.
//
// Constant-time position: the family's. The kernels add no secret-dependent branch or index of
// their own: which blocks a thread touches depends on lengths and indices only, counters and XTS
// tweaks use counter.h, GHASH uses gf128.h's constant-time multiplier with powers of H as
// operands (indexed by lane number, which is public).
//
// A family (one per variant: aes_ttable_smem32.cuh, aes_bitsliced.cuh, camellia_ttable_smem.cuh,
// sc2000_table_smem.cuh, camellia_sbox_smem32.cu) supplies
//   using Cipher;                          a BlockCipher from modes/ciphers.hpp
//   static Cipher make_host(key, key_len); key schedule expanded on the host (kernel parameter)
//   static constexpr size_t smem_bytes(bool decrypt);
//   __device__ static void fill(uint32_t* smem, bool decrypt);
//   __device__ static void bind(Cipher&, uint32_t* smem, bool decrypt);
//   __device__ static void prepare(Cipher&, uint32_t* smem, bool decrypt);
// and, where the batch executor (cuda_batch.cu) runs it, which uploads raw keys,
//   __device__ static void expand(Cipher&, key, key_len);  the same schedule made on the device.
// fill runs in every thread of a CTA before a __syncthreads() and copies the tables into shared
// memory; bind points one thread's cipher at them. prepare, what the kernels here call, is fill
// and bind, and for Camellia and SC2000 also stores the key size as a literal into the copy of
// the schedule, so that round loops unroll and round keys are read straight from the parameter
// bank (the batch kernels call fill and bind themselves: their schedules are read from global
// memory).
//
// Work layout of the parallel kernels: a warp owns a tile of 32 * kSteps consecutive blocks and
// lane L takes blocks L, L + 32, L + 64, ... of it, so every 16-byte load and store of a warp
// covers 512 contiguous bytes. Tiles are handed out grid-stride over a grid sized to fill the GPU.
// Threads per CTA, steps per tile and group sizes come from a launch policy (launch_policy.hpp),
// a template argument of every kernel; a cipher that enciphers kBlocksPerCall blocks per call
// (bitsliced AES) gets at least that many steps per tile.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "backends/cuda/keyed_cipher.hpp"
#include "backends/cuda/launch_policy.hpp"
#include "core/counter.h"
#include "modes/ciphers.hpp"
#include "modes/modes.hpp"

namespace gpucrypt::cuda {

// Launch support (device.cu): CTAs of one kernel that fit on one SM, cached per device; raises
// the kernel's dynamic shared-memory limit first when it needs more than 48 KiB.
int max_resident_blocks(const void* kernel, size_t smem_bytes, int threads_per_block);

namespace kernels {

// A block as one 16-byte vector and back (one 16-byte load or store instead of four).
__device__ __forceinline__ gc_block block_of(uint4 v) {
  gc_block b;
  b.w[0] = v.x;
  b.w[1] = v.y;
  b.w[2] = v.z;
  b.w[3] = v.w;
  return b;
}
__device__ __forceinline__ uint4 vector_of(gc_block b) { return make_uint4(b.w[0], b.w[1], b.w[2], b.w[3]); }

__device__ __forceinline__ gc_block load16(const uint8_t* p) { return block_of(*reinterpret_cast<const uint4*>(p)); }

__device__ __forceinline__ void store16(uint8_t* p, gc_block b) {
  *reinterpret_cast<uint4*>(p) = vector_of(b);
}

// out[0..n) = in[0..n) ^ keystream bytes: the ragged last block of CTR and CFB.
__device__ inline void xor_partial_block(const uint8_t* in, uint8_t* out, size_t n, gc_block keystream) {
  uint8_t bytes[16];
  gc_block_store(bytes, keystream);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(in[i] ^ bytes[i]);
}

// The ragged last block zero-padded (GCM hashes it that way).
__device__ inline gc_block load_partial_block(const uint8_t* in, size_t n) {
  uint8_t bytes[16] = {};
  for (size_t i = 0; i < n; ++i) bytes[i] = in[i];
  return gc_block_load(bytes);
}

// Loads and stores at any address: the batch executor's packed messages and AAD start anywhere;
// aligned addresses take the 16-byte access.
__device__ __forceinline__ gc_block load16_any(const uint8_t* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15) == 0 ? load16(p) : gc_block_load(p);
}
__device__ __forceinline__ void store16_any(uint8_t* p, gc_block b) {
  if ((reinterpret_cast<uintptr_t>(p) & 15) == 0) store16(p, b);
  else gc_block_store(p, b);
}

// The accesses of the per-warp routines below (not modes::load_block, which reads bytes):
// kUnaligned for the batch's packed messages, the 16-byte access alone for the bulk kernels'
// buffers (the backend allocates and offsets them in whole blocks).
template <bool kUnaligned>
__device__ __forceinline__ gc_block tile_load(const uint8_t* p) {
  if constexpr (kUnaligned) return load16_any(p);
  else return load16(p);
}
template <bool kUnaligned>
__device__ __forceinline__ void tile_store(uint8_t* p, gc_block b) {
  if constexpr (kUnaligned) store16_any(p, b);
  else store16(p, b);
}

// t * x^32 in XTS's little-endian convention, i.e. 32 applications of gc_xts_mul_alpha: a word
// shift plus the fold of the word shifted out (x^128 = x^7 + x^2 + x + 1; the 39-bit product
// of the word with 0x87 cannot overflow again). A lane's blocks are 32 apart, so its tweak walks
// by x^32. Host-callable so tests can check it against 32 doublings.
__host__ __device__ inline gc_block xts_mul_x32(gc_block t) {
  const uint32_t out = t.w[3];
  gc_block r;
  r.w[3] = t.w[2];
  r.w[2] = t.w[1];
  r.w[1] = t.w[0] ^ (out >> 31) ^ (out >> 30) ^ (out >> 25);
  r.w[0] = out ^ (out << 1) ^ (out << 2) ^ (out << 7);
  return r;
}

__device__ __forceinline__ gc_gf128 warp_xor(gc_gf128 v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    v.hi ^= __shfl_xor_sync(0xffffffffu, v.hi, offset);
    v.lo ^= __shfl_xor_sync(0xffffffffu, v.lo, offset);
  }
  return v;
}

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x % 32; }
template <int kThreads>
__device__ __forceinline__ uint64_t global_warp() {
  return (static_cast<uint64_t>(blockIdx.x) * kThreads + threadIdx.x) / 32;
}
template <int kThreads>
__device__ __forceinline__ uint64_t num_warps() {
  return static_cast<uint64_t>(gridDim.x) * (kThreads / 32);
}

// Steps per tile: the policy's, or the cipher's call width where that is larger.
constexpr int steps_for(int policy_steps, int blocks_per_call) {
  return policy_steps > blocks_per_call ? policy_steps : blocks_per_call;
}

// Families with nothing to prepare per CTA may say `static constexpr bool kReadKeyInPlace = true;`:
// their kernels then read the key schedule straight from the __grid_constant__ parameter (the
// 7.5 KiB round-key masks of bitsliced AES stay in the parameter bank instead of being copied).
template <class Family, class = void>
struct reads_key_in_place : std::false_type {};
template <class Family>
struct reads_key_in_place<Family, std::void_t<decltype(Family::kReadKeyInPlace)>>
    : std::bool_constant<Family::kReadKeyInPlace> {};

// Families whose GCM seal runs faster as two passes, the bulk CTR kernel and then the GHASH-only
// pass over the ciphertext it wrote (ghash.cu), than as the fused GCM kernel below, say
// `static constexpr bool kGcmSealInTwoPasses = true;` (GcmKey::enqueue takes that route where
// GCM's counter allows; aes_bitsliced.cuh says where it was measured).
template <class Family, class = void>
struct seals_gcm_in_two_passes : std::false_type {};
template <class Family>
struct seals_gcm_in_two_passes<Family, std::void_t<decltype(Family::kGcmSealInTwoPasses)>>
    : std::bool_constant<Family::kGcmSealInTwoPasses> {};

// The cipher a kernel runs: the parameter itself, or a copy that prepare() points at the CTA's
// tables in shared memory.
template <class Family>
__device__ __forceinline__ const typename Family::Cipher& prepared_cipher(const typename Family::Cipher& param,
                                                                        typename Family::Cipher& copy,
                                                                        uint32_t* shared, bool decrypt) {
  if constexpr (reads_key_in_place<Family>::value) {
    return param;
  } else {
    copy = param;
    Family::prepare(copy, shared, decrypt);
    return copy;
  }
}

template <class Cipher, bool kDecrypt>
__device__ __forceinline__ void run_cipher(const Cipher& cipher, gc_block* lanes) {
  if constexpr (kDecrypt) {
    cipher.decrypt_blocks(lanes);
  } else {
    cipher.encrypt_blocks(lanes);
  }
}

// Ciphers that can leave their first and last AddRoundKey to the caller say so by having
// encrypt_blocks_unkeyed (with decrypt_blocks_unkeyed, first_round_key and last_round_key):
// aes_bitsliced8, whose XTS adds them with the tweak (below).
template <class Cipher, class = void>
struct leaves_outer_round_keys : std::false_type {};
template <class Cipher>
struct leaves_outer_round_keys<Cipher, std::void_t<decltype(std::declval<const Cipher&>().encrypt_blocks_unkeyed(
                                           static_cast<gc_block*>(nullptr)))>> : std::true_type {};

// The cipher on a lane's blocks, less the outer round keys where it leaves them (kUnkeyed).
template <class Cipher, bool kDecrypt, bool kUnkeyed>
__device__ __forceinline__ void run_cipher_maybe_unkeyed(const Cipher& cipher, gc_block* lanes) {
  if constexpr (!kUnkeyed) {
    run_cipher<Cipher, kDecrypt>(cipher, lanes);
  } else if constexpr (kDecrypt) {
    cipher.decrypt_blocks_unkeyed(lanes);
  } else {
    cipher.encrypt_blocks_unkeyed(lanes);
  }
}

// ---- the bulk kind: ECB, CTR, CBC and CFB decryption ----------------------------------------

// A bulk operation is its shape (mode_kind.hpp): what the cipher takes for block i, what its
// output is XORed with, which way it runs. The tile below is written over the shape, so every
// mode of the bulk kind runs on it (KeyedCipherImpl::bulk and the batch pick the shape from the
// mode's traits); each shape is its own instantiation, as each mode was.
using modes::Bulk;
using modes::BulkInput;
using modes::BulkXor;

template <class Cipher>
struct BulkParams {
  Cipher cipher;
  const uint8_t* in;
  uint8_t* out;
  uint64_t len;
  gc_block iv;  // the start value: CTR's counter of block 0; CBC/CFB: the ciphertext block before block 0
};

template <class Cipher, class P>
constexpr int bulk_steps() { return steps_for(P::kBulkSteps, Cipher::kBlocksPerCall); }

// Ciphers that make CTR's keystream for a lane's blocks themselves, from the counter of its first
// one (`ctr_keystream_stride32(first, blocks)`: counters first + 32 i, i < kBlocksPerCall), say so
// by having that method: aes_bitsliced8 builds the counters straight into its bit planes.
template <class Cipher, class = void>
struct makes_lane_keystream : std::false_type {};
template <class Cipher>
struct makes_lane_keystream<Cipher, std::void_t<decltype(std::declval<const Cipher&>().ctr_keystream_stride32(
                                        gc_block{}, static_cast<gc_block*>(nullptr)))>> : std::true_type {};

// One tile of a warp (see "Work layout" above), shared by bulk_kernel and the batch executor's
// kernel (cuda_batch_kernels.cuh), which runs the tiles of each piece of its messages:
// lane L takes blocks first + L + 32 s, s < the policy's steps, of the message at in/out of `len`
// bytes, and writes those below `end` (the message's block count for the bulk kernel, the end of
// the piece for the batch). Block indices count from the message's first block, whose predecessor
// is `iv` (CTR: the counter of block 0; CBC/CFB: the ciphertext block before block 0).
template <class Cipher, class P, Bulk kMode, bool kUnaligned>
__device__ __forceinline__ void bulk_tile(const Cipher& cipher, const uint8_t* in, uint8_t* out, uint64_t len,
                                          gc_block iv, uint64_t first, uint64_t end) {
  constexpr bool kDecrypt = modes::bulk_decrypts(kMode);
  constexpr BulkInput kInput = modes::bulk_input(kMode);
  constexpr BulkXor kXor = modes::bulk_xor(kMode);
  constexpr int kLanes = Cipher::kBlocksPerCall;
  constexpr int kBulkSteps = bulk_steps<Cipher, P>();
  static_assert(kBulkSteps % kLanes == 0, "a tile step must fill whole cipher calls");
  const uint64_t num_full = len / 16;
  const unsigned lane = lane_id();
  gc_block x[kBulkSteps];  // cipher input, then output
  // What the cipher output is XORed with: loaded ahead of the cipher (latency hidden behind it),
  // except for wide ciphers (bitsliced AES, 32 blocks per lane), whose registers hold the
  // cipher state: they load it block by block as they store.
  constexpr bool kLoadLate = kLanes > 4;
  gc_block data[kLoadLate ? 1 : kBulkSteps];
  auto input_or_zero = [&](uint64_t i) {
    return i < num_full ? tile_load<kUnaligned>(in + 16 * i) : modes::zero_block();
  };
  // The block before i: the IV for block 0, else ciphertext (always a full block).
  auto previous = [&](uint64_t i) { return i == 0 ? iv : input_or_zero(i - 1); };
  auto data_for = [&](uint64_t i) {
    if constexpr (kXor == BulkXor::previous) return previous(i);  // CBC decryption
    else return input_or_zero(i);  // CTR, CFB decryption: P_i = E(C_{i-1}) ^ C_i
  };
  // What every keystream block still needs added (zero but for a lane keystream that leaves out
  // its last round key): added with the data, it merges into that XOR, one LOP3 a word.
  gc_block keystream_key = modes::zero_block();
  if constexpr (kInput == BulkInput::counter && makes_lane_keystream<Cipher>::value) {
    // The lane's blocks of one call are 32 apart, and so are their counters.
    const gc_block lane_counter = gc_ctr128_add(iv, first + lane);
    keystream_key = cipher.last_round_key();
#pragma unroll
    for (int s = 0; s < kBulkSteps; s += kLanes)
      cipher.ctr_keystream_stride32(s == 0 ? lane_counter : gc_ctr128_add(lane_counter, 32 * s), x + s);
  } else {
#pragma unroll
    for (int s = 0; s < kBulkSteps; ++s) {
      const uint64_t i = first + lane + 32 * s;
      if constexpr (kInput == BulkInput::counter) {  // CTR
        x[s] = gc_ctr128_add(iv, i);
      } else if constexpr (kInput == BulkInput::previous) {  // CFB decryption
        x[s] = previous(i);
      } else {  // ECB, CBC decryption
        x[s] = input_or_zero(i);
      }
      if constexpr (kXor != BulkXor::none && !kLoadLate) data[s] = data_for(i);
    }
#pragma unroll
    for (int s = 0; s < kBulkSteps; s += kLanes) run_cipher<Cipher, kDecrypt>(cipher, x + s);
  }
  // Block i of step s, a full block below `end`. In a whole tile (below) every block is one, so
  // what it reads needs no bounds check either.
  auto store_full = [&](int s, uint64_t i, auto whole_tile) {
    if constexpr (kXor == BulkXor::none) {  // ECB
      tile_store<kUnaligned>(out + 16 * i, x[s]);
    } else if constexpr (!kLoadLate) {
      tile_store<kUnaligned>(out + 16 * i, gc_block_xor(x[s], data[s]));
    } else if constexpr (decltype(whole_tile)::value) {
      const gc_block d = kXor == BulkXor::previous ? (i == 0 ? iv : tile_load<kUnaligned>(in + 16 * (i - 1)))
                                                   : tile_load<kUnaligned>(in + 16 * i);
      tile_store<kUnaligned>(out + 16 * i, gc_block_xor(x[s], gc_block_xor(d, keystream_key)));
    } else {
      tile_store<kUnaligned>(out + 16 * i, gc_block_xor(x[s], gc_block_xor(data_for(i), keystream_key)));
    }
  };
  // Every tile but a message's last (or a piece's) is whole: the warp then stores without the
  // per-block bounds checks (five integer instructions a block, about 1% of bitsliced AES).
  const uint64_t tile_end = first + 32 * kBulkSteps;
  if (tile_end <= end && tile_end <= num_full) {
#pragma unroll
    for (int s = 0; s < kBulkSteps; ++s) store_full(s, first + lane + 32 * s, std::true_type{});
    return;
  }
#pragma unroll
  for (int s = 0; s < kBulkSteps; ++s) {
    const uint64_t i = first + lane + 32 * s;
    if (i >= end) continue;
    if (i < num_full) {
      store_full(s, i, std::false_type{});
    } else if constexpr (kXor != BulkXor::none) {
      // CTR/CFB only (ECB and CBC take whole blocks): the message's ragged end (i < end <= the block count)
      xor_partial_block(in + 16 * i, out + 16 * i, len - 16 * i, gc_block_xor(x[s], keystream_key));
    }
  }
}

template <class Family, class P, Bulk kMode>
__global__ void __launch_bounds__(P::kBulkThreads)
    bulk_kernel(const __grid_constant__ BulkParams<typename Family::Cipher> p) {
  using Cipher = typename Family::Cipher;
  constexpr bool kDecrypt = modes::bulk_decrypts(kMode);
  constexpr uint64_t kBulkTileBlocks = 32 * bulk_steps<Cipher, P>();
  extern __shared__ uint4 shared_words[];
  Cipher copy;
  const Cipher& cipher = prepared_cipher<Family>(p.cipher, copy, reinterpret_cast<uint32_t*>(shared_words), kDecrypt);
  __syncthreads();

  const uint64_t num_blocks = (p.len + 15) / 16;
  for (uint64_t tile = global_warp<P::kBulkThreads>(); tile * kBulkTileBlocks < num_blocks;
       tile += num_warps<P::kBulkThreads>())
    bulk_tile<Cipher, P, kMode, false>(cipher, p.in, p.out, p.len, p.iv, tile * kBulkTileBlocks, num_blocks);
}

// ---- XTS ------------------------------------------------------------------------------------

template <class Cipher>
struct XtsParams {
  Cipher cipher;
  const uint8_t* in;
  uint8_t* out;
  uint64_t len;
  uint64_t first_block;     // index of in[0] within the data unit
  gc_block encrypted_tweak; // T_0 = E_K2(tweak)
};

// A lane walks kXtsSteps blocks per tile by x^32 (cheap). A warp takes a run of consecutive
// tiles (xts_kernel), so its next tile continues the same walk: the only GF(2^128) multiply is
// the one that finds a lane's first tweak.
template <class Cipher, class P>
constexpr int xts_group() { return steps_for(P::kXtsGroup, Cipher::kBlocksPerCall); }
template <class Cipher, class P>
constexpr int xts_steps() { return steps_for(P::kXtsSteps, xts_group<Cipher, P>()); }

// One XTS tile of a warp: lane L enciphers blocks first + L + 32 s, s < the policy's steps, of
// those below num_bulk (the blocks before ciphertext stealing). `walk` holds the lane's tweak for
// its first block (walk.tweak) and moves it 32 blocks on (walk.advance()): one data unit's walk
// by x^32 (X32Walk, xts_tile below) or a walk across many units (XtsUnitWalk). On return `walk`
// is one tile later, where the warp's next tile starts when it walks a data unit tile by tile
// (the batch: a warp per message); a tile cut short by the end of the data leaves it earlier,
// which nothing then needs.
//
// Wide ciphers (8 or 32 blocks per lane) do not keep a second array of tweaks live across the
// cipher in registers. With kStashThreads (the kernel's block size; 0 where the caller does not
// say, as the batch) and a group of 8 blocks, the tweaks wait in shared memory instead (32 KiB for
// 256 threads, each thread its own slots, so no barrier): walking them again as the blocks are
// stored cost a lane a second walk per block, for data units a second tweak load and shift at
// every unit boundary. Otherwise (32-block groups: 128 KiB) they are walked again.
template <class Cipher, class P, bool kEncrypt, bool kUnaligned, int kStashThreads = 0, class Walk>
__device__ __forceinline__ void xts_tile_walk(const Cipher& cipher, Walk& walk, const uint8_t* in, uint8_t* out,
                                              uint64_t num_bulk, uint64_t first) {
  constexpr int kLanes = Cipher::kBlocksPerCall;
  constexpr int kXtsGroup = xts_group<Cipher, P>();
  constexpr int kXtsSteps = xts_steps<Cipher, P>();
  static_assert(kXtsGroup % kLanes == 0 && kXtsSteps % kXtsGroup == 0, "a group must fill whole cipher calls");
  constexpr bool kWide = kLanes > 4;
  constexpr bool kStash = kWide && kStashThreads > 0 && kStashThreads * kXtsGroup * 16 <= 32 * 1024;
  constexpr bool kRewalk = kWide && !kStash;
  __shared__ uint4 stash[kStash ? kStashThreads * kXtsGroup : 1];
  const unsigned lane = lane_id();
  // A cipher that leaves its outer round keys to us: they go in with the tweak, where each merges
  // into the XOR with it (one three-input LOP3 a word, where in bit planes they were XORs of
  // their own); zero, and folded away, for the others.
  constexpr bool kUnkeyed = leaves_outer_round_keys<Cipher>::value;
  gc_block key_in = modes::zero_block(), key_out = modes::zero_block();
  if constexpr (kUnkeyed) {
    key_in = kEncrypt ? cipher.first_round_key() : cipher.last_round_key();
    key_out = kEncrypt ? cipher.last_round_key() : cipher.first_round_key();
  }
  for (int s0 = 0; s0 < kXtsSteps; s0 += kXtsGroup) {
    if (first + 32 * s0 >= num_bulk) break;  // short data units
    gc_block x[kXtsGroup], tweaks[kWide ? 1 : kXtsGroup];
    const Walk group_walk = walk;
#pragma unroll
    for (int g = 0; g < kXtsGroup; ++g) {
      const uint64_t i = first + lane + 32 * (s0 + g);
      if constexpr (kStash) {
        stash[g * kStashThreads + threadIdx.x] = vector_of(walk.tweak);
      } else if constexpr (!kWide) {
        tweaks[g] = walk.tweak;
      }
      x[g] = gc_block_xor(gc_block_xor(i < num_bulk ? tile_load<kUnaligned>(in + 16 * i) : modes::zero_block(), key_in),
                          walk.tweak);
      walk.advance();
    }
#pragma unroll
    for (int g = 0; g < kXtsGroup; g += kLanes) run_cipher_maybe_unkeyed<Cipher, !kEncrypt, kUnkeyed>(cipher, x + g);
    Walk store_walk = group_walk;
#pragma unroll
    for (int g = 0; g < kXtsGroup; ++g) {
      const uint64_t i = first + lane + 32 * (s0 + g);
      gc_block t;
      if constexpr (kStash) {
        t = block_of(stash[g * kStashThreads + threadIdx.x]);
      } else if constexpr (kRewalk) {
        t = store_walk.tweak;
      } else {
        t = tweaks[g];
      }
      if (i < num_bulk) tile_store<kUnaligned>(out + 16 * i, gc_block_xor(x[g], gc_block_xor(t, key_out)));
      if constexpr (kRewalk) store_walk.advance();
    }
  }
}

// A lane's walk through one data unit: its blocks are 32 apart, so its tweak moves by x^32.
struct X32Walk {
  gc_block tweak;
  __device__ __forceinline__ void advance() { tweak = xts_mul_x32(tweak); }
};

// One XTS tile of a warp within one data unit, shared by xts_kernel and the batch executor's,
// from `tweak`, the lane's T_0 * alpha^(first + L); returns the lane's tweak one tile later.
template <class Cipher, class P, bool kEncrypt, bool kUnaligned, int kStashThreads = 0>
__device__ __forceinline__ gc_block xts_tile(const Cipher& cipher, gc_block tweak, const uint8_t* in, uint8_t* out,
                                             uint64_t num_bulk, uint64_t first) {
  X32Walk walk{tweak};
  xts_tile_walk<Cipher, P, kEncrypt, kUnaligned, kStashThreads>(cipher, walk, in, out, num_bulk, first);
  return walk.tweak;
}

template <class Family, class P, bool kEncrypt>
__global__ void __launch_bounds__(P::kXtsThreads)
    xts_kernel(const __grid_constant__ XtsParams<typename Family::Cipher> p) {
  using Cipher = typename Family::Cipher;
  constexpr uint64_t kXtsTileBlocks = 32 * xts_steps<Cipher, P>();
  extern __shared__ uint4 shared_words[];
  Cipher copy;
  const Cipher& cipher = prepared_cipher<Family>(p.cipher, copy, reinterpret_cast<uint32_t*>(shared_words), !kEncrypt);
  __syncthreads();

  const uint64_t num_full = p.len / 16;
  const uint64_t tail_len = p.len % 16;
  // With a ragged tail the last full block belongs to ciphertext stealing, done at the end.
  const uint64_t num_bulk = tail_len != 0 ? num_full - 1 : num_full;
  // Each warp enciphers a run of consecutive rows (32 blocks, one per lane), not every
  // num_warps-th tile: its next tile then starts where xts_tile's x^32 walk ends, with no GF(2^128)
  // multiply in the loop. With one there (tiles strided over the grid, the walk jumping by
  // alpha^(warps * tile)), ptxas gave the AES-256 T-table kernel 104 registers instead of 54.
  // Runs are cut by rows, not whole tiles, so that a 16 MiB data unit (IEEE 1619's largest) still
  // fills the GPU: in whole 1024-block tiles it was 1024 warps, 64 CTAs on 132 SMs, and ran at
  // 0.38x the CTR kernel (H200, 2026-11-28). launch_xts sizes the grid by kXtsMinRowsPerWarp.
  const uint64_t num_rows = (num_bulk + 31) / 32;
  const uint64_t warps = num_warps<P::kXtsThreads>(), warp = global_warp<P::kXtsThreads>();
  const uint64_t rows_each = num_rows / warps, one_more = num_rows % warps;  // the first one_more warps
  const uint64_t begin = warp * rows_each + (warp < one_more ? warp : one_more);
  const uint64_t end = begin + rows_each + (warp < one_more ? 1 : 0);
  if (begin < end) {
    const uint64_t run_end = 32 * end < num_bulk ? 32 * end : num_bulk;  // this warp's blocks end here
    gc_block lane_tweak = gc_xts_tweak_at(p.encrypted_tweak, p.first_block + 32 * begin + lane_id());
    for (uint64_t row = begin; row < end; row += kXtsTileBlocks / 32)
      lane_tweak = xts_tile<Cipher, P, kEncrypt, false, P::kXtsThreads>(cipher, lane_tweak, p.in, p.out, run_end,
                                                                      32 * row);
  }
  if (tail_len != 0 && blockIdx.x == 0 && threadIdx.x == 0) {
    // Ciphertext stealing over the last full and the partial block (xts.hpp).
    const uint64_t offset = 16 * num_bulk;
    modes::detail::xts_range<kEncrypt>(cipher, p.encrypted_tweak, p.first_block + num_bulk, p.in + offset,
                                       p.out + offset, 16 + tail_len);
  }
}

// ---- XTS over many data units (dm-crypt's sectors) --------------------------------------------

// Units of unit_blocks whole blocks back to back; unit u's block-0 tweak unit_tweaks[u] (E_K2 of
// its number, computed by the tweak key's ECB kernel before this launch: xts_units.cu).
template <class Cipher>
struct XtsUnitsParams {
  Cipher cipher;
  const uint8_t* in;
  uint8_t* out;
  uint64_t num_blocks;  // a whole number of units
  uint64_t unit_blocks;
  const gc_block* unit_tweaks;
};

// A lane's walk across data units: the unit and index j of its block, and its tweak
// T_u * alpha^j. Inside a unit the tweak moves by x^32 as X32Walk's; at a unit boundary it starts
// again from the next unit's tweak, j < 32 blocks in (one small shift without a branch,
// gc_xts_mul_alpha_pow_below32). The lanes of a warp cross boundaries at the same step (tiles start
// at multiples of 32 blocks), so the branch does not diverge for units of 32 blocks and more.
struct XtsUnitWalk {
  const gc_block* unit_tweaks;
  uint64_t unit_blocks, num_blocks;
  uint64_t unit, j;
  gc_block tweak;

  __device__ __forceinline__ void start(uint64_t block) {
    unit = block / unit_blocks;
    j = block - unit * unit_blocks;
    tweak = block < num_blocks ? gc_xts_tweak_at(unit_tweaks[unit], j) : modes::zero_block();
  }
  __device__ __forceinline__ void advance() {
    j += 32;
    if (j < unit_blocks) {
      tweak = xts_mul_x32(tweak);
      return;
    }
    if (unit_blocks >= 32) {  // at most one boundary in 32 blocks
      j -= unit_blocks;
      ++unit;
    } else {
      unit += j / unit_blocks;
      j %= unit_blocks;
    }
    tweak = unit * unit_blocks < num_blocks ? gc_xts_mul_alpha_pow_below32(unit_tweak(unit), static_cast<unsigned>(j))
                                            : modes::zero_block();
  }
  // One 16-byte load (a gc_block copy is four 4-byte loads); the tweak array is cudaMalloc'd.
  __device__ __forceinline__ gc_block unit_tweak(uint64_t u) const {
    return block_of(__ldg(reinterpret_cast<const uint4*>(unit_tweaks) + u));
  }
};

// Units of exactly 32 blocks (512-byte sectors, dm-crypt's default): a warp's step is one whole
// unit, so lane L always holds block L of a unit and every step starts the next one, with tweak
// T_u * alpha^L. The walk has no branch, and the address of each step's tweak load does not wait
// on one: the compiler issues a group's tweak loads beside its input loads, where XtsUnitWalk's
// sat behind its boundary branch, one round trip to L2 a step. Past the last unit the walk reads
// the last unit's tweak again (its blocks are never stored).
struct XtsSectorWalk {
  static constexpr uint64_t kUnitBlocks = 32;
  const gc_block* unit_tweaks;
  uint64_t last_unit;
  uint64_t unit;
  unsigned j;
  gc_block tweak;

  __device__ __forceinline__ void start(uint64_t block) {
    unit = block / kUnitBlocks;
    j = static_cast<unsigned>(block % kUnitBlocks);
    tweak = tweak_of(unit);
  }
  __device__ __forceinline__ void advance() { tweak = tweak_of(++unit); }
  __device__ __forceinline__ gc_block tweak_of(uint64_t u) const {
    const uint64_t clamped = u < last_unit ? u : last_unit;
    return gc_xts_mul_alpha_pow_below32(block_of(__ldg(reinterpret_cast<const uint4*>(unit_tweaks) + clamped)), j);
  }
};

// One tile of a warp over units: xts_tile_walk with the walk across units (kSectors: units of
// 32 blocks, XtsSectorWalk; any other length, XtsUnitWalk).
template <class Cipher, class P, bool kEncrypt, bool kSectors>
__device__ __forceinline__ void xts_units_tile(const Cipher& cipher, const XtsUnitsParams<Cipher>& p, uint64_t first) {
  if constexpr (kSectors) {
    XtsSectorWalk walk{p.unit_tweaks, p.num_blocks / XtsSectorWalk::kUnitBlocks - 1};
    walk.start(first + lane_id());
    xts_tile_walk<Cipher, P, kEncrypt, false, P::kXtsThreads>(cipher, walk, p.in, p.out, p.num_blocks, first);
  } else {
    XtsUnitWalk walk{p.unit_tweaks, p.unit_blocks, p.num_blocks};
    walk.start(first + lane_id());
    xts_tile_walk<Cipher, P, kEncrypt, false, P::kXtsThreads>(cipher, walk, p.in, p.out, p.num_blocks, first);
  }
}

template <class Family, class P, bool kEncrypt, bool kSectors>
__global__ void __launch_bounds__(P::kXtsThreads)
    xts_units_kernel(const __grid_constant__ XtsUnitsParams<typename Family::Cipher> p) {
  using Cipher = typename Family::Cipher;
  constexpr uint64_t kXtsTileBlocks = 32 * xts_steps<Cipher, P>();
  extern __shared__ uint4 shared_words[];
  Cipher copy;
  const Cipher& cipher = prepared_cipher<Family>(p.cipher, copy, reinterpret_cast<uint32_t*>(shared_words), !kEncrypt);
  __syncthreads();
  for (uint64_t tile = global_warp<P::kXtsThreads>(); tile * kXtsTileBlocks < p.num_blocks;
       tile += num_warps<P::kXtsThreads>())
    xts_units_tile<Cipher, P, kEncrypt, kSectors>(cipher, p, tile * kXtsTileBlocks);
}

// ---- the serial kind: CBC/CFB encryption, OFB: one message, one thread -----------------------

template <class Cipher>
struct SerialParams {
  Cipher cipher;
  const uint8_t* in;
  uint8_t* out;
  uint64_t len;
  gc_block iv;
  const gc_block* iv_in;  // device; overrides iv when set
  gc_block* iv_out;       // device; receives the final chaining value when set
  SerialMode mode;        // modes::serial_op of the mode and direction
};

// One message of a serial mode on one thread, shared by serial_kernel and the batch executor's
// (a thread per message): loads are issued kSerialBatch blocks ahead of the chain, one memory
// latency per batch instead of one per block, and the modes' functions run on the batch in local
// memory; the mode's own work is its traits' (modes::serial_blocks and serial_tail pick it by
// `mode`). A whole message may end in a partial block (CFB/OFB). Returns the final chaining value.
template <class Cipher, class P, bool kUnaligned>
__device__ __forceinline__ gc_block serial_message(const Cipher& cipher, SerialMode mode, gc_block chain,
                                                   const uint8_t* in, uint8_t* out, uint64_t len) {
  const uint64_t num_full = len / 16;
  constexpr int kBatch = P::kSerialBatch;
  gc_block batch[kBatch];
  uint8_t* bytes = reinterpret_cast<uint8_t*>(batch);
  for (uint64_t first = 0; first < num_full; first += kBatch) {
    const size_t n = static_cast<size_t>(num_full - first < kBatch ? num_full - first : kBatch);
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (static_cast<size_t>(b) < n) batch[b] = tile_load<kUnaligned>(in + 16 * (first + b));
    chain = modes::serial_blocks(mode, cipher, chain, bytes, bytes, n);
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (static_cast<size_t>(b) < n) tile_store<kUnaligned>(out + 16 * (first + b), batch[b]);
  }
  const size_t tail_len = len % 16;
  if (tail_len != 0) {
    const uint64_t offset = 16 * num_full;
    modes::serial_tail(mode, cipher, chain, in + offset, out + offset, tail_len);
  }
  return chain;
}

template <class Family, class P>
__global__ void __launch_bounds__(P::kSerialThreads)
    serial_kernel(const __grid_constant__ SerialParams<typename Family::Cipher> p) {
  using Cipher = typename Family::Cipher;
  extern __shared__ uint4 shared_words[];
  Cipher copy;
  const Cipher& cipher = prepared_cipher<Family>(p.cipher, copy, reinterpret_cast<uint32_t*>(shared_words), false);  // all three encrypt
  __syncthreads();
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  const gc_block chain = serial_message<Cipher, P, false>(cipher, p.mode, p.iv_in != nullptr ? *p.iv_in : p.iv,
                                                           p.in, p.out, p.len);
  if (p.iv_out != nullptr) *p.iv_out = chain;
}

// ---- GCM: GCTR and GHASH in one pass --------------------------------------------------------

template <class Cipher>
struct GcmParams {
  Cipher cipher;
  const uint8_t* in;
  uint8_t* out;
  uint64_t len;
  uint64_t pad_blocks;  // zero blocks in front of the data so tiles divide it evenly
  uint64_t num_tiles;
  gc_gf128* tile_hashes;
  GcmSegment segment;
};

template <class Cipher, class P>
constexpr int gcm_group() { return steps_for(P::kGcmGroup, Cipher::kBlocksPerCall); }
template <class Cipher, class P>
constexpr int gcm_steps() { return steps_for(P::kGcmSteps, gcm_group<Cipher, P>()); }

// What a GCM tile hashes: the ciphertext it writes (sealing), the ciphertext it reads (the bulk
// kernel's decryption), or nothing (the batch's deciphering pass after its tags verified).
enum class GcmTileHash { output, input, none };

// The first step (row of 32 blocks) of tile `tile` that holds a message block, with `pad_blocks`
// zero blocks in front of the message: the rows before it are all padding, which GHASH from zero
// passes through unchanged, so a message much shorter than a tile skips them.
template <int kSteps>
__device__ __forceinline__ int first_live_step(uint64_t pad_blocks, uint64_t tile) {
  const uint64_t tile_start = tile * 32 * kSteps;
  const uint64_t pad_rows = pad_blocks > tile_start ? (pad_blocks - tile_start) / 32 : 0;
  return static_cast<int>(pad_rows < kSteps ? pad_rows : kSteps);
}

// Block v of GCM's padded message, as the tile hashes read it: `pad_blocks` zero blocks in front
// of the message's num_full whole blocks, then its last tail_len bytes zero-padded to a block, and
// zero blocks past the end (gcm_tile_lane_sum, ghash_tile_lane_sum and ghash.cu's tensor-core pass
// all hash these blocks).
template <bool kUnaligned>
__device__ __forceinline__ gc_block padded_message_block(const uint8_t* data, uint64_t num_full, uint64_t tail_len,
                                                         uint64_t pad_blocks, uint64_t v) {
  const uint64_t i = v - pad_blocks;  // wraps for padding blocks, which fail both tests
  if (v >= pad_blocks && i < num_full) return tile_load<kUnaligned>(data + 16 * i);
  if (v >= pad_blocks && i == num_full && tail_len != 0) return load_partial_block(data + 16 * i, tail_len);
  return modes::zero_block();
}

// One GCM tile of a warp, shared by the bulk kernel below and the batch executor's
// (cuda_batch.cu): GCTR over the tile's blocks and, unless `hash` is none, the lane's part
// of the tile hash. The tile hash is GHASH from zero over the tile's 32 * S blocks (S = steps per
// lane) = sum over lanes L of (sum_j X_{L+32j} H^{32(S-1-j)}) * H^{32-L}: this returns the lane's
// inner sum (Horner with H^32); the caller multiplies by its lane power and XORs the lanes.
// Blocks are virtual: `pad_blocks` zero blocks stand in front of the message's `len` bytes so that
// tiles divide it evenly; they change nothing, since GHASH from zero stays zero through zero
// blocks. kSkipPadRows starts at the first row holding a message block (the batch's messages are
// short next to a tile, and each has its own padding); kUnaligned loads and stores through the
// alignment test (the batch's packed messages start anywhere).
template <class Cipher, class P, bool kSkipPadRows, bool kUnaligned>
__device__ __forceinline__ gc_gf128 gcm_tile_lane_sum(const Cipher& cipher, gc_block first_counter, gc_gf128 h_pow32,
                                                      GcmTileHash hash, const uint8_t* in, uint8_t* out, uint64_t len,
                                                      uint64_t pad_blocks, uint64_t tile) {
  constexpr int kLanes = Cipher::kBlocksPerCall;
  constexpr int kGcmGroup = gcm_group<Cipher, P>();
  constexpr int kGcmSteps = gcm_steps<Cipher, P>();
  constexpr uint64_t kGcmTileBlocks = 32 * kGcmSteps;
  static_assert(kGcmGroup % kLanes == 0 && kGcmSteps % kGcmGroup == 0, "a group must fill whole cipher calls");
  const uint64_t num_full = len / 16;
  const uint64_t tail_len = len % 16;
  const unsigned lane = lane_id();
  int first_step = 0;
  if constexpr (kSkipPadRows) first_step = first_live_step<kGcmSteps>(pad_blocks, tile) / kGcmGroup * kGcmGroup;
  gc_gf128 sum = gc_gf128_make(0, 0);
  for (int s0 = first_step; s0 < kGcmSteps; s0 += kGcmGroup) {
    // Input loaded ahead of the cipher, except for wide ciphers (see bulk_kernel).
    constexpr bool kLoadLate = kLanes > 4;
    gc_block keystream[kGcmGroup], data[kLoadLate ? 1 : kGcmGroup];
    auto load_data = [&](uint64_t v) { return padded_message_block<kUnaligned>(in, num_full, tail_len, pad_blocks, v); };
#pragma unroll
    for (int g = 0; g < kGcmGroup; ++g) {
      const uint64_t v = tile * kGcmTileBlocks + lane + 32 * (s0 + g);
      keystream[g] = gc_ctr32_add(first_counter, v - pad_blocks);
      if constexpr (!kLoadLate) data[g] = load_data(v);
    }
#pragma unroll
    for (int g = 0; g < kGcmGroup; g += kLanes) cipher.encrypt_blocks(keystream + g);
#pragma unroll
    for (int g = 0; g < kGcmGroup; ++g) {
      const uint64_t v = tile * kGcmTileBlocks + lane + 32 * (s0 + g);
      const uint64_t i = v - pad_blocks;
      const bool live = v >= pad_blocks;
      gc_block in_block;
      if constexpr (kLoadLate) in_block = load_data(v);
      else in_block = data[g];
      gc_block result = gc_block_xor(in_block, keystream[g]);
      gc_block ciphertext = hash == GcmTileHash::output ? result : in_block;
      if (live && i < num_full) {
        tile_store<kUnaligned>(out + 16 * i, result);
      } else if (live && i == num_full && tail_len != 0) {
        xor_partial_block(in + 16 * i, out + 16 * i, tail_len, keystream[g]);
        if (hash == GcmTileHash::output) {  // hash the ciphertext zero-padded, without keystream past its end
          uint8_t bytes[16];
          gc_block_store(bytes, ciphertext);
          for (int b = static_cast<int>(tail_len); b < 16; ++b) bytes[b] = 0;
          ciphertext = gc_block_load(bytes);
        }
      } else {
        ciphertext = modes::zero_block();
      }
      if (hash != GcmTileHash::none) sum = gc_gf128_xor(gc_gf128_mul(sum, h_pow32), gc_gf128_from_block(ciphertext));
    }
  }
  return sum;
}

// The lane's part of a tile hash without the cipher (GCM open hashes the received ciphertext
// before it deciphers): the same tiles and padding as gcm_tile_lane_sum, over 32 * kSteps blocks
// of `data`.
template <int kSteps, bool kSkipPadRows, bool kUnaligned>
__device__ __forceinline__ gc_gf128 ghash_tile_lane_sum(const uint8_t* data, uint64_t len, uint64_t pad_blocks,
                                                        uint64_t tile, gc_gf128 h_pow32) {
  constexpr uint64_t kTileBlocks = 32 * kSteps;
  const uint64_t num_full = len / 16, tail_len = len % 16;
  const unsigned lane = lane_id();
  int first_step = 0;
  if constexpr (kSkipPadRows) first_step = first_live_step<kSteps>(pad_blocks, tile);
  gc_gf128 sum = gc_gf128_make(0, 0);
#pragma unroll 4
  for (int step = first_step; step < kSteps; ++step) {
    const uint64_t v = tile * kTileBlocks + lane + 32 * step;
    const gc_block x = padded_message_block<kUnaligned>(data, num_full, tail_len, pad_blocks, v);
    sum = gc_gf128_xor(gc_gf128_mul(sum, h_pow32), gc_gf128_from_block(x));
  }
  return sum;
}

// The bulk GCM kernel: one segment of one message, a tile per warp, its hash to tile_hashes
// (ghash.cu folds them).
// The policy's minimum CTAs per SM caps registers: at 2 CTAs of 256 threads, 128 registers; unbounded,
// ptxas spends 254 on overlapping the constant-time multiplies (1 CTA, 8 warps per SM); at 3 CTAs it
// spills (nvcc 13.0).
template <class Family, class P>
__global__ void __launch_bounds__(P::kGcmThreads, P::kGcmMinCtasPerSm)
    gcm_kernel(const __grid_constant__ GcmParams<typename Family::Cipher> p) {
  using Cipher = typename Family::Cipher;
  extern __shared__ uint4 shared_words[];
  Cipher copy;
  const Cipher& cipher = prepared_cipher<Family>(p.cipher, copy, reinterpret_cast<uint32_t*>(shared_words), false);
  __syncthreads();

  const unsigned lane = lane_id();
  const GcmTileHash hash = p.segment.encrypt ? GcmTileHash::output : GcmTileHash::input;
  const gc_gf128* lane_pows = p.segment.lane_pow;
  const gc_gf128 lane_pow = lane_pows[lane];
  for (uint64_t tile = global_warp<P::kGcmThreads>(); tile < p.num_tiles; tile += num_warps<P::kGcmThreads>()) {
    gc_gf128 sum = gcm_tile_lane_sum<Cipher, P, false, false>(cipher, p.segment.first_counter, p.segment.h_pow32, hash,
                                                              p.in, p.out, p.len, p.pad_blocks, tile);
    sum = warp_xor(gc_gf128_mul(sum, lane_pow));
    if (lane == 0) p.tile_hashes[tile] = sum;
  }
}

// ---- launching --------------------------------------------------------------------------------

// Grid for `num_tasks` warp-sized tasks: enough CTAs for the work, at most what is resident on
// the whole GPU at once (the kernels loop grid-stride over the rest), or max_ctas_per_sm CTAs per
// SM where that is set and smaller: a kernel meant to run beside another on the same SMs (GCM's
// overlapped seal, gcm_overlap.cu) leaves the rest of each SM's registers to the other.
template <int kThreads>
int grid_for(const void* kernel, size_t smem_bytes, uint64_t num_tasks, int max_ctas_per_sm = 0) {
  constexpr int kWarpsPerBlock = kThreads / 32;
  const uint64_t wanted = (num_tasks + kWarpsPerBlock - 1) / kWarpsPerBlock;
  int per_sm = max_resident_blocks(kernel, smem_bytes, kThreads);
  if (max_ctas_per_sm > 0 && max_ctas_per_sm < per_sm) per_sm = max_ctas_per_sm;
  const uint64_t resident = static_cast<uint64_t>(per_sm) * static_cast<uint64_t>(current_sm_count());
  const uint64_t grid = wanted < resident ? wanted : resident;
  return static_cast<int>(grid == 0 ? 1 : grid);
}

template <int kThreads, class Params>
void launch(void (*kernel)(const Params), int grid, size_t smem_bytes, const Params& params,
            cudaStream_t stream, const char* what) {
  checked_launch(what, [&] { kernel<<<grid, kThreads, smem_bytes, stream>>>(params); });
}

// One launch per call, for one policy: what KeyedCipherImpl runs, and what bench/shape_sweep.cu
// times for several policies without instantiating every kernel of each.
template <class Family, class P, Bulk kMode>
void launch_bulk(const typename Family::Cipher& cipher, const uint8_t* in, uint8_t* out, size_t len, gc_block iv,
                 cudaStream_t stream, int max_ctas_per_sm = 0) {
  if (len == 0) return;
  using Cipher = typename Family::Cipher;
  constexpr bool kDecrypt = modes::bulk_decrypts(kMode);
  auto* kernel = bulk_kernel<Family, P, kMode>;
  const size_t smem = Family::smem_bytes(kDecrypt);
  const uint64_t num_blocks = (len + 15) / 16;
  constexpr uint64_t kTileBlocks = 32 * bulk_steps<Cipher, P>();
  const int grid = grid_for<P::kBulkThreads>(reinterpret_cast<const void*>(kernel), smem,
                                             (num_blocks + kTileBlocks - 1) / kTileBlocks, max_ctas_per_sm);
  BulkParams<Cipher> params{cipher, in, out, len, iv};
  launch<P::kBulkThreads>(kernel, grid, smem, params, stream, "block-cipher kernel launch");
}

template <class Family, class P, bool kEncrypt>
void launch_xts(const typename Family::Cipher& cipher, gc_block encrypted_tweak, uint64_t first_block,
                const uint8_t* in, uint8_t* out, size_t len, cudaStream_t stream) {
  if (len == 0) return;
  using Cipher = typename Family::Cipher;
  auto* kernel = xts_kernel<Family, P, kEncrypt>;
  const size_t smem = Family::smem_bytes(!kEncrypt);
  const uint64_t num_blocks = len / 16;
  // A warp's first tweak costs alpha^j by squarings (about 1,400 integer operations, kernel
  // above): worth it for 8 rows of blocks and more; at 8 rows a warp, 16 MiB fills an H200's 132 SMs.
  constexpr uint64_t kXtsMinRowsPerWarp = 8;
  const uint64_t num_rows = (num_blocks + 31) / 32;
  const int grid = grid_for<P::kXtsThreads>(reinterpret_cast<const void*>(kernel), smem,
                                            (num_rows + kXtsMinRowsPerWarp - 1) / kXtsMinRowsPerWarp);
  XtsParams<Cipher> params{cipher, in, out, len, first_block, encrypted_tweak};
  launch<P::kXtsThreads>(kernel, grid, smem, params, stream, "XTS kernel launch");
}

template <class Family, class P, bool kEncrypt>
void launch_xts_units(const typename Family::Cipher& cipher, const gc_block* unit_tweaks, uint64_t unit_blocks,
                      const uint8_t* in, uint8_t* out, size_t len, cudaStream_t stream) {
  if (len == 0) return;
  using Cipher = typename Family::Cipher;
  auto* kernel = unit_blocks == XtsSectorWalk::kUnitBlocks ? xts_units_kernel<Family, P, kEncrypt, true>
                                                           : xts_units_kernel<Family, P, kEncrypt, false>;
  const size_t smem = Family::smem_bytes(!kEncrypt);
  const uint64_t num_blocks = len / 16;
  constexpr uint64_t kTileBlocks = 32 * xts_steps<Cipher, P>();
  const int grid = grid_for<P::kXtsThreads>(reinterpret_cast<const void*>(kernel), smem,
                                            (num_blocks + kTileBlocks - 1) / kTileBlocks);
  XtsUnitsParams<Cipher> params{cipher, in, out, num_blocks, unit_blocks, unit_tweaks};
  launch<P::kXtsThreads>(kernel, grid, smem, params, stream, "XTS data-unit kernel launch");
}

template <class Family, class P>
void launch_serial(const typename Family::Cipher& cipher, SerialMode mode, gc_block iv, const gc_block* iv_in,
                   gc_block* iv_out, const uint8_t* in, uint8_t* out, size_t len, cudaStream_t stream) {
  auto* kernel = serial_kernel<Family, P>;
  const size_t smem = Family::smem_bytes(false);
  (void)max_resident_blocks(reinterpret_cast<const void*>(kernel), smem, P::kSerialThreads);  // sets the smem limit
  SerialParams<typename Family::Cipher> params{cipher, in, out, len, iv, iv_in, iv_out, mode};
  launch<P::kSerialThreads>(kernel, 1, smem, params, stream, "serial-mode kernel launch");
}

template <class Family, class P>
constexpr uint64_t gcm_tile_blocks_of() { return 32 * gcm_steps<typename Family::Cipher, P>(); }

template <class Family, class P>
void launch_gcm(const typename Family::Cipher& cipher, const GcmSegment& segment, const uint8_t* in, uint8_t* out,
                size_t len, gc_gf128* tile_hashes, cudaStream_t stream) {
  auto* kernel = gcm_kernel<Family, P>;
  const size_t smem = Family::smem_bytes(false);
  constexpr uint64_t kTileBlocks = gcm_tile_blocks_of<Family, P>();
  const uint64_t num_tiles = gcm_num_tiles(len, kTileBlocks);
  const uint64_t num_blocks = (len + 15) / 16;
  const int grid = grid_for<P::kGcmThreads>(reinterpret_cast<const void*>(kernel), smem, num_tiles);
  GcmParams<typename Family::Cipher> params{cipher, in, out, len, num_tiles * kTileBlocks - num_blocks, num_tiles,
                                            tile_hashes, segment};
  launch<P::kGcmThreads>(kernel, grid, smem, params, stream, "GCM kernel launch");
}

// The family whose kernel runs the serial modes (one block at a time): the family itself, or
// `using SerialFamily = ...` for wide ciphers, which would encipher 32 blocks to use one.
template <class Family, class = void>
struct serial_family {
  using type = Family;
};
template <class Family>
struct serial_family<Family, std::void_t<typename Family::SerialFamily>> {
  using type = typename Family::SerialFamily;
};

template <class Family, int kKeyBits, class P>
class KeyedCipherImpl final : public KeyedCipher {
 public:
  using Cipher = typename Family::Cipher;
  using SerialFamily = typename serial_family<Family>::type;

  explicit KeyedCipherImpl(const uint8_t* key) : cipher_(Family::make_host(key, kKeyBits / 8)) {
    if constexpr (kOwnSerialFamily) serial_cipher_ = SerialFamily::make_host(key, kKeyBits / 8);
  }
  ~KeyedCipherImpl() override {
    gpucrypt::secure_zero(&cipher_, sizeof cipher_);
    gpucrypt::secure_zero(&serial_cipher_, sizeof serial_cipher_);
  }

  // Every mode of the bulk kind by its shape (the mode's traits): one bulk kernel per shape.
  void bulk(Mode mode, Direction direction, gc_block start, const uint8_t* in, uint8_t* out, size_t len,
            cudaStream_t stream) const override {
    const bool found = modes::visit_op<modes::ModeKind::bulk>(mode, direction, [&](auto op) {
      using Op = decltype(op);
      launch_bulk<Family, P, Op::ModeTraits::bulk_op(Op::kDirection)>(cipher_, in, out, len, start, stream);
    });
    if (!found) throw std::logic_error("not a bulk mode and direction");
  }

  void xts(Direction direction, gc_block encrypted_tweak, uint64_t first_block, const uint8_t* in,
           uint8_t* out, size_t len, cudaStream_t stream) const override {
    if constexpr (kKeyBits == 192) {
      throw std::logic_error("XTS is defined for 128- and 256-bit keys only");
    } else {
      if (direction == Direction::encrypt) launch_xts<Family, P, true>(cipher_, encrypted_tweak, first_block, in, out, len, stream);
      else launch_xts<Family, P, false>(cipher_, encrypted_tweak, first_block, in, out, len, stream);
    }
  }

  void xts_units(Direction direction, const gc_block* unit_tweaks, uint64_t unit_blocks, const uint8_t* in,
                 uint8_t* out, size_t len, cudaStream_t stream) const override {
    if constexpr (kKeyBits == 192) {
      throw std::logic_error("XTS is defined for 128- and 256-bit keys only");
    } else {
      if (direction == Direction::encrypt) launch_xts_units<Family, P, true>(cipher_, unit_tweaks, unit_blocks, in, out, len, stream);
      else launch_xts_units<Family, P, false>(cipher_, unit_tweaks, unit_blocks, in, out, len, stream);
    }
  }

  void serial(SerialMode mode, gc_block iv, const gc_block* iv_in, gc_block* iv_out, const uint8_t* in,
              uint8_t* out, size_t len, cudaStream_t stream) const override {
    if constexpr (kOwnSerialFamily) {
      launch_serial<SerialFamily, P>(serial_cipher_, mode, iv, iv_in, iv_out, in, out, len, stream);
    } else {
      launch_serial<Family, P>(cipher_, mode, iv, iv_in, iv_out, in, out, len, stream);
    }
  }

  uint64_t gcm_tile_blocks() const override { return gcm_tile_blocks_of<Family, P>(); }
  bool gcm_seal_in_two_passes() const override { return seals_gcm_in_two_passes<Family>::value; }

  void ctr_beside(gc_block counter, const uint8_t* in, uint8_t* out, size_t len, int max_ctas_per_sm,
                  cudaStream_t stream) const override {
    launch_bulk<Family, P, Bulk::ctr>(cipher_, in, out, len, counter, stream, max_ctas_per_sm);
  }

  void gcm(const GcmSegment& segment, const uint8_t* in, uint8_t* out, size_t len,
           gc_gf128* tile_hashes, cudaStream_t stream) const override {
    launch_gcm<Family, P>(cipher_, segment, in, out, len, tile_hashes, stream);
  }

 private:
  // A second key schedule only for a family that runs the serial modes with another cipher.
  static constexpr bool kOwnSerialFamily = !std::is_same_v<SerialFamily, Family>;
  struct NoSerialCipher {};
  Cipher cipher_;
  std::conditional_t<kOwnSerialFamily, typename SerialFamily::Cipher, NoSerialCipher> serial_cipher_{};
};

// One factory per family: instantiates the kernels for the three key sizes under each launch
// policy, and picks the policy of the current device (launch_policy.hpp).
template <template <int> class Family, class P>
std::unique_ptr<KeyedCipher> make_keyed_with(const uint8_t* key, int key_bits) {
  switch (key_bits) {
    case 128: return std::make_unique<KeyedCipherImpl<Family<128>, 128, P>>(key);
    case 192: return std::make_unique<KeyedCipherImpl<Family<192>, 192, P>>(key);
    case 256: return std::make_unique<KeyedCipherImpl<Family<256>, 256, P>>(key);
  }
  throw std::invalid_argument("key size must be 128, 192 or 256 bits, got " + std::to_string(key_bits));
}

template <template <int> class Family>
std::unique_ptr<KeyedCipher> make_keyed(const uint8_t* key, int key_bits) {
  return with_launch_policy([&](auto policy) { return make_keyed_with<Family, decltype(policy)>(key, key_bits); });
}

}  // namespace kernels
}  // namespace gpucrypt::cuda
