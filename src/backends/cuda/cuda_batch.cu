// cuda_batch.cu: the CUDA batch executor: a whole BatchPlan in a few launches.
//
// Constant-time position: the variant's. aes_bitsliced adds no secret-dependent index or branch
// (the kernels branch on lengths and indices only, GHASH is gf128.h's constant-time multiplier
// and the tag comparison ORs every byte difference); aes_ttable_smem32, camellia_sbox_smem32
// (cuda_batch_camellia_sbox.cu), camellia_ttable_smem and sc2000_table_smem index tables with
// secret bytes, in the key schedule as in the rounds.
//
// Data: the packed input, the params (IVs, nonces, AAD) and the raw keys of every group go to the
// device in one copy each through pinned staging; the packed output comes back in one copy. Keys
// are expanded on the device, one thread per distinct key of a group (an expanded AES T-table
// schedule is 15x the key: uploading 32 bytes instead of ~500 per key keeps a batch of 1 KiB
// messages with their own keys from paying half its bytes again over PCIe).
//
// Work: one item per message (per 16 KiB piece in ECB, CTR and CBC/CFB decryption; per tile in
// GCM). Parallel modes give a warp an item and run the bulk kernels' own per-warp routines over it
// under the device's launch policy (kernels.cuh's bulk_tile, xts_tile, gcm_tile_lane_sum); serial
// modes (CBC/CFB encryption, OFB) give a thread a message (serial_message). GCM cuts a message
// into the bulk kernel's tiles and joins the tile hashes per message (see gcm_prepare_kernel). One launch per group (plus one for key
// expansion, one for XTS tweaks, three or four for GCM). The plan lists a suite's messages
// longest first, so neighbouring warps do alike work. GCM and XTS messages of kBigLen and more go
// through the backend's bulk kernels instead (DeviceGcm / DeviceCipher on the uploaded buffers,
// under the variant the suite names: aes_bitsliced8 for the constant-time default), which spread
// one message over the whole GPU and fold its tile hashes in a tree; so do XTS
// requests of many data units (Suite::xts_unit_len: DeviceCipher::process_units, one launch each).
//
// Hashes of the sponge family (SHA-3, SHAKE, Keccak, cSHAKE without N and S) run on the GPU in the
// same stream: keccak_cuda's ragged hash_many kernel reads each message where the packed input
// already lies on the device (one thread per message, the plan's longest-first order), and the
// digests come back with the statuses; a group that names a CPU variant, and the tree hashes
// (ParallelHash, KangarooTwelve: one message over many threads, which a batch's short messages
// do not fill), run on the CPU through hash::create_hash as the generic executor does. A plan
// with a suite no CUDA family here serves (a variant that is not a CUDA variant) is refused
// (nullopt): the CUDA Device hands it whole to the generic executor, which reports the error.
//
// The cipher families are the backend's (backends/cuda/*.cuh, protocol in kernels.cuh): their
// expand makes the schedules here, their fill and bind set up the tables of every CTA and thread.
// The kernels and their launcher are in cuda_batch_kernels.cuh, shared with the unit of the one
// family whose table layout is a unit-wide macro (cuda_batch_camellia_sbox.cu); this file holds
// the variant choice, the buffers and run_batch.
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
#include "backends/cuda/keccak_cuda.hpp"
#include "backends/cuda/sc2000_table_smem.cuh"
#include "backends/cuda/workspace_pool.hpp"
#include "backends/cuda/cuda_batch.hpp"
#include "backends/cuda/cuda_batch_kernels.cuh"
#include "gpucrypt/hash.hpp"
#include "modes/padding.hpp"

namespace gpucrypt::cuda {

namespace {

using namespace kernels;
using namespace batch;

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
      // lane); the result reports "aes_bitsliced", what ran. Big GCM/XTS messages run the bulk
      // kernels of the name asked for (bulk_variant).
      if (v == "aes_bitsliced" || v == "aes_bitsliced32" || v == "aes_bitsliced8") {
        *out = ops_for_key_bits<AesBitslicedFamily>(bits, "aes_bitsliced");
        return true;
      }
      return false;
    case Algorithm::camellia:  // the bulk kernels' default first (device.cu)
      if (v.empty() || v == "camellia_sbox_smem32") {
        *out = camellia_sbox_smem32_ops(bits);
        return true;
      }
      if (v != "camellia_ttable_smem") return false;
      *out = ops_for_key_bits<CamelliaTTableSmem>(bits, "camellia_ttable_smem");
      return true;
    case Algorithm::sc2000:
      if (!v.empty() && v != "sc2000_table_smem") return false;
      *out = ops_for_key_bits<Sc2000TableSmem>(bits, "sc2000_table_smem");
      return true;
  }
  return false;
}

// The variant a suite's big GCM/XTS messages run on the bulk kernels: the one the suite names
// (aes_bitsliced8 spreads one message over the whole GPU, 8 blocks a lane, where the batch
// kernels' lanes run the 2-block aes_bitsliced), else the batch family's.
std::string bulk_variant(const Suite& suite, const FamilyOps& family) {
  return suite.variant.empty() ? std::string(family.variant) : suite.variant;
}

// What a suite reports as run: the batch family's variant, the bulk one, or both as
// "batch+bulk" when its messages took both routes under different variants.
std::string variants_that_ran(const std::string& batch, bool ran_batch, const std::string& bulk, bool ran_bulk) {
  if (!ran_bulk || bulk == batch) return batch;
  return ran_batch ? batch + "+" + bulk : bulk;
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
    for (cudaEvent_t& mark : marks) check(cudaEventCreate(&mark), "cudaEventCreate");
  }
  ~Workspace() {  // pooled workspaces live as long as the process: only a dropped one gets here
    cudaStreamSynchronize(stream);
    for (Buffer* b : buffers()) b->release();
    for (cudaEvent_t mark : marks) cudaEventDestroy(mark);
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
  // Stage boundaries on the stream (copies queued, copies in done, kernels done, copies out done):
  // the stage times come from these, so the host never waits between stages just to time them.
  std::array<cudaEvent_t, 4> marks{};
  Buffer staging_in{nullptr, 0, 0, true}, staging_out{nullptr, 0, 0, true};
  Buffer in, out, params, keys, schedules, items, tweaks, status;
  Buffer gcm_messages, gcm_first_items, tile_hashes;  // GCM: per message, per message, per tile
  Buffer hash_index, digests;  // GPU hashes: offsets then lengths per message; their digests

 private:
  std::array<Buffer*, 15> buffers() {
    return {&staging_in,   &staging_out,     &in,          &out,        &params,
            &keys,         &schedules,       &items,       &tweaks,     &status,
            &gcm_messages, &gcm_first_items, &tile_hashes, &hash_index, &digests};
  }
  int device_index_;
};

uint64_t align16(uint64_t n) { return (n + 15) / 16 * 16; }

// A group of hash requests that runs on the GPU: its messages are entries [first, first + count)
// of the offset and length lists, its digests digests[digest_offset ...), out_len bytes each.
struct GpuHashGroup {
  uint32_t group;
  size_t first, count;
  size_t digest_offset;
};

// Whether a hash suite runs on the GPU: the default variant (a named one is a CPU variant, which
// the plan checked) and a hash keccak_cuda's hash_many takes.
bool hash_on_gpu(const Suite& suite) {
  return suite.variant.empty() && hash_many_supports(suite.hash_name, suite.hash_params);
}

// Copies the kernels' status bytes into page-locked host memory with the SMs, not a copy engine:
// the opens' verdicts then reach the host when the kernels end, instead of queueing behind the
// copies out of the other calls in flight on this device.
__global__ void statuses_to_host_kernel(uint8_t* host_statuses, const uint8_t* statuses, uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    host_statuses[i] = statuses[i];
}

}  // namespace

// Camellia keys for every Camellia family, with the SP tables (the S-box word layout's unit has
// no key schedule; the schedule does not depend on the table layout).
void batch::expand_camellia_keys(const ExpandParams& params, int grid, cudaStream_t stream) {
  checked_launch("key expansion launch",
                 [&] { expand_kernel<CamelliaTTableSmem<128>><<<grid, kThreads, 0, stream>>>(params); });
}

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
  std::vector<uint32_t> hash_requests;  // on the CPU
  std::vector<GpuHashGroup> gpu_hashes;
  std::vector<uint64_t> hash_offsets, hash_lens;
  size_t digest_bytes = 0;
  std::vector<uint32_t> big_requests;  // GCM/XTS messages of kBigLen and more
  std::vector<uint64_t> gcm_first_items;  // per GCM message: its first tile's item in its group
  uint64_t schedule_bytes = 0;
  // Per suite: whether messages ran on the batch kernels, and on the bulk kernels (the big ones).
  std::vector<bool> ran_batch(plan.suites.size()), ran_bulk(plan.suites.size());
  for (size_t group_index = 0; group_index < plan.groups.size(); ++group_index) {
    const auto& group = plan.groups[group_index];
    const Suite& suite = plan.suites[group.suite];
    if (suite.operation == Operation::hash) {
      if (hash_on_gpu(suite)) {
        gpu_hashes.push_back({static_cast<uint32_t>(group_index), hash_offsets.size(), group.count, digest_bytes});
        for (uint32_t k = 0; k < group.count; ++k) {
          const BatchRequest& r = plan.requests[plan.order[group.first + k]];
          hash_offsets.push_back(r.input_offset);
          hash_lens.push_back(r.input_len);
        }
        digest_bytes += align16(group.count * suite.hash_out_len);
        result.suite_variants[group.suite] = std::string(kKeccakVariant);
      } else {
        for (uint32_t k = 0; k < group.count; ++k) hash_requests.push_back(plan.order[group.first + k]);
      }
      continue;
    }
    const FamilyOps& family = families[group.suite];
    GroupWork g{};
    g.suite = group.suite;
    g.group = static_cast<uint32_t>(group_index);
    g.open = suite.operation == Operation::open;
    g.mode = suite.cipher.mode;
    g.direction = suite.operation == Operation::decrypt || suite.operation == Operation::open ? Direction::decrypt
                                                                                               : Direction::encrypt;
    g.kind = modes::kind(g.mode, g.direction);
    g.xts = g.kind == modes::ModeKind::xts;
    g.key_len = suite.cipher.key_bits / 8;
    g.key_stride = g.xts ? 2 * g.key_len : g.key_len;
    g.key_offset = key_upload.size();
    g.first_item = items.size();
    g.first_message = gcm_first_items.size();
    std::vector<uint32_t> used_slots;
    const bool open = g.open;
    // Blocks per GCM tile, once per group: the launch policy is read per device, not per message.
    const uint64_t gcm_tile_blocks = g.kind == modes::ModeKind::aead ? family.gcm_tile_blocks() : 0;
    for (uint32_t k = 0; k < group.count; ++k) {
      const uint32_t index = plan.order[group.first + k];
      const BatchRequest& r = plan.requests[index];
      if (open && r.input_len < suite.tag_len) {
        result.status[index] = RequestStatus::authentication_failed;
        ran_batch[group.suite] = true;
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
      if (g.kind == modes::ModeKind::bulk) {  // pieces of at most kPieceBlocks
        for (uint64_t b = 0; b < num_blocks; b += kPieceBlocks) {
          it.begin_block = b;
          it.end_block = std::min(num_blocks, b + kPieceBlocks);
          items.push_back(it);
        }
      } else if ((g.kind == modes::ModeKind::aead || g.xts) && (it.len >= kBigLen || suite.xts_unit_len != 0)) {
        big_requests.push_back(index);
        ran_bulk[group.suite] = true;
        continue;
      } else if (g.kind == modes::ModeKind::aead) {  // the message's tiles, and where they start
        it.message = static_cast<uint32_t>(gcm_first_items.size() - g.first_message);
        gcm_first_items.push_back(items.size() - g.first_item);
        it.end_block = gcm_num_tiles(it.len, gcm_tile_blocks);
        for (it.begin_block = 0; it.begin_block < it.end_block; ++it.begin_block) items.push_back(it);
      } else if (it.len > 0) {
        items.push_back(it);
      }
      ran_batch[group.suite] = true;
    }
    for (uint32_t slot : used_slots) slot_to_local[slot] = UINT32_MAX;
    result.suite_variants[group.suite] =
        variants_that_ran(family.variant, ran_batch[group.suite], bulk_variant(suite, family), ran_bulk[group.suite]);
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
  if (!work.empty() || !gpu_hashes.empty()) {
    // One host wait per call when nothing gates the copy out: copies in, kernels, the statuses and
    // the output are queued back to back on the stream. An open gates it: a failed open's output
    // range must keep the caller's bytes, so the output comes back only after the statuses did
    // (the kernels write nothing there; the device buffer holds no data of its own). Fewer waits
    // matter because several calls share the copy engines: a call that waits between stages
    // leaves them idle unless another call has queued work (docs/performance.md, 2026-11-27).
    const bool output_gated = std::any_of(work.begin(), work.end(), [](const GroupWork& g) { return g.open; }) ||
                              std::any_of(big_requests.begin(), big_requests.end(), [&](uint32_t index) {
                                return plan.suites[plan.requests[index].suite].operation == Operation::open;
                              });
    const auto& marks = ws->marks;
    check(cudaEventRecord(marks[0], stream), "cudaEventRecord");
    // Page-locked caller memory (the stream engine's buffers) moves to and from the GPU in place;
    // the device output has plan.output's layout, so it can come back in one copy.
    const bool direct_in = in_len > 0 && cuda::is_page_locked(plan.input.data(), in_len);
    const bool direct_out = out_len > 0 && cuda::is_page_locked(plan.output.data(), out_len);
    const size_t hash_index_bytes = 2 * hash_offsets.size() * sizeof(uint64_t);
    ws->staging_in.reserve((direct_in ? 0 : in_len) + plan.params.size() + key_upload.size() +
                           items.size() * sizeof(Item) + gcm_first_items.size() * sizeof(uint64_t) + hash_index_bytes);
    // The copy out: the output (unless it goes straight to the caller), the statuses, the digests.
    const size_t statuses_at = direct_out ? 0 : out_len;
    const size_t digests_at = align16(statuses_at + plan.requests.size());
    ws->staging_out.reserve(digests_at + digest_bytes);
    ws->hash_index.reserve(hash_index_bytes);
    ws->digests.reserve(digest_bytes);
    ws->in.reserve(in_len);
    ws->out.reserve(out_len);
    ws->params.reserve(plan.params.size());
    ws->keys.reserve(key_upload.size());
    ws->schedules.reserve(schedule_bytes);
    ws->items.reserve(items.size() * sizeof(Item));
    // Per item, for XTS's tweaks and GCM's tile hashes; a batch without either needs neither.
    const bool any_xts = std::any_of(work.begin(), work.end(), [](const GroupWork& g) { return g.xts; });
    ws->tweaks.reserve(any_xts ? items.size() * sizeof(gc_block) : 0);
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
    if (!hash_offsets.empty()) {  // offsets, then lengths, in one copy
      hash_offsets.insert(hash_offsets.end(), hash_lens.begin(), hash_lens.end());
      upload(ws->hash_index, hash_offsets.data(), hash_index_bytes);
    }
    gpucrypt::secure_zero(key_upload.data(), key_upload.size());  // staged: the workspace's wipe takes that copy
    check(cudaMemsetAsync(ws->status.ptr, 0, plan.requests.size(), stream), "cudaMemset");
    check(cudaEventRecord(marks[1], stream), "cudaEventRecord");

    const Device d{ws->in.ptr,        ws->out.ptr,
                   ws->params.ptr,    ws->keys.ptr,
                   ws->schedules.ptr, reinterpret_cast<const Item*>(ws->items.ptr),
                   reinterpret_cast<gc_block*>(ws->tweaks.ptr), ws->status.ptr,
                   reinterpret_cast<GcmMessage*>(ws->gcm_messages.ptr),
                   reinterpret_cast<const uint64_t*>(ws->gcm_first_items.ptr),
                   reinterpret_cast<gc_gf128*>(ws->tile_hashes.ptr)};
    for (const GroupWork& g : work) families[g.suite].run(g, d, plan.suites[g.suite].tag_len, stream);
    const auto* d_hash_offsets = reinterpret_cast<const uint64_t*>(ws->hash_index.ptr);
    const uint64_t* d_hash_lens = d_hash_offsets + hash_lens.size();
    for (const GpuHashGroup& h : gpu_hashes) {
      const Suite& suite = plan.suites[plan.groups[h.group].suite];
      hash_many_device(suite.hash_name, ws->in.ptr, d_hash_offsets + h.first, d_hash_lens + h.first, h.count,
                       ws->digests.ptr + h.digest_offset, suite.hash_out_len, stream);
    }
    std::vector<uint8_t> big_tags(16 * big_requests.size());
    for (size_t b = 0; b < big_requests.size(); ++b) {
      const uint32_t index = big_requests[b];
      const BatchRequest& r = plan.requests[index];
      const Suite& suite = plan.suites[r.suite];
      const engine::KeySlot& slot = plan.keys[r.key];
      const ByteSpan key(plan.key_of(slot), slot.key_len), iv(plan.iv_of(r), r.iv_len);
      const std::string variant = bulk_variant(suite, families[r.suite]);
      if (suite.cipher.mode == Mode::xts) {
        auto cipher = DeviceCipher::create(
            suite.cipher, suite.operation == Operation::encrypt ? Direction::encrypt : Direction::decrypt, key, variant,
            device_index);
        if (suite.xts_unit_len != 0)  // data units: every unit of the request in one launch
          cipher->process_units(Suite::first_unit_of(plan.iv_of(r)), suite.xts_unit_len, d.in + r.input_offset,
                                d.out + r.output_offset, r.input_len, stream);
        else
          cipher->process(iv, d.in + r.input_offset, d.out + r.output_offset, r.input_len, stream);
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
    check(cudaEventRecord(marks[2], stream), "cudaEventRecord");

    bool any_open_failed = false;
    auto read_statuses = [&] {  // the opens' verdicts, from the kernels' status bytes
      uint8_t* const status_back = ws->staging_out.ptr + statuses_at;
      const auto num_statuses = static_cast<uint32_t>(plan.requests.size());
      checked_launch("status copy launch", [&] {
        statuses_to_host_kernel<<<(num_statuses + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
            status_back, ws->status.ptr, num_statuses);
      });
      check(cudaStreamSynchronize(stream), "batch kernels");
      for (size_t index = 0; index < plan.requests.size(); ++index) {
        if (plan.suites[plan.requests[index].suite].operation != Operation::open) continue;
        if (status_back[index] != 0) result.status[index] = RequestStatus::authentication_failed;
        if (result.status[index] != RequestStatus::ok) any_open_failed = true;
      }
    };
    auto copy_output_back = [&] {
      if (!direct_out) {
        check(cudaMemcpyAsync(ws->staging_out.ptr, ws->out.ptr, out_len, cudaMemcpyDeviceToHost, stream),
              "copy to host");
      } else if (!any_open_failed) {
        check(cudaMemcpyAsync(plan.output.data(), ws->out.ptr, out_len, cudaMemcpyDeviceToHost, stream),
              "copy to host");
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
    };
    if (output_gated) read_statuses();  // else no open in the batch: nothing holds the output back
    copy_output_back();
    if (digest_bytes > 0)
      check(cudaMemcpyAsync(ws->staging_out.ptr + digests_at, ws->digests.ptr, digest_bytes, cudaMemcpyDeviceToHost,
                            stream),
            "copy to host");
    check(cudaEventRecord(marks[3], stream), "cudaEventRecord");
    check(cudaStreamSynchronize(stream), "copy to host");
    const auto host_out_start = Clock::now();
    // Only the GPU requests' outputs: hashes are written below, and in the packed form the
    // caller's output is exactly the requests' outputs back to back. With the output copied
    // straight into the caller's memory, only a padded decryption has anything left to do here.
    for (const GroupWork& g : work) {
      const Suite& suite = plan.suites[g.suite];
      const bool unpad = suite.pkcs7 && suite.operation == Operation::decrypt;
      if (direct_out && !unpad) continue;
      const engine::RequestGroup& group = plan.groups[g.group];
      auto copy_out = [&](size_t first, size_t last) {
        for (size_t k = first; k < last; ++k) {
          const uint32_t index = plan.order[group.first + k];
          const BatchRequest& r = plan.requests[index];
          if (result.status[index] != RequestStatus::ok) continue;  // a failed open: nothing to copy
          if (!direct_out) std::memcpy(plan.output_of(r), ws->staging_out.ptr + r.output_offset, r.output_len);
          if (unpad && r.input_len >= 16) {
            size_t tail_len = 0;
            const bool ok = modes::pkcs7_unpadded_len(plan.output_of(r) + r.input_len - 16, &tail_len);
            result.output_len[index] = r.input_len - 16 + tail_len;
            if (!ok) result.status[index] = RequestStatus::invalid_padding;
          }
        }
      };
      if (direct_out || group.total_input_len < 2 * kCopyPiece) copy_out(0, group.count);
      else cpu::ThreadPool::global().parallel_for(group.count, 64, copy_out);
    }
    for (const GpuHashGroup& h : gpu_hashes) {  // after the output's copy, which covers their ranges too
      const engine::RequestGroup& group = plan.groups[h.group];
      const uint64_t digest_len = plan.suites[group.suite].hash_out_len;
      const uint8_t* digest = ws->staging_out.ptr + digests_at + h.digest_offset;
      for (size_t k = 0; k < h.count; ++k, digest += digest_len)
        std::memcpy(plan.output_of(plan.requests[plan.order[group.first + k]]), digest, digest_len);
    }
    for (size_t b = 0; b < big_requests.size(); ++b) {  // sealed tags came back to the host
      const BatchRequest& r = plan.requests[big_requests[b]];
      const Suite& suite = plan.suites[r.suite];
      if (suite.operation == Operation::seal) std::memcpy(plan.output_of(r) + r.input_len, &big_tags[16 * b], suite.tag_len);
    }
    gpucrypt::secure_zero(big_tags.data(), big_tags.size());
    auto stage_s = [&](size_t from) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, marks[from], marks[from + 1]), "cudaEventElapsedTime");
      return ms / 1e3;
    };
    result.timings.h2d_s = stage_s(0);
    result.timings.compute_s = stage_s(1);
    result.timings.d2h_s = stage_s(2) + seconds_since(host_out_start);
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
