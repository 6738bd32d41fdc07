// device.hpp: the CUDA backend's device-pointer API, for data that already lives in GPU memory
// (CuPy, PyTorch, Numba arrays; the benchmark), behind the CUDA Device's resident work
// (Device::create_resident_cipher / create_resident_gcm, src/device/cuda_device.cpp). No host round trip: work is enqueued on the
// caller's stream and the call returns before it finishes (DeviceGcm excepted: the tag needs
// the result). The host-pointer entry points (create_cipher_stream, create_gcm) are declared in
// backends/backend.hpp.
//
// Each call is one complete message with its own IV / counter / tweak: ECB and CBC need a
// multiple of 16 bytes, XTS at least 16 bytes (one data unit), CFB/OFB/CTR any length.
// in == out is allowed, and so is an out that partially overlaps in (a shifted view of one array):
// the result is then what a copy of in would give. Pointers need no particular alignment. A
// misaligned, partially overlapping or, for CBC/CFB decryption, in-place call costs one extra
// device copy through stream-ordered scratch memory.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string_view>
#include <vector>

#include "gpucrypt/cipher.hpp"
#include "gpucrypt/device.hpp"

namespace gpucrypt::cuda {

// The Device's opaque stream handle (gpucrypt/device.hpp StreamHandle) is a cudaStream_t here.
inline cudaStream_t stream_of(StreamHandle handle) { return reinterpret_cast<cudaStream_t>(handle); }
inline StreamHandle handle_of(cudaStream_t stream) { return reinterpret_cast<StreamHandle>(stream); }

// start_up: what the first use of each usable CUDA device among `indices` (all of them when empty)
// would cost, done now: the driver's initialisation and the device table (cuInit, properties), then
// each device's primary context, the devices in parallel (about 0.5 s for two H200s, most of it the
// contexts). For start_devices_early (gpucrypt/device.hpp), on its thread; errors are left for the
// first use to report.
void start_up(const std::vector<int>& indices);

// Host memory the GPU's copy engines can read and write directly (cudaHostAlloc, or memory the
// caller registered with cudaHostRegister, e.g. a pinned PyTorch tensor). The host-pointer entry
// points (create_cipher_stream, the batch executor) copy page-locked data straight between it and
// the GPU; pageable data goes through page-locked staging with a multi-threaded memcpy, which on
// a busy host costs more than the PCIe transfer itself. The stream engine's buffers are
// page-locked for that reason (python/gpucrypt/stream.py BufferPool).
bool is_page_locked(const void* ptr, size_t len);
// Portable (every device) page-locked allocation; null when the runtime refuses (no GPU, out of
// memory). free_page_locked zeroes the bytes before freeing.
void* alloc_page_locked(size_t bytes);
void free_page_locked(void* ptr, size_t bytes);

// A keyed cipher for device-resident data: the CUDA Device's ResidentCipher (its process takes
// the opaque handle; the form below, the backend's own callers' cudaStream_t). Not thread-safe;
// one per thread or a lock.
class DeviceCipher : public ResidentCipher {
 public:
  // name must not be GCM (see DeviceGcm); key as for create_cipher_stream; variant "" picks the
  // fastest CUDA variant. Throws std::invalid_argument / DeviceError.
  static std::unique_ptr<DeviceCipher> create(const CipherName& name, Direction direction, ByteSpan key,
                                              std::string_view variant, int device_index);
  // iv: 16 bytes (IV, initial counter, or XTS tweak), empty for ECB. in/out: device pointers on
  // this cipher's device. stream: the caller's stream (null = legacy default stream).
  using ResidentCipher::process;
  void process(ByteSpan iv, const void* in, void* out, size_t len, cudaStream_t stream) {
    process(iv, in, out, len, handle_of(stream));
  }
  using ResidentCipher::process_units;
  void process_units(uint64_t first_unit, size_t unit_len, const void* in, void* out, size_t len,
                     cudaStream_t stream) {
    process_units(first_unit, unit_len, in, out, len, handle_of(stream));
  }
  virtual int device_index() const = 0;
};

// GCM on device-resident data. seal writes len bytes of ciphertext to out (device) and tag_len
// bytes of tag to tag (host); open verifies tag (host) against a GHASH-only pass over the
// ciphertext and deciphers only when it matches: false leaves out (in place too) untouched. Both
// wait for the stream before returning.
// The CUDA Device's ResidentGcm, with cudaStream_t forms as DeviceCipher's.
class DeviceGcm : public ResidentGcm {
 public:
  static std::unique_ptr<DeviceGcm> create(const CipherName& name, ByteSpan key, std::string_view variant,
                                           int device_index);
  using ResidentGcm::open;
  using ResidentGcm::seal;
  void seal(ByteSpan nonce, ByteSpan aad, const void* in, void* out, size_t len, uint8_t* tag, size_t tag_len,
            cudaStream_t stream) {
    seal(nonce, aad, in, out, len, tag, tag_len, handle_of(stream));
  }
  bool open(ByteSpan nonce, ByteSpan aad, const void* in, void* out, size_t len, ByteSpan tag, cudaStream_t stream) {
    return open(nonce, aad, in, out, len, tag, handle_of(stream));
  }
};

}  // namespace gpucrypt::cuda
