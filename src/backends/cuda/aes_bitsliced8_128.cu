// aes_bitsliced8_128.cu: the kernels of "aes_bitsliced8" for 128-bit keys (aes_bitsliced.cuh).
#include "backends/cuda/aes_bitsliced.cuh"

namespace gpucrypt::cuda {

template <>
std::unique_ptr<KeyedCipher> make_aes_bitsliced8_bits<128>(const uint8_t* key) {
  using Family = AesBitsliced8Family<128>;
  return std::make_unique<kernels::KeyedCipherImpl<Family, 128, Bitsliced8Policy>>(key);
}

}  // namespace gpucrypt::cuda
