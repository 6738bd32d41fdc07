// scratch.hpp: stream-ordered scratch memory for the CUDA backend's enqueued work (the device-
// pointer API's staging copies and GHASH scratch, the XTS data units' encrypted tweaks), from a
// memory pool of the backend's own.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gpucrypt::cuda {

// Stream-ordered scratch on the current device, freed in stream order. With Wipe::on_free it is
// zeroed (in stream order) before it goes back to the pool: for secrets such as XTS's encrypted
// tweaks.
class StreamBuffer {
 public:
  enum class Wipe { no, on_free };
  StreamBuffer(size_t bytes, cudaStream_t stream, Wipe wipe = Wipe::no);
  ~StreamBuffer();
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  uint8_t* get() const { return static_cast<uint8_t*>(ptr_); }

 private:
  void* ptr_ = nullptr;
  size_t bytes_;
  cudaStream_t stream_;
  Wipe wipe_;
};

}  // namespace gpucrypt::cuda
