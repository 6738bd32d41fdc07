// launch_policy.hpp: the launch shapes of the cipher kernels (kernels.cuh), one policy struct per
// GPU generation, and the one place that picks the policy for a device.
//
// Every value below was chosen from a sweep on an H200 (bench/shape_sweep.cu, run by
// scripts/gpu-check step `sweep`; results and the reasoning per value in docs/performance.md,
// "Launch shapes"). A policy is a type so that the kernels unroll over its constants: per-lane
// block arrays live in registers only when their length is known at compile time.
#pragma once

#include <string_view>

namespace gpucrypt::cuda {

template <int Threads, int BulkSteps, int XtsSteps, int XtsGroup, int GcmSteps, int GcmGroup, int GcmMinBlocksPerSm,
          int SerialBatch>
struct LaunchPolicy {
  static constexpr int kThreads = Threads;      // threads per CTA
  static constexpr int kBulkSteps = BulkSteps;  // ECB/CTR/CBC-dec/CFB-dec: blocks per lane per tile (loads in flight)
  static constexpr int kXtsSteps = XtsSteps;    // XTS: blocks per lane per tile (one GF multiply per tile)
  static constexpr int kXtsGroup = XtsGroup;    // XTS: blocks loaded and enciphered together
  static constexpr int kGcmSteps = GcmSteps;    // GCM: blocks per lane per tile (tile = 32 * steps blocks)
  static constexpr int kGcmGroup = GcmGroup;    // GCM: keystream blocks computed together
  static constexpr int kGcmMinBlocksPerSm = GcmMinBlocksPerSm;  // __launch_bounds__ minimum: caps registers
  static constexpr int kSerialBatch = SerialBatch;  // CBC/CFB encryption, OFB: loads issued ahead of the chain
  static constexpr int kWarpsPerBlock = Threads / 32;
  static_assert(Threads % 32 == 0 && XtsSteps % XtsGroup == 0 && GcmSteps % GcmGroup == 0, "whole warps and groups");
};

// Hopper (H100/H200), from the sweep: 256 threads; 4 blocks per lane in flight for the bulk modes;
// XTS walks 32 blocks per lane between GF(2^128) multiplies; GCM tiles of 16 blocks per lane with 2 CTAs
// per SM (128 registers, no spills); serial modes 16 loads ahead.
using Sm90Policy = LaunchPolicy<256, 4, 32, 4, 16, 4, 2, 16>;

// Any other GPU able to run the sm_90 code (the PTX is JIT-compiled for newer generations): values
// that assume nothing about register file or shared memory beyond what every CUDA GPU of compute
// capability 9.0+ has (no register cap, shorter XTS and GCM tiles that leave more CTAs for small
// data). Tested on the H200 with GPUCRYPT_CUDA_LAUNCH_POLICY=default; not tuned anywhere.
using DefaultPolicy = LaunchPolicy<256, 2, 16, 4, 16, 4, 1, 16>;

enum class PolicyName { sm90, generic };

// The policy for the current device: sm90 for compute capability 9.x, generic for everything else;
// GPUCRYPT_CUDA_LAUNCH_POLICY=sm90|default overrides (tests run both on one GPU). device.cu.
PolicyName current_launch_policy();
std::string_view launch_policy_name(PolicyName policy);

}  // namespace gpucrypt::cuda
