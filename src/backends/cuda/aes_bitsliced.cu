// aes_bitsliced.cu: the CUDA variant "aes_bitsliced" (two blocks per call) and the factory of
// "aes_bitsliced32". Families and constant-time position: aes_bitsliced.cuh.
#include "backends/cuda/aes_bitsliced.cuh"

namespace gpucrypt::cuda {

std::unique_ptr<KeyedCipher> make_aes_bitsliced(const uint8_t* key, int key_bits) {
  return kernels::make_keyed<AesBitslicedFamily>(key, key_bits);
}

std::unique_ptr<KeyedCipher> make_aes_bitsliced32(const uint8_t* key, int key_bits) {
  switch (key_bits) {
    case 128: return make_aes_bitsliced32_bits<128>(key);
    case 192: return make_aes_bitsliced32_bits<192>(key);
    case 256: return make_aes_bitsliced32_bits<256>(key);
  }
  throw std::invalid_argument("key size must be 128, 192 or 256 bits, got " + std::to_string(key_bits));
}

}  // namespace gpucrypt::cuda
