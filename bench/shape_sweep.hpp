// shape_sweep.hpp: the launch-shape sweep (bench/shape_sweep.cu), the evidence behind the values
// of the launch policies in src/backends/cuda/launch_policy.hpp.
//
// Each case is one kernel of the fastest AES variant (aes_ttable_smem32) under one policy,
// launched through the same kernels::launch_* functions the backend uses. The cases live in
// three translation units (bulk, XTS, GCM + serial) that compile in parallel.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace gpucrypt::bench {

// Device buffers shared by every case: `in` holds random bytes, `out` as many; `hashes` has room
// for the GCM tile hashes of `bytes`.
struct SweepBuffers {
  const uint8_t* in;
  uint8_t* out;
  size_t bytes;
  void* hashes;
};

struct SweepCase {
  std::string kernel;  // "ctr", "ecb_decrypt", "xts_encrypt", "gcm", "cbc_encrypt"
  std::string cipher;  // "aes-128", "aes-256"
  std::string policy;  // LaunchPolicy values, e.g. "threads=256 bulk_steps=4 ..."
  bool deployed;       // the values of Sm90Policy for this kernel
  size_t bytes;        // processed per run (serial cases run on less)
  std::function<void(const SweepBuffers&, cudaStream_t)> run;
};

void add_bulk_cases(std::vector<SweepCase>& cases);
void add_xts_cases(std::vector<SweepCase>& cases);
void add_gcm_serial_cases(std::vector<SweepCase>& cases);

// The policy's values, as the JSON and the table print them.
template <class P>
std::string describe_policy() {
  char text[300];
  std::snprintf(text, sizeof text,
                "bulk %d threads x %d steps; xts %d threads, %d steps, group %d; gcm %d threads, %d steps, "
                "group %d, min %d ctas/SM; serial batch %d",
                P::kBulkThreads, P::kBulkSteps, P::kXtsThreads, P::kXtsSteps, P::kXtsGroup, P::kGcmThreads,
                P::kGcmSteps, P::kGcmGroup, P::kGcmMinCtasPerSm, P::kSerialBatch);
  return text;
}

}  // namespace gpucrypt::bench
