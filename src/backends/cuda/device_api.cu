// device_api.cu: the CUDA backend's device-pointer API (device.hpp): DeviceCipher and DeviceGcm
// on data that already lives in GPU memory, enqueued on the caller's stream.
//
// Constant-time position: the variant's. Key schedules live in kernel parameters and in host
// objects that wipe them; the GHASH scratch is zeroed before it is freed. Single blocks (the XTS
// tweak, GCM's H and E(J0)) are encrypted on the host by the portable CPU code of the same
// technique (device.cu's make_host_engine).
#include <memory>
#include <string>

#include "backends/block_engine.hpp"
#include "backends/cuda/device.hpp"
#include "backends/cuda/device_internal.hpp"
#include "backends/cuda/keyed_cipher.hpp"
#include "backends/cuda/scratch.hpp"
#include "base/names.hpp"
#include "modes/gcm.hpp"
#include "modes/mode_rules.hpp"
#include "modes/xts.hpp"

namespace gpucrypt::cuda {

namespace {

bool misaligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 != 0; }

// Kernels want 16-byte aligned pointers; CBC/CFB decryption wants in != out (a thread reads the
// ciphertext block before its own); and no kernel takes an output that partially overlaps its
// input (a shifted view of one array: lanes would overwrite input other lanes have yet to read).
// Otherwise the data goes through scratch copies, so the result is what a copy of the input would
// give (numpy's rule for overlapping operands).
template <class Body>
void with_usable_pointers(const void* in, void* out, size_t len, bool needs_distinct, cudaStream_t stream,
                          Body&& body) {
  const bool stage_out = misaligned(out);
  const bool stage_in = misaligned(in) || (!stage_out && (needs_distinct ? ranges_overlap(in, len, out, len)
                                                                         : partially_overlapping(in, out, len)));
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
    if (name.mode == Mode::xts) {
      host_tweak_ = make_host_engine(name, key.data() + name.key_bits / 8, v);
      tweak_ = v.make(key.data() + name.key_bits / 8, name.key_bits);
    }
  }

  const VariantInfo& variant() const override { return variant_.info; }
  int device_index() const override { return device_index_; }
  using DeviceCipher::process;
  using DeviceCipher::process_units;

  void process_units(uint64_t first_unit, size_t unit_len, const void* in, void* out, size_t len,
                     StreamHandle handle) override {
    const cudaStream_t stream = stream_of(handle);
    if (name_.mode != Mode::xts)
      throw std::invalid_argument(name_.canonical + ": data units are an XTS operation (use process)");
    modes::xts_check_units(name_.canonical, unit_len, len);
    if (len == 0) return;
    DeviceGuard guard(device_index_);
    if (unit_len % 16 != 0) return process_ragged_units(first_unit, unit_len, in, out, len, stream);
    with_usable_pointers(in, out, len, false, stream, [&](const uint8_t* src, uint8_t* dst) {
      enqueue_xts_units(*data_, *tweak_, direction_, {first_unit, 0}, unit_len, src, dst, len, stream);
    });
  }

  // Units with a ragged tail (ciphertext stealing in each): a launch per unit. Unit u starts at
  // u * unit_len, which is not 16-byte aligned, and the kernels read and write 16 bytes at a time
  // (an unaligned access is a sticky error that ends the CUDA context): the units are copied to
  // scratch at a 16-byte pitch, one 2D copy each way, and enciphered there in place. The copies
  // also make any overlap of in and out harmless.
  void process_ragged_units(uint64_t first_unit, size_t unit_len, const void* in, void* out, size_t len,
                            cudaStream_t stream) {
    const size_t num_units = len / unit_len, pitch = (unit_len + 15) / 16 * 16;
    StreamBuffer scratch(num_units * pitch, stream);
    check(cudaMemcpy2DAsync(scratch.get(), pitch, in, unit_len, unit_len, num_units, cudaMemcpyDeviceToDevice, stream),
          "staging copy");
    uint8_t tweak[16], t0[16];
    for (size_t u = 0; u < num_units; ++u) {
      modes::XtsUnitNumber{first_unit, 0}.plus(u).tweak(tweak);
      host_tweak_->encrypt_block(tweak, t0);
      uint8_t* unit = scratch.get() + u * pitch;
      data_->xts(direction_, load(t0), 0, unit, unit, unit_len, stream);
    }
    gpucrypt::secure_zero(t0, sizeof t0);
    check(cudaMemcpy2DAsync(out, unit_len, scratch.get(), pitch, unit_len, num_units, cudaMemcpyDeviceToDevice, stream),
          "staging copy");
  }

  void process(ByteSpan iv, const void* in, void* out, size_t len, StreamHandle handle) override {
    const cudaStream_t stream = stream_of(handle);
    const Mode mode = name_.mode;
    if (mode == Mode::ecb ? !iv.empty() : iv.size() != 16)
      throw std::invalid_argument(name_.canonical + (mode == Mode::ecb ? " takes no IV" : " needs a 16-byte IV/tweak"));
    modes::check_whole_blocks(name_, len);
    if (mode == Mode::xts) modes::xts_check_data_unit(name_.canonical, len);
    if (len == 0) return;
    DeviceGuard guard(device_index_);
    // A bulk shape that reads the block before (CBC and CFB decryption) needs in and out apart.
    bool reads_previous = false;
    modes::visit_op<modes::ModeKind::bulk>(mode, direction_, [&](auto op) {
      using Op = decltype(op);
      reads_previous = modes::bulk_reads_previous(Op::ModeTraits::bulk_op(Op::kDirection));
    });
    const gc_block iv_block = iv.empty() ? modes::zero_block() : load(iv.data());
    with_usable_pointers(in, out, len, reads_previous, stream, [&](const uint8_t* src, uint8_t* dst) {
      switch (modes::kind(mode, direction_)) {
        case modes::ModeKind::bulk: return data_->bulk(mode, direction_, iv_block, src, dst, len, stream);
        case modes::ModeKind::serial:
          return data_->serial(modes::serial_op(mode, direction_), iv_block, nullptr, nullptr, src, dst, len, stream);
        case modes::ModeKind::xts: {
          uint8_t t0[16];
          host_tweak_->encrypt_block(iv.data(), t0);
          data_->xts(direction_, load(t0), 0, src, dst, len, stream);
          gpucrypt::secure_zero(t0, sizeof t0);
          return;
        }
        case modes::ModeKind::aead: break;
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
  std::unique_ptr<KeyedCipher> tweak_;  // XTS data units: K2 on the device
};

class DeviceGcmImpl final : public DeviceGcm {
 public:
  DeviceGcmImpl(const CipherName& name, ByteSpan key, const GpuVariant& v, int device_index)
      : key_(name, key, v, device_index) {}

  const VariantInfo& variant() const override { return key_.variant().info; }
  using DeviceGcm::open;
  using DeviceGcm::seal;

  void seal(ByteSpan nonce, ByteSpan aad, const void* in, void* out, size_t len, uint8_t* tag, size_t tag_len,
            StreamHandle handle) override {
    const cudaStream_t stream = stream_of(handle);
    check_gcm_arguments(nonce, aad.size(), len, tag_len);
    modes::GcmContext ctx = key_.context(nonce);
    key_.tag(ctx, aad, process(ctx, true, in, out, len, stream), len, tag, tag_len);
    ctx.wipe();
  }

  bool open(ByteSpan nonce, ByteSpan aad, const void* in, void* out, size_t len, ByteSpan tag,
            StreamHandle handle) override {
    const cudaStream_t stream = stream_of(handle);
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

// ---- device.hpp ---------------------------------------------------------------------------

std::unique_ptr<DeviceCipher> DeviceCipher::create(const CipherName& name, Direction direction, ByteSpan key,
                                                   std::string_view variant, int device_index) {
  if (name.mode == Mode::gcm) throw std::invalid_argument(name.canonical + " is an AEAD: use DeviceGcm");
  check_cipher_key(name, key);  // block_engine.hpp: the one request check of every entry point
  const GpuVariant& v = select_variant(name.algorithm, variant);
  require_device(device_index);
  return std::make_unique<DeviceCipherImpl>(name, direction, key, v, device_index);
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
