// gcm_overlap_emulated.cpp: the overlapped GCM seal's host logic (src/backends/cuda/gcm_overlap.cu:
// where the segments are cut, their counters and padding, which tile hashes each writes, and the
// stream/event protocol) run without a GPU. The CUDA runtime's stream and event calls are stubbed
// by queues of host operations, and the kernels gcm_overlap.cu launches (CTR, the GHASH tile pass,
// the fold) by host versions over host memory; the queues then run in an adversarial order that
// the recorded events still allow (the side stream first whenever it may run, then the caller's
// stream first), so a missing dependency shows as a wrong result. Checked: the overlapped seal
// equals the two-pass seal byte for byte (ciphertext and GHASH) and the GHASH equals gf128.h's
// serial GHASH of the ciphertext, over lengths that are not multiples of 16, of a tile or of a
// segment, out of place and in place.
//
// A ctest wherever CMake finds CUDA's headers (CMakeLists.txt: the route's source is compiled into
// this file below, as C++); no GPU and no CUDA compiler needed. By hand, from the repository root:
//   g++ -std=c++20 -O2 -Isrc -Iinclude -I/usr/local/cuda/include tests/cpp/gcm_overlap_emulated.cpp
//       -o build/gcm_overlap_emulated && build/gcm_overlap_emulated
// The toy keystream below is NOT a cipher: the route moves bytes and counters, whatever enciphers them.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "backends/cuda/gcm_overlap.hpp"
// The route itself, compiled here as C++ against the stubs below (it launches nothing itself).
#include "backends/cuda/gcm_overlap.cu"

// ---- streams and events as queues ----------------------------------------------------------------

struct CUstream_st {
  std::vector<std::function<void()>> ops;  // an op may be a wait: then `waits` says on what
  std::map<size_t, std::pair<CUstream_st*, size_t>> waits;  // op index -> (stream, ops it must have run)
  size_t done = 0;
};
struct CUevent_st {
  CUstream_st* stream = nullptr;
  size_t count = 0;
};

namespace {
std::vector<std::unique_ptr<CUstream_st>> g_streams;
std::vector<std::unique_ptr<CUevent_st>> g_events;
CUstream_st g_caller;  // the caller's stream

void enqueue(cudaStream_t stream, std::function<void()> op) { stream->ops.push_back(std::move(op)); }

// Runs every queued op, preferring `first` whenever it can run (its next op is not a wait that is
// still unmet); fails on a deadlock.
void drain(CUstream_st* first) {
  std::vector<CUstream_st*> order = {first};
  for (auto& s : g_streams) if (s.get() != first) order.push_back(s.get());
  if (first != &g_caller) order.push_back(&g_caller);
  for (;;) {
    bool progressed = false, pending = false;
    for (CUstream_st* s : order) {
      while (s->done < s->ops.size()) {
        pending = true;
        auto wait = s->waits.find(s->done);
        if (wait != s->waits.end() && wait->second.first->done < wait->second.second) break;
        s->ops[s->done++]();
        progressed = true;
      }
      if (progressed) break;  // start again from the preferred stream
    }
    if (!pending) return;
    if (!progressed) throw std::runtime_error("deadlock in the emulated streams");
  }
}
}  // namespace

extern "C" {
cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
  g_streams.push_back(std::make_unique<CUstream_st>());
  *stream = g_streams.back().get();
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int) {
  g_events.push_back(std::make_unique<CUevent_st>());
  *event = g_events.back().get();
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  event->stream = stream;
  event->count = stream->ops.size();
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  stream->waits[stream->ops.size()] = {event->stream, event->count};
  stream->ops.push_back([] {});
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
}

// ---- the kernels, on the host -----------------------------------------------------------------

namespace gpucrypt::cuda {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(what);
}
int current_sm_count() { return 3; }
size_t ghash_reduce_scratch(size_t) { return 0; }
uint64_t ghash_tiles_per_wave(int max_ctas_per_sm) { return 8u * (max_ctas_per_sm > 0 ? max_ctas_per_sm : 2) * 3; }

namespace {
gc_gf128 g_hash_subkey;  // H: the tile pass takes it from powers, which this emulation leaves empty

// GHASH from zero of the data blocks [first, end) of a message of len bytes (the last one zero-padded).
gc_gf128 ghash_blocks(const uint8_t* data, size_t len, uint64_t first, uint64_t end) {
  const size_t from = first * 16, to = std::min<size_t>(len, end * 16);
  return from >= to ? gc_gf128_make(0, 0) : gc_ghash_bytes(gc_gf128_make(0, 0), g_hash_subkey, data + from, to - from);
}
}  // namespace

void ghash_tiles(const uint8_t* data, size_t len, uint64_t pad_blocks, const GcmSegment&, gc_gf128* tile_hashes,
                 int, cudaStream_t stream) {
  enqueue(stream, [=] {
    const uint64_t blocks = (len + 15) / 16;
    const uint64_t tiles = (pad_blocks + blocks + kGcmMinTileBlocks - 1) / kGcmMinTileBlocks;
    for (uint64_t t = 0; t < tiles; ++t) {  // zero blocks in front change nothing from zero
      const uint64_t v0 = t * kGcmMinTileBlocks, v1 = v0 + kGcmMinTileBlocks;
      tile_hashes[t] = ghash_blocks(data, len, v0 > pad_blocks ? v0 - pad_blocks : 0,
                                    std::min<uint64_t>(blocks, v1 > pad_blocks ? v1 - pad_blocks : 0));
    }
  });
}

void ghash_reduce(const gc_gf128* hashes, size_t num_hashes, uint64_t span_blocks, gc_gf128 hash_subkey, gc_gf128*,
                  gc_gf128* result, cudaStream_t stream) {
  enqueue(stream, [=] {
    const gc_gf128 step = gc_gf128_pow(hash_subkey, span_blocks);
    gc_gf128 sum = gc_gf128_make(0, 0);
    for (size_t r = 0; r < num_hashes; ++r) sum = gc_ghash_combine(sum, step, hashes[r]);
    *result = sum;
  });
}

void ghash_device(const uint8_t* data, size_t len, const GcmSegment& powers, gc_gf128 hash_subkey, gc_gf128* hashes,
                  gc_gf128* result, cudaStream_t stream) {
  const uint64_t tiles = gcm_num_tiles(len);
  ghash_tiles(data, len, tiles * kGcmMinTileBlocks - (len + 15) / 16, powers, hashes, 0, stream);
  ghash_reduce(hashes, tiles, kGcmMinTileBlocks, hash_subkey, nullptr, result, stream);
}

// CTR with a toy keystream (a counter mixer, not a cipher), block by block as the bulk kernel.
class ToyCtr final : public KeyedCipher {
 public:
  void bulk(Mode, Direction, gc_block start, const uint8_t* in, uint8_t* out, size_t len,
            cudaStream_t stream) const override {
    ctr_beside(start, in, out, len, 0, stream);
  }
  void ctr_beside(gc_block counter, const uint8_t* in, uint8_t* out, size_t len, int, cudaStream_t stream) const override {
    enqueue(stream, [=] {
      for (size_t i = 0; i * 16 < len; ++i) {
        const gc_block c = gc_ctr128_add(counter, i);
        uint8_t key[16];
        for (int b = 0; b < 16; ++b) key[b] = uint8_t((c.w[b / 4] >> (8 * (b % 4))) * 0x9Du + b * 0x3Bu + (c.w[(b + 1) % 4] >> 5));
        for (size_t b = 0; b < 16 && i * 16 + b < len; ++b) out[i * 16 + b] = in[i * 16 + b] ^ key[b];
      }
    });
  }
  void xts(Direction, gc_block, uint64_t, const uint8_t*, uint8_t*, size_t, cudaStream_t) const override {}
  void xts_units(Direction, const gc_block*, uint64_t, const uint8_t*, uint8_t*, size_t, cudaStream_t) const override {}
  void serial(SerialMode, gc_block, const gc_block*, gc_block*, const uint8_t*, uint8_t*, size_t,
              cudaStream_t) const override {}
  uint64_t gcm_tile_blocks() const override { return kGcmMinTileBlocks; }
  void gcm(const GcmSegment&, const uint8_t*, uint8_t*, size_t, gc_gf128*, cudaStream_t) const override {}
  bool gcm_seal_in_two_passes() const override { return true; }
};

}  // namespace gpucrypt::cuda

int main() {
  using namespace gpucrypt::cuda;
  g_hash_subkey = gc_gf128_make(0x66e94bd4ef8a2c3bull, 0x884cfa59ca342b2eull);
  const GcmSegment powers{};
  const ToyCtr cipher;
  GcmOverlap overlap;
  gc_block counter{};
  counter.w[0] = 0x01020304u;
  counter.w[3] = 0xfeffffffu;  // a low word that carries into the next within the range
  constexpr size_t kTile = kGcmMinTileBlocks * 16;
  // The last length crosses two boundaries of the default shape's 2,112-tile segments.
  const size_t lengths[] = {0, 1, 15, 16, 17, kTile - 1, kTile, kTile + 1, 2 * kTile - 16, 3 * kTile + 5,
                            7 * kTile + 9, 16 * kTile, 100 * kTile + 11, 777 * kTile - 3, 4300 * kTile + 7};
  const GcmOverlapShape shapes[] = {{kTile, 0, 0}, {2 * kTile, 2, 1}, {3 * kTile, 1, 2}, {5 * kTile, 0, 0},
                                    {64 * kTile, 2, 1}, GcmOverlapShape{}};
  std::vector<uint8_t> in(4300 * kTile + 32);
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (uint8_t& b : in) b = uint8_t((state = state * 6364136223846793005ull + 1442695040888963407ull) >> 56);
  int cases = 0, failures = 0;
  for (const size_t len : lengths) {
    const size_t num_hashes = gcm_num_tiles(len) + 1;
    std::vector<uint8_t> ref(len + 32, 0xA5);
    std::vector<gc_gf128> ref_hashes(num_hashes);
    cipher.ctr(counter, in.data(), ref.data(), len, &g_caller);
    ghash_device(ref.data(), len, powers, g_hash_subkey, ref_hashes.data(), &ref_hashes.back(), &g_caller);
    drain(&g_caller);
    const gc_gf128 serial = gc_ghash_bytes(gc_gf128_make(0, 0), g_hash_subkey, ref.data(), len);
    if (ref_hashes.back().hi != serial.hi || ref_hashes.back().lo != serial.lo) {
      std::printf("FAIL len %zu: two-pass GHASH differs from the serial GHASH (the emulation is wrong)\n", len);
      ++failures;
    }
    for (const GcmOverlapShape& shape : shapes) {
      for (const bool in_place : {false, true}) {
        for (const bool side_first : {true, false}) {
          std::vector<uint8_t> out(len + 32, 0x5A);
          if (in_place) std::memcpy(out.data(), in.data(), len);
          std::vector<gc_gf128> hashes(num_hashes, gc_gf128_make(~0ull, ~0ull));
          overlap.seal(cipher, counter, powers, g_hash_subkey, in_place ? out.data() : in.data(), out.data(), len,
                       hashes.data(), &hashes.back(), &g_caller, shape);
          drain(side_first && !g_streams.empty() ? g_streams.front().get() : &g_caller);
          bool ok = std::memcmp(out.data(), ref.data(), len) == 0 && hashes.back().hi == serial.hi &&
                    hashes.back().lo == serial.lo;
          for (size_t i = len; i < len + 32; ++i) ok = ok && out[i] == 0x5A;
          ++cases;
          if (!ok) {
            ++failures;
            std::printf("FAIL len %zu, segment %zu, ctas %d+%d%s, %s first\n", len, shape.segment_len,
                        shape.ctr_ctas_per_sm, shape.hash_ctas_per_sm, in_place ? ", in place" : "",
                        side_first ? "side stream" : "caller's stream");
          }
        }
      }
    }
  }
  // GPUCRYPT_CUDA_GCM_OVERLAP's forms, and what it refuses.
  struct EnvCase { const char* text; bool valid; size_t segment_len; int ctr, hash; };
  constexpr size_t kDefault = GcmOverlapShape::kDefaultSegmentLen;
  const EnvCase env_cases[] = {{"on", true, kDefault, 0, 0},     {"8", true, kTile, 0, 0},
                               {"0", true, kDefault, 0, 0},      {"24,1,2", true, 3 * kTile, 1, 2},
                               {"16,3", true, 2 * kTile, 3, 0},  {"0,0,4", true, kDefault, 0, 4},
                               {"12", false, 0, 0, 0},           {"8,", false, 0, 0, 0},
                               {"8,1,2,3", false, 0, 0, 0},      {"x", false, 0, 0, 0},
                               {"8,-1", false, 0, 0, 0},         {"8,33", false, 0, 0, 0},
                               {"of", false, 0, 0, 0}};
  for (const EnvCase& c : env_cases) {
    setenv("GPUCRYPT_CUDA_GCM_OVERLAP", c.text, 1);
    bool ok;
    try {
      const auto shape = gcm_overlap_shape_from_env();
      ok = c.valid && shape && shape->segment_len == c.segment_len && shape->ctr_ctas_per_sm == c.ctr &&
           shape->hash_ctas_per_sm == c.hash;
    } catch (const std::invalid_argument&) {
      ok = !c.valid;
    }
    ++cases;
    if (!ok) {
      ++failures;
      std::printf("FAIL GPUCRYPT_CUDA_GCM_OVERLAP='%s'\n", c.text);
    }
  }
  // Unset, empty and "off": no shape (the plain two passes, the default).
  unsetenv("GPUCRYPT_CUDA_GCM_OVERLAP");
  cases += 3;
  if (gcm_overlap_shape_from_env().has_value()) {
    ++failures;
    std::printf("FAIL GPUCRYPT_CUDA_GCM_OVERLAP unset gives a shape\n");
  }
  for (const char* two_passes : {"", "off"}) {
    setenv("GPUCRYPT_CUDA_GCM_OVERLAP", two_passes, 1);
    if (gcm_overlap_shape_from_env().has_value()) {
      ++failures;
      std::printf("FAIL GPUCRYPT_CUDA_GCM_OVERLAP='%s' gives a shape\n", two_passes);
    }
  }
  std::printf("%d passed, %d failed\n", cases - failures, failures);
  return failures == 0 ? 0 : 1;
}
