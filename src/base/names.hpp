// names.hpp: helpers of the base layer shared by the layers above (the public part of the
// vocabulary, parse_cipher_name and friends and the overlap rules, is declared in gpucrypt/cipher.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpucrypt/cipher.hpp"  // ranges_overlap, partially_overlapping: public, used with these

namespace gpucrypt {

// ASCII lower case: names are matched without regard to case ("AES-256-CTR", "CUDA:0").
std::string lower_ascii(std::string_view s);

// A copy of `len` bytes, wiped (secure_zero) on every way out of its scope: what an entry point
// reads instead of its input when the output partially overlaps it (partially_overlapping), since
// the input may be plaintext. Used by CipherStream::update / update_units and transform_range.
class WipedCopy {
 public:
  WipedCopy(const uint8_t* data, size_t len) : bytes_(data, data + len) {}
  ~WipedCopy() { secure_zero(bytes_.data(), bytes_.size()); }
  WipedCopy(const WipedCopy&) = delete;
  WipedCopy& operator=(const WipedCopy&) = delete;
  const uint8_t* data() const { return bytes_.data(); }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace gpucrypt
