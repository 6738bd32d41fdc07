// gcm_overlap.hpp: GCM's seal for the families that seal in two passes (kernels.cuh,
// kGcmSealInTwoPasses: aes_bitsliced8), with the passes overlapped on the same SMs.
//
// The two-pass seal runs the bulk CTR kernel over the whole range, then the GHASH tile pass over
// the ciphertext it wrote. The first is bound by the integer ALU pipe (LOP3), the second by the
// wide multiplier (IMAD.WIDE); one after the other, each leaves the other's pipe mostly idle
// (docs/performance.md, 2026-11-27, fourth session). Here the range is cut into segments of whole
// GHASH tiles: segment k's CTR runs on the caller's stream and segment k's GHASH tiles on a side
// stream once an event says that CTR is done, so that segment k + 1's CTR and segment k's GHASH
// run at the same time. Both kernels' grids are capped (GcmOverlapShape) so that CTAs of both fit
// in one SM's register file together; the first segment's CTR (nothing to hash yet) and the last
// segment's GHASH (nothing left to encipher) run uncapped. The tile hashes are exactly
// ghash_device's (the segments cut the message where its tiles end, with its one padding in
// front of the first), and ghash_reduce folds them as it does for the two-pass route: the same
// ciphertext and the same GHASH, bit for bit.
//
// Constant-time: as the two kernels it launches (kernels.cuh, ghash.cu); where the segments are
// cut depends on the length only.
#pragma once

#include <cuda_runtime.h>

#include <mutex>
#include <optional>

#include "backends/cuda/keyed_cipher.hpp"
#include "core/counter.h"

namespace gpucrypt::cuda {

// How the overlapped seal cuts the range and shares the SMs. The defaults are from ptxas for
// sm_90 (nvcc 13): aes_bitsliced8's CTR kernel uses 64 registers a thread (16,384 a 256-thread
// CTA), the GHASH tile kernel 96 (24,576); 2 + 1 of them take 57,344 of an SM's 65,536 registers.
// 3 + 1 would not fit; 1 + 2 (65,536) would, and is the other shape the A/B tries.
struct GcmOverlapShape {
  size_t segment_len = 0;    // bytes, a multiple of kGcmMinTileBlocks * 16; 0: kDefaultWaves waves of the GHASH grid
  int ctr_ctas_per_sm = 2;   // the CTR kernel's CTAs per SM while a GHASH pass may run beside it
  int hash_ctas_per_sm = 1;  // the GHASH tile kernel's, while a CTR pass may run beside it
  // A segment of whole waves gives every warp of the capped GHASH grid the same number of tiles,
  // and (2 CTR CTAs of 8 warps, 4 KiB tiles) every CTR warp too; 4 waves are 33 MiB on a 132-SM
  // H200, 31 segments a GiB: the passes that run alone (the first CTR, the last GHASH) are 1/31
  // of the work each. Not yet measured against other counts (the A/B sweeps 2, 4, 8, 16).
  static constexpr int kDefaultWaves = 4;
};

// GPUCRYPT_CUDA_GCM_OVERLAP="SEGMENT_KIB[,CTR_CTAS_PER_SM[,HASH_CTAS_PER_SM]]" (0 or an omitted
// field: the default): a seal that would take two passes takes the overlapped route, with that
// shape. The default route stays two passes until an H200 says otherwise; the variable lets the
// GPU tests, gpucrypt_gpu_bench --check and the A/B run the new route. nullopt when unset or
// empty; std::invalid_argument when malformed.
std::optional<GcmOverlapShape> gcm_overlap_shape_from_env();

// The side stream and the event of the overlapped seal, made on the current device at the first
// seal long enough to be cut (a shorter one is the two-pass route as it was). One per GcmKey;
// seal() may be called from several threads (a mutex keeps each event record next to its wait),
// and seals on different caller streams then share the side stream: their GHASH passes queue
// behind one another, which orders nothing the callers see.
class GcmOverlap {
 public:
  GcmOverlap() = default;
  ~GcmOverlap();
  GcmOverlap(const GcmOverlap&) = delete;
  GcmOverlap& operator=(const GcmOverlap&) = delete;

  // Enqueues GCTR (as cipher.ctr, from first_counter, whose last 32 bits must not wrap over the
  // range) and GHASH of len bytes, in -> out (device, 16-byte aligned; in == out allowed), on
  // `stream`: the result in *result, as GcmKey::enqueue's two-pass route writes it. hashes:
  // gcm_num_tiles(len) + ghash_reduce_scratch(gcm_num_tiles(len)) elements. Everything is in
  // `stream`'s order when this returns (the side stream's work is joined back to it).
  void seal(const KeyedCipher& cipher, gc_block first_counter, const GcmSegment& powers, gc_gf128 hash_subkey,
            const uint8_t* in, uint8_t* out, size_t len, gc_gf128* hashes, gc_gf128* result, cudaStream_t stream,
            const GcmOverlapShape& shape);

 private:
  std::mutex mutex_;
  int device_ = -1;
  cudaStream_t side_ = nullptr;
  cudaEvent_t handoff_ = nullptr;
};

}  // namespace gpucrypt::cuda
