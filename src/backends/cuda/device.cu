// device.cu: the CUDA backend: which devices work, which variants exist (the one place that
// selects a CUDA variant), the BlockEngine and GcmCipher over host memory, and the
// device-pointer API (device.hpp).
//
// Constant-time position: the variant's. Host memory passes through pinned staging buffers and
// device buffers that are zeroed when a call returns them to the pool; key schedules live in
// kernel parameters and in host objects that wipe them. Single blocks (the stream driver's
// partial CFB/OFB/CTR blocks, the XTS tweak, GCM's H and E(J0)) are encrypted on the host by the
// portable CPU code of the same technique (aes_ttable for aes_ttable_smem32, aes_bitsliced for
// aes_bitsliced, ...): a kernel launch per block would cost tens of microseconds.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "backends/backend.hpp"
#include "backends/block_engine.hpp"
#include "backends/cpu/thread_pool.hpp"
#include "backends/cuda/device.hpp"
#include "backends/cuda/keyed_cipher.hpp"
#include "backends/cuda/launch_policy.hpp"
#include "modes/gcm.hpp"
#include "modes/mode_rules.hpp"
#include "modes/xts.hpp"

namespace gpucrypt::cuda {


bool is_page_locked(const void* ptr, size_t len) {
  if (ptr == nullptr || len == 0) return false;
  // A Python buffer is one allocation, so its first and last bytes settle the whole range.
  for (const void* p : {ptr, static_cast<const void*>(static_cast<const uint8_t*>(ptr) + len - 1)}) {
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky-free error so the next call does not report it
      return false;
    }
    if (attributes.type != cudaMemoryTypeHost) return false;
  }
  return true;
}

void* alloc_page_locked(size_t bytes) {
  void* ptr = nullptr;
  if (cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return ptr;
}

void free_page_locked(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  gpucrypt::secure_zero(ptr, bytes);
  cudaFreeHost(ptr);
}

namespace {

// ---- devices --------------------------------------------------------------------------------

// The kernels are built for sm_90 only (CMakeLists.txt); older GPUs cannot run them.
constexpr int kMinComputeMajor = 9;

struct DeviceTable {
  std::vector<int> ordinals;  // usable CUDA ordinals ("cuda:N" names ordinal N)
  std::map<int, cudaDeviceProp> properties;
  std::string reason;  // why none is usable
};

const DeviceTable& device_table() {
  static const DeviceTable table = [] {
    DeviceTable t;
    int count = 0;
    // With the static runtime and no driver this returns an error instead of failing to load.
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      t.reason = std::string("no usable CUDA driver or device (") + cudaGetErrorString(status) + ")";
      cudaGetLastError();
      return t;
    }
    std::string too_old;
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp prop{};
      if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
      t.properties[i] = prop;
      if (prop.major >= kMinComputeMajor) {
        t.ordinals.push_back(i);
      } else {
        too_old += std::string(too_old.empty() ? "" : ", ") + "cuda:" + std::to_string(i) + " " + prop.name +
                   " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ")";
      }
    }
    if (count == 0) t.reason = "no CUDA device found";
    else if (t.ordinals.empty())
      t.reason = "no CUDA device of compute capability 9.0 or newer (this build has sm_90 kernels only): " + too_old;
    return t;
  }();
  return table;
}

void require_device(int device_index) {
  const DeviceTable& t = device_table();
  if (std::find(t.ordinals.begin(), t.ordinals.end(), device_index) != t.ordinals.end()) return;
  throw DeviceError("device 'cuda:" + std::to_string(device_index) + "' is not available: " +
                    (t.reason.empty() ? "usable devices are " + [&] {
                      std::string s;
                      for (int o : t.ordinals) s += (s.empty() ? "cuda:" : ", cuda:") + std::to_string(o);
                      return s;
                    }()
                                      : t.reason));
}

// ---- variants -------------------------------------------------------------------------------

struct GpuVariant {
  VariantInfo info;
  std::unique_ptr<KeyedCipher> (*make)(const uint8_t* key, int key_bits);
  const char* host_variant;  // the portable CPU variant of the same technique, for single blocks
};

// Preference order within an algorithm: the first is the default (the fastest measured; see
// docs/performance.md).
const std::vector<GpuVariant>& registered_variants() {
  static const std::vector<GpuVariant> all = {
      {{"aes_ttable_smem32", "cuda", "aes", false,
        "T-table AES, Te0/Td0 replicated 32x across shared-memory banks (Tezcan layout); "
        "secret-indexed lookups"},
       make_aes_ttable_smem32, "aes_ttable"},
      // The constant-time default: 1.3-1.5x aes_bitsliced in CTR, ECB, CBC/CFB decryption and
      // XTS on the H200, but slower in GCM (0.90 vs 1.14 Tbps for AES-128), where aes_bitsliced
      // stays the choice (bench/results/h200-2026-11-25-bench-bitsliced-modes.json).
      {{"aes_bitsliced8", "cuda", "aes", true,
        "bitsliced AES (Boyar-Peralta S-box circuit), no tables, 8 blocks per call (state rows as "
        "32-bit words, ShiftRows a byte rotation)", "", "gcm"},
       make_aes_bitsliced8, "aes_bitsliced"},
      {{"aes_bitsliced", "cuda", "aes", true,
        "bitsliced AES (Boyar-Peralta S-box circuit), no tables, 2 blocks per call"},
       make_aes_bitsliced, "aes_bitsliced"},
      {{"aes_bitsliced32", "cuda", "aes", true,
        "bitsliced AES (Boyar-Peralta S-box circuit), no tables, 32 blocks per call (one bit of 32 "
        "blocks per word); slower than aes_bitsliced on the H200 (register spills)"},
       make_aes_bitsliced32, "aes_bitsliced"},
      {{"camellia_sbox_smem32", "cuda", "camellia", false,
        "Camellia with its four S-boxes packed in one word table replicated 32x across shared-memory "
        "banks (conflict-free); secret-indexed lookups"},
       make_camellia_sbox_smem32, "camellia_ttable"},
      {{"camellia_ttable_smem", "cuda", "camellia", false,
        "Camellia with the SP tables in shared memory; secret-indexed lookups"},
       make_camellia_ttable_smem, "camellia_ttable"},
      {{"sc2000_table_smem", "cuda", "sc2000", false,
        "SC2000 with the S-box/M tables in shared memory; secret-indexed lookups"},
       make_sc2000_table_smem, "sc2000_table"},
  };
  return all;
}

// The one place that chooses a CUDA variant: the requested one (it must be a CUDA variant of
// the algorithm), else the first registered for the algorithm. Every CUDA variant implements
// every mode.
const GpuVariant& select_variant(Algorithm algorithm, std::string_view requested) {
  const std::string_view algo = algorithm_name(algorithm);
  std::string known;
  for (const auto& v : registered_variants()) {
    if (v.info.algorithm != algo) continue;
    if (requested.empty() || v.info.name == requested) return v;
    known += (known.empty() ? "" : ", ") + v.info.name;
  }
  throw std::invalid_argument("variant '" + std::string(requested) + "' is not a CUDA variant of " +
                              std::string(algo) + " (CUDA variants: " + known + ")");
}

CipherName single_block_name(const CipherName& name) {
  CipherName n = name;
  n.mode = Mode::ecb;
  n.canonical = std::string(algorithm_name(name.algorithm)) + "-" + std::to_string(name.key_bits) + "-ecb";
  return n;
}

// Host engine for single blocks under one key (one XTS half).
std::unique_ptr<BlockEngine> make_host_engine(const CipherName& name, const uint8_t* key, const GpuVariant& v) {
  return cpu::make_portable_engine(single_block_name(name), ByteSpan(key, name.key_bits / 8), v.host_variant);
}

gc_block load(const uint8_t* p) { return gc_block_load(p); }

// The starting value of the chunk of a parallel-mode message at byte `offset` of `in`.
gc_block chunk_iv(Mode mode, const uint8_t iv[16], const uint8_t* in, size_t offset) {
  uint8_t start[16];
  modes::range_iv(mode, iv, offset / 16, offset > 0 ? in + offset - 16 : nullptr, start);
  return load(start);
}

// ---- staging --------------------------------------------------------------------------------

// Host data moves in chunks of this size through kSlots slots, each with its own stream, so that
// the host copies into one slot while one chunk travels to the GPU and another comes back (the
// two copy engines and the SMs all busy). 16 MiB keeps per-chunk overhead (a launch and an event,
// ~10 us) under 3% at PCIe speed (16 MiB / 55 GB/s = 0.3 ms); three slots cover the three stages
// (H2D, kernel, D2H) of a steady stream. Page-locked caller memory skips the staging copies.
constexpr size_t kChunkBytes = size_t(16) << 20;
constexpr int kSlots = 3;
// A chunk may run up to 15 bytes past the chunk size, so that no chunk but a lone first one is
// shorter than a block (XTS ciphertext stealing needs the last full block with the tail).
constexpr size_t kChunkCapacity = kChunkBytes + 16;
// When the GPU or the host cannot give 3 x 16 MiB of staging (a nearly full GPU), the chunk
// halves down to this before the call fails: more, smaller chunks cost a launch and an event each.
constexpr size_t kMinChunkBytes = size_t(1) << 20;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

class Workspace {
 public:
  struct Slot {
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;         // the chunk's output is in pinned
    cudaEvent_t kernel_done = nullptr;  // the next chunk's kernels wait for this one's
    uint8_t* pinned = nullptr;
    uint8_t* device_in = nullptr;
    uint8_t* device_out = nullptr;
    size_t capacity = 0;
    gc_gf128* device_hashes = nullptr;  // GCM: tile hashes, reduction scratch, result
    size_t hash_capacity = 0;
    gc_gf128* pinned_hash = nullptr;    // GCM: the chunk's GHASH comes back here
    size_t used = 0;                    // device bytes to wipe on release
    size_t staged = 0;                  // page-locked staging bytes to wipe on release
    bool pending = false;
    bool pending_direct = false;        // the chunk's output went straight to the caller's memory
    size_t pending_offset = 0, pending_len = 0;
  };

  explicit Workspace(int device_index) : device_index_(device_index) {
    for (Slot& s : slots_) {
      check(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      check(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming), "cudaEventCreate");
      check(cudaEventCreateWithFlags(&s.kernel_done, cudaEventDisableTiming), "cudaEventCreate");
      check_allocation(cudaMallocHost(&s.pinned_hash, sizeof(gc_gf128)), "cudaMallocHost", sizeof(gc_gf128), true);
    }
    check_allocation(cudaMalloc(&device_iv_, sizeof(gc_block)), "cudaMalloc", sizeof(gc_block));
    check_allocation(cudaMallocHost(&pinned_iv_, sizeof(gc_block)), "cudaMallocHost", sizeof(gc_block), true);
  }
  ~Workspace() {
    for (Slot& s : slots_) {
      cudaStreamSynchronize(s.stream);
      free_buffers(s);
      cudaFreeHost(s.pinned_hash);
      cudaEventDestroy(s.done);
      cudaEventDestroy(s.kernel_done);
      cudaStreamDestroy(s.stream);
    }
    cudaFree(device_iv_);
    cudaFreeHost(pinned_iv_);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  int device_index() const { return device_index_; }
  Slot& slot(int i) { return slots_[i]; }
  gc_block* device_iv() { return device_iv_; }
  gc_block* pinned_iv() { return pinned_iv_; }

  // Runs launch(slot, offset, take) for each chunk of in[0, len), staging each chunk into the
  // slot's device_in and copying device_out back to out (nothing comes back when out is null:
  // a pass that only reads, such as GCM open's GHASH); drain(slot, offset, take) runs after
  // a chunk's output has reached out, in chunk order. launch enqueues on slot.stream only.
  // Page-locked input is copied to the GPU straight from `in`; page-locked output straight into
  // `out`, unless it overlaps the input: CBC/CFB decryption reads the previous chunk's last
  // ciphertext block from the host input when it launches a chunk, and an early direct write
  // could already have replaced it.
  template <class Launch, class Drain>
  void run(const uint8_t* in, uint8_t* out, size_t len, Launch&& launch, Drain&& drain) {
    const size_t chunk_bytes = prepare(len);
    const bool direct_in = is_page_locked(in, len);
    const bool no_output = out == nullptr;
    const bool direct_out = no_output || ((out + len <= in || in + len <= out) && is_page_locked(out, len));
    size_t offset = 0;
    size_t index = 0;
    Slot* previous = nullptr;
    while (offset < len) {
      const size_t take = len - offset <= chunk_bytes + 15 ? len - offset : chunk_bytes;
      Slot& s = slots_[index % kSlots];
      finish(s, out, drain);
      reserve(s, take);
      const uint8_t* source = in + offset;
      if (!direct_in) {
        cpu::parallel_copy(s.pinned, source, take);
        source = s.pinned;
      }
      if (!direct_in || !direct_out) s.staged = std::max(s.staged, take);
      check(cudaMemcpyAsync(s.device_in, source, take, cudaMemcpyHostToDevice, s.stream), "copy to device");
      if (previous != nullptr) check(cudaStreamWaitEvent(s.stream, previous->kernel_done, 0), "cudaStreamWaitEvent");
      launch(s, offset, take);
      check(cudaEventRecord(s.kernel_done, s.stream), "cudaEventRecord");
      if (!no_output)
        check(cudaMemcpyAsync(direct_out ? out + offset : s.pinned, s.device_out, take, cudaMemcpyDeviceToHost,
                              s.stream),
              "copy to host");
      check(cudaEventRecord(s.done, s.stream), "cudaEventRecord");
      s.pending = true;
      s.pending_direct = direct_out;
      s.pending_offset = offset;
      s.pending_len = take;
      previous = &s;
      offset += take;
      ++index;
    }
    for (int i = 0; i < kSlots; ++i) finish(slots_[(index + i) % kSlots], out, drain);
  }

  // Zeroes every byte of user data or hash state the last calls left in the buffers.
  // The host side zeroes only what staging held (nothing when the caller's memory was
  // page-locked): a 48 MiB single-threaded memset per call had cost more than the transfers.
  void wipe() {
    for (Slot& s : slots_) {
      // A call that failed part-way leaves chunks marked pending: the next call must not copy
      // them into its own output.
      s.pending = false;
      if (s.staged > 0) {
        cpu::parallel_copy(s.pinned, nullptr, s.staged);
        s.staged = 0;
      }
      if (s.used > 0) {
        check(cudaMemsetAsync(s.device_in, 0, s.used, s.stream), "cudaMemset");
        check(cudaMemsetAsync(s.device_out, 0, s.used, s.stream), "cudaMemset");
        if (s.device_hashes) check(cudaMemsetAsync(s.device_hashes, 0, s.hash_capacity * sizeof(gc_gf128), s.stream), "cudaMemset");
        s.used = 0;
      }
      gpucrypt::secure_zero(s.pinned_hash, sizeof(gc_gf128));
    }
    check(cudaMemsetAsync(device_iv_, 0, sizeof(gc_block), slots_[0].stream), "cudaMemset");
    gpucrypt::secure_zero(pinned_iv_, sizeof(gc_block));
    for (Slot& s : slots_) check(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
  }

 private:
  template <class Drain>
  void finish(Slot& s, uint8_t* out, Drain& drain) {
    if (!s.pending) return;
    s.pending = false;
    check(cudaEventSynchronize(s.done), "kernel or copy");
    if (!s.pending_direct) cpu::parallel_copy(out + s.pending_offset, s.pinned, s.pending_len);
    drain(s, s.pending_offset, s.pending_len);
  }

  // Sizes every slot for this call's chunks and returns the chunk size: kChunkBytes, or less
  // when the GPU or the host cannot give that much (halved down to kMinChunkBytes, then the
  // OutOfMemory error says what was needed and what was free).
  size_t prepare(size_t len) {
    for (size_t chunk = kChunkBytes;; chunk /= 2) {
      try {
        capacity_limit_ = chunk + 16;
        for (Slot& s : slots_) reserve(s, std::min(len, chunk + 15));
        return chunk;
      } catch (const OutOfMemory& e) {
        if (chunk / 2 < kMinChunkBytes || len <= kMinChunkBytes)
          throw OutOfMemory(std::string(e.what()) + "; staging for this call needs at least " +
                            describe_bytes(kSlots * 2 * std::min(len, kMinChunkBytes + 16)) + " of GPU memory and " +
                            describe_bytes(kSlots * std::min(len, kMinChunkBytes + 16)) +
                            " of page-locked host memory");
        for (Slot& s : slots_) release(s);  // the smaller retry gets all of it back
      }
    }
  }

  // Buffers grow to what a call needs (small calls stay small), up to one chunk.
  void reserve(Slot& s, size_t bytes) {
    const size_t tiles = gcm_num_tiles(bytes);
    const size_t hashes = tiles + ghash_reduce_scratch(tiles) + 1;
    if (bytes > s.capacity) {
      check(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
      const size_t capacity =
          std::max(bytes, std::min(capacity_limit_, std::max(round_up(bytes, size_t(1) << 20), s.capacity * 2)));
      release(s);
      check_allocation(cudaMallocHost(&s.pinned, capacity), "cudaMallocHost (staging)", capacity, true);
      check_allocation(cudaMalloc(&s.device_in, capacity), "cudaMalloc (staging)", capacity);
      check_allocation(cudaMalloc(&s.device_out, capacity), "cudaMalloc (staging)", capacity);
      s.capacity = capacity;
    }
    if (hashes > s.hash_capacity) {
      check(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
      cudaFree(s.device_hashes);
      s.device_hashes = nullptr;
      const size_t capacity = gcm_num_tiles(s.capacity) + ghash_reduce_scratch(gcm_num_tiles(s.capacity)) + 1;
      check_allocation(cudaMalloc(&s.device_hashes, capacity * sizeof(gc_gf128)), "cudaMalloc (GHASH)",
                       capacity * sizeof(gc_gf128));
      s.hash_capacity = capacity;
    }
    s.used = std::max(s.used, bytes);
  }

  // Frees a slot's buffers (user data in them zeroed first); capacity 0 until the next reserve.
  void release(Slot& s) {
    check(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
    if (s.staged > 0) cpu::parallel_copy(s.pinned, nullptr, s.staged);
    if (s.used > 0) {
      check(cudaMemset(s.device_in, 0, s.used), "cudaMemset");
      check(cudaMemset(s.device_out, 0, s.used), "cudaMemset");
    }
    free_buffers(s);
    s.used = s.staged = 0;
  }

  static void free_buffers(Slot& s) {
    cudaFreeHost(s.pinned);
    cudaFree(s.device_in);
    cudaFree(s.device_out);
    cudaFree(s.device_hashes);
    s.pinned = nullptr;
    s.device_in = s.device_out = nullptr;
    s.device_hashes = nullptr;
    s.capacity = s.hash_capacity = 0;
  }

  int device_index_;
  size_t capacity_limit_ = kChunkCapacity;  // the largest buffer this call's chunk size needs
  std::array<Slot, kSlots> slots_;
  gc_block* device_iv_ = nullptr;
  gc_block* pinned_iv_ = nullptr;
};

// Workspaces are kept per device and lent to one call at a time, so the pinned and device
// buffers are allocated once per concurrent caller, not once per cipher object. The pool is
// never destroyed: freeing CUDA memory during static destruction can run after the runtime
// has shut down.
class WorkspacePool {
 public:
  std::unique_ptr<Workspace> acquire(int device_index) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& free = free_[device_index];
      if (!free.empty()) {
        auto ws = std::move(free.back());
        free.pop_back();
        return ws;
      }
    }
    return std::make_unique<Workspace>(device_index);
  }
  void release(std::unique_ptr<Workspace> ws) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_[ws->device_index()].push_back(std::move(ws));
  }

 private:
  std::mutex mutex_;
  std::map<int, std::vector<std::unique_ptr<Workspace>>> free_;
};

WorkspacePool& pool() {
  static WorkspacePool* p = new WorkspacePool;
  return *p;
}

// One call's workspace: wiped and returned on scope exit; after a failure it is wiped if the
// device still answers, else leaked (a broken context cannot free anything either).
class Lease {
 public:
  explicit Lease(int device_index) : ws_(pool().acquire(device_index)) {}
  ~Lease() {
    try {
      ws_->wipe();
      pool().release(std::move(ws_));
    } catch (...) {
      (void)ws_.release();
    }
  }
  Workspace& operator*() { return *ws_; }
  Workspace* operator->() { return ws_.get(); }

 private:
  std::unique_ptr<Workspace> ws_;
};

const auto kNoDrain = [](Workspace::Slot&, size_t, size_t) {};

// ---- the engine over host memory ------------------------------------------------------------

class CudaEngine final : public BlockEngine {
 public:
  CudaEngine(const CipherName& name, ByteSpan key, const GpuVariant& v, int device_index)
      : variant_(v), device_index_(device_index) {
    DeviceGuard guard(device_index_);
    const int key_len = name.key_bits / 8;
    data_ = v.make(key.data(), name.key_bits);
    host_ = make_host_engine(name, key.data(), v);
    if (name.mode == Mode::xts) host_tweak_ = make_host_engine(name, key.data() + key_len, v);
  }

  const VariantInfo& variant() const override { return variant_.info; }
  std::string device() const override { return "cuda:" + std::to_string(device_index_); }
  bool wants_host_threads() const override { return false; }

  void encrypt_block(const uint8_t in[16], uint8_t out[16]) const override { host_->encrypt_block(in, out); }

  void ecb(Direction direction, const uint8_t* in, uint8_t* out, size_t num_blocks) const override {
    run(in, out, num_blocks * 16, [&](Workspace::Slot& s, size_t, size_t take) {
      data_->ecb(direction, s.device_in, s.device_out, take, s.stream);
    });
  }
  // Each chunk starts from modes::range_iv (mode_rules.hpp): the counter plus the chunk's block
  // offset, or for CBC/CFB decryption the last ciphertext block of the chunk before, which the
  // host input still holds when the chunk is launched (its region is written back later).
  void ctr(const uint8_t counter[16], const uint8_t* in, uint8_t* out, size_t num_blocks) const override {
    run(in, out, num_blocks * 16, [&](Workspace::Slot& s, size_t offset, size_t take) {
      data_->ctr(chunk_iv(Mode::ctr, counter, in, offset), s.device_in, s.device_out, take, s.stream);
    });
  }
  void cbc_decrypt(const uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t num_blocks) const override {
    run(in, out, num_blocks * 16, [&](Workspace::Slot& s, size_t offset, size_t take) {
      data_->cbc_decrypt(chunk_iv(Mode::cbc, iv, in, offset), s.device_in, s.device_out, take, s.stream);
    });
  }
  void cfb_decrypt(const uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t num_blocks) const override {
    run(in, out, num_blocks * 16, [&](Workspace::Slot& s, size_t offset, size_t take) {
      data_->cfb_decrypt(chunk_iv(Mode::cfb, iv, in, offset), s.device_in, s.device_out, take, s.stream);
    });
  }
  void cbc_encrypt(uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t num_blocks) const override {
    serial(SerialMode::cbc_encrypt, iv, in, out, num_blocks);
  }
  void cfb_encrypt(uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t num_blocks) const override {
    serial(SerialMode::cfb_encrypt, iv, in, out, num_blocks);
  }
  void ofb(uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t num_blocks) const override {
    serial(SerialMode::ofb, iv, in, out, num_blocks);
  }

  void xts(Direction direction, const uint8_t tweak[16], const uint8_t* in, uint8_t* out,
           size_t len) const override {
    uint8_t encrypted_tweak[16];
    host_tweak_->encrypt_block(tweak, encrypted_tweak);
    const gc_block t0 = load(encrypted_tweak);
    gpucrypt::secure_zero(encrypted_tweak, sizeof encrypted_tweak);
    run(in, out, len, [&](Workspace::Slot& s, size_t offset, size_t take) {
      data_->xts(direction, t0, offset / 16, s.device_in, s.device_out, take, s.stream);
    });
  }

 private:
  template <class Launch>
  void run(const uint8_t* in, uint8_t* out, size_t len, Launch&& launch) const {
    if (len == 0) return;
    DeviceGuard guard(device_index_);
    Lease ws(device_index_);
    ws->run(in, out, len, launch, kNoDrain);
  }

  // The chaining value stays on the device between chunks (each chunk's kernel waits for the
  // previous one) and comes back once at the end.
  void serial(SerialMode mode, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t num_blocks) const {
    if (num_blocks == 0) return;
    DeviceGuard guard(device_index_);
    Lease ws(device_index_);
    std::memcpy(ws->pinned_iv(), iv, 16);
    Workspace::Slot& first = ws->slot(0);
    check(cudaMemcpyAsync(ws->device_iv(), ws->pinned_iv(), 16, cudaMemcpyHostToDevice, first.stream), "copy IV");
    ws->run(in, out, num_blocks * 16, [&](Workspace::Slot& s, size_t, size_t take) {
      data_->serial(mode, modes::zero_block(), ws->device_iv(), ws->device_iv(), s.device_in, s.device_out, take, s.stream);
    }, kNoDrain);
    // Every chunk has finished (run waited for each), so a plain copy sees the final value.
    check(cudaMemcpy(ws->pinned_iv(), ws->device_iv(), 16, cudaMemcpyDeviceToHost), "copy IV back");
    std::memcpy(iv, ws->pinned_iv(), 16);
  }

  const GpuVariant& variant_;
  int device_index_;
  std::unique_ptr<KeyedCipher> data_;
  std::unique_ptr<BlockEngine> host_;
  std::unique_ptr<BlockEngine> host_tweak_;
};

// ---- GCM ------------------------------------------------------------------------------------

void check_gcm_arguments(ByteSpan nonce, size_t aad_len, size_t data_len, size_t tag_len) {
  modes::gcm_check_arguments(nonce.size(), aad_len, data_len, tag_len);
}

// What the GPU GCM needs per key: the keyed cipher, H and its powers, host single blocks.
class GcmKey {
 public:
  GcmKey(const CipherName& name, ByteSpan key, const GpuVariant& v, int device_index)
      : variant_(v), device_index_(device_index) {
    DeviceGuard guard(device_index_);
    data_ = v.make(key.data(), name.key_bits);
    host_ = make_host_engine(name, key.data(), v);
    uint8_t block[16] = {};
    host_->encrypt_block(block, block);
    hash_subkey_ = gc_gf128_from_block(load(block));
    gpucrypt::secure_zero(block, sizeof block);
    gcm_segment_powers(hash_subkey_, &powers_);
  }
  ~GcmKey() {
    gpucrypt::secure_zero(&hash_subkey_, sizeof hash_subkey_);
    gpucrypt::secure_zero(&powers_, sizeof powers_);
  }

  const GpuVariant& variant() const { return variant_; }
  int device_index() const { return device_index_; }
  const KeyedCipher& cipher() const { return *data_; }
  gc_gf128 hash_subkey() const { return hash_subkey_; }

  modes::GcmContext context(ByteSpan nonce) const {
    modes::GcmContext ctx;
    ctx.hash_subkey = hash_subkey_;
    ctx.pre_counter = modes::gcm_pre_counter(hash_subkey_, nonce.data(), nonce.size());
    uint8_t block[16];
    gc_block_store(block, ctx.pre_counter);
    host_->encrypt_block(block, block);
    ctx.tag_mask = load(block);
    gpucrypt::secure_zero(block, sizeof block);
    return ctx;
  }

  // Segment parameters for data blocks starting at first_block of the message.
  GcmSegment segment(const modes::GcmContext& ctx, uint64_t first_block, bool encrypt) const {
    GcmSegment s = powers_;
    s.first_counter = gc_ctr32_add(ctx.pre_counter, first_block + 1);
    s.encrypt = encrypt;
    return s;
  }

  // Enqueues GCTR + GHASH of one segment; the segment's GHASH lands in *device_result.
  void enqueue(const modes::GcmContext& ctx, uint64_t first_block, bool encrypt, const uint8_t* in,
               uint8_t* out, size_t len, gc_gf128* device_hashes, gc_gf128* device_result,
               cudaStream_t stream) const {
    GcmSegment s = segment(ctx, first_block, encrypt);
    // The cipher's tiles may be larger than the minimum the buffers were sized for: fewer hashes.
    const size_t tile_blocks = data_->gcm_tile_blocks();
    const size_t tiles = gcm_num_tiles(len, tile_blocks);
    data_->gcm(s, in, out, len, device_hashes, stream);
    gpucrypt::secure_zero(&s, sizeof s);
    ghash_reduce(device_hashes, tiles, tile_blocks, hash_subkey_, device_hashes + tiles, device_result, stream);
  }

  // Enqueues GHASH alone over len bytes of ciphertext (device, 16-byte aligned) into
  // *device_result: the first pass of an open, before anything is deciphered.
  void enqueue_hash(const uint8_t* in, size_t len, gc_gf128* device_hashes, gc_gf128* device_result,
                    cudaStream_t stream) const {
    ghash_device(in, len, powers_, hash_subkey_, device_hashes, device_result, stream);
  }

  // Enqueues GCTR alone over data blocks starting at first_block (an open's second pass, once the
  // tag verified). GCM's counter increments its last 32 bits only; where they do not wrap within
  // the range (always with a 12-byte nonce: its counter starts at 2) that is the plain 128-bit CTR
  // the bulk kernel runs at full speed. Otherwise the GCM kernel runs and its GHASH goes unused
  // into device_hashes.
  void enqueue_ctr(const modes::GcmContext& ctx, uint64_t first_block, const uint8_t* in, uint8_t* out, size_t len,
                   gc_gf128* device_hashes, cudaStream_t stream) const {
    const gc_block first_counter = gc_ctr32_add(ctx.pre_counter, first_block + 1);
    const uint64_t num_blocks = (len + 15) / 16;
    if (uint64_t{gc_block_be_word(first_counter, 3)} + num_blocks <= (uint64_t{1} << 32)) {
      data_->ctr(first_counter, in, out, len, stream);
      return;
    }
    GcmSegment s = segment(ctx, first_block, false);
    data_->gcm(s, in, out, len, device_hashes, stream);
    gpucrypt::secure_zero(&s, sizeof s);
  }

  // The tag from the GHASH of the whole ciphertext.
  void tag(const modes::GcmContext& ctx, ByteSpan aad, gc_gf128 data_hash, uint64_t data_len, uint8_t* tag,
           size_t tag_len) const {
    const gc_gf128 aad_hash = modes::gcm_ghash_range(hash_subkey_, aad.data(), aad.size());
    modes::gcm_tag_from_hashes(ctx, aad_hash, data_hash, aad.size(), data_len, tag, tag_len);
  }

 private:
  const GpuVariant& variant_;
  int device_index_;
  std::unique_ptr<KeyedCipher> data_;
  std::unique_ptr<BlockEngine> host_;
  gc_gf128 hash_subkey_;
  GcmSegment powers_;
};

class CudaGcm final : public GcmCipher {
 public:
  CudaGcm(const CipherName& name, ByteSpan key, const GpuVariant& v, int device_index)
      : key_(name, key, v, device_index) {}

  const VariantInfo& variant() const override { return key_.variant().info; }
  std::string device() const override { return "cuda:" + std::to_string(key_.device_index()); }

  void seal(ByteSpan nonce, ByteSpan aad, ByteSpan plaintext, size_t tag_len, uint8_t* out) override {
    check_gcm_arguments(nonce, aad.size(), plaintext.size(), tag_len);
    modes::GcmContext ctx = key_.context(nonce);
    const gc_gf128 data_hash = process(ctx, true, plaintext.data(), out, plaintext.size());
    key_.tag(ctx, aad, data_hash, plaintext.size(), out + plaintext.size(), tag_len);
    ctx.wipe();
  }

  bool open(ByteSpan nonce, ByteSpan aad, ByteSpan input, size_t tag_len, uint8_t* out) override {
    if (input.size() < tag_len) return false;
    const size_t len = input.size() - tag_len;
    check_gcm_arguments(nonce, aad.size(), len, tag_len);
    modes::GcmContext ctx = key_.context(nonce);
    // Two passes over the data (it crosses PCIe twice): the tag from the ciphertext's GHASH first,
    // the plaintext only once it verified, so a failed open leaves out exactly as it was.
    const gc_gf128 data_hash = process(ctx, false, input.data(), nullptr, len);
    uint8_t expected[16];
    key_.tag(ctx, aad, data_hash, len, expected, tag_len);
    const bool ok = modes::constant_time_equal(expected, input.data() + len, tag_len);
    gpucrypt::secure_zero(expected, sizeof expected);
    if (ok) process(ctx, false, input.data(), out, len);
    ctx.wipe();
    return ok;
  }

 private:
  // Over the data in chunks: sealing, GCTR + GHASH in one pass; opening, GHASH alone when out is
  // null, else GCTR alone. Returns the GHASH of the ciphertext (chunk GHASHes combined in order on
  // the host), or zero for a GCTR-only pass.
  gc_gf128 process(const modes::GcmContext& ctx, bool encrypt, const uint8_t* in, uint8_t* out, size_t len) {
    gc_gf128 data_hash = gc_gf128_make(0, 0);
    if (len == 0) return data_hash;
    DeviceGuard guard(key_.device_index());
    Lease ws(key_.device_index());
    if (!encrypt && out != nullptr) {
      ws->run(in, out, len,
              [&](Workspace::Slot& s, size_t offset, size_t take) {
                key_.enqueue_ctr(ctx, offset / 16, s.device_in, s.device_out, take, s.device_hashes, s.stream);
              },
              kNoDrain);
      return data_hash;
    }
    ws->run(in, out, len,
            [&](Workspace::Slot& s, size_t offset, size_t take) {
              const size_t tiles = gcm_num_tiles(take);
              gc_gf128* result = s.device_hashes + tiles + ghash_reduce_scratch(tiles);
              if (encrypt)
                key_.enqueue(ctx, offset / 16, true, s.device_in, s.device_out, take, s.device_hashes, result, s.stream);
              else
                key_.enqueue_hash(s.device_in, take, s.device_hashes, result, s.stream);
              check(cudaMemcpyAsync(s.pinned_hash, result, sizeof(gc_gf128), cudaMemcpyDeviceToHost, s.stream),
                    "copy GHASH");
            },
            [&](Workspace::Slot& s, size_t, size_t take) {
              const uint64_t blocks = (take + 15) / 16;
              data_hash = gc_ghash_combine(data_hash, gc_gf128_pow(key_.hash_subkey(), blocks), *s.pinned_hash);
            });
    return data_hash;
  }

  GcmKey key_;
};

// ---- device-pointer API -------------------------------------------------------------------

bool misaligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 != 0; }

bool overlap(const void* a, const void* b, size_t len) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + len && y < x + len;
}

// Stream-ordered scratch memory, freed in stream order.
class StreamBuffer {
 public:
  StreamBuffer(size_t bytes, cudaStream_t stream) : stream_(stream) {
    check_allocation(cudaMallocAsync(&ptr_, bytes, stream), "cudaMallocAsync", bytes);
  }
  ~StreamBuffer() { cudaFreeAsync(ptr_, stream_); }
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  uint8_t* get() const { return static_cast<uint8_t*>(ptr_); }

 private:
  void* ptr_ = nullptr;
  cudaStream_t stream_;
};

// Kernels want 16-byte aligned pointers, and CBC/CFB decryption wants in != out (a thread reads
// the ciphertext block before its own). Otherwise the data goes through scratch copies.
template <class Body>
void with_usable_pointers(const void* in, void* out, size_t len, bool needs_distinct, cudaStream_t stream,
                          Body&& body) {
  const bool stage_out = misaligned(out);
  const bool stage_in = misaligned(in) || (needs_distinct && !stage_out && overlap(in, out, len));
  std::unique_ptr<StreamBuffer> in_copy, out_copy;
  const uint8_t* src = static_cast<const uint8_t*>(in);
  uint8_t* dst = static_cast<uint8_t*>(out);
  if (stage_in) {
    in_copy = std::make_unique<StreamBuffer>(len, stream);
    check(cudaMemcpyAsync(in_copy->get(), in, len, cudaMemcpyDeviceToDevice, stream), "staging copy");
    src = in_copy->get();
  }
  if (stage_out) {
    out_copy = std::make_unique<StreamBuffer>(len, stream);
    dst = out_copy->get();
  }
  body(src, dst);
  if (stage_out) check(cudaMemcpyAsync(out, dst, len, cudaMemcpyDeviceToDevice, stream), "staging copy");
}

class DeviceCipherImpl final : public DeviceCipher {
 public:
  DeviceCipherImpl(const CipherName& name, Direction direction, ByteSpan key, const GpuVariant& v, int device_index)
      : name_(name), direction_(direction), variant_(v), device_index_(device_index) {
    DeviceGuard guard(device_index_);
    data_ = v.make(key.data(), name.key_bits);
    if (name.mode == Mode::xts) host_tweak_ = make_host_engine(name, key.data() + name.key_bits / 8, v);
  }

  const VariantInfo& variant() const override { return variant_.info; }
  int device_index() const override { return device_index_; }

  void process(ByteSpan iv, const void* in, void* out, size_t len, cudaStream_t stream) override {
    const Mode mode = name_.mode;
    if (mode == Mode::ecb ? !iv.empty() : iv.size() != 16)
      throw std::invalid_argument(name_.canonical + (mode == Mode::ecb ? " takes no IV" : " needs a 16-byte IV/tweak"));
    if ((mode == Mode::ecb || mode == Mode::cbc) && len % 16 != 0)
      throw std::invalid_argument(name_.canonical + " without padding needs a multiple of 16 bytes, got " +
                                  std::to_string(len));
    if (mode == Mode::xts) modes::xts_check_data_unit(name_.canonical, len);
    if (len == 0) return;
    DeviceGuard guard(device_index_);
    const bool decrypt = direction_ == Direction::decrypt;
    const bool chained_decrypt = decrypt && (mode == Mode::cbc || mode == Mode::cfb);
    const gc_block iv_block = iv.empty() ? modes::zero_block() : load(iv.data());
    with_usable_pointers(in, out, len, chained_decrypt, stream, [&](const uint8_t* src, uint8_t* dst) {
      switch (mode) {
        case Mode::ecb: return data_->ecb(direction_, src, dst, len, stream);
        case Mode::ctr: return data_->ctr(iv_block, src, dst, len, stream);
        case Mode::cbc:
          if (decrypt) return data_->cbc_decrypt(iv_block, src, dst, len, stream);
          return data_->serial(SerialMode::cbc_encrypt, iv_block, nullptr, nullptr, src, dst, len, stream);
        case Mode::cfb:
          if (decrypt) return data_->cfb_decrypt(iv_block, src, dst, len, stream);
          return data_->serial(SerialMode::cfb_encrypt, iv_block, nullptr, nullptr, src, dst, len, stream);
        case Mode::ofb:
          return data_->serial(SerialMode::ofb, iv_block, nullptr, nullptr, src, dst, len, stream);
        case Mode::xts: {
          uint8_t t0[16];
          host_tweak_->encrypt_block(iv.data(), t0);
          data_->xts(direction_, load(t0), 0, src, dst, len, stream);
          gpucrypt::secure_zero(t0, sizeof t0);
          return;
        }
        case Mode::gcm: break;
      }
      throw std::logic_error("unreachable mode");
    });
  }

 private:
  CipherName name_;
  Direction direction_;
  const GpuVariant& variant_;
  int device_index_;
  std::unique_ptr<KeyedCipher> data_;
  std::unique_ptr<BlockEngine> host_tweak_;
};

class DeviceGcmImpl final : public DeviceGcm {
 public:
  DeviceGcmImpl(const CipherName& name, ByteSpan key, const GpuVariant& v, int device_index)
      : key_(name, key, v, device_index) {}

  const VariantInfo& variant() const override { return key_.variant().info; }

  void seal(ByteSpan nonce, ByteSpan aad, const void* in, void* out, size_t len, uint8_t* tag, size_t tag_len,
            cudaStream_t stream) override {
    check_gcm_arguments(nonce, aad.size(), len, tag_len);
    modes::GcmContext ctx = key_.context(nonce);
    key_.tag(ctx, aad, process(ctx, true, in, out, len, stream), len, tag, tag_len);
    ctx.wipe();
  }

  bool open(ByteSpan nonce, ByteSpan aad, const void* in, void* out, size_t len, ByteSpan tag,
            cudaStream_t stream) override {
    check_gcm_arguments(nonce, aad.size(), len, tag.size());
    modes::GcmContext ctx = key_.context(nonce);
    // The tag from a GHASH-only pass over the ciphertext first; GCTR writes out only once it
    // verified, so a failed open (in place too) leaves out exactly as it was.
    uint8_t expected[16];
    key_.tag(ctx, aad, ciphertext_hash(in, len, stream), len, expected, tag.size());
    const bool ok = modes::constant_time_equal(expected, tag.data(), tag.size());
    gpucrypt::secure_zero(expected, sizeof expected);
    if (ok && len > 0) decipher(ctx, in, out, len, stream);
    ctx.wipe();
    return ok;
  }

 private:
  gc_gf128 process(const modes::GcmContext& ctx, bool encrypt, const void* in, void* out, size_t len,
                   cudaStream_t stream) {
    if (len == 0) return gc_gf128_make(0, 0);
    DeviceGuard guard(key_.device_index());
    const size_t tiles = gcm_num_tiles(len);
    const size_t num_hashes = tiles + ghash_reduce_scratch(tiles) + 1;
    gc_gf128 data_hash;
    {
      StreamBuffer hashes(num_hashes * sizeof(gc_gf128), stream);
      auto* device_hashes = reinterpret_cast<gc_gf128*>(hashes.get());
      with_usable_pointers(in, out, len, false, stream, [&](const uint8_t* src, uint8_t* dst) {
        key_.enqueue(ctx, 0, encrypt, src, dst, len, device_hashes, device_hashes + num_hashes - 1, stream);
      });
      check(cudaMemcpyAsync(&data_hash, device_hashes + num_hashes - 1, sizeof data_hash, cudaMemcpyDeviceToHost,
                            stream),
            "copy GHASH");
      check(cudaMemsetAsync(device_hashes, 0, num_hashes * sizeof(gc_gf128), stream), "cudaMemset");
    }
    check(cudaStreamSynchronize(stream), "GCM kernels");
    return data_hash;
  }

  // GHASH of len bytes of device ciphertext (copied first when misaligned); waits for the stream.
  gc_gf128 ciphertext_hash(const void* in, size_t len, cudaStream_t stream) {
    gc_gf128 data_hash = gc_gf128_make(0, 0);
    if (len == 0) return data_hash;
    DeviceGuard guard(key_.device_index());
    const size_t tiles = gcm_num_tiles(len);
    const size_t num_hashes = tiles + ghash_reduce_scratch(tiles) + 1;
    {
      StreamBuffer hashes(num_hashes * sizeof(gc_gf128), stream);
      auto* device_hashes = reinterpret_cast<gc_gf128*>(hashes.get());
      std::unique_ptr<StreamBuffer> aligned_copy;
      const uint8_t* src = static_cast<const uint8_t*>(in);
      if (misaligned(in)) {
        aligned_copy = std::make_unique<StreamBuffer>(len, stream);
        check(cudaMemcpyAsync(aligned_copy->get(), in, len, cudaMemcpyDeviceToDevice, stream), "staging copy");
        src = aligned_copy->get();
      }
      key_.enqueue_hash(src, len, device_hashes, device_hashes + num_hashes - 1, stream);
      check(cudaMemcpyAsync(&data_hash, device_hashes + num_hashes - 1, sizeof data_hash, cudaMemcpyDeviceToHost,
                            stream),
            "copy GHASH");
      check(cudaMemsetAsync(device_hashes, 0, num_hashes * sizeof(gc_gf128), stream), "cudaMemset");
    }
    check(cudaStreamSynchronize(stream), "GHASH kernels");
    return data_hash;
  }

  // GCTR alone (the tag verified); waits for the stream, as open always has.
  void decipher(const modes::GcmContext& ctx, const void* in, void* out, size_t len, cudaStream_t stream) {
    DeviceGuard guard(key_.device_index());
    const size_t tiles = gcm_num_tiles(len);
    StreamBuffer hashes(tiles * sizeof(gc_gf128), stream);  // used only when the 32-bit counter wraps
    with_usable_pointers(in, out, len, false, stream, [&](const uint8_t* src, uint8_t* dst) {
      key_.enqueue_ctr(ctx, 0, src, dst, len, reinterpret_cast<gc_gf128*>(hashes.get()), stream);
    });
    check(cudaMemsetAsync(hashes.get(), 0, tiles * sizeof(gc_gf128), stream), "cudaMemset");
    check(cudaStreamSynchronize(stream), "GCM kernels");
  }

  GcmKey key_;
};

}  // namespace

// ---- launch support (keyed_cipher.hpp, kernels.cuh) ---------------------------------------

int current_sm_count() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const DeviceTable& t = device_table();
  auto it = t.properties.find(device);
  if (it != t.properties.end()) return it->second.multiProcessorCount;
  int count = 0;
  check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return count;
}

PolicyName current_launch_policy() {
  // Read each time: tests switch it between ciphers in one process (it costs one getenv per key).
  if (const char* forced = std::getenv("GPUCRYPT_CUDA_LAUNCH_POLICY"); forced != nullptr && *forced != '\0') {
    const std::string_view name(forced);
    if (name == "sm90") return PolicyName::sm90;
    if (name == "default") return PolicyName::generic;
    throw std::invalid_argument("GPUCRYPT_CUDA_LAUNCH_POLICY must be 'sm90' or 'default', got '" +
                                std::string(name) + "'");
  }
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const DeviceTable& t = device_table();
  auto it = t.properties.find(device);
  return it != t.properties.end() && it->second.major == 9 ? PolicyName::sm90 : PolicyName::generic;
}

std::string_view launch_policy_name(PolicyName policy) {
  return policy == PolicyName::sm90 ? "sm90" : "default";
}

int max_resident_blocks(const void* kernel, size_t smem_bytes, int threads_per_block) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, int> cache;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = cache.try_emplace({kernel, device}, 0);
  if (inserted) {
    try {
      if (smem_bytes > 48 * 1024)
        check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_bytes)),
              "cudaFuncSetAttribute");
      int blocks = 0;
      check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads_per_block, smem_bytes),
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
      if (blocks < 1) throw DeviceError("a kernel does not fit on this GPU (shared memory or registers)");
      it->second = blocks;
    } catch (...) {
      cache.erase(it);
      throw;
    }
  }
  return it->second;
}

// ---- backend.hpp entry points --------------------------------------------------------------

int device_count() { return static_cast<int>(device_table().ordinals.size()); }

std::string unavailable_reason() { return device_count() > 0 ? "" : device_table().reason; }

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> out;
  const DeviceTable& t = device_table();
  for (int ordinal : t.ordinals) {
    const cudaDeviceProp& prop = t.properties.at(ordinal);
    DeviceInfo d;
    d.name = "cuda:" + std::to_string(ordinal);
    d.kind = "cuda";
    d.type = "gpu";
    d.num_compute_units = prop.multiProcessorCount;
    d.memory_bytes = prop.totalGlobalMem;
    d.description = std::string(prop.name) + ", compute capability " + std::to_string(prop.major) + "." +
                    std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) + " SMs, " +
                    std::to_string(prop.totalGlobalMem >> 20) + " MiB";
    out.push_back(d);
  }
  return out;
}

const std::vector<VariantInfo>& variants() {
  static const std::vector<VariantInfo> all = [] {
    std::vector<VariantInfo> out;
    for (const auto& v : registered_variants()) out.push_back(v.info);
    // The Keccak kernels (keccak_kernels.cu) serve hash_many and the tree hashes.
    out.push_back({"keccak_cuda", "cuda", "keccak", true,
                   "Keccak-f[1600] lanes in registers, one thread per message or leaf (no tables)"});
    return out;
  }();
  return all;
}

const VariantInfo& default_variant(Algorithm algorithm) { return select_variant(algorithm, "").info; }

std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& name, Direction direction, ByteSpan key,
                                                   ByteSpan iv, std::string_view variant, int device_index) {
  const GpuVariant& v = select_variant(name.algorithm, variant);
  require_device(device_index);
  return make_engine_stream(name, direction, std::make_unique<CudaEngine>(name, key, v, device_index), iv);
}

std::unique_ptr<GcmCipher> create_gcm(const CipherName& name, ByteSpan key, std::string_view variant,
                                      int device_index) {
  const GpuVariant& v = select_variant(name.algorithm, variant);
  require_device(device_index);
  return std::make_unique<CudaGcm>(name, key, v, device_index);
}

// ---- device.hpp ---------------------------------------------------------------------------

std::unique_ptr<DeviceCipher> DeviceCipher::create(const CipherName& name, Direction direction, ByteSpan key,
                                                   std::string_view variant, int device_index) {
  if (name.mode == Mode::gcm) throw std::invalid_argument(name.canonical + " is an AEAD: use DeviceGcm");
  check_cipher_key(name, key);  // block_engine.hpp: the one request check of every entry point
  const GpuVariant& v = select_variant(name.algorithm, variant);
  require_device(device_index);
  return std::make_unique<DeviceCipherImpl>(name, direction, key, v, device_index);
}

const VariantInfo& process_device(const CipherName& name, Direction direction, ByteSpan key, ByteSpan iv,
                                  std::string_view variant, int device_index, const void* in, void* out,
                                  size_t len, cudaStream_t stream) {
  auto cipher = DeviceCipher::create(name, direction, key, variant, device_index);
  cipher->process(iv, in, out, len, stream);
  return cipher->variant();
}

std::unique_ptr<DeviceGcm> DeviceGcm::create(const CipherName& name, ByteSpan key, std::string_view variant,
                                             int device_index) {
  if (name.mode != Mode::gcm) throw std::invalid_argument(name.canonical + " is not GCM");
  check_cipher_key(name, key);
  const GpuVariant& v = select_variant(name.algorithm, variant);
  require_device(device_index);
  return std::make_unique<DeviceGcmImpl>(name, key, v, device_index);
}

}  // namespace gpucrypt::cuda
