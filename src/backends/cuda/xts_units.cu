// xts_units.cu: XTS over many data units in one launch (dm-crypt's sectors, IEEE 1619's data
// units numbered first, first + 1, ...): the units' block-0 tweaks E_K2(unit number)
// come from the tweak key's ECB kernel over the numbers, in stream-ordered scratch (scratch.hpp's
// pool), and then one xts_units kernel (kernels.cuh) enciphers every unit.
//
// Constant-time position: the variant's (the kernels index and branch on lengths and unit
// numbers only, which are public). The encrypted tweaks are zeroed before their scratch is freed.
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/device_internal.hpp"
#include "backends/cuda/scratch.hpp"

namespace gpucrypt::cuda {

namespace {

// Unit u's tweak before encryption: first + u as a 128-bit little-endian integer
// (modes::XtsUnitNumber's rule, the carry past 2^64 into the high half).
__global__ void unit_numbers_kernel(gc_block* numbers, uint64_t first_low, uint64_t first_high, uint64_t num_units) {
  for (uint64_t u = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; u < num_units;
       u += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t low = first_low + u;
    const uint64_t high = first_high + (low < first_low ? 1u : 0u);
    gc_block b;
    b.w[0] = static_cast<uint32_t>(low);
    b.w[1] = static_cast<uint32_t>(low >> 32);
    b.w[2] = static_cast<uint32_t>(high);
    b.w[3] = static_cast<uint32_t>(high >> 32);
    numbers[u] = b;
  }
}

}  // namespace

void enqueue_xts_units(const KeyedCipher& data, const KeyedCipher& tweak_cipher, Direction direction,
                       modes::XtsUnitNumber first, size_t unit_len, const uint8_t* in, uint8_t* out, size_t len,
                       cudaStream_t stream) {
  if (unit_len == 0 || unit_len % 16 != 0 || len % unit_len != 0)
    throw std::logic_error("enqueue_xts_units takes whole units of whole blocks");
  if (len == 0) return;
  const uint64_t num_units = len / unit_len;
  const size_t tweak_bytes = num_units * sizeof(gc_block);
  // From the backend's scratch pool (scratch.hpp): 32 MiB of tweaks for 1 GiB of 512-byte units,
  // which the default pool unmapped at every stream synchronisation and mapped again each call.
  StreamBuffer tweak_scratch(tweak_bytes, stream, StreamBuffer::Wipe::on_free);
  auto* tweaks = reinterpret_cast<gc_block*>(tweak_scratch.get());
  constexpr int kThreads = 256;
  const uint64_t blocks = (num_units + kThreads - 1) / kThreads;
  checked_launch("XTS unit-number launch", [&] {
    unit_numbers_kernel<<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), kThreads, 0, stream>>>(
        tweaks, first.low, first.high, num_units);
  });
  tweak_cipher.ecb(Direction::encrypt, tweak_scratch.get(), tweak_scratch.get(), tweak_bytes, stream);
  data.xts_units(direction, tweaks, unit_len / 16, in, out, len, stream);
}

}  // namespace gpucrypt::cuda
