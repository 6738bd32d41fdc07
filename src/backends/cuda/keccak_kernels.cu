// keccak_kernels.cu: the CUDA Keccak kernels (one thread per message or per tree leaf, lanes in
// registers, permutation from src/core/keccak.h) and the host side that feeds them: staging,
// batching, the size sort, and the final node of ParallelHash / KangarooTwelve trees.
//
// Constant-time: the kernels and the host code branch and index only on public values (lengths,
// buffer alignment, the chosen hash and its parameters); the permutation has no tables indexed
// by data (see src/core/keccak.h). Sorting by length reorders messages by their public length.
//
// Why one thread per message: Keccak-f[1600] is 25 independent 64-bit lanes per round, plenty of
// instruction-level parallelism inside one thread, and a thread that owns its state needs no
// shuffles or shared memory. The cost is uncoalesced loads (each thread walks its own message),
// which L1 absorbs: a thread reads its 136..168-byte block as 16-byte loads, and the lines it
// touches are reused by its next loads.
#include "backends/cuda/keccak_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <future>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/thread_pool.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/device.hpp"
#include "core/keccak.h"
#include "gpucrypt/cipher.hpp"
#include "hash/hash_internal.hpp"
#include "modes/block_cipher.hpp"

namespace gpucrypt::cuda {

namespace {

using hash::detail::Construction;
using hash::detail::HashSpec;

// The round counts the leaf kernels are instantiated for (hash::TreeShape's leaf_rounds).
constexpr int kSha3Rounds = 24;
constexpr int kTurboShakeRounds = 12;
constexpr int kThreadsPerBlock = 128;
// Host-memory calls move data in batches of at most this many bytes per pipeline slot: large
// enough that a PCIe transfer (about 1.2 ms at 55 GB/s) dwarfs the per-batch overhead.
constexpr size_t kStagingBytes = size_t{64} << 20;
constexpr size_t kMaxBatchMessages = size_t{1} << 20;
// Device-resident trees go in segments of this many input bytes, so the host's absorb of the
// final node (the bound on a whole tree) overlaps the leaves: 8192 KT leaves, about 60 us of GPU.
constexpr size_t kDeviceSegmentBytes = size_t{64} << 20;

// ------------------------------------------------------------------------------------------
// Device code

// xor_block XORs one full block (RATE bytes) into the state. Blocks at a 16-byte boundary take
// 16-byte loads; blocks at an 8-byte boundary (every other block of a 16-aligned message when
// RATE is an odd number of lanes) one 8-byte load and then 16-byte loads; anything else goes
// byte by byte through keccak.h's loader. The host side of this file puts every message at a
// 16-byte boundary, so the byte path serves only device-pointer callers with unaligned offsets.
template <int RATE>
__device__ __forceinline__ void xor_block(uint64_t* state, const uint8_t* __restrict__ block) {
  constexpr int kLanes = RATE / 8;
  const uintptr_t address = reinterpret_cast<uintptr_t>(block);
  if ((address & 15) == 0) {
#pragma unroll
    for (int i = 0; i + 1 < kLanes; i += 2) {
      const ulonglong2 pair = __ldg(reinterpret_cast<const ulonglong2*>(block + 8 * i));
      state[i] ^= pair.x;
      state[i + 1] ^= pair.y;
    }
    if (kLanes % 2 == 1)
      state[kLanes - 1] ^= __ldg(reinterpret_cast<const unsigned long long*>(block + 8 * (kLanes - 1)));
  } else if ((address & 7) == 0) {
    state[0] ^= __ldg(reinterpret_cast<const unsigned long long*>(block));
#pragma unroll
    for (int i = 1; i + 1 < kLanes; i += 2) {
      const ulonglong2 pair = __ldg(reinterpret_cast<const ulonglong2*>(block + 8 * i));
      state[i] ^= pair.x;
      state[i + 1] ^= pair.y;
    }
    if (kLanes % 2 == 0)
      state[kLanes - 1] ^= __ldg(reinterpret_cast<const unsigned long long*>(block + 8 * (kLanes - 1)));
  } else {
#pragma unroll
    for (int i = 0; i < kLanes; ++i) state[i] ^= gc_load_le64(block + 8 * i);
  }
}

// xor_final_block is gc_keccak_absorb_final without its permutation and with 8-byte loads where
// the tail is aligned: the tail (tail_len < RATE bytes), the domain byte after it and the final
// 0x80 of pad10*1.
template <int RATE>
__device__ __forceinline__ void xor_final_block(uint64_t* state, const uint8_t* __restrict__ tail,
                                                int tail_len, uint8_t domain) {
  constexpr int kLanes = RATE / 8;
  const bool aligned = (reinterpret_cast<uintptr_t>(tail) & 7) == 0;
#pragma unroll
  for (int i = 0; i < kLanes; ++i) {
    const int lane_start = 8 * i;
    uint64_t lane = 0;
    if (lane_start + 8 <= tail_len) {
      lane = aligned ? __ldg(reinterpret_cast<const unsigned long long*>(tail + lane_start))
                     : gc_load_le64(tail + lane_start);
    } else if (lane_start <= tail_len) {  // the lane that holds the domain byte
      lane = gc_keccak_load_partial_lane(tail + lane_start, tail_len - lane_start) ^
             (static_cast<uint64_t>(domain) << (8 * (tail_len - lane_start)));
    }
    if (lane_start + 8 == RATE) lane ^= 0x80ull << 56;
    state[i] ^= lane;
  }
}

// sponge_one hashes one message. Full blocks and the padded final block share one loop, so the
// kernel holds one inlined copy of the 24-round permutation on its hot path, not two.
template <int RATE, int ROUNDS>
__device__ __forceinline__ void sponge_one(const uint8_t* __restrict__ message, uint64_t len,
                                           uint8_t domain, uint8_t* __restrict__ out, uint64_t out_len) {
  uint64_t state[GC_KECCAK_NUM_LANES];
  gc_keccak_init(state);
  const uint64_t num_full_blocks = len / RATE;
  for (uint64_t block = 0; block <= num_full_blocks; ++block) {
    const uint8_t* block_start = message + block * RATE;
    if (block < num_full_blocks) {
      xor_block<RATE>(state, block_start);
    } else {
      xor_final_block<RATE>(state, block_start, static_cast<int>(len - block * RATE), domain);
    }
    gc_keccak_p1600(state, ROUNDS);
  }
  // Digests (a whole number of lanes, 8-aligned) are stored a lane at a time; other lengths and
  // outputs longer than one block go through keccak.h's squeeze.
  if (out_len <= static_cast<uint64_t>(RATE) && out_len % 8 == 0 && (reinterpret_cast<uintptr_t>(out) & 7) == 0) {
#pragma unroll
    for (int i = 0; i < RATE / 8; ++i)
      if (static_cast<uint64_t>(8 * i) < out_len) reinterpret_cast<uint64_t*>(out)[i] = state[i];
  } else {
    gc_keccak_squeeze(state, out, out_len, RATE, ROUNDS);
  }
}

// One thread per message of a ragged batch (see hash_many_device for the layout).
template <int RATE, int ROUNDS>
__global__ void __launch_bounds__(kThreadsPerBlock)
    hash_ragged_kernel(const uint8_t* __restrict__ data, const uint64_t* __restrict__ offsets,
                       const uint64_t* __restrict__ lens, uint64_t num_messages, uint8_t* __restrict__ out,
                       uint64_t out_len, uint8_t domain) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < num_messages; i += stride) {
    const uint64_t begin = offsets[i];
    const uint64_t len = lens != nullptr ? lens[i] : offsets[i + 1] - begin;
    sponge_one<RATE, ROUNDS>(data + begin, len, domain, out + i * out_len, out_len);
  }
}

// One thread per tree leaf: leaf i is data[i * leaf_len, min((i + 1) * leaf_len, range_len)).
template <int RATE, int ROUNDS>
__global__ void __launch_bounds__(kThreadsPerBlock)
    hash_leaves_kernel(const uint8_t* __restrict__ data, uint64_t range_len, uint64_t leaf_len,
                       uint64_t num_leaves, uint8_t* __restrict__ out, uint64_t cv_len, uint8_t domain) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < num_leaves; i += stride) {
    const uint64_t begin = i * leaf_len;
    const uint64_t len = range_len - begin < leaf_len ? range_len - begin : leaf_len;
    sponge_one<RATE, ROUNDS>(data + begin, len, domain, out + i * cv_len, cv_len);
  }
}

// ------------------------------------------------------------------------------------------
// Host helpers

unsigned grid_for(uint64_t num_threads) {
  const uint64_t blocks = (num_threads + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(std::min<uint64_t>(blocks, uint64_t{1} << 30));  // the rest by grid stride
}

// launch_ragged runs hash_ragged_kernel for a plain sponge (24 rounds) of the given rate.
void launch_ragged(int rate, const uint8_t* data, const uint64_t* offsets, const uint64_t* lens,
                   uint64_t num_messages, uint8_t* out, uint64_t out_len, uint8_t domain,
                   cudaStream_t stream) {
  if (num_messages == 0) return;
  const unsigned grid = grid_for(num_messages);
#define GC_LAUNCH_RAGGED(R)                                                                        \
  hash_ragged_kernel<R, kSha3Rounds><<<grid, kThreadsPerBlock, 0, stream>>>(data, offsets, lens,   \
                                                                          num_messages, out,      \
                                                                          out_len, domain)
  (void)cudaGetLastError();  // a stale error of an earlier call is not this launch's (cuda_check.hpp)
  switch (rate) {
    case GC_KECCAK_RATE_128: GC_LAUNCH_RAGGED(GC_KECCAK_RATE_128); break;
    case GC_KECCAK_RATE_224: GC_LAUNCH_RAGGED(GC_KECCAK_RATE_224); break;
    case GC_KECCAK_RATE_256: GC_LAUNCH_RAGGED(GC_KECCAK_RATE_256); break;
    case GC_KECCAK_RATE_384: GC_LAUNCH_RAGGED(GC_KECCAK_RATE_384); break;
    case GC_KECCAK_RATE_512: GC_LAUNCH_RAGGED(GC_KECCAK_RATE_512); break;
    default: throw std::logic_error("keccak_cuda: no kernel for rate " + std::to_string(rate));
  }
#undef GC_LAUNCH_RAGGED
  check(cudaGetLastError(), "hash_many kernel launch");
}

// launch_leaves runs hash_leaves_kernel: ParallelHash leaves are SHAKE (24 rounds), KT leaves
// TurboSHAKE (12 rounds), each at rate 168 or 136.
void launch_leaves(int rate, int rounds, const uint8_t* data, uint64_t range_len, uint64_t leaf_len,
                   uint64_t num_leaves, uint8_t* out, uint64_t cv_len, uint8_t domain, cudaStream_t stream) {
  if (num_leaves == 0) return;
  const unsigned grid = grid_for(num_leaves);
#define GC_LAUNCH_LEAVES(R, N)                                                                   \
  hash_leaves_kernel<R, N><<<grid, kThreadsPerBlock, 0, stream>>>(data, range_len, leaf_len,     \
                                                                  num_leaves, out, cv_len, domain)
  (void)cudaGetLastError();  // a stale error of an earlier call is not this launch's (cuda_check.hpp)
  if (rate == GC_KECCAK_RATE_128 && rounds == kSha3Rounds) {
    GC_LAUNCH_LEAVES(GC_KECCAK_RATE_128, kSha3Rounds);
  } else if (rate == GC_KECCAK_RATE_256 && rounds == kSha3Rounds) {
    GC_LAUNCH_LEAVES(GC_KECCAK_RATE_256, kSha3Rounds);
  } else if (rate == GC_KECCAK_RATE_128 && rounds == kTurboShakeRounds) {
    GC_LAUNCH_LEAVES(GC_KECCAK_RATE_128, kTurboShakeRounds);
  } else if (rate == GC_KECCAK_RATE_256 && rounds == kTurboShakeRounds) {
    GC_LAUNCH_LEAVES(GC_KECCAK_RATE_256, kTurboShakeRounds);
  } else {
    throw std::logic_error("keccak_cuda: no leaf kernel for rate " + std::to_string(rate));
  }
#undef GC_LAUNCH_LEAVES
  check(cudaGetLastError(), "tree leaf kernel launch");
}

// Buffers that only grow; contents are not kept across a growth.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }
  uint8_t* reserve(size_t len) {
    if (len > capacity_) {
      if (data_ != nullptr) check(cudaFreeHost(data_), "cudaFreeHost");
      data_ = nullptr;
      capacity_ = 0;
      void* p = nullptr;
      check_allocation(cudaHostAlloc(&p, len, cudaHostAllocDefault), "cudaHostAlloc (pinned staging)", len, true);
      data_ = static_cast<uint8_t*>(p);
      capacity_ = len;
    }
    return data_;
  }
  uint8_t* data() const { return data_; }

 private:
  uint8_t* data_ = nullptr;
  size_t capacity_ = 0;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }
  uint8_t* reserve(size_t len) {
    if (len > capacity_) {
      if (data_ != nullptr) check(cudaFree(data_), "cudaFree");
      data_ = nullptr;
      capacity_ = 0;
      void* p = nullptr;
      check_allocation(cudaMalloc(&p, len), "cudaMalloc", len);
      data_ = static_cast<uint8_t*>(p);
      capacity_ = len;
    }
    return data_;
  }

 private:
  uint8_t* data_ = nullptr;
  size_t capacity_ = 0;
};

// A pipeline slot: its own stream, the buffers of one batch, and which batch it holds. Two
// slots alternate, so the host fills one while the GPU works on the other.
struct Slot {
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  PinnedBuffer host_in, host_meta, host_out;
  DeviceBuffer dev_in, dev_meta, dev_out;
  bool pending = false;  // work queued whose results the host has not collected yet
  size_t first = 0;      // hash_many: first sorted position of the batch; trees: first leaf
  size_t count = 0;      // messages or leaves in the batch
};

struct DeviceContext {
  std::mutex mutex;  // one call at a time per device
  Slot slots[2];

  // Drops whatever a call that threw left behind: waits for its GPU work, forgets its batches.
  void reset() {
    for (Slot& slot : slots) {
      check(cudaStreamSynchronize(slot.stream), "cudaStreamSynchronize");
      slot.pending = false;
    }
  }
};

// context_for returns the device's context, creating it (on the current device, which must be
// `device`) at first use. Contexts are never destroyed: freeing streams and pinned memory from
// static destructors races with the CUDA runtime's own teardown at process exit.
DeviceContext& context_for(int device) {
  static std::mutex registry_mutex;
  static std::vector<DeviceContext*>& contexts = *new std::vector<DeviceContext*>();
  std::lock_guard<std::mutex> lock(registry_mutex);
  if (contexts.size() <= static_cast<size_t>(device)) contexts.resize(static_cast<size_t>(device) + 1, nullptr);
  if (contexts[device] == nullptr) {
    auto* context = new DeviceContext();
    for (Slot& slot : context->slots) {
      check(cudaStreamCreateWithFlags(&slot.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      check(cudaEventCreateWithFlags(&slot.done, cudaEventDisableTiming), "cudaEventCreate");
    }
    contexts[device] = context;
  }
  return *contexts[device];
}

// Throws DeviceError unless `index` names a CUDA device (the messages Keccak callers see).
void require_device_index(int index) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw DeviceError(std::string("no usable CUDA device: ") + cudaGetErrorString(status));
  }
  if (index < 0 || index >= count)
    throw DeviceError("cuda:" + std::to_string(index) + " does not exist (" + std::to_string(count) +
                      " CUDA device" + (count == 1 ? "" : "s") + ")");
}

size_t round_up_16(size_t len) { return (len + 15) & ~size_t{15}; }

// ------------------------------------------------------------------------------------------
// hash_many

struct SpongeShape {
  int rate;
  uint8_t domain;
};

SpongeShape sponge_shape(const HashSpec& spec) {
  switch (spec.construction) {
    case Construction::plain_sponge:
      return {static_cast<int>(spec.info.rate), spec.domain};
    case Construction::cshake:  // hash_many takes no N or S, and cSHAKE with both empty is SHAKE
      return {static_cast<int>(spec.info.rate), GC_KECCAK_DOMAIN_SHAKE};
    default:
      throw std::invalid_argument(spec.info.name +
                                  " hashes one input as a tree: use tree_hash (gpucrypt.hash), not hash_many");
  }
}

// longest_first returns message indices sorted by length, longest first (stable), so that the
// 32 threads of a warp run about the same number of blocks. Equal lengths keep their order.
std::vector<size_t> longest_first(const size_t* lens, size_t num_messages) {
  std::vector<size_t> order(num_messages);
  std::iota(order.begin(), order.end(), size_t{0});
  if (!std::all_of(lens, lens + num_messages, [&](size_t len) { return len == lens[0]; }))
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lens[a] > lens[b]; });
  return order;
}

// ------------------------------------------------------------------------------------------
// Trees

// The tree's shape and leaf rules are src/hash's (hash::tree_shape), its final node a src/hash
// context (hash::create_tree_hash): this file hashes whole leaves only.
using hash::TreeShape;

std::unique_ptr<hash::HashContext> create_final_node(std::string_view name, const HashParams& params) {
  const HashSpec& spec = hash::detail::find_spec(name);
  if (spec.construction != Construction::parallel_hash && spec.construction != Construction::kangaroo_twelve)
    throw std::invalid_argument(spec.info.name + " is not a tree hash: use hash_many for sha3/shake/keccak/cshake");
  return hash::create_tree_hash(name, params);  // checks the parameters as create_hash does
}

// The tree's input: host memory, or device memory from which the host reads small pieces.
struct TreeInput {
  const uint8_t* data;
  size_t len;
  bool on_device;
  bool page_locked = false;  // host memory the GPU can read in place: no staging copy

  void copy_to_host(size_t begin, size_t count, uint8_t* dst) const {
    if (count == 0) return;
    if (on_device) {
      check(cudaMemcpy(dst, data + begin, count, cudaMemcpyDeviceToHost), "cudaMemcpy (tree input)");
    } else {
      std::memcpy(dst, data + begin, count);
    }
  }
};

// feed_node puts input[begin, begin + count) into the final node through host memory.
void feed_node(hash::HashContext& node, const TreeInput& input, size_t begin, size_t count) {
  if (count == 0) return;
  std::vector<uint8_t> bytes(count);
  input.copy_to_host(begin, count, bytes.data());
  node.update(bytes.data(), count);
  modes::secure_zero(bytes.data(), count);
}

// hash_leaves_into hashes the whole leaves of input[begin, begin + range_len) (range_len a multiple
// of leaf_len) on the GPU and hands their chaining values, in order, to `take(cvs, first_leaf,
// count)`: a tree's final node absorbs them (tree_hash), or they are copied out (tree_leaves).
//
// The final node's absorb is serial (one sponge over every chaining value: 4 MiB for a 1 GiB
// KT128 tree, about 25 000 permutations on one core) and is what bounds a whole tree, so it is
// overlapped with everything else: segments alternate between the two slots, and while segment
// k's chaining values are absorbed the GPU hashes segment k + 1. A slot's chaining values are
// overwritten only after their absorb finished. Device-resident input goes in segments too
// (kDeviceSegmentBytes), so that the absorb starts long before the last leaf is hashed, and
// this thread absorbs: it has nothing else to do, and a thread started per segment cost as much
// again (KT128 of 1 GiB: 10.3 ms median against 5.6 ms for the absorb alone, H200 host,
// 2026-11-27). Host input is absorbed on a thread of its own, because this thread stages
// segment k + 2 meanwhile (pageable input, copied into page-locked memory; page-locked input is
// copied to the GPU in place). A sink that only copies the values out (tree_leaves: 64 KiB for a
// 16 MiB block of KT128) runs on this thread whatever the input: a thread spawned per segment
// would cost more than the copy.
using ChainingValueSink = std::function<void(const uint8_t* cvs, uint64_t first_leaf, uint64_t count)>;

// Where hash_leaves_into runs its sink for host input (device-resident input: always the caller).
enum class SinkRuns {
  kOnCaller,    // a copy: too short to be worth a thread
  kOverlapped,  // the final node's absorb: on a thread of its own, while the caller stages
};

void hash_leaves_into(const TreeShape& shape, const TreeInput& input, size_t begin, size_t range_len,
                      const ChainingValueSink& take, SinkRuns sink_runs, DeviceContext& context) {
  if (range_len == 0) return;
  const uint64_t num_leaves = range_len / shape.leaf_len;
  const uint64_t leaves_per_segment =
      std::max<uint64_t>(1, (input.on_device ? kDeviceSegmentBytes : kStagingBytes) / shape.leaf_len);

  std::future<void> absorbing;  // the absorb of the most recently collected slot
  const Slot* absorbing_slot = nullptr;
  auto finish_absorb = [&] {
    if (absorbing.valid()) absorbing.get();  // rethrows what the absorb threw
    absorbing_slot = nullptr;
  };
  auto collect = [&](Slot& slot) {  // the slot's chaining values start absorbing, in order
    if (!slot.pending) return;
    check(cudaEventSynchronize(slot.done), "waiting for tree leaves");
    finish_absorb();
    const uint8_t* cvs = slot.host_out.data();
    const uint64_t first_leaf = slot.first, count = slot.count;
    slot.pending = false;
    if (input.on_device || sink_runs == SinkRuns::kOnCaller) {
      take(cvs, first_leaf, count);
      return;
    }
    absorbing = std::async(std::launch::async, [&take, cvs, first_leaf, count] { take(cvs, first_leaf, count); });
    absorbing_slot = &slot;
  };

  unsigned segment = 0;
  try {
    for (uint64_t first_leaf = 0; first_leaf < num_leaves; first_leaf += leaves_per_segment, ++segment) {
      Slot& slot = context.slots[segment % 2];
      collect(slot);
      const uint64_t count = std::min(leaves_per_segment, num_leaves - first_leaf);
      const size_t segment_offset = static_cast<size_t>(first_leaf * shape.leaf_len);
      const size_t segment_len = std::min(static_cast<size_t>(count * shape.leaf_len), range_len - segment_offset);
      const uint8_t* leaves = input.data + begin + segment_offset;
      const uint8_t* copy_from = leaves;  // host input: what the copy to the device reads
      if (!input.on_device && !input.page_locked) {
        uint8_t* staging = slot.host_in.reserve(segment_len);
        cpu::parallel_copy(staging, leaves, segment_len);  // overlaps the absorb just started
        copy_from = staging;
      }
      // This slot's host_out is about to be overwritten: its absorb (if that is the running one)
      // must be done first.
      if (absorbing_slot == &slot) finish_absorb();
      if (!input.on_device) {
        uint8_t* device_in = slot.dev_in.reserve(segment_len);
        check(cudaMemcpyAsync(device_in, copy_from, segment_len, cudaMemcpyHostToDevice, slot.stream),
              "cudaMemcpyAsync (tree leaves)");
        leaves = device_in;
      }
      const size_t cvs_len = static_cast<size_t>(count) * shape.chaining_value_len;
      uint8_t* device_cvs = slot.dev_out.reserve(cvs_len);
      launch_leaves(shape.rate, shape.leaf_rounds, leaves, segment_len, shape.leaf_len, count, device_cvs,
                    shape.chaining_value_len, shape.leaf_domain, slot.stream);
      check(cudaMemcpyAsync(slot.host_out.reserve(cvs_len), device_cvs, cvs_len, cudaMemcpyDeviceToHost,
                            slot.stream),
            "cudaMemcpyAsync (chaining values)");
      check(cudaEventRecord(slot.done, slot.stream), "cudaEventRecord");
      slot.first = static_cast<size_t>(first_leaf);
      slot.count = static_cast<size_t>(count);
      slot.pending = true;
    }
    collect(context.slots[segment % 2]);  // the older of the two in flight first
    collect(context.slots[(segment + 1) % 2]);
    finish_absorb();
  } catch (...) {
    if (absorbing.valid()) absorbing.wait();  // never leave a thread reading a slot we give back
    throw;
  }
}

// tree_hash_on computes a whole ParallelHash or KangarooTwelve digest: the final node `node`
// (create_final_node) takes the head of the input (KT's first 8192 bytes), the chaining values of
// the whole leaves after it from the GPU, then the rest (a last partial leaf, hashed on the host).
void tree_hash_on(std::string_view name, const HashParams& params, hash::HashContext& node, const TreeInput& input,
                  uint8_t* out, size_t out_len, DeviceContext& context) {
  const TreeShape shape = hash::tree_shape(name, params);
  const size_t head = std::min(input.len, shape.head_len);
  const size_t leaves_len = (input.len - head) / shape.leaf_len * shape.leaf_len;
  feed_node(node, input, 0, head);
  hash_leaves_into(
      shape, input, head, leaves_len,
      [&node](const uint8_t* cvs, uint64_t, uint64_t count) { hash::absorb_chaining_values(node, cvs, count); },
      SinkRuns::kOverlapped, context);
  feed_node(node, input, head + leaves_len, input.len - head - leaves_len);
  node.finalize(out, out_len);
}

}  // namespace

// --------------------------------------------------------------------------------------------
// Public entry points

void hash_many(std::string_view name, const uint8_t* const* messages, const size_t* lens, size_t num_messages,
               uint8_t* out, size_t out_len_each, int device_index) {
  const HashSpec& spec = hash::detail::find_spec(name);
  const SpongeShape shape = sponge_shape(spec);
  hash::detail::check_output_length(spec, out_len_each);
  if (num_messages == 0) return;
  for (size_t i = 0; i < num_messages; ++i)
    if (lens[i] > 0 && messages[i] == nullptr)
      throw std::invalid_argument("hash_many: message " + std::to_string(i) + " is null but has length " +
                                  std::to_string(lens[i]));

  require_device_index(device_index);
  DeviceGuard device(device_index);
  DeviceContext& context = context_for(device_index);
  std::lock_guard<std::mutex> lock(context.mutex);
  context.reset();
  const std::vector<size_t> order = longest_first(lens, num_messages);

  auto collect = [&](Slot& slot) {  // digests back into the caller's order
    if (!slot.pending) return;
    check(cudaEventSynchronize(slot.done), "waiting for hash_many");
    const uint8_t* digests = slot.host_out.data();
    for (size_t j = 0; j < slot.count; ++j)
      std::memcpy(out + order[slot.first + j] * out_len_each, digests + j * out_len_each, out_len_each);
    slot.pending = false;
  };

  size_t next = 0;  // first sorted position not yet queued
  unsigned batch = 0;
  for (; next < num_messages; ++batch) {
    Slot& slot = context.slots[batch % 2];
    collect(slot);
    // As many messages as fit in the staging buffer (at least one, however long).
    size_t count = 0;
    size_t packed_len = 0;
    while (next + count < num_messages && count < kMaxBatchMessages) {
      const size_t padded = round_up_16(lens[order[next + count]]);
      if (count > 0 && packed_len + padded > kStagingBytes) break;
      packed_len += padded;
      ++count;
    }
    // Metadata: offsets[count] then lens[count]; every message at a 16-byte boundary.
    auto* meta = reinterpret_cast<uint64_t*>(slot.host_meta.reserve(2 * count * sizeof(uint64_t)));
    uint64_t offset = 0;
    for (size_t j = 0; j < count; ++j) {
      const size_t len = lens[order[next + j]];
      meta[j] = offset;
      meta[count + j] = len;
      offset += round_up_16(len);
    }
    uint8_t* staging = slot.host_in.reserve(std::max<size_t>(packed_len, 16));
    const size_t grain = packed_len < (size_t{1} << 20) ? count : std::max<size_t>(1, count / 64);
    cpu::ThreadPool::global().parallel_for(count, grain, [&](size_t begin, size_t end) {
      for (size_t j = begin; j < end; ++j)
        if (meta[count + j] > 0) std::memcpy(staging + meta[j], messages[order[next + j]], meta[count + j]);
    });

    uint8_t* device_meta = slot.dev_meta.reserve(2 * count * sizeof(uint64_t));
    uint8_t* device_in = slot.dev_in.reserve(std::max<size_t>(packed_len, 16));
    uint8_t* device_out = slot.dev_out.reserve(count * out_len_each);
    check(cudaMemcpyAsync(device_meta, meta, 2 * count * sizeof(uint64_t), cudaMemcpyHostToDevice, slot.stream),
          "cudaMemcpyAsync (offsets)");
    check(cudaMemcpyAsync(device_in, staging, packed_len, cudaMemcpyHostToDevice, slot.stream),
          "cudaMemcpyAsync (messages)");
    const auto* device_offsets = reinterpret_cast<const uint64_t*>(device_meta);
    launch_ragged(shape.rate, device_in, device_offsets, device_offsets + count, count, device_out, out_len_each,
                  shape.domain, slot.stream);
    check(cudaMemcpyAsync(slot.host_out.reserve(count * out_len_each), device_out, count * out_len_each,
                          cudaMemcpyDeviceToHost, slot.stream),
          "cudaMemcpyAsync (digests)");
    check(cudaEventRecord(slot.done, slot.stream), "cudaEventRecord");
    slot.first = next;
    slot.count = count;
    slot.pending = true;
    next += count;
  }
  collect(context.slots[0]);
  collect(context.slots[1]);
}

bool hash_many_supports(std::string_view name, const HashParams& params) {
  const HashSpec& spec = hash::detail::find_spec(name);
  switch (spec.construction) {
    case Construction::plain_sponge: return true;
    case Construction::cshake: return params.function_name.empty() && params.customization.empty();
    default: return false;
  }
}

void hash_many_device(std::string_view name, const uint8_t* d_data, const uint64_t* d_offsets, const uint64_t* d_lens,
                      size_t num_messages, uint8_t* d_out, size_t out_len_each, CUstream_st* stream) {
  const HashSpec& spec = hash::detail::find_spec(name);
  const SpongeShape shape = sponge_shape(spec);
  hash::detail::check_output_length(spec, out_len_each);
  launch_ragged(shape.rate, d_data, d_offsets, d_lens, num_messages, d_out, out_len_each, shape.domain, stream);
}

void tree_hash(std::string_view name, const HashParams& params, const uint8_t* data, size_t len, uint8_t* out,
               size_t out_len, int device_index) {
  const HashSpec& spec = hash::detail::find_spec(name);
  // A tree hash with valid parameters, checked before the GPU is touched.
  const std::unique_ptr<hash::HashContext> node = create_final_node(name, params);
  hash::detail::check_output_length(spec, out_len);
  if (len > 0 && data == nullptr) throw std::invalid_argument("tree_hash: data is null but len > 0");
  require_device_index(device_index);
  DeviceGuard device(device_index);
  DeviceContext& context = context_for(device_index);
  std::lock_guard<std::mutex> lock(context.mutex);
  context.reset();
  // Page-locked input (a pinned array, say) is copied to the GPU in place, at the PCIe rate;
  // pageable input goes through the slots' page-locked staging first.
  tree_hash_on(name, params, *node, TreeInput{data, len, false, is_page_locked(data, len)}, out, out_len, context);
}

void tree_leaves(std::string_view name, const HashParams& params, const uint8_t* data, size_t num_leaves,
                 uint8_t* out, int device_index) {
  create_final_node(name, params);  // a tree hash with valid parameters, checked before the GPU is touched
  const TreeShape shape = hash::tree_shape(name, params);
  if (num_leaves == 0) return;
  if (data == nullptr || out == nullptr) throw std::invalid_argument("tree_leaves: data or out is null");
  const size_t len = num_leaves * shape.leaf_len;
  require_device_index(device_index);
  DeviceGuard device(device_index);
  DeviceContext& context = context_for(device_index);
  std::lock_guard<std::mutex> lock(context.mutex);
  context.reset();
  const size_t cv_len = shape.chaining_value_len;
  hash_leaves_into(
      shape, TreeInput{data, len, false, is_page_locked(data, len)}, 0, len,
      [out, cv_len](const uint8_t* cvs, uint64_t first_leaf, uint64_t count) {
        std::memcpy(out + first_leaf * cv_len, cvs, count * cv_len);
      },
      SinkRuns::kOnCaller, context);
}

void tree_hash_device(std::string_view name, const HashParams& params, const uint8_t* d_data, size_t len,
                      uint8_t* out, size_t out_len, CUstream_st* stream) {
  const HashSpec& spec = hash::detail::find_spec(name);
  const std::unique_ptr<hash::HashContext> node = create_final_node(name, params);
  hash::detail::check_output_length(spec, out_len);
  int device_index = 0;
  check(cudaGetDevice(&device_index), "cudaGetDevice");
  DeviceContext& context = context_for(device_index);
  std::lock_guard<std::mutex> lock(context.mutex);
  context.reset();
  // Everything below reads d_data from other streams or synchronously: let the caller's queued
  // work (which may be what writes d_data) finish first.
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (caller's stream)");
  tree_hash_on(name, params, *node, TreeInput{d_data, len, true}, out, out_len, context);
}

}  // namespace gpucrypt::cuda
