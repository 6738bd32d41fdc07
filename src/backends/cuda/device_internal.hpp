// device_internal.hpp: what the CUDA backend's host-side files share: a registered variant, the
// variant choice, the device check and the host engine for single blocks (device.cu), and GcmKey,
// the per-key state of the GPU GCM over host memory (host_engine.cu) and over device pointers
// (device_api.cu). Constant-time position: as theirs (device.cu); GcmKey keeps H and its powers
// on the host and wipes them with the key.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "backends/block_engine.hpp"
#include "backends/cuda/gcm_overlap.hpp"
#include "backends/cuda/keyed_cipher.hpp"
#include "modes/gcm.hpp"

namespace gpucrypt::cuda {

struct GpuVariant {
  VariantInfo info;
  std::unique_ptr<KeyedCipher> (*make)(const uint8_t* key, int key_bits);
  const char* host_variant;  // the portable CPU variant of the same technique, for single blocks
};

// The requested CUDA variant of the algorithm, or its default (device.cu, the one place that
// chooses); throws std::invalid_argument for a name that is not a CUDA variant of it.
const GpuVariant& select_variant(Algorithm algorithm, std::string_view requested);
// Throws DeviceError("device 'cuda:N' is not available: ...") unless cuda:N is usable.
void require_device(int device_index);
// Host engine for single blocks under one key (one XTS half).
std::unique_ptr<BlockEngine> make_host_engine(const CipherName& name, const uint8_t* key, const GpuVariant& v);

inline gc_block load(const uint8_t* p) { return gc_block_load(p); }

// XTS over len / unit_len data units numbered first, first + 1, ... (the tweak of unit u is its
// number as a 128-bit little-endian integer, IEEE 1619 / dm-crypt's plain64), enqueued on
// `stream` over device memory: tweak_cipher (K2) enciphers the numbers, then one launch of data
// (K1) does every unit. unit_len a multiple of 16, len a multiple of unit_len (xts_units.cu).
void enqueue_xts_units(const KeyedCipher& data, const KeyedCipher& tweak_cipher, Direction direction,
                       modes::XtsUnitNumber first, size_t unit_len, const uint8_t* in, uint8_t* out, size_t len,
                       cudaStream_t stream);

inline void check_gcm_arguments(ByteSpan nonce, size_t aad_len, size_t data_len, size_t tag_len) {
  modes::gcm_check_arguments(nonce.size(), aad_len, data_len, tag_len);
}

// Where a GCM key's GHASH passes run (ghash.cu): on the tensor cores once the key has hashed
// kGhashTablesAfterBytes (ghash_mma.hpp's tables are made then: 0.25 ms of host time and 66 KiB
// of device memory, which a key that hashes less never pays, and which a key that hashes more
// has by then spent on the integer pipe's GHASH: 128 MiB take 0.28 ms there on an H200, 0.09 on
// the tensor cores), or always ("tensor") or never ("integer") as GPUCRYPT_CUDA_GHASH says when
// the key is made ("auto", empty or unset: the rule above). Throws std::invalid_argument for
// another value (device.cu).
inline constexpr uint64_t kGhashTablesAfterBytes = uint64_t{128} << 20;
enum class GhashRoute { automatic, tensor, integer };
GhashRoute ghash_route_from_env();

// What the GPU GCM needs per key: the keyed cipher, H and its powers (and, once it has hashed
// enough, their tensor-core tables), host single blocks, and the side stream of the overlapped
// seal (made at its first use).
class GcmKey {
 public:
  GcmKey(const CipherName& name, ByteSpan key, const GpuVariant& v, int device_index)
      : variant_(v),
        device_index_(device_index),
        overlap_shape_(gcm_overlap_shape_from_env()),
        ghash_route_(ghash_route_from_env()) {
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

  // How a seal's GCTR and GHASH run: the cipher's choice (KeyedCipher::gcm_seal_in_two_passes;
  // its two passes overlapped where GPUCRYPT_CUDA_GCM_OVERLAP turns that on, gcm_overlap.hpp), or one
  // named (bench/gpu_bench.cu times each; the result is the same every way). `overlapped` without
  // a shape from GPUCRYPT_CUDA_GCM_OVERLAP takes GcmOverlapShape's defaults.
  enum class SealRoute { cipher_choice, fused, two_passes, overlapped };

  // Enqueues GCTR + GHASH of one segment; the segment's GHASH lands in *device_result.
  // device_hashes: gcm_num_tiles(len) + ghash_reduce_scratch(gcm_num_tiles(len)) elements.
  void enqueue(const modes::GcmContext& ctx, uint64_t first_block, bool encrypt, const uint8_t* in,
               uint8_t* out, size_t len, gc_gf128* device_hashes, gc_gf128* device_result,
               cudaStream_t stream, SealRoute route = SealRoute::cipher_choice) const {
    const bool two_passes =
        route == SealRoute::cipher_choice ? data_->gcm_seal_in_two_passes() : route != SealRoute::fused;
    const bool overlapped =
        route == SealRoute::overlapped || (route == SealRoute::cipher_choice && overlap_shape_.has_value());
    const gc_block first_counter = gc_ctr32_add(ctx.pre_counter, first_block + 1);
    if (encrypt && two_passes && counter_is_plain_ctr(first_counter, len)) {
      if (overlapped) {
        GcmSegment powers = hashing_powers(len);
        overlap_.seal(*data_, first_counter, powers, hash_subkey_, in, out, len, device_hashes, device_result, stream,
                      overlap_shape_.value_or(GcmOverlapShape{}));
        gpucrypt::secure_zero(&powers, sizeof powers);
        return;
      }
      data_->ctr(first_counter, in, out, len, stream);
      enqueue_hash(out, len, device_hashes, device_result, stream);  // stream order: after the ciphertext
      return;
    }
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
    GcmSegment powers = hashing_powers(len);
    ghash_device(in, len, powers, hash_subkey_, device_hashes, device_result, stream);
    gpucrypt::secure_zero(&powers, sizeof powers);
  }

  // Enqueues GCTR alone over data blocks starting at first_block (an open's second pass, once the
  // tag verified). GCM's counter increments its last 32 bits only; where they do not wrap within
  // the range (always with a 12-byte nonce: its counter starts at 2) that is the plain 128-bit CTR
  // the bulk kernel runs at full speed. Otherwise the GCM kernel runs and its GHASH goes unused
  // into device_hashes.
  void enqueue_ctr(const modes::GcmContext& ctx, uint64_t first_block, const uint8_t* in, uint8_t* out, size_t len,
                   gc_gf128* device_hashes, cudaStream_t stream) const {
    const gc_block first_counter = gc_ctr32_add(ctx.pre_counter, first_block + 1);
    if (counter_is_plain_ctr(first_counter, len)) {
      data_->ctr(first_counter, in, out, len, stream);
      return;
    }
    GcmSegment s = segment(ctx, first_block, false);
    data_->gcm(s, in, out, len, device_hashes, stream);
    gpucrypt::secure_zero(&s, sizeof s);
  }

  // Whether GCM's counter (inc32) over len bytes from first_counter equals the 128-bit CTR the
  // bulk kernel runs: its last 32 bits must not wrap within the range.
  static bool counter_is_plain_ctr(gc_block first_counter, size_t len) {
    const uint64_t num_blocks = (len + 15) / 16;
    return uint64_t{gc_block_be_word(first_counter, 3)} + num_blocks <= (uint64_t{1} << 32);
  }

  // The tag from the GHASH of the whole ciphertext.
  void tag(const modes::GcmContext& ctx, ByteSpan aad, gc_gf128 data_hash, uint64_t data_len, uint8_t* tag,
           size_t tag_len) const {
    const gc_gf128 aad_hash = modes::gcm_ghash_range(hash_subkey_, aad.data(), aad.size());
    modes::gcm_tag_from_hashes(ctx, aad_hash, data_hash, aad.size(), data_len, tag, tag_len);
  }

 private:
  // The powers for a GHASH pass over len more bytes, with the tensor-core tables where
  // ghash_route_ says (made here, on the key's device, the first time it does).
  GcmSegment hashing_powers(size_t len) const {
    std::lock_guard<std::mutex> lock(ghash_mutex_);
    hashed_bytes_ += len;
    const bool wanted = ghash_route_ == GhashRoute::tensor ||
                        (ghash_route_ == GhashRoute::automatic && hashed_bytes_ >= kGhashTablesAfterBytes);
    if (wanted && !ghash_tables_) {
      DeviceGuard guard(device_index_);
      ghash_tables_ = std::make_unique<DeviceGhashTables>(hash_subkey_);
    }
    GcmSegment powers = powers_;
    if (ghash_tables_) powers.ghash_tables = ghash_tables_->get();
    return powers;
  }

  const GpuVariant& variant_;
  int device_index_;
  std::unique_ptr<KeyedCipher> data_;
  std::unique_ptr<BlockEngine> host_;
  gc_gf128 hash_subkey_;
  GcmSegment powers_;  // ghash_tables unset: hashing_powers adds them
  std::optional<GcmOverlapShape> overlap_shape_;  // as GPUCRYPT_CUDA_GCM_OVERLAP said when the key was made (nullopt: two passes)
  mutable GcmOverlap overlap_;                    // its stream and event: made by the first seal that needs them
  GhashRoute ghash_route_;                        // as GPUCRYPT_CUDA_GHASH said when the key was made
  mutable std::mutex ghash_mutex_;                // guards the two below
  mutable uint64_t hashed_bytes_ = 0;             // GHASH input so far
  mutable std::unique_ptr<DeviceGhashTables> ghash_tables_;  // made by hashing_powers
};

}  // namespace gpucrypt::cuda
