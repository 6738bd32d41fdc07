// launch_policy.hpp: the launch shapes of the cipher kernels (kernels.cuh), one policy struct per
// GPU generation; current_launch_policy (device.cu) is the one place that picks it for a device.
//
// Every value below was chosen from a sweep on an H200 (bench/shape_sweep.cu, run by
// scripts/gpu-check step `sweep`; results and the reasoning per value in docs/performance.md,
// "Launch shapes"). A policy is a type so that the kernels unroll over its constants: per-lane
// block arrays live in registers only when their length is known at compile time.
#pragma once

#include <string_view>

namespace gpucrypt::cuda {

// A policy is a struct of constants, one group per kernel. The sweep, aes_bitsliced32 and
// aes_bitsliced8 derive from one and override single values (a derived struct's constant hides the base's).
//   k*Threads          threads per CTA of that kernel
//   kBulkSteps         ECB/CTR/CBC-dec/CFB-dec: blocks per lane per tile (loads in flight)
//   kXtsSteps          XTS: blocks per lane per tile (one GF(2^128) multiply per tile)
//   kXtsGroup          XTS: blocks loaded and enciphered together
//   kGcmSteps          GCM: blocks per lane per tile (a tile = 32 * steps blocks, one hash each)
//   kGcmGroup          GCM: keystream blocks computed together
//   kGcmMinCtasPerSm   GCM: __launch_bounds__ minimum, which caps registers per thread
//   kSerialBatch       CBC/CFB encryption, OFB: loads issued ahead of the chain

// Hopper (H100/H200), from the sweep of 2026-11-22 on an H200 (docs/performance.md, "Launch
// shapes", bench/results/h200-2026-11-22-sweep*.json): AES-128-CTR 585 -> 616 GB/s with 512-thread
// CTAs and 2 blocks per lane (1024 threads: 607; ECB decryption would gain 4% there, CTR is the
// mode that matters); AES-256-XTS 342 -> 414 GB/s with 512 threads enciphering 2 blocks at a time
// (fewer live registers, more warps; 1024 threads 2% more, within run-to-run spread, at a cap of
// 64 registers that other ciphers would spill at); GCM (kernel only) 223 -> 240 GB/s one block at
// a time under the 2-CTA register cap; serial modes need only 4 loads ahead (1..64: within 3%).
struct Sm90Policy {
  static constexpr int kBulkThreads = 512, kBulkSteps = 2;
  static constexpr int kXtsThreads = 512, kXtsSteps = 32, kXtsGroup = 2;
  static constexpr int kGcmThreads = 256, kGcmSteps = 16, kGcmGroup = 1, kGcmMinCtasPerSm = 2;
  static constexpr int kSerialThreads = 256, kSerialBatch = 4;
};

// Any other GPU able to run the sm_90 code (the PTX is JIT-compiled for newer generations): values
// that assume nothing about register file or shared memory beyond what every CUDA GPU of compute
// capability 9.0+ has (256-thread CTAs, no register cap, shorter XTS tiles that leave more tiles
// for small data). Tested on the H200 with GPUCRYPT_CUDA_LAUNCH_POLICY=default; not tuned anywhere.
struct DefaultPolicy {
  static constexpr int kBulkThreads = 256, kBulkSteps = 2;
  static constexpr int kXtsThreads = 256, kXtsSteps = 16, kXtsGroup = 2;
  static constexpr int kGcmThreads = 256, kGcmSteps = 16, kGcmGroup = 2, kGcmMinCtasPerSm = 1;
  static constexpr int kSerialThreads = 256, kSerialBatch = 16;
};

enum class PolicyName { sm90, generic };

// The policy for the current device: sm90 for compute capability 9.x, generic for everything else;
// GPUCRYPT_CUDA_LAUNCH_POLICY=sm90|default overrides (tests run both on one GPU). device.cu.
PolicyName current_launch_policy();
std::string_view launch_policy_name(PolicyName policy);

// body(Policy{}) under the current device's policy type: the one place where the policy's name
// becomes the type the kernels are instantiated over (both branches must return the same type).
template <class Body>
decltype(auto) with_launch_policy(Body&& body) {
  if (current_launch_policy() == PolicyName::sm90) return body(Sm90Policy{});
  return body(DefaultPolicy{});
}

}  // namespace gpucrypt::cuda
