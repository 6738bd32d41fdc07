// host_engine.cu: the CUDA backend over host memory: the BlockEngine (CudaEngine) and the
// GcmCipher (CudaGcm) behind create_cipher_stream and create_gcm, and the staging workspaces
// they move data through.
//
// Constant-time position: the variant's. Host memory passes through pinned staging buffers and
// device buffers that are zeroed when a call returns them to the pool; key schedules live in
// kernel parameters and in host objects that wipe them. Single blocks (the stream driver's
// partial CFB/OFB/CTR blocks, the XTS tweak, GCM's H and E(J0)) are encrypted on the host by the
// portable CPU code of the same technique (aes_ttable for aes_ttable_smem32, aes_bitsliced for
// aes_bitsliced, ...): a kernel launch per block would cost tens of microseconds.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "backends/backend.hpp"
#include "backends/block_engine.hpp"
#include "backends/cpu/thread_pool.hpp"
#include "backends/cuda/device.hpp"
#include "backends/cuda/device_internal.hpp"
#include "backends/cuda/keyed_cipher.hpp"
#include "backends/cuda/workspace_pool.hpp"
#include "modes/gcm.hpp"
#include "modes/mode_rules.hpp"
#include "modes/xts.hpp"

namespace gpucrypt::cuda {

namespace {

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

// Workspaces are lent one call at a time by the backend's one pool (workspace_pool.hpp).
using StagingLease = Lease<Workspace>;

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
    if (name.mode == Mode::xts) {
      host_tweak_ = make_host_engine(name, key.data() + key_len, v);
      tweak_ = v.make(key.data() + key_len, name.key_bits);
    }
  }

  const VariantInfo& variant() const override { return variant_.info; }
  std::string device() const override { return "cuda:" + std::to_string(device_index_); }
  bool wants_host_threads() const override { return false; }

  void encrypt_block(const uint8_t in[16], uint8_t out[16]) const override { host_->encrypt_block(in, out); }

  // Every mode of the bulk kind: each chunk starts from modes::range_iv (mode_rules.hpp): the
  // counter plus the chunk's block offset, or for CBC/CFB decryption the last ciphertext block of
  // the chunk before, which the host input still holds when the chunk is launched (its region is
  // written back later).
  void bulk(Mode mode, Direction direction, const uint8_t start[16], const uint8_t* in, uint8_t* out,
            size_t num_blocks) const override {
    run(in, out, num_blocks * 16, [&](Workspace::Slot& s, size_t offset, size_t take) {
      data_->bulk(mode, direction, chunk_iv(mode, start, in, offset), s.device_in, s.device_out, take, s.stream);
    });
  }
  void serial(Mode mode, Direction direction, uint8_t chain[16], const uint8_t* in, uint8_t* out,
              size_t num_blocks) const override {
    serial(modes::serial_op(mode, direction), chain, in, out, num_blocks);
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

  // Every unit of a chunk in one launch (xts_units.cu). The chunks are 16 MiB or a smaller power
  // of two, so units of a power-of-two length up to 1 MiB never straddle two; other lengths (not
  // whole blocks, or not a power of two) take xts() per unit, a launch each.
  void xts_units(Direction direction, modes::XtsUnitNumber first, size_t unit_len, const uint8_t* in, uint8_t* out,
                 size_t len) const override {
    const bool whole_chunks = unit_len >= 16 && unit_len <= (size_t(1) << 20) && (unit_len & (unit_len - 1)) == 0;
    if (!whole_chunks) return BlockEngine::xts_units(direction, first, unit_len, in, out, len);
    run(in, out, len, [&](Workspace::Slot& s, size_t offset, size_t take) {
      if (offset % unit_len != 0 || take % unit_len != 0)
        throw DeviceError("XTS data units: a " + std::to_string(take) + "-byte staging chunk cuts a " +
                          std::to_string(unit_len) + "-byte unit (page-locked memory is short)");
      enqueue_xts_units(*data_, *tweak_, direction, first.plus(offset / unit_len), unit_len, s.device_in,
                        s.device_out, take, s.stream);
    });
  }

 private:
  template <class Launch>
  void run(const uint8_t* in, uint8_t* out, size_t len, Launch&& launch) const {
    if (len == 0) return;
    DeviceGuard guard(device_index_);
    StagingLease ws(device_index_);
    ws->run(in, out, len, launch, kNoDrain);
  }

  // The chaining value stays on the device between chunks (each chunk's kernel waits for the
  // previous one) and comes back once at the end.
  void serial(SerialMode mode, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t num_blocks) const {
    if (num_blocks == 0) return;
    DeviceGuard guard(device_index_);
    StagingLease ws(device_index_);
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
  std::unique_ptr<KeyedCipher> tweak_;  // XTS data units: K2 on the device
};

// ---- GCM over host memory -----------------------------------------------------------------

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
    StagingLease ws(key_.device_index());
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

}  // namespace

// ---- backend.hpp entry points --------------------------------------------------------------

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

}  // namespace gpucrypt::cuda
