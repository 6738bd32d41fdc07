// shape_sweep_xts.cu: sweep cases for the XTS kernel (AES-256, encryption): blocks per lane
// between GF(2^128) multiplies x blocks enciphered together. See shape_sweep.hpp.
#include "backends/cuda/aes_ttable_smem32.cuh"
#include "shape_sweep.hpp"

namespace gpucrypt::bench {
namespace {

using cuda::AesTTableSmem32;
using cuda::Sm90Policy;

template <int kThreads, int kSteps, int kGroup>
struct XtsShape : Sm90Policy {
  static constexpr int kXtsThreads = kThreads, kXtsSteps = kSteps, kXtsGroup = kGroup;
};

template <int kThreads, int kSteps, int kGroup>
void add(std::vector<SweepCase>& cases) {
  using Family = AesTTableSmem32<256>;
  using P = XtsShape<kThreads, kSteps, kGroup>;
  uint8_t key[32];
  for (int i = 0; i < 32; ++i) key[i] = static_cast<uint8_t>(0x5d * i + 3);
  const auto cipher = Family::make_host(key, 32);
  const bool deployed = kThreads == Sm90Policy::kXtsThreads && kSteps == Sm90Policy::kXtsSteps &&
                        kGroup == Sm90Policy::kXtsGroup;
  const gc_block tweak = {{0x01234567u, 0x89abcdefu, 0x0f1e2d3cu, 0x4b5a6978u}};
  cases.push_back({"xts_encrypt", "aes-256", describe_policy<P>(), deployed, 0,
                   [cipher, tweak](const SweepBuffers& b, cudaStream_t s) {
                     cuda::kernels::launch_xts<Family, P, true>(cipher, tweak, 0, b.in, b.out, b.bytes, s);
                   }});
}

}  // namespace

void add_xts_cases(std::vector<SweepCase>& cases) {
  add<256, 32, 1>(cases);
  add<256, 32, 2>(cases);
  add<256, 32, 4>(cases);
  add<512, 32, 1>(cases);
  add<512, 32, 2>(cases);
  add<512, 32, 4>(cases);
  add<512, 16, 2>(cases);
  add<512, 64, 2>(cases);
  add<1024, 32, 2>(cases);
}

}  // namespace gpucrypt::bench
