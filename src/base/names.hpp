// names.hpp: helpers of the base layer shared by the layers above (the public part of the
// vocabulary, parse_cipher_name and friends, is declared in gpucrypt/cipher.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpucrypt {

// ASCII lower case: names are matched without regard to case ("AES-256-CTR", "CUDA:0").
std::string lower_ascii(std::string_view s);

// Whether two byte ranges share memory (an empty range shares none): the one overlap rule of
// every entry point that takes an input and an output.
inline bool ranges_overlap(const void* a, size_t a_len, const void* b, size_t b_len) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return a_len != 0 && b_len != 0 && x < y + b_len && y < x + a_len;
}

// An output that overlaps its input without being it: a shifted view of the same memory. The
// engines take out == in (each block is read before it is written) but not this: their threads,
// GPU lanes and copy pipelines would overwrite input that another part has yet to read.
inline bool partially_overlapping(const void* in, const void* out, size_t len) {
  return in != out && ranges_overlap(in, len, out, len);
}

}  // namespace gpucrypt
