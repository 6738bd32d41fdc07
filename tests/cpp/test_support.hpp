// test_support.hpp: the scaffolding every tests/cpp/test_*.cpp shares: a check tally that ends in
// "N passed, M failed" and the exit code, hex conversion, and the vectors-directory argument
// (ctest passes tests/vectors as argv[1]; see CMakeLists.txt).
//
// Header-only and without a .cpp of its own, so CMake's tests/cpp/test_*.cpp glob does not make a
// test of it. Each test is one translation unit; the tally lives in inline variables.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucrypt::test_support {

inline int num_passed = 0;
inline int num_failed = 0;
inline constexpr int kMaxPrintedFailures = 50;  // enough to see a pattern, short enough to scroll

// check: counts one check; a failure prints what (the first kMaxPrintedFailures of them).
// Returns ok so a caller can stop a loop after the first failure.
inline bool check(bool ok, const std::string& what) {
  if (ok) {
    ++num_passed;
  } else {
    ++num_failed;
    if (num_failed <= kMaxPrintedFailures) std::printf("FAIL: %s\n", what.c_str());
  }
  return ok;
}

// report: prints "N passed, M failed" and returns main's exit code (non-zero on any failure).
inline int report() {
  if (num_failed > kMaxPrintedFailures) std::printf("(only the first %d failures printed)\n", kMaxPrintedFailures);
  std::printf("%d passed, %d failed\n", num_passed, num_failed);
  return num_failed == 0 ? 0 : 1;
}

// from_hex: the bytes of the hex digits in text; anything else (spaces in NTT's "00 11 22" lines,
// a trailing '\r') is skipped, and an odd last digit is dropped. Callers check the length.
inline std::vector<uint8_t> from_hex(std::string_view text) {
  std::vector<uint8_t> bytes;
  int high_nibble = -1;
  for (char c : text) {
    const int byte = static_cast<unsigned char>(c);
    if (!std::isxdigit(byte)) continue;
    const int nibble = std::isdigit(byte) ? byte - '0' : std::tolower(byte) - 'a' + 10;
    if (high_nibble < 0) {
      high_nibble = nibble;
    } else {
      bytes.push_back(static_cast<uint8_t>(high_nibble << 4 | nibble));
      high_nibble = -1;
    }
  }
  return bytes;
}

inline std::string to_hex(const uint8_t* bytes, size_t len) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < len; ++i) {
    text += digits[bytes[i] >> 4];
    text += digits[bytes[i] & 15];
  }
  return text;
}

inline std::string to_hex(const std::vector<uint8_t>& bytes) { return to_hex(bytes.data(), bytes.size()); }

// vectors_dir: argv[1], the directory of vector files. Without it, prints "note: no vectors dir
// given, <skipped> skipped" and returns nothing; the caller then skips those checks.
inline std::optional<std::filesystem::path> vectors_dir(int argc, char** argv, const std::string& skipped) {
  if (argc > 1) return std::filesystem::path(argv[1]);
  std::printf("note: no vectors dir given, %s skipped\n", skipped.c_str());
  return std::nullopt;
}

// vectors_dir_or_default: argv[1], else tests/vectors (relative to the repository root, where
// ctest runs), for tests in which a missing vector file is a failure rather than a skip.
inline std::filesystem::path vectors_dir_or_default(int argc, char** argv) {
  return argc > 1 ? std::filesystem::path(argv[1]) : std::filesystem::path("tests/vectors");
}

// random_bytes: n bytes from a test's own seeded generator (a failure repeats on the next run).
template <class Generator>
std::vector<uint8_t> random_bytes(Generator& generator, size_t n) {
  std::vector<uint8_t> bytes(n);
  for (auto& b : bytes) b = static_cast<uint8_t>(generator());
  return bytes;
}

}  // namespace gpucrypt::test_support
