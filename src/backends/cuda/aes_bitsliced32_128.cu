// aes_bitsliced32_128.cu: the kernels of "aes_bitsliced32" for 128-bit keys (aes_bitsliced.cuh).
#include "backends/cuda/aes_bitsliced.cuh"

namespace gpucrypt::cuda {

template <>
std::unique_ptr<KeyedCipher> make_aes_bitsliced32_bits<128>(const uint8_t* key) {
  return make_wide_bitsliced<AesBitsliced32Family, 128>(key);
}

}  // namespace gpucrypt::cuda
