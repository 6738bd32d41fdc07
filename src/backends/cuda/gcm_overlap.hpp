// gcm_overlap.hpp: GCM's seal for the families that seal in two passes (kernels.cuh,
// kGcmSealInTwoPasses: aes_bitsliced8), with the passes overlapped on the same SMs. Since the
// GHASH pass moved to the tensor cores (ghash_mma.hpp, 2026-12-01) this route is no longer the
// default, only a measured alternative that GPUCRYPT_CUDA_GCM_OVERLAP turns on (see below); what
// follows is why it was written, when GHASH shared the integer pipes with CTR.
//
// The two-pass seal runs the bulk CTR kernel over the whole range, then the GHASH tile pass over
// the ciphertext it wrote. The first is bound by the integer ALU pipe (LOP3), the second by the
// wide multiplier (IMAD.WIDE); one after the other, each leaves the other's pipe mostly idle
// (docs/performance.md, 2026-11-27, fourth session). Here the range is cut into segments of whole
// GHASH tiles: segment k's CTR runs on the caller's stream and segment k's GHASH tiles on a side
// stream once an event says that CTR is done, so that segment k + 1's CTR and segment k's GHASH
// run at the same time, and each GHASH pass reads ciphertext written moments before, from the L2.
// Either grid may be capped (GcmOverlapShape) so that CTAs of both fit in one SM's register file
// together; the first segment's CTR (nothing to hash yet) and the last segment's GHASH (nothing
// left to encipher) never are. The tile hashes are exactly
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

// How the overlapped seal cuts the range and shares the SMs. The defaults are what an H200
// measured best with the GHASH pass on the integer pipe (docs/performance.md, 2026-11-30,
// seventeenth session; kernel-ab, 1 GiB device-resident, median of 20): segments of 16.5 MiB with
// neither grid capped, 1.15-1.16x the two passes for AES-128/192/256 (AES-256 1.39 -> 1.61 Tbps).
// Smaller segments lose to the launches and the passes that run alone (4.1 MiB: 0.77x), larger
// ones to the L2: a 16.5 MiB segment's ciphertext is still in the H200's 50 MB L2 when its GHASH
// pass reads it (33 MiB: 1.10x, 66 MiB: 1.03x). Capping the grids so that CTAs of both kernels
// fit in one SM's registers (aes_bitsliced8's CTR kernel uses 64 registers a thread, 16,384 a
// 256-thread CTA; the GHASH tile kernel 96, 24,576; 2 + 1 of them take 57,344 of 65,536) measured
// no better: 0.95-1.12x.
struct GcmOverlapShape {
  static constexpr size_t kDefaultSegmentLen = size_t{16896} << 10;  // 2,112 GHASH tiles of 8 KiB
  size_t segment_len = kDefaultSegmentLen;  // bytes, a multiple of kGcmMinTileBlocks * 16
  int ctr_ctas_per_sm = 0;   // the CTR kernel's CTAs per SM while a GHASH pass may run beside it; 0: no cap
  int hash_ctas_per_sm = 0;  // the GHASH tile kernel's, while a CTR pass may run beside it; 0: no cap
};

// The two-pass families seal in plain two passes by default since their GHASH pass runs on the
// tensor cores (ghash_mma.hpp): with the integer pipe left to CTR alone the passes no longer gain
// from sharing the SMs (kernel-ab on an H200, 2026-12-01: AES-256 two passes 2.26 Tbps, overlapped
// 2.15; AES-128 2.87 and 2.72; capping the grids so that both fit in the registers at once, AES-256
// 1.29-1.72). GPUCRYPT_CUDA_GCM_OVERLAP, read when a key is made, turns the
// overlapped route on: "on" (the default shape below), or
// "SEGMENT_KIB[,CTR_CTAS_PER_SM[,HASH_CTAS_PER_SM]]" (0 or an omitted field: the default; the
// GPU tests, gpucrypt_gpu_bench --check and the A/B use it to put segment boundaries every few
// KiB); "off", empty or unset: the plain two passes (a seal shorter than one segment goes that
// way in any case). Returns the shape to seal with, nullopt for the plain two passes;
// std::invalid_argument when malformed.
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
