// opencl.hpp: what the OpenCL backend offers the dispatch layer (src/api) and the bindings; the
// counterpart of backend.hpp's cuda namespace. Devices are "opencl:N" (opencl_runtime.hpp says
// how they are numbered). Errors: std::invalid_argument for the caller's mistakes (the same
// messages as the other backends), gpucrypt::DeviceError for a missing device or an OpenCL failure.
#pragma once

#if defined(GPUCRYPT_WITH_OPENCL)

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpucrypt/aead.hpp"
#include "gpucrypt/cipher.hpp"
#include "gpucrypt/device.hpp"
#include "gpucrypt/hash.hpp"

namespace gpucrypt::opencl {

int device_count();               // 0 when there is no OpenCL library, platform or device
std::string unavailable_reason();  // "" when device_count() > 0
std::vector<DeviceInfo> devices();
const std::vector<VariantInfo>& variants();
// The variant used when the caller names none: the first registered for the algorithm (every
// OpenCL variant implements every mode).
const VariantInfo& default_variant(Algorithm algorithm);
std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& name, Direction direction, ByteSpan key,
                                                   ByteSpan iv, std::string_view variant, int device_index);
std::unique_ptr<GcmCipher> create_gcm(const CipherName& name, ByteSpan key, std::string_view variant,
                                      int device_index);
// The AEADs beyond GCM: AES-GCM-SIV (backends/gcm_siv.hpp over gc_polyval_partials and gc_ctr32le).
std::unique_ptr<Aead> create_aead(const AeadName& name, ByteSpan key, std::string_view variant, int device_index);

// The Keccak family (variant keccak_opencl): many messages of a sequential hash, one per
// work-item; and a tree hash (ParallelHash, KT) with its leaves on the device and the final node
// on the host. Same argument rules as cuda::hash_many / cuda::tree_hash.
inline constexpr std::string_view kKeccakVariant = "keccak_opencl";
void hash_many(std::string_view name, const uint8_t* const* messages, const size_t* lens, size_t num_messages,
               uint8_t* out, size_t out_len_each, int device_index);
void tree_hash(std::string_view name, const hash::HashParams& params, const uint8_t* data, size_t len, uint8_t* out,
               size_t out_len, int device_index);
// The chaining values of num_leaves whole leaves at data (cuda::tree_leaves' rules).
void tree_leaves(std::string_view name, const hash::HashParams& params, const uint8_t* data, size_t num_leaves,
                 uint8_t* out, int device_index);

// Device-resident timing of one cipher's CTR or ECB encryption kernel over `bytes` of random data
// (docs/performance.md, bench/opencl_bench.py): the output is poisoned, one launch is checked
// against the host cipher on sampled blocks (first, last and every 4099th), then `repeats`
// launches are timed with OpenCL profiling events (kernel start to end). What
// Device::time_kernel gives for an OpenCL device (KernelTiming: gpucrypt/device.hpp).
KernelTiming time_resident(const CipherName& name, std::string_view variant, int device_index, size_t bytes,
                           int repeats);

// Programs built and kernels enqueued in this process: tests assert that OpenCL really ran.
struct KernelStats {
  uint64_t programs_built = 0;   // compiled from source
  uint64_t programs_cached = 0;  // loaded from the on-disk program cache (opencl_runtime.cpp)
  uint64_t kernels_run = 0;
  uint64_t programs_rejected = 0;  // loaded from the cache but failed their known-answer check
};
KernelStats kernel_stats();

}  // namespace gpucrypt::opencl

#endif  // GPUCRYPT_WITH_OPENCL
