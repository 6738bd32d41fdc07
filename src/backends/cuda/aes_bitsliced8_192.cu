// aes_bitsliced8_192.cu: the kernels of "aes_bitsliced8" for 192-bit keys (aes_bitsliced.cuh).
#include "backends/cuda/aes_bitsliced.cuh"

namespace gpucrypt::cuda {

template <>
std::unique_ptr<KeyedCipher> make_aes_bitsliced8_bits<192>(const uint8_t* key) {
  using Family = AesBitsliced8Family<192>;
  return std::make_unique<kernels::KeyedCipherImpl<Family, 192, Bitsliced8Policy>>(key);
}

}  // namespace gpucrypt::cuda
