// names.hpp: helpers of the base layer shared by the layers above (the public part of the
// vocabulary, parse_cipher_name and friends, is declared in gpucrypt/cipher.hpp).
#pragma once

#include <string>
#include <string_view>

namespace gpucrypt {

// ASCII lower case: names are matched without regard to case ("AES-256-CTR", "CUDA:0").
std::string lower_ascii(std::string_view s);

}  // namespace gpucrypt
