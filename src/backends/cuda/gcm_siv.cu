// gcm_siv.cu: AES-GCM-SIV (RFC 8452) on a CUDA GPU: the Body of backends/gcm_siv.hpp (the host
// side there derives the per-nonce keys and makes and checks the tag): POLYVAL partial sums and
// CTR with RFC 8452's little-endian 32-bit counter, both over src/core/gcm_siv.h and the
// bitsliced AES of src/core (modes/ciphers.hpp AesBitsliced), the same sources the CPU and
// OpenCL run.
//
// Constant-time: the AES is the bitsliced one (no tables; the only CUDA variant GCM-SIV runs,
// aes_bitsliced), POLYVAL is gf128.h's constant-time multiplier, and nothing branches on or
// indexes by secret data; lengths are public. Device buffers that held plaintext or keystream are
// zeroed before they are freed.
//
// A first version: each call allocates its device buffers and copies synchronously on the
// default stream (no staging pool, no overlap of copies and kernels, no batch kernels).
#include <algorithm>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/device_internal.hpp"
#include "backends/gcm_siv.hpp"
#include "core/gcm_siv.h"
#include "modes/ciphers.hpp"
#include "modes/ctr.hpp"

namespace gpucrypt::cuda {

namespace {

using SivAes = modes::AesBitsliced<>;

struct CounterLe32 {  // RFC 8452's counter, for modes::counter_xor_range
  GC_METHOD static gc_block at(gc_block base, uint64_t offset) { return gc_ctr32le_add(base, offset); }
};

constexpr int kThreads = 256;
constexpr uint64_t kBlocksPerThread = 16;  // a thread's contiguous run of blocks per pass

__global__ void __launch_bounds__(kThreads)
    gcm_siv_ctr_kernel(const __grid_constant__ SivAes cipher, gc_block counter, uint8_t* data, uint64_t len) {
  const uint64_t num_blocks = (len + 15) / 16;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x * kBlocksPerThread;
  for (uint64_t first = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kBlocksPerThread;
       first < num_blocks; first += stride) {
    const uint64_t bytes = modes::min_size(16 * kBlocksPerThread, len - 16 * first);
    modes::counter_xor_range<CounterLe32>(cipher, counter, first, data + 16 * first, data + 16 * first, bytes);
  }
}

// Item g hashes blocks [g * per_item, (g + 1) * per_item) from zero and shifts the result by
// the blocks after its range, so the XOR of all partials is POLYVAL of the whole (gf128.h).
__global__ void __launch_bounds__(kThreads) gcm_siv_polyval_kernel(gc_gf128 key, const uint8_t* data, uint64_t len,
                                                                   uint64_t per_item, uint64_t items,
                                                                   gc_gf128* partials) {
  const uint64_t g = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= items) return;
  const uint64_t num_blocks = (len + 15) / 16;
  const uint64_t first = modes::min_size(g * per_item, num_blocks), end = modes::min_size(first + per_item, num_blocks);
  gc_gf128 y = gc_polyval_bytes(gc_gf128_make(0, 0), key, data + 16 * first, modes::min_size(16 * end, len) - 16 * first);
  partials[g] = gc_ghash_shift(y, key, num_blocks - end);
}

// Device memory for one call, zeroed and freed on every exit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(std::max<size_t>(bytes, 16)) {
    check_allocation(cudaMalloc(&data_, bytes_), "cudaMalloc (GCM-SIV)", bytes_);
  }
  ~DeviceBuffer() {
    cudaMemset(data_, 0, bytes_);
    cudaFree(data_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T>
  T* as() const { return static_cast<T*>(data_); }

 private:
  size_t bytes_;
  void* data_ = nullptr;
};

unsigned grid_for(uint64_t work_items) {
  return static_cast<unsigned>(std::clamp<uint64_t>((work_items + kThreads - 1) / kThreads, 1, 65535));
}

class CudaGcmSivBody final : public gcm_siv::Body {
 public:
  CudaGcmSivBody(const VariantInfo& variant, int device_index) : variant_(variant), device_index_(device_index) {}
  const VariantInfo& variant() const override { return variant_; }
  std::string device() const override { return "cuda:" + std::to_string(device_index_); }

  gc_gf128 polyval(gc_gf128 key, const uint8_t* data, size_t len) const override {
    if (len == 0) return gc_gf128_make(0, 0);
    DeviceGuard guard(device_index_);
    const uint64_t num_blocks = (len + 15) / 16;
    const uint64_t items = std::min<uint64_t>(num_blocks, 65535ull * kThreads);
    const uint64_t per_item = (num_blocks + items - 1) / items;
    DeviceBuffer input(len), partials(items * sizeof(gc_gf128));
    check(cudaMemcpy(input.as<uint8_t>(), data, len, cudaMemcpyHostToDevice), "cudaMemcpy (GCM-SIV POLYVAL in)");
    checked_launch("gcm_siv_polyval_kernel", [&] {
      gcm_siv_polyval_kernel<<<grid_for(items), kThreads>>>(key, input.as<uint8_t>(), len, per_item, items,
                                                           partials.as<gc_gf128>());
    });
    std::vector<gc_gf128> host(items);
    check(cudaMemcpy(host.data(), partials.as<gc_gf128>(), items * sizeof(gc_gf128), cudaMemcpyDeviceToHost),
          "cudaMemcpy (GCM-SIV POLYVAL partials)");
    gc_gf128 sum = gc_gf128_make(0, 0);
    for (const gc_gf128& p : host) sum = gc_gf128_xor(sum, p);
    modes::secure_zero(host.data(), host.size() * sizeof(gc_gf128));
    return sum;
  }

  void ctr(ByteSpan enc_key, gc_block counter, const uint8_t* in, uint8_t* out, size_t len) const override {
    if (len == 0) return;
    SivAes cipher = SivAes::make_host(enc_key.data(), static_cast<int>(enc_key.size()));
    DeviceGuard guard(device_index_);
    DeviceBuffer data(len);
    check(cudaMemcpy(data.as<uint8_t>(), in, len, cudaMemcpyHostToDevice), "cudaMemcpy (GCM-SIV CTR in)");
    const uint64_t threads = ((len + 15) / 16 + kBlocksPerThread - 1) / kBlocksPerThread;
    checked_launch("gcm_siv_ctr_kernel",
                   [&] { gcm_siv_ctr_kernel<<<grid_for(threads), kThreads>>>(cipher, counter, data.as<uint8_t>(), len); });
    check(cudaMemcpy(out, data.as<uint8_t>(), len, cudaMemcpyDeviceToHost), "cudaMemcpy (GCM-SIV CTR out)");
    modes::secure_zero(&cipher, sizeof cipher);
  }

 private:
  const VariantInfo& variant_;
  int device_index_;
};

}  // namespace

std::unique_ptr<Aead> create_gcm_siv(const AeadName& name, ByteSpan key, std::string_view variant, int device_index) {
  // GCM-SIV runs the constant-time bitsliced AES of src/core; any other named variant is refused.
  const GpuVariant& v = select_variant(name.algorithm, variant.empty() ? "aes_bitsliced" : variant);
  if (v.info.name != "aes_bitsliced")
    throw std::invalid_argument(name.canonical + " on CUDA runs the variant aes_bitsliced only, not " + v.info.name);
  require_device(device_index);
  return gcm_siv::make_aead(name, key, std::make_unique<CudaGcmSivBody>(v.info, device_index));
}

}  // namespace gpucrypt::cuda
