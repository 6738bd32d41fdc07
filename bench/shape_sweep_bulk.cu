// shape_sweep_bulk.cu: sweep cases for the bulk kernel (CTR, ECB decryption): threads per CTA x
// blocks per lane in flight. See shape_sweep.hpp.
#include "backends/cuda/aes_ttable_smem32.cuh"
#include "shape_sweep.hpp"

namespace gpucrypt::bench {
namespace {

using cuda::AesTTableSmem32;
using cuda::Sm90Policy;
using cuda::kernels::Bulk;

template <int kThreads, int kSteps>
struct BulkShape : Sm90Policy {
  static constexpr int kBulkThreads = kThreads, kBulkSteps = kSteps;
};

template <int kThreads, int kSteps, Bulk kMode>
void add(std::vector<SweepCase>& cases, const char* kernel) {
  using Family = AesTTableSmem32<128>;
  using P = BulkShape<kThreads, kSteps>;
  uint8_t key[16];
  for (int i = 0; i < 16; ++i) key[i] = static_cast<uint8_t>(0x3c * i + 7);
  const auto cipher = Family::make_host(key, 16);
  const bool deployed = kThreads == Sm90Policy::kBulkThreads && kSteps == Sm90Policy::kBulkSteps;
  cases.push_back({kernel, "aes-128", describe_policy<P>(), deployed, 0, [cipher](const SweepBuffers& b, cudaStream_t s) {
                     cuda::kernels::launch_bulk<Family, P, kMode>(cipher, b.in, b.out, b.bytes,
                                                                  modes::zero_block(), s);
                   }});
}

}  // namespace

void add_bulk_cases(std::vector<SweepCase>& cases) {
  add<256, 1, Bulk::ctr>(cases, "ctr");
  add<256, 2, Bulk::ctr>(cases, "ctr");
  add<256, 4, Bulk::ctr>(cases, "ctr");
  add<512, 1, Bulk::ctr>(cases, "ctr");
  add<512, 2, Bulk::ctr>(cases, "ctr");
  add<512, 4, Bulk::ctr>(cases, "ctr");
  add<1024, 1, Bulk::ctr>(cases, "ctr");
  add<1024, 2, Bulk::ctr>(cases, "ctr");
  add<256, 2, Bulk::ecb_decrypt>(cases, "ecb_decrypt");
  add<256, 4, Bulk::ecb_decrypt>(cases, "ecb_decrypt");
  add<512, 1, Bulk::ecb_decrypt>(cases, "ecb_decrypt");
  add<512, 2, Bulk::ecb_decrypt>(cases, "ecb_decrypt");
  add<512, 4, Bulk::ecb_decrypt>(cases, "ecb_decrypt");
  add<1024, 2, Bulk::ecb_decrypt>(cases, "ecb_decrypt");
}

}  // namespace gpucrypt::bench
