// aes_bitsliced8_192.cu: the kernels of "aes_bitsliced8" for 192-bit keys (aes_bitsliced.cuh).
#include "backends/cuda/aes_bitsliced.cuh"

namespace gpucrypt::cuda {

template <>
std::unique_ptr<KeyedCipher> make_aes_bitsliced8_bits<192>(const uint8_t* key) {
  return make_wide_bitsliced<AesBitsliced8Family, 192>(key);
}

}  // namespace gpucrypt::cuda
