// names.cpp: the vocabulary every layer uses (gpucrypt_base, the bottom of the library's layers):
// the names of algorithms and modes, cipher-name parsing, secure_zero, huge-page advice. Nothing
// here knows a backend or a device, so the backends, the hashes and the engine can use it without
// reaching up (device names are the device layer's: src/device/device_name.cpp, as they depend on
// which backends are registered).
#include "base/names.hpp"

#include <cctype>
#include <cstring>
#include <iterator>
#include <stdexcept>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "gpucrypt/cipher.hpp"
#include "gpucrypt/parallel.hpp"
#include "modes/block_cipher.hpp"
#include "modes/mode_rules.hpp"

namespace gpucrypt {

namespace {

// "ecb, cbc, ...": every mode's name, for the parser's message.
std::string mode_list_text() {
  std::string text;
  for (Mode m : list_modes()) text += (text.empty() ? "" : ", ") + std::string(mode_name(m));
  return text;
}

[[noreturn]] void bad_cipher_name(std::string_view name, std::string_view why) {
  throw std::invalid_argument("unknown cipher '" + std::string(name) + "': " + std::string(why) +
                              " (expected ALGORITHM-KEYBITS-MODE, e.g. aes-256-ctr; algorithms "
                              "aes, camellia, sc2000; key bits 128, 192, 256; modes " +
                              mode_list_text() + ")");
}

}  // namespace

std::string lower_ascii(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::string_view algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::aes: return "aes";
    case Algorithm::camellia: return "camellia";
    case Algorithm::sc2000: return "sc2000";
  }
  return "?";
}

std::string_view mode_name(Mode m) {
#define GPUCRYPT_MODE_NAME(name) #name,
  static constexpr std::string_view kNames[] = {GPUCRYPT_MODES(GPUCRYPT_MODE_NAME)};
#undef GPUCRYPT_MODE_NAME
  const auto i = static_cast<size_t>(m);
  return i < std::size(kNames) ? kNames[i] : "?";
}

CipherName parse_cipher_name(std::string_view name) {
  const std::string s = lower_ascii(name);
  const size_t first = s.find('-');
  const size_t second = first == std::string::npos ? first : s.find('-', first + 1);
  if (second == std::string::npos || s.find('-', second + 1) != std::string::npos)
    bad_cipher_name(name, "wrong shape");
  const std::string algorithm = s.substr(0, first);
  const std::string bits = s.substr(first + 1, second - first - 1);
  const std::string mode = s.substr(second + 1);
  CipherName r{};
  if (algorithm == "aes") r.algorithm = Algorithm::aes;
  else if (algorithm == "camellia") r.algorithm = Algorithm::camellia;
  else if (algorithm == "sc2000") r.algorithm = Algorithm::sc2000;
  else bad_cipher_name(name, "unknown algorithm '" + algorithm + "'");
  if (bits == "128") r.key_bits = 128;
  else if (bits == "192") r.key_bits = 192;
  else if (bits == "256") r.key_bits = 256;
  else bad_cipher_name(name, "unknown key size '" + bits + "'");
  bool found = false;
  for (Mode m : list_modes())
    if (mode == mode_name(m)) { r.mode = m; found = true; }
  if (!found) bad_cipher_name(name, "unknown mode '" + mode + "'");
  if (r.mode == Mode::xts && r.key_bits == 192)
    bad_cipher_name(name, "XTS is defined for 128- and 256-bit keys only");
  r.canonical = algorithm + "-" + bits + "-" + mode;
  return r;
}

void cpu::advise_huge_pages(void* p, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHugePage = uintptr_t{1} << 21;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)n;
#endif
}

// memset, then an empty asm that claims to read the memory, so the compiler cannot drop the stores
// as dead. modes::secure_zero (a volatile byte loop, shared with the CUDA kernels) moves about a
// byte a cycle: the ~214 MB of packed input and output a batch of 100k 1 KiB messages wipes took
// tens of milliseconds, more than the batch's encryption.
void secure_zero(void* p, size_t len) {
#if defined(__GNUC__) || defined(__clang__)
  if (len == 0) return;
  std::memset(p, 0, len);
  asm volatile("" : : "r"(p) : "memory");
#else
  modes::secure_zero(p, len);
#endif
}

bool mode_is_parallel(Mode mode, Direction direction) { return modes::is_parallel(mode, direction); }
bool mode_is_keystream(Mode mode) { return modes::is_keystream(mode); }
bool mode_needs_whole_blocks(Mode mode) { return modes::needs_whole_blocks(mode); }
bool mode_is_aead(Mode mode) { return modes::is_aead(mode); }
bool mode_is_stream(Mode mode) { return modes::is_stream(mode); }
std::vector<Mode> list_modes() {
#define GPUCRYPT_MODE_ENTRY(name) Mode::name,
  return {GPUCRYPT_MODES(GPUCRYPT_MODE_ENTRY)};
#undef GPUCRYPT_MODE_ENTRY
}

bool mode_range_needs_previous(Mode mode) { return modes::range_needs_previous(mode); }

void mode_range_iv(Mode mode, const uint8_t iv[16], uint64_t first_block, const uint8_t* previous_block,
                   uint8_t out[16]) {
  modes::range_iv(mode, iv, first_block, previous_block, out);
}

}  // namespace gpucrypt
