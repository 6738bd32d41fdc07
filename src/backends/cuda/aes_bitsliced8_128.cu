// aes_bitsliced8_128.cu: the kernels of "aes_bitsliced8" for 128-bit keys (aes_bitsliced.cuh).
#include "backends/cuda/aes_bitsliced.cuh"

namespace gpucrypt::cuda {

template <>
std::unique_ptr<KeyedCipher> make_aes_bitsliced8_bits<128>(const uint8_t* key) {
  return make_wide_bitsliced<AesBitsliced8Family, 128>(key);
}

}  // namespace gpucrypt::cuda
