// gcm_overlap.cu: GCM's overlapped two-pass seal (gcm_overlap.hpp says what and why).
#include "backends/cuda/gcm_overlap.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpucrypt::cuda {

std::optional<GcmOverlapShape> gcm_overlap_shape_from_env() {
  const char* text = std::getenv("GPUCRYPT_CUDA_GCM_OVERLAP");
  if (text == nullptr || *text == '\0' || std::string_view(text) == "off") return std::nullopt;
  if (std::string_view(text) == "on") return GcmOverlapShape{};
  auto bad = [&]() {
    return std::invalid_argument(std::string("GPUCRYPT_CUDA_GCM_OVERLAP must be off, on or SEGMENT_KIB[,CTR_CTAS_PER_SM"
                                             "[,HASH_CTAS_PER_SM]] with SEGMENT_KIB a multiple of ") +
                                 std::to_string(kGcmMinTileBlocks * 16 / 1024) + " (0: the defaults), got '" + text +
                                 "'");
  };
  unsigned long long fields[3] = {0, 0, 0};
  const char* p = text;
  for (int i = 0; i < 3; ++i) {
    char* end = nullptr;
    if (*p < '0' || *p > '9') throw bad();
    fields[i] = std::strtoull(p, &end, 10);
    p = end;
    if (*p == '\0') break;
    if (*p != ',' || i == 2) throw bad();
    ++p;
  }
  constexpr unsigned long long kTileKib = kGcmMinTileBlocks * 16 / 1024;
  if (fields[0] % kTileKib != 0 || fields[0] > (1ull << 30) || fields[1] > 32 || fields[2] > 32) throw bad();
  GcmOverlapShape shape;
  if (fields[0] != 0) shape.segment_len = static_cast<size_t>(fields[0]) * 1024;
  shape.ctr_ctas_per_sm = static_cast<int>(fields[1]);
  shape.hash_ctas_per_sm = static_cast<int>(fields[2]);
  return shape;
}

GcmOverlap::~GcmOverlap() {
  // Work still queued on the side stream finishes first (the runtime defers the release); a
  // failure here has no one to report to.
  if (handoff_ != nullptr) cudaEventDestroy(handoff_);
  if (side_ != nullptr) cudaStreamDestroy(side_);
}

void GcmOverlap::seal(const KeyedCipher& cipher, gc_block first_counter, const GcmSegment& powers,
                      gc_gf128 hash_subkey, const uint8_t* in, uint8_t* out, size_t len, gc_gf128* hashes,
                      gc_gf128* result, cudaStream_t stream, const GcmOverlapShape& shape) {
  constexpr uint64_t kTileBytes = uint64_t{kGcmMinTileBlocks} * 16;
  const uint64_t num_blocks = (len + 15) / 16;
  const uint64_t num_tiles = gcm_num_tiles(len);
  // ghash_device's padding: zero blocks in front of the message make it whole tiles.
  const uint64_t pad_blocks = num_tiles * kGcmMinTileBlocks - num_blocks;
  const uint64_t segment_tiles = std::max<uint64_t>(1, shape.segment_len / kTileBytes);
  if (num_tiles <= segment_tiles) {  // one segment: nothing to overlap, the two-pass route as it is
    cipher.ctr(first_counter, in, out, len, stream);
    ghash_device(out, len, powers, hash_subkey, hashes, result, stream);
    return;
  }

  std::lock_guard<std::mutex> lock(mutex_);
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  if (side_ == nullptr) {
    check(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags (GCM side stream)");
    check(cudaEventCreateWithFlags(&handoff_, cudaEventDisableTiming), "cudaEventCreateWithFlags (GCM handoff)");
    device_ = device;
  } else if (device != device_) {
    throw std::logic_error("GcmOverlap::seal on another device than its first seal's");
  }
  {
    // The side stream's work joins `stream` when this scope ends, however it ends: a launch that
    // throws half way must not leave GHASH passes running over buffers the caller then frees.
    struct Join {
      cudaStream_t side, stream;
      cudaEvent_t event;
      ~Join() {
        if (cudaEventRecord(event, side) == cudaSuccess) cudaStreamWaitEvent(stream, event, 0);
      }
    } join{side_, stream, handoff_};
    // Segment = tiles [first_tile, end_tile) of the padded message; its data blocks are those less
    // the padding, which only the first segment has in front. Each event record is followed at
    // once by its wait (cudaStreamWaitEvent waits for the record made last), so one event serves.
    for (uint64_t first_tile = 0; first_tile < num_tiles; first_tile += segment_tiles) {
      const uint64_t end_tile = std::min(num_tiles, first_tile + segment_tiles);
      const bool first = first_tile == 0, last = end_tile == num_tiles;
      const uint64_t first_block = first ? 0 : first_tile * kGcmMinTileBlocks - pad_blocks;
      const size_t offset = static_cast<size_t>(first_block) * 16;
      const size_t piece_len =
          (last ? len : static_cast<size_t>(end_tile * kGcmMinTileBlocks - pad_blocks) * 16) - offset;
      // The first CTR runs alone (nothing to hash yet), and so does the last GHASH (nothing left
      // to encipher): both on the whole GPU.
      cipher.ctr_beside(gc_ctr128_add(first_counter, first_block), in + offset, out + offset, piece_len,
                        first ? 0 : shape.ctr_ctas_per_sm, stream);
      check(cudaEventRecord(handoff_, stream), "cudaEventRecord (GCM handoff)");
      check(cudaStreamWaitEvent(side_, handoff_, 0), "cudaStreamWaitEvent (GCM handoff)");
      ghash_tiles(out + offset, piece_len, first ? pad_blocks : 0, powers, hashes + first_tile,
                  last ? 0 : shape.hash_ctas_per_sm, side_);
    }
  }
  ghash_reduce(hashes, num_tiles, kGcmMinTileBlocks, hash_subkey, hashes + num_tiles, result, stream);
}

}  // namespace gpucrypt::cuda
