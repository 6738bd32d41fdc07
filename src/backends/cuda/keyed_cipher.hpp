// keyed_cipher.hpp: one keyed cipher on the GPU, as the device layer (device.cu) sees it.
//
// A KeyedCipher holds a key schedule expanded on the host and launches the kernels of
// kernels.cuh for it on a caller's CUDA stream. All pointers are device pointers; every call is
// asynchronous. Each cipher family (aes_ttable_smem32, aes_bitsliced, camellia_sbox_smem32,
// camellia_ttable_smem, sc2000_table_smem) lives in its own .cu file, compiled in parallel, and exports one factory.
// Constant-time position: the family's (see that file); the launch code adds no secret-dependent
// branch (lengths and block indices are public).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "backends/cuda/cuda_check.hpp"
#include "core/gf128.h"
#include "core/platform.h"
#include "gpucrypt/cipher.hpp"
#include "modes/mode_kind.hpp"

namespace gpucrypt::cuda {


// The serial modes run one message per thread (a single message is one thread: slow, and the
// batch engine is what gives them many messages); one kernel serves them all, told which by its
// modes::serial_op code (mode_kind.hpp).
using SerialMode = modes::SerialOp;

// GCM over one segment of a message: CTR with GCM's 32-bit counter plus GHASH of the
// ciphertext, fused in one pass. The kernel writes one partial hash per tile of
// KeyedCipher::gcm_tile_blocks() blocks (padded in front with zero blocks, which GHASH ignores);
// ghash_reduce (ghash.cu) folds them into the segment's GHASH. Everything here is secret (powers of H).
// Tiles are never smaller than kGcmMinTileBlocks, so gcm_num_tiles(len) bounds the tile count of
// every cipher (buffers are sized with it).
inline constexpr int kGcmMinTileBlocks = 512;  // 32 lanes x 16 blocks
namespace ghash_mma {
struct Tables;  // ghash_mma.hpp
}
struct GcmSegment {
  gc_block first_counter;     // inc32^(first_block_index + 1)(J0): counter of the segment's block 0
  gc_gf128 h_pow32;           // H^32: Horner step of a lane, whose blocks are 32 apart
  gc_gf128 lane_pow[32];      // lane_pow[L] = H^(32 - L): brings lane L's sum to the tile's end
  bool encrypt;
  // The key's tensor-core GHASH tables (device memory, DeviceGhashTables), which ghash_tiles and
  // ghash_device use where set; null: they run the carry-less multiply on the integer pipe.
  const ghash_mma::Tables* ghash_tables = nullptr;
};
// Number of tile hashes the GCM kernel writes for len bytes (at least 1).
inline size_t gcm_num_tiles(size_t len, size_t tile_blocks = kGcmMinTileBlocks) {
  const size_t num_blocks = (len + 15) / 16;
  return num_blocks == 0 ? 1 : (num_blocks + tile_blocks - 1) / tile_blocks;
}

class KeyedCipher {
 public:
  virtual ~KeyedCipher() = default;
  // A direction of a mode of the bulk kind (modes::kind: ECB, CTR, CBC and CFB decryption) over
  // len bytes from `start`, the start value of in[0] (modes::range_iv: CTR's counter block, the
  // ciphertext block before in[0]; ECB: unused). Whole blocks for a mode that needs them; else a
  // ragged end is allowed. When the mode's shape reads the block before (modes::bulk_reads_previous:
  // CBC and CFB decryption) in and out must not overlap (a thread reads the block before its own,
  // which another thread may already have overwritten).
  virtual void bulk(Mode mode, Direction direction, gc_block start, const uint8_t* in, uint8_t* out, size_t len,
                    cudaStream_t stream) const = 0;
  // bulk() for the callers that want a block function or a keystream: ECB (len % 16 == 0; XTS's
  // unit tweaks) and CTR from `counter` (GCM's counter part).
  void ecb(Direction direction, const uint8_t* in, uint8_t* out, size_t len, cudaStream_t stream) const {
    bulk(Mode::ecb, direction, gc_block{}, in, out, len, stream);
  }
  void ctr(gc_block counter, const uint8_t* in, uint8_t* out, size_t len, cudaStream_t stream) const {
    bulk(Mode::ctr, Direction::encrypt, counter, in, out, len, stream);
  }
  // XTS blocks [first_block, first_block + len / 16) of a data unit whose block-0 tweak is
  // encrypted_tweak (E_K2 of the tweak); a ragged tail (ciphertext stealing) is allowed in the
  // range that ends the data unit, which must then hold at least one full block.
  virtual void xts(Direction direction, gc_block encrypted_tweak, uint64_t first_block,
                   const uint8_t* in, uint8_t* out, size_t len, cudaStream_t stream) const = 0;
  // XTS over len / (16 * unit_blocks) data units of unit_blocks whole blocks each, back to back;
  // unit u's block-0 tweak is unit_tweaks[u] (device memory, E_K2 of the unit's tweak). One launch
  // for all units (xts_units.cu computes the tweaks and checks the lengths).
  virtual void xts_units(Direction direction, const gc_block* unit_tweaks, uint64_t unit_blocks, const uint8_t* in,
                         uint8_t* out, size_t len, cudaStream_t stream) const = 0;
  // A direction of a mode of the serial kind (CBC and CFB encryption, OFB), named by its
  // modes::serial_op: one message, one thread. The chaining value is read from iv_in (device) when
  // not null, else iv; the final one is written to iv_out (device) when not null. A mode that takes
  // any length accepts a ragged tail (one whole message only); CBC needs whole blocks.
  virtual void serial(SerialMode mode, gc_block iv, const gc_block* iv_in, gc_block* iv_out,
                      const uint8_t* in, uint8_t* out, size_t len, cudaStream_t stream) const = 0;
  // Writes gcm_num_tiles(len, gcm_tile_blocks()) tile hashes to tile_hashes.
  virtual uint64_t gcm_tile_blocks() const = 0;
  virtual void gcm(const GcmSegment& segment, const uint8_t* in, uint8_t* out, size_t len,
                   gc_gf128* tile_hashes, cudaStream_t stream) const = 0;
  // Whether sealing is faster as ctr() and then ghash_device() over the ciphertext than as gcm():
  // a cipher fast enough that GHASH's multiplies and the cipher's rounds together overflow the
  // fused kernel's registers (aes_bitsliced8). GcmKey::enqueue takes that route where GCM's 32-bit
  // counter does not wrap (always with a 12-byte nonce).
  virtual bool gcm_seal_in_two_passes() const = 0;
  // ctr() on a grid of at most max_ctas_per_sm CTAs per SM (0: as many as fit), so that another
  // kernel's CTAs stay resident beside it (GCM's overlapped seal, gcm_overlap.hpp). Same bytes.
  virtual void ctr_beside(gc_block counter, const uint8_t* in, uint8_t* out, size_t len, int max_ctas_per_sm,
                          cudaStream_t stream) const = 0;
};

// Factories, one per family; key is one cipher key (one XTS half), key_bits 128/192/256.
std::unique_ptr<KeyedCipher> make_aes_ttable_smem32(const uint8_t* key, int key_bits);
std::unique_ptr<KeyedCipher> make_aes_bitsliced(const uint8_t* key, int key_bits);
std::unique_ptr<KeyedCipher> make_aes_bitsliced32(const uint8_t* key, int key_bits);
std::unique_ptr<KeyedCipher> make_aes_bitsliced8(const uint8_t* key, int key_bits);
std::unique_ptr<KeyedCipher> make_camellia_ttable_smem(const uint8_t* key, int key_bits);
std::unique_ptr<KeyedCipher> make_camellia_sbox_smem32(const uint8_t* key, int key_bits);
std::unique_ptr<KeyedCipher> make_sc2000_table_smem(const uint8_t* key, int key_bits);

// ghash.cu. Folds num_hashes GHASH partials (each over span_blocks blocks, in message order)
// into one GHASH value written to *result (device), using scratch (device, at least
// ghash_reduce_scratch(num_hashes) elements). hash_subkey is H. Asynchronous on stream.
size_t ghash_reduce_scratch(size_t num_hashes);
void ghash_reduce(const gc_gf128* hashes, size_t num_hashes, uint64_t span_blocks,
                  gc_gf128 hash_subkey, gc_gf128* scratch, gc_gf128* result, cudaStream_t stream);
// GHASH from zero of len bytes of device data (16-byte aligned; the last partial block
// zero-padded) into *result (device); hashes: at least gcm_num_tiles(len) +
// ghash_reduce_scratch(gcm_num_tiles(len)) elements of device scratch. powers: from
// gcm_segment_powers, with the key's ghash_tables where it has them (then the tile pass runs on
// the tensor cores). Asynchronous on stream.
void ghash_device(const uint8_t* data, size_t len, const GcmSegment& powers, gc_gf128 hash_subkey, gc_gf128* hashes,
                  gc_gf128* result, cudaStream_t stream);
// ghash_device's first pass alone, over a piece of a message: `pad_blocks` zero blocks in front
// of len bytes at data (16-byte aligned), their kGcmMinTileBlocks-block tile hashes to
// tile_hashes[0 .. (pad_blocks + blocks) / kGcmMinTileBlocks), rounded up. With ghash_device's
// padding in front of the first piece only, and every piece but the last a whole number of tiles
// of whole blocks, the pieces write exactly ghash_device's tile hashes, which ghash_reduce then
// folds (gcm_overlap.cu). At most max_ctas_per_sm CTAs per SM (0: as many as fit). Asynchronous.
void ghash_tiles(const uint8_t* data, size_t len, uint64_t pad_blocks, const GcmSegment& powers,
                 gc_gf128* tile_hashes, int max_ctas_per_sm, cudaStream_t stream);
// Tiles that one wave of ghash_tiles' grid takes at that cap (a warp a tile).
uint64_t ghash_tiles_per_wave(int max_ctas_per_sm);
// The powers a GCM segment needs, from H (ghash_tables is left as it was).
void gcm_segment_powers(gc_gf128 hash_subkey, GcmSegment* segment);
// A key's GHASH tables for the tensor cores (ghash_mma.hpp) in the current device's memory: made
// where the device has sm_80's binary MMA (empty elsewhere: get() is null), wiped and freed with
// the key. Building them takes about 0.25 ms of host time, so GcmKey makes them only once a key
// has hashed enough to gain (device_internal.hpp, GhashRoute).
class DeviceGhashTables {
 public:
  DeviceGhashTables() = default;
  explicit DeviceGhashTables(gc_gf128 hash_subkey);
  ~DeviceGhashTables();
  DeviceGhashTables(const DeviceGhashTables&) = delete;
  DeviceGhashTables& operator=(const DeviceGhashTables&) = delete;
  const ghash_mma::Tables* get() const { return tables_; }

 private:
  ghash_mma::Tables* tables_ = nullptr;
  int device_ = -1;
};

// Number of SMs of the current device (cached per device).
int current_sm_count();

}  // namespace gpucrypt::cuda
