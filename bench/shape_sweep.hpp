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
  char text[200];
  std::snprintf(text, sizeof text,
                "threads=%d bulk_steps=%d xts_steps=%d xts_group=%d gcm_steps=%d gcm_group=%d gcm_min_ctas=%d "
                "serial_batch=%d",
                P::kThreads, P::kBulkSteps, P::kXtsSteps, P::kXtsGroup, P::kGcmSteps, P::kGcmGroup,
                P::kGcmMinBlocksPerSm, P::kSerialBatch);
  return text;
}

}  // namespace gpucrypt::bench
