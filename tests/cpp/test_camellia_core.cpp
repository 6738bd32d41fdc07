// test_camellia_core: the portable Camellia primitive (src/core/camellia.h, "camellia_ttable").
//
// Checks, each in both directions:
//   * RFC 3713 Appendix A vectors (128/192/256-bit keys) and two subkey values from camellia.md;
//   * NTT's ECB vectors (t_camelia.txt, 1280 per key size, as shipped in cryptography-vectors
//     50.0.2) from <vectors dir>/camellia/camellia-{128,192,256}-ecb.txt;
//   * 10000 random keys/blocks per key size against OpenSSL's EVP_camellia_*_ecb (when built with
//     OpenSSL, i.e. GPUCRYPT_WITH_OPENSSL);
//   * the failure path: key lengths other than 16/24/32 are refused.
//
// test_camellia_sbox_words.cpp compiles this file again with GC_CAMELLIA_SBOX_WORDS (the GPU
// table layout: one table of packed S-box words, keys expanded by modes::camellia_host_expand_key)
// and runs the same checks, plus the packing of every S-box word against the SP tables.
//
// Usage: test_camellia_core [vectors dir]   (ctest passes tests/vectors; without it the NTT files
// are skipped). Prints "N passed, M failed"; exits non-zero on any failure.
#include "core/camellia.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "modes/ciphers.hpp"
#include "test_support.hpp"

#if defined(GPUCRYPT_WITH_OPENSSL)
#include <openssl/evp.h>
#endif

namespace {

using namespace gpucrypt::test_support;

#if GC_CAMELLIA_SBOX_WORDS
// The GPU layout with one copy (stride 1): entry x packs s1..s4 of x.
const uint32_t* sbox_word_table() {
  static uint32_t words[256];
  for (int x = 0; x < 256; ++x) words[x] = camellia_sbox_word(gc_camellia_sp, x);
  return words;
}
const camellia_tables kTables = [] {
  camellia_tables t = camellia_tables_at(gc_camellia_sp);
  t.sbox_words = sbox_word_table();
  return t;
}();

// Key expansion of this layout (done on the host with the SP tables); key lengths are checked by
// the caller of camellia_host_expand_key, as camellia_expand_key does here.
int camellia_expand_key(camellia_key_schedule* ks, const uint8_t* key, int key_len, const camellia_tables*) {
  if (key_len != 16 && key_len != 24 && key_len != 32) return -1;
  gpucrypt::modes::camellia_host_expand_key(ks, key, key_len);
  return 0;
}

// Every S-box word placed as each SP table has it equals that table's entry.
void test_sbox_word_packing() {
  int mismatches = 0;
  for (int x = 0; x < 256; ++x) {
    const uint32_t w = camellia_sbox_word(gc_camellia_sp, x);
    mismatches += camellia_sp_from_sbox_word(w, 0) != gc_camellia_sp[x];
    mismatches += camellia_sp_from_sbox_word(w, 1) != gc_camellia_sp[256 + x];
    mismatches += camellia_sp_from_sbox_word(w, 2) != gc_camellia_sp[512 + x];
    mismatches += camellia_sp_from_sbox_word(w, 3) != gc_camellia_sp[768 + x];
  }
  check(mismatches == 0, "S-box words reproduce the four SP tables (" + std::to_string(mismatches) + " mismatches)");
}
#else
const camellia_tables kTables = camellia_tables_at(gc_camellia_sp);
#endif

// Encrypts plaintext and decrypts ciphertext under key; both must match.
void check_pair(const std::vector<uint8_t>& key, const uint8_t* plaintext,
                const uint8_t* ciphertext, const std::string& what) {
  camellia_key_schedule ks;
  if (camellia_expand_key(&ks, key.data(), static_cast<int>(key.size()), &kTables) != 0) {
    check(false, what + ": key refused");
    return;
  }
  uint8_t out[16];
  gc_block_store(out, camellia_encrypt(&kTables, &ks, gc_block_load(plaintext)));
  check(std::memcmp(out, ciphertext, 16) == 0, what + " encrypt");
  gc_block_store(out, camellia_decrypt(&kTables, &ks, gc_block_load(ciphertext)));
  check(std::memcmp(out, plaintext, 16) == 0, what + " decrypt");
}

void test_rfc3713() {
  const std::vector<uint8_t> plaintext = from_hex("0123456789abcdeffedcba9876543210");
  const char* keys[3] = {"0123456789abcdeffedcba9876543210",
                         "0123456789abcdeffedcba98765432100011223344556677",
                         "0123456789abcdeffedcba987654321000112233445566778899aabbccddeeff"};
  const char* ciphertexts[3] = {"67673138549669730857065648eabe43",
                                "b4993401b3e996f84ee5cee7d79b09b9",
                                "9acc237dff16d76c20ef7c919e3a7509"};
  for (int i = 0; i < 3; ++i)
    check_pair(from_hex(keys[i]), plaintext.data(), from_hex(ciphertexts[i]).data(),
               std::string("RFC 3713 key ") + keys[i]);

  // Debug values for the 128-bit key (camellia.md section 6): k3,k4 and kw3,kw4. The schedule
  // keeps subkeys in encryption order (kw1 kw2 k1 k2 k3 k4 ...) with kw4 kw3 last.
  camellia_key_schedule ks;
  camellia_expand_key(&ks, from_hex(keys[0]).data(), 16, &kTables);
  const uint32_t k3_k4[4] = {0xa2b3c4d5u, 0xe6f7ff6eu, 0x5d4c3b2au, 0x19080091u};
  const uint32_t kw4_kw3[4] = {0x5f8e8b49u, 0x2053cafcu, 0x492b5738u, 0xe1eaadd3u};
  check(ks.num_subkeys == 26 && ks.key_bits == 128, "128-bit schedule shape");
  check(std::memcmp(ks.subkey + 8, k3_k4, sizeof k3_k4) == 0, "128-bit subkeys k3,k4");
  check(std::memcmp(ks.subkey + 48, kw4_kw3, sizeof kw4_kw3) == 0, "128-bit subkeys kw3,kw4");
}

void test_bad_key_lengths() {
  const uint8_t key[33] = {0};
  for (int key_len : {0, 1, 8, 15, 17, 20, 23, 25, 31, 33, -16}) {
    camellia_key_schedule ks;
    ks.key_bits = 12345;
    int rc = camellia_expand_key(&ks, key, key_len, &kTables);
    check(rc == -1 && ks.key_bits == 12345, "key_len " + std::to_string(key_len) + " refused");
  }
}

// NTT format: "K No.001 : 00 11 ..." sets the key for the following "P No.NNN" / "C No.NNN" pairs.
void test_ntt_file(const std::filesystem::path& path, int key_bits) {
  std::ifstream file(path);
  check(file.good(), "open " + path.string());
  std::string line;
  std::vector<uint8_t> key, plaintext;
  int num_vectors = 0;
  while (std::getline(file, line)) {
    std::string value = line.find(':') == std::string::npos ? "" : line.substr(line.find(':') + 1);
    if (line.rfind("K No.", 0) == 0) {
      key = from_hex(value);
    } else if (line.rfind("P No.", 0) == 0) {
      plaintext = from_hex(value);
    } else if (line.rfind("C No.", 0) == 0) {
      std::vector<uint8_t> ciphertext = from_hex(value);
      std::string what = path.filename().string() + " " + line.substr(0, 9);
      if (static_cast<int>(key.size()) * 8 != key_bits || plaintext.size() != 16 ||
          ciphertext.size() != 16) {
        check(false, what + ": malformed");
        continue;
      }
      check_pair(key, plaintext.data(), ciphertext.data(), what);
      ++num_vectors;
    }
  }
  check(num_vectors == 1280,
        path.filename().string() + ": expected 1280 vectors, read " + std::to_string(num_vectors));
}

#if defined(GPUCRYPT_WITH_OPENSSL)
// OpenSSL encrypts a random block and decrypts another random block; we must agree on both.
void test_openssl_random(int key_bits, int num_trials) {
  const EVP_CIPHER* cipher = key_bits == 128   ? EVP_camellia_128_ecb()
                             : key_bits == 192 ? EVP_camellia_192_ecb()
                                               : EVP_camellia_256_ecb();
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  std::mt19937_64 rng(0x63616d656c6c6961ull + key_bits);  // fixed seed: failures reproduce
  for (int trial = 0; trial < num_trials; ++trial) {
    std::vector<uint8_t> key(key_bits / 8);
    uint8_t block[16], encrypted[16], decrypted[16];
    int out_len = 0;
    for (auto& b : key) b = static_cast<uint8_t>(rng());
    for (auto& b : block) b = static_cast<uint8_t>(rng());
    EVP_EncryptInit_ex(ctx, cipher, nullptr, key.data(), nullptr);
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    EVP_EncryptUpdate(ctx, encrypted, &out_len, block, 16);
    EVP_DecryptInit_ex(ctx, cipher, nullptr, key.data(), nullptr);
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    EVP_DecryptUpdate(ctx, decrypted, &out_len, block, 16);
    std::string what =
        "OpenSSL Camellia-" + std::to_string(key_bits) + " trial " + std::to_string(trial);
    check_pair(key, block, encrypted, what + " (OpenSSL encrypted)");
    check_pair(key, decrypted, block, what + " (OpenSSL decrypted)");
  }
  EVP_CIPHER_CTX_free(ctx);
}
#endif

}  // namespace

int main(int argc, char** argv) {
#if GC_CAMELLIA_SBOX_WORDS
  test_sbox_word_packing();
#endif
  test_rfc3713();
  test_bad_key_lengths();
  if (auto dir = vectors_dir(argc, argv, "NTT vectors")) {
    for (int key_bits : {128, 192, 256})
      test_ntt_file(*dir / "camellia" / ("camellia-" + std::to_string(key_bits) + "-ecb.txt"), key_bits);
  }
#if defined(GPUCRYPT_WITH_OPENSSL)
  for (int key_bits : {128, 192, 256}) test_openssl_random(key_bits, 10000);
#else
  std::printf("note: built without OpenSSL, differential test skipped\n");
#endif
  return report();
}
