// shape_sweep_gcm.cu: sweep cases for the GCM kernel (AES-256; GCTR + per-tile GHASH, without the
// final reduction) and the serial kernel (AES-128 CBC encryption of 1 MiB, one thread). See
// shape_sweep.hpp.
#include "backends/cuda/aes_ttable_smem32.cuh"
#include "shape_sweep.hpp"

namespace gpucrypt::bench {
namespace {

using cuda::AesTTableSmem32;
using cuda::Sm90Policy;

template <int kThreads, int kSteps, int kGroup, int kMinCtas>
struct GcmShape : Sm90Policy {
  static constexpr int kGcmThreads = kThreads, kGcmSteps = kSteps, kGcmGroup = kGroup, kGcmMinCtasPerSm = kMinCtas;
};
template <int kBatch>
struct SerialShape : Sm90Policy {
  static constexpr int kSerialBatch = kBatch;
};

template <int kThreads, int kSteps, int kGroup, int kMinCtas>
void add_gcm(std::vector<SweepCase>& cases) {
  using Family = AesTTableSmem32<256>;
  using P = GcmShape<kThreads, kSteps, kGroup, kMinCtas>;
  uint8_t key[32];
  for (int i = 0; i < 32; ++i) key[i] = static_cast<uint8_t>(0x6b * i + 11);
  const auto cipher = Family::make_host(key, 32);
  cuda::GcmSegment segment{};
  cuda::gcm_segment_powers(gc_gf128_make(0x66e94bd4ef8a2c3bull, 0x884cfa59ca342b2eull), &segment);
  segment.first_counter = gc_block{{0x11223344u, 0x55667788u, 0x99aabbccu, 0x00000002u}};
  segment.encrypt = true;
  const bool deployed = kThreads == Sm90Policy::kGcmThreads && kSteps == Sm90Policy::kGcmSteps &&
                        kGroup == Sm90Policy::kGcmGroup && kMinCtas == Sm90Policy::kGcmMinCtasPerSm;
  cases.push_back({"gcm", "aes-256", describe_policy<P>(), deployed, 0,
                   [cipher, segment](const SweepBuffers& b, cudaStream_t s) {
                     cuda::kernels::launch_gcm<Family, P>(cipher, segment, b.in, b.out, b.bytes,
                                                          static_cast<gc_gf128*>(b.hashes), s);
                   }});
}

template <int kBatch>
void add_serial(std::vector<SweepCase>& cases) {
  using Family = AesTTableSmem32<128>;
  using P = SerialShape<kBatch>;
  uint8_t key[16];
  for (int i = 0; i < 16; ++i) key[i] = static_cast<uint8_t>(0x29 * i + 5);
  const auto cipher = Family::make_host(key, 16);
  constexpr size_t kSerialBytes = size_t(1) << 20;  // one thread: 1 MiB takes ~20 ms
  cases.push_back({"cbc_encrypt", "aes-128", describe_policy<P>(), kBatch == Sm90Policy::kSerialBatch, kSerialBytes,
                   [cipher](const SweepBuffers& b, cudaStream_t s) {
                     cuda::kernels::launch_serial<Family, P>(cipher, modes::serial_op(Mode::cbc, Direction::encrypt), modes::zero_block(),
                                                             nullptr, nullptr, b.in, b.out, kSerialBytes, s);
                   }});
}

}  // namespace

void add_gcm_serial_cases(std::vector<SweepCase>& cases) {
  add_gcm<256, 16, 1, 1>(cases);
  add_gcm<256, 16, 2, 1>(cases);
  add_gcm<256, 16, 4, 1>(cases);
  add_gcm<256, 16, 1, 2>(cases);
  add_gcm<256, 16, 2, 2>(cases);
  add_gcm<256, 16, 4, 2>(cases);
  add_gcm<256, 32, 2, 2>(cases);
  add_gcm<512, 16, 2, 1>(cases);
  add_serial<1>(cases);
  add_serial<4>(cases);
  add_serial<16>(cases);
}

}  // namespace gpucrypt::bench
