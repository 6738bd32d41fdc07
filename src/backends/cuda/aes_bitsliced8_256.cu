// aes_bitsliced8_256.cu: the kernels of "aes_bitsliced8" for 256-bit keys (aes_bitsliced.cuh).
#include "backends/cuda/aes_bitsliced.cuh"

namespace gpucrypt::cuda {

template <>
std::unique_ptr<KeyedCipher> make_aes_bitsliced8_bits<256>(const uint8_t* key) {
  return make_wide_bitsliced<AesBitsliced8Family, 256>(key);
}

}  // namespace gpucrypt::cuda
