// aes_bitsliced.cu: the CUDA variant "aes_bitsliced" (two blocks per call) and the factories of
// "aes_bitsliced32" and "aes_bitsliced8". Families and constant-time position: aes_bitsliced.cuh.
#include "backends/cuda/aes_bitsliced.cuh"

namespace gpucrypt::cuda {

std::unique_ptr<KeyedCipher> make_aes_bitsliced(const uint8_t* key, int key_bits) {
  return kernels::make_keyed<AesBitslicedFamily>(key, key_bits);
}

namespace {

using MakeForKeySize = std::unique_ptr<KeyedCipher> (*)(const uint8_t* key);

// The wide variants keep one translation unit per key size; this picks the unit's factory.
std::unique_ptr<KeyedCipher> make_for_key_bits(const uint8_t* key, int key_bits, MakeForKeySize make_128,
                                               MakeForKeySize make_192, MakeForKeySize make_256) {
  switch (key_bits) {
    case 128: return make_128(key);
    case 192: return make_192(key);
    case 256: return make_256(key);
  }
  throw std::invalid_argument("key size must be 128, 192 or 256 bits, got " + std::to_string(key_bits));
}

}  // namespace

std::unique_ptr<KeyedCipher> make_aes_bitsliced32(const uint8_t* key, int key_bits) {
  return make_for_key_bits(key, key_bits, make_aes_bitsliced32_bits<128>, make_aes_bitsliced32_bits<192>,
                           make_aes_bitsliced32_bits<256>);
}

std::unique_ptr<KeyedCipher> make_aes_bitsliced8(const uint8_t* key, int key_bits) {
  return make_for_key_bits(key, key_bits, make_aes_bitsliced8_bits<128>, make_aes_bitsliced8_bits<192>,
                           make_aes_bitsliced8_bits<256>);
}

}  // namespace gpucrypt::cuda
