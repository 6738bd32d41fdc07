// names.hpp: helpers of the base layer shared by the layers above (the public part of the
// vocabulary, parse_cipher_name and friends and the overlap rules, is declared in gpucrypt/cipher.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpucrypt/cipher.hpp"  // ranges_overlap, partially_overlapping: public, used with these

namespace gpucrypt {

// ASCII lower case: names are matched without regard to case ("AES-256-CTR", "CUDA:0").
std::string lower_ascii(std::string_view s);

}  // namespace gpucrypt
