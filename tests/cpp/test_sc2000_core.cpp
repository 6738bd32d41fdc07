// test_sc2000_core: the portable SC2000 primitive (src/core/sc2000.h, "sc2000_table").
//
// Checks:
//   * the MS field tables of sc2000_tables.h against M(S(x)) evaluated bit by bit from the S6, S5
//     and M tables of the FSE 2001 paper (typed below from the project's sc2000.md);
//   * the bitsliced B / B^-1 layers against the paper's S4 / S4^-1 for all 16 inputs;
//   * intermediate values of sc2000.md's debug trace (128-bit zero key; ek[56..63] of 000102..1f);
//   * all 1728 NESSIE vectors (Sets 1-3, 128/192/256-bit keys), encrypt and decrypt, read
//     unchanged from tests/vectors/sc2000/sc2000-nessie-vectors.txt. (NESSIE's iterated Set 4 is
//     not in that file; sc2000.md section 10 says it could not be found.)
//   * the failure path: key lengths other than 16/24/32 are refused.
//
// Usage: test_sc2000_core [vector file | vectors dir]   (ctest passes tests/vectors, the default; a
// directory means <dir>/sc2000/sc2000-nessie-vectors.txt, and a missing file is a failure).
// Prints "N passed, M failed"; non-zero on failure.
#include "core/sc2000.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace gpucrypt::test_support;

const sc2000_tables kTables = sc2000_tables_at(gc_sc2000_ms);

// FSE 2001 paper, section 4 (via sc2000.md section 2).
const uint8_t kS6[64] = {47, 59, 25, 42, 15, 23, 28, 39, 26, 38, 36, 19, 60, 24, 29, 56,
                         37, 63, 20, 61, 55, 2,  30, 44, 9,  10, 6,  22, 53, 48, 51, 11,
                         62, 52, 35, 18, 14, 46, 0,  54, 17, 40, 27, 4,  31, 8,  5,  12,
                         3,  16, 41, 34, 33, 7,  45, 49, 50, 58, 1,  21, 43, 57, 32, 13};
const uint8_t kS5[32] = {20, 26, 7, 31, 19, 12, 10, 15, 22, 30, 13, 14, 4, 24, 9,  18,
                         27, 11, 1, 21, 6,  16, 2,  28, 23, 5,  8,  3,  0, 17, 29, 25};
const uint8_t kS4[16] = {2, 5, 10, 12, 7, 15, 1, 11, 13, 6, 0, 9, 4, 8, 3, 14};
const uint8_t kS4Inverse[16] = {10, 6, 0, 14, 12, 1, 9, 4, 13, 11, 2, 7, 3, 8, 15, 5};
const uint32_t kM[32] = {
    0xd0c19225u, 0xa5a2240au, 0x1b84d250u, 0xb728a4a1u, 0x6a704902u, 0x85dddbe6u, 0x766ff4a4u,
    0xecdfe128u, 0xafd13e94u, 0xdf837d09u, 0xbb27fa52u, 0x695059acu, 0x52a1bb58u, 0xcc322f1du,
    0x1844565bu, 0xb4a8acf6u, 0x34235438u, 0x6847a851u, 0xe48c0cbbu, 0xcd181136u, 0x9a112a0cu,
    0x43ec6d0eu, 0x87d8d27du, 0x487dc995u, 0x90fb9b4bu, 0xa1f63697u, 0xfc513ed9u, 0x78a37d93u,
    0x8d16c5dfu, 0x9e0c8bbeu, 0x3c381f7cu, 0xe9fb0779u};

uint32_t reference_ms(uint32_t x) {
  uint32_t s = static_cast<uint32_t>(kS6[x >> 26]) << 26 |
               static_cast<uint32_t>(kS5[x >> 21 & 31]) << 21 |
               static_cast<uint32_t>(kS5[x >> 16 & 31]) << 16 |
               static_cast<uint32_t>(kS5[x >> 11 & 31]) << 11 |
               static_cast<uint32_t>(kS5[x >> 6 & 31]) << 6 | kS6[x & 63];
  uint32_t m = 0;
  for (int bit = 0; bit < 32; ++bit)  // designer bit 0 is the MSB
    if ((s >> (31 - bit)) & 1) m ^= kM[bit];
  return m;
}

void test_ms_tables() {
  // Every table entry is reached by some x: walk each field through all its values.
  const int field_shift[6] = {26, 21, 16, 11, 6, 0};
  const int field_bits[6] = {6, 5, 5, 5, 5, 6};
  for (int field = 0; field < 6; ++field)
    for (uint32_t v = 0; v < (1u << field_bits[field]); ++v) {
      uint32_t x = v << field_shift[field];
      check(sc2000_ms(&kTables, x) == reference_ms(x),
            "MS table field " + std::to_string(field) + " value " + std::to_string(v));
    }
  std::mt19937 rng(2000);
  int num_mismatches = 0;
  for (int i = 0; i < 10000; ++i) {
    uint32_t x = rng();
    num_mismatches += sc2000_ms(&kTables, x) != reference_ms(x);
  }
  check(num_mismatches == 0, "MS tables on 10000 random words");
}

void test_b_layers() {
  for (int v = 0; v < 16; ++v) {
    // Put nibble v in bit column 0 and its complement in column 1; both must map independently.
    uint32_t forward[4], inverse[4];
    for (int i = 0; i < 4; ++i)
      forward[i] = inverse[i] = ((v >> (3 - i)) & 1) | (((~v >> (3 - i)) & 1) << 1);
    sc2000_b(forward);
    sc2000_b_inv(inverse);
    int out0 = 0, out1 = 0, inv0 = 0, inv1 = 0;
    for (int i = 0; i < 4; ++i) {
      out0 |= (forward[i] & 1) << (3 - i);
      out1 |= ((forward[i] >> 1) & 1) << (3 - i);
      inv0 |= (inverse[i] & 1) << (3 - i);
      inv1 |= ((inverse[i] >> 1) & 1) << (3 - i);
    }
    check(out0 == kS4[v] && out1 == kS4[v ^ 15], "B on nibble " + std::to_string(v));
    check(inv0 == kS4Inverse[v] && inv1 == kS4Inverse[v ^ 15],
          "B^-1 on nibble " + std::to_string(v));
  }
}

void test_debug_trace() {
  const uint8_t zero_key[16] = {0};
  sc2000_key_schedule ks;
  check(sc2000_expand_key(&ks, zero_key, 16, &kTables) == 0, "zero key accepted");
  check(ks.num_rounds == 6 && ks.key_bits == 128, "128-bit schedule shape");
  check(sc2000_ms(&kTables, 0) == 0x0eaa5e14u && sc2000_ms(&kTables, 1) == 0xe805a839u &&
            sc2000_ms(&kTables, 0x80000000u) == 0x2ed5a1f8u,
        "trace MS(0), MS(1), MS(0x80000000)");
  const uint32_t ek_0_7[8] = {0x5a215e97u, 0x2511c596u, 0x005b7b29u, 0x05038ed3u,
                              0xd6ac0212u, 0xff7f916bu, 0x91685e19u, 0xf529f0edu};
  const uint32_t ek_48_55[8] = {0x5b41e2e5u, 0x4d08c78cu, 0x12e28ab1u, 0xb8f8b742u,
                                0x830e156cu, 0x5d757a55u, 0xb8d8c053u, 0x286bb72eu};
  check(std::memcmp(ks.extended_key, ek_0_7, sizeof ek_0_7) == 0, "trace ek[0..7]");
  check(std::memcmp(ks.extended_key + 48, ek_48_55, sizeof ek_48_55) == 0, "trace ek[48..55]");

  uint8_t key_256[32];
  for (int i = 0; i < 32; ++i) key_256[i] = static_cast<uint8_t>(i);
  sc2000_expand_key(&ks, key_256, 32, &kTables);
  const uint32_t ek_56_63[8] = {0xf408856fu, 0x957ca367u, 0x76923c0fu, 0x0bedbd2au,
                                0x8dfb5e10u, 0x13424fd7u, 0x2f88b922u, 0x054a9e54u};
  check(ks.num_rounds == 7 && ks.key_bits == 256, "256-bit schedule shape");
  check(std::memcmp(ks.extended_key + 56, ek_56_63, sizeof ek_56_63) == 0,
        "trace 256-bit ek[56..63]");
}

void test_bad_key_lengths() {
  const uint8_t key[33] = {0};
  for (int key_len : {0, 1, 8, 15, 17, 20, 23, 25, 31, 33, -16}) {
    sc2000_key_schedule ks;
    ks.key_bits = 12345;
    int rc = sc2000_expand_key(&ks, key, key_len, &kTables);
    check(rc == -1 && ks.key_bits == 12345, "key_len " + std::to_string(key_len) + " refused");
  }
}

// Lines: "keybits set key plaintext ciphertext" (hex); '#' starts a comment line.
void test_nessie(const std::filesystem::path& path) {
  std::ifstream file(path);
  check(file.good(), "open " + path.string());
  std::string line;
  int num_vectors = 0;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    int key_bits = 0, set = 0;
    std::string key_hex, plaintext_hex, ciphertext_hex;
    fields >> key_bits >> set >> key_hex >> plaintext_hex >> ciphertext_hex;
    std::vector<uint8_t> key = from_hex(key_hex), plaintext = from_hex(plaintext_hex),
                         ciphertext = from_hex(ciphertext_hex);
    std::string what = "NESSIE SC2000-" + std::to_string(key_bits) + " set " + std::to_string(set) +
                       " key " + key_hex + " pt " + plaintext_hex;
    sc2000_key_schedule ks;
    if (static_cast<int>(key.size()) * 8 != key_bits || plaintext.size() != 16 ||
        ciphertext.size() != 16 ||
        sc2000_expand_key(&ks, key.data(), static_cast<int>(key.size()), &kTables) != 0) {
      check(false, what + ": malformed line");
      continue;
    }
    uint8_t out[16];
    gc_block_store(out, sc2000_encrypt(&kTables, &ks, gc_block_load(plaintext.data())));
    check(std::memcmp(out, ciphertext.data(), 16) == 0, what + " encrypt");
    gc_block_store(out, sc2000_decrypt(&kTables, &ks, gc_block_load(ciphertext.data())));
    check(std::memcmp(out, plaintext.data(), 16) == 0, what + " decrypt");
    ++num_vectors;
  }
  check(num_vectors == 1728, "expected 1728 NESSIE vectors, read " + std::to_string(num_vectors));
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path vectors = vectors_dir_or_default(argc, argv);
  if (std::filesystem::is_directory(vectors))
    vectors = vectors / "sc2000" / "sc2000-nessie-vectors.txt";

  test_ms_tables();
  test_b_layers();
  test_debug_trace();
  test_bad_key_lengths();
  test_nessie(vectors);
  return report();
}
