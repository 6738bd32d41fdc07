// scratch.cu: scratch.hpp's StreamBuffer and the pool it draws from.
//
// Constant-time position: no secret-dependent work (allocation sizes are data lengths).
#include "backends/cuda/scratch.hpp"

#include <map>
#include <mutex>

#include "backends/cuda/cuda_check.hpp"

namespace gpucrypt::cuda {

namespace {

// The device's memory pool for the backend's scratch, made at first use and never destroyed (as
// workspace_pool.hpp's pools). It keeps up to kScratchKeptBytes of freed scratch mapped across
// stream synchronisations, where the default pool gives everything back at each one: every
// DeviceGcm call (GHASH scratch: 2 MiB for 1 GiB) then paid for mapping it again, 0.1-0.25 ms a
// call on an H200 (docs/performance.md, 2026-12-01, twenty-second session), and every call over
// 512-byte XTS data units its 32 MiB of tweaks for 1 GiB (2026-12-01, twenty-third session). A pool
// of our own, so that no other user of the default pool in the process sees its threshold change.
constexpr uint64_t kScratchKeptBytes = uint64_t{64} << 20;

cudaMemPool_t scratch_pool() {
  static std::mutex mutex;
  static auto* pools = new std::map<int, cudaMemPool_t>;  // never destroyed (see above)
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  std::lock_guard<std::mutex> lock(mutex);
  auto found = pools->find(device);
  if (found != pools->end()) return found->second;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate");
  uint64_t threshold = kScratchKeptBytes;
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), "cudaMemPoolSetAttribute");
  pools->emplace(device, pool);
  return pool;
}

}  // namespace

StreamBuffer::StreamBuffer(size_t bytes, cudaStream_t stream, Wipe wipe) : bytes_(bytes), stream_(stream), wipe_(wipe) {
  check_allocation(cudaMallocFromPoolAsync(&ptr_, bytes, scratch_pool(), stream), "cudaMallocFromPoolAsync", bytes);
}

// No throw from a destructor: a failed memset leaves the stream (and the next check on it) in error.
StreamBuffer::~StreamBuffer() {
  if (wipe_ == Wipe::on_free) cudaMemsetAsync(ptr_, 0, bytes_, stream_);
  cudaFreeAsync(ptr_, stream_);
}

}  // namespace gpucrypt::cuda
