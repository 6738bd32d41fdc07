// test_aes_core: the portable AES primitives, src/core/aes.h ("aes_ttable"),
// src/core/aes_bitsliced.h ("aes_bitsliced"), and the wide bitslices src/core/aes_bitsliced32.h
// (32 blocks a call) and src/core/aes_bitsliced8.h (8 blocks a call) with their BlockCipher
// wrappers AesBitsliced32 and AesBitsliced8 of src/modes/ciphers.hpp, every entry point, both
// directions, 128/192/256-bit keys:
//   * FIPS-197 Appendix B and C.1-C.3 examples, and the last key-expansion word of Appendix A.1;
//   * NIST CAVP AESAVS ECB files (GFSbox, KeySbox, VarKey, VarTxt, MMT; as shipped in
//     cryptography-vectors 50.0.2) from <vectors dir>/nist/aes/ECB/;
//   * 1000 random keys per key size, each with two random blocks, against OpenSSL's
//     EVP_aes_*_ecb in both directions (when built with OpenSSL, i.e. GPUCRYPT_WITH_OPENSSL);
//   * each wide primitive on distinct random blocks in every lane against aes_ttable and the 2-way
//     aes_bitsliced, several keys per key size, both directions (known answers give it only two
//     distinct blocks, repeated over its lanes);
//   * aes_bitsliced8's CTR keystream with counters built as bit planes, against OpenSSL's CTR (or
//     aes_ttable), over every carry pattern of its 8 counters;
//   * gc_lop3 (the gate the S-box circuit is written in) against its truth table, every lut;
//   * the failure path: key lengths other than 16/24/32 are refused and the schedule untouched.
//
// Usage: test_aes_core [vectors dir]   (ctest passes tests/vectors; without it the NIST files are
// skipped). Prints "N passed, M failed"; exits non-zero on any failure. By hand:
//   g++ -std=c++20 -O2 -Isrc -DGPUCRYPT_WITH_OPENSSL tests/cpp/test_aes_core.cpp -lcrypto
#include "core/aes.h"
#include "core/aes_bitsliced.h"
#include "core/aes_bitsliced32.h"
#include "core/aes_bitsliced8.h"
#include "modes/ciphers.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"

#if defined(GPUCRYPT_WITH_OPENSSL)
#include <openssl/evp.h>
#endif

namespace {

using namespace gpucrypt::test_support;

void check_bytes(const uint8_t* got, const uint8_t* want, size_t len, const std::string& what) {
  bool ok = std::memcmp(got, want, len) == 0;
  check(ok, ok ? what : what + ": got " + to_hex(got, len) + ", want " + to_hex(want, len));
}

// Runs every entry point on two blocks and returns the results (the T-table functions one block
// at a time, the 2-way bitsliced ones on both blocks together, the wide ones on the two blocks
// repeated over all their lanes; the other lanes are checked against lanes 0 and 1 where they are
// run).
struct Results {
  uint8_t ttable[32], ttable_literal_rounds[32], bitsliced[32], bitsliced_literal_rounds[32];
  std::vector<std::pair<std::string, std::array<uint8_t, 32>>> wide;  // entry point, result
};

// The *_rounds forms called with a literal round count, as a GPU kernel calls them.
gc_block ttable_encrypt_literal(const aes_key_schedule* ks, gc_block in) {
  switch (ks->num_rounds) {
    case 10: return aes_ttable_encrypt_rounds(gc_aes_te0, ks, in, 10);
    case 12: return aes_ttable_encrypt_rounds(gc_aes_te0, ks, in, 12);
    default: return aes_ttable_encrypt_rounds(gc_aes_te0, ks, in, 14);
  }
}

gc_block ttable_decrypt_literal(const aes_key_schedule* ks, gc_block in) {
  switch (ks->num_rounds) {
    case 10: return aes_ttable_decrypt_rounds(gc_aes_td0, gc_aes_inv_sbox_words, ks, in, 10);
    case 12: return aes_ttable_decrypt_rounds(gc_aes_td0, gc_aes_inv_sbox_words, ks, in, 12);
    default: return aes_ttable_decrypt_rounds(gc_aes_td0, gc_aes_inv_sbox_words, ks, in, 14);
  }
}

void bitsliced_literal(bool encrypt, const aes_bitsliced_key* ks, gc_block* blocks) {
  switch (ks->num_rounds) {
    case 10:
      encrypt ? aes_bitsliced_encrypt_rounds(ks, blocks, 10) : aes_bitsliced_decrypt_rounds(ks, blocks, 10);
      break;
    case 12:
      encrypt ? aes_bitsliced_encrypt_rounds(ks, blocks, 12) : aes_bitsliced_decrypt_rounds(ks, blocks, 12);
      break;
    default:
      encrypt ? aes_bitsliced_encrypt_rounds(ks, blocks, 14) : aes_bitsliced_decrypt_rounds(ks, blocks, 14);
  }
}

// The wide primitives (many blocks of one key a call), described for the checks below, which
// serve both.
struct Bitsliced32 {
  using Key = aes_bitsliced32_key;
  template <int kRounds>
  using Cipher = gpucrypt::modes::AesBitsliced32<kRounds>;
  static constexpr int kBlocks = AES_BITSLICED32_BLOCKS;
  static constexpr const char* kName = "aes_bitsliced32";
  static constexpr const char* kCipherName = "AesBitsliced32";
  static int expand_key(Key* ks, const uint8_t* key, int key_len) {
    return aes_bitsliced32_expand_key(ks, key, key_len);
  }
  static void crypt(bool encrypt, const Key* ks, gc_block* blocks) {
    encrypt ? aes_bitsliced32_encrypt(ks, blocks) : aes_bitsliced32_decrypt(ks, blocks);
  }
  static void crypt_rounds(bool encrypt, const Key* ks, gc_block* blocks, int num_rounds) {
    encrypt ? aes_bitsliced32_encrypt_rounds(ks, blocks, num_rounds)
            : aes_bitsliced32_decrypt_rounds(ks, blocks, num_rounds);
  }
};

struct Bitsliced8 {
  using Key = aes_bitsliced8_key;
  template <int kRounds>
  using Cipher = gpucrypt::modes::AesBitsliced8<kRounds>;
  static constexpr int kBlocks = AES_BITSLICED8_BLOCKS;
  static constexpr const char* kName = "aes_bitsliced8";
  static constexpr const char* kCipherName = "AesBitsliced8";
  static int expand_key(Key* ks, const uint8_t* key, int key_len) {
    return aes_bitsliced8_expand_key(ks, key, key_len);
  }
  static void crypt(bool encrypt, const Key* ks, gc_block* blocks) {
    encrypt ? aes_bitsliced8_encrypt(ks, blocks) : aes_bitsliced8_decrypt(ks, blocks);
  }
  static void crypt_rounds(bool encrypt, const Key* ks, gc_block* blocks, int num_rounds) {
    encrypt ? aes_bitsliced8_encrypt_rounds(ks, blocks, num_rounds)
            : aes_bitsliced8_decrypt_rounds(ks, blocks, num_rounds);
  }
};

template <class Wide>
void wide_literal(bool encrypt, const typename Wide::Key* ks, gc_block* blocks) {
  switch (ks->num_rounds) {
    case 10: Wide::crypt_rounds(encrypt, ks, blocks, 10); break;
    case 12: Wide::crypt_rounds(encrypt, ks, blocks, 12); break;
    default: Wide::crypt_rounds(encrypt, ks, blocks, 14);
  }
}

// The BlockCipher wrapper with the round count as a template argument (as a CUDA kernel
// instantiates it) or, for kRounds = 0, read from the key.
template <class Wide, int kRounds>
void wide_cipher(bool encrypt, const uint8_t* key, int key_len, gc_block* blocks) {
  using Cipher = typename Wide::template Cipher<kRounds>;
  static_assert(gpucrypt::modes::BlockCipher<Cipher> && Cipher::kBlocksPerCall == Wide::kBlocks);
  const Cipher cipher = Cipher::make_host(key, key_len);
  encrypt ? cipher.encrypt_blocks(blocks) : cipher.decrypt_blocks(blocks);
}

template <class Wide>
void wide_cipher_literal(bool encrypt, const uint8_t* key, int key_len, gc_block* blocks) {
  switch (key_len) {
    case 16: wide_cipher<Wide, 10>(encrypt, key, key_len, blocks); break;
    case 24: wide_cipher<Wide, 12>(encrypt, key, key_len, blocks); break;
    default: wide_cipher<Wide, 14>(encrypt, key, key_len, blocks);
  }
}

// Every entry point of one wide primitive on two blocks repeated over its lanes; the other lanes
// must repeat lanes 0 and 1.
template <class Wide>
void run_wide(bool encrypt, const uint8_t* key, int key_len, const uint8_t* in32, Results* r) {
  typename Wide::Key ks;
  check(Wide::expand_key(&ks, key, key_len) == 0,
        std::string(Wide::kName) + "_expand_key accepts key_len " + std::to_string(key_len));
  gc_block lanes[Wide::kBlocks];
  const auto run = [&](const std::string& name, auto&& crypt) {
    for (int j = 0; j < Wide::kBlocks; ++j) lanes[j] = gc_block_load(in32 + 16 * (j % 2));
    crypt();
    std::array<uint8_t, 32> out;
    gc_block_store(out.data(), lanes[0]);
    gc_block_store(out.data() + 16, lanes[1]);
    bool repeated = true;
    for (int j = 2; j < Wide::kBlocks; ++j)
      repeated = repeated && std::memcmp(&lanes[j], &lanes[j % 2], 16) == 0;
    check(repeated, name + ": lanes 2.." + std::to_string(Wide::kBlocks - 1) +
                        " repeat lanes 0 and 1");
    r->wide.emplace_back(name, out);
  };
  run(Wide::kName, [&] { Wide::crypt(encrypt, &ks, lanes); });
  run(std::string(Wide::kName) + " *_rounds", [&] { wide_literal<Wide>(encrypt, &ks, lanes); });
  run(std::string(Wide::kCipherName) + "<rounds>",
      [&] { wide_cipher_literal<Wide>(encrypt, key, key_len, lanes); });
}

Results run_all(bool encrypt, const uint8_t* key, int key_len, const uint8_t* in32) {
  Results r;
  aes_key_schedule ks;
  int status = encrypt ? aes_expand_key_enc(&ks, key, key_len, gc_aes_sbox)
                       : aes_expand_key_dec(&ks, key, key_len, gc_aes_sbox);
  check(status == 0, "aes_expand_key_* accepts key_len " + std::to_string(key_len));
  for (int b = 0; b < 2; ++b) {
    gc_block in = gc_block_load(in32 + 16 * b);
    gc_block_store(r.ttable + 16 * b,
                   encrypt ? aes_ttable_encrypt(gc_aes_te0, &ks, in)
                           : aes_ttable_decrypt(gc_aes_td0, gc_aes_inv_sbox_words, &ks, in));
    gc_block_store(r.ttable_literal_rounds + 16 * b,
                   encrypt ? ttable_encrypt_literal(&ks, in) : ttable_decrypt_literal(&ks, in));
  }
  aes_bitsliced_key bks;
  check(aes_bitsliced_expand_key(&bks, key, key_len) == 0,
        "aes_bitsliced_expand_key accepts key_len " + std::to_string(key_len));
  gc_block blocks[AES_BITSLICED_BLOCKS] = {gc_block_load(in32), gc_block_load(in32 + 16)};
  if (encrypt) aes_bitsliced_encrypt(&bks, blocks);
  else aes_bitsliced_decrypt(&bks, blocks);
  gc_block_store(r.bitsliced, blocks[0]);
  gc_block_store(r.bitsliced + 16, blocks[1]);
  blocks[0] = gc_block_load(in32);
  blocks[1] = gc_block_load(in32 + 16);
  bitsliced_literal(encrypt, &bks, blocks);
  gc_block_store(r.bitsliced_literal_rounds, blocks[0]);
  gc_block_store(r.bitsliced_literal_rounds + 16, blocks[1]);

  run_wide<Bitsliced32>(encrypt, key, key_len, in32, &r);
  run_wide<Bitsliced8>(encrypt, key, key_len, in32, &r);
  return r;
}

void check_all(const Results& r, const uint8_t* want, size_t len, const std::string& what) {
  check_bytes(r.ttable, want, len, "aes_ttable " + what);
  check_bytes(r.ttable_literal_rounds, want, len, "aes_ttable *_rounds " + what);
  check_bytes(r.bitsliced, want, len, "aes_bitsliced " + what);
  check_bytes(r.bitsliced_literal_rounds, want, len, "aes_bitsliced *_rounds " + what);
  for (const auto& [name, got] : r.wide) check_bytes(got.data(), want, len, name + " " + what);
}

// Checks every variant on a known answer of any whole number of blocks, two blocks at a time (the
// odd last block is paired with a copy of itself): plaintext must encrypt to ciphertext and
// ciphertext decrypt to plaintext.
void check_known_answer(const std::vector<uint8_t>& key, const std::vector<uint8_t>& plaintext,
                        const std::vector<uint8_t>& ciphertext, const std::string& what) {
  if (plaintext.empty() || plaintext.size() % 16 != 0 || ciphertext.size() != plaintext.size()) {
    check(false, what + ": malformed vector");
    return;
  }
  size_t num_blocks = plaintext.size() / 16;
  for (size_t first = 0; first < num_blocks; first += 2) {
    size_t second = first + 1 < num_blocks ? first + 1 : first;
    size_t num_compared = 16 * (second - first + 1);
    uint8_t in[32], want[32];
    std::string where = what + (num_blocks > 2 ? " blocks " + std::to_string(first) : "");
    std::memcpy(in, &plaintext[16 * first], 16);
    std::memcpy(in + 16, &plaintext[16 * second], 16);
    std::memcpy(want, &ciphertext[16 * first], 16);
    std::memcpy(want + 16, &ciphertext[16 * second], 16);
    check_all(run_all(true, key.data(), (int)key.size(), in), want, num_compared,
              where + " encrypt");
    check_all(run_all(false, key.data(), (int)key.size(), want), in, num_compared,
              where + " decrypt");
  }
}

// FIPS-197 (Nov 2001) Appendix B (cipher example) and Appendix C.1-C.3 (example vectors).
void test_fips197() {
  struct Vector { const char* name; const char* key; const char* plaintext; const char* ciphertext; };
  const Vector vectors[] = {
      {"FIPS-197 B", "2b7e151628aed2a6abf7158809cf4f3c", "3243f6a8885a308d313198a2e0370734",
       "3925841d02dc09fbdc118597196a0b32"},
      {"FIPS-197 C.1", "000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff",
       "69c4e0d86a7b0430d8cdb78070b4c55a"},
      {"FIPS-197 C.2", "000102030405060708090a0b0c0d0e0f1011121314151617",
       "00112233445566778899aabbccddeeff", "dda97ca4864cdfe06eaf70a0ec0d7191"},
      {"FIPS-197 C.3", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
       "00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089"},
  };
  for (const Vector& v : vectors)
    check_known_answer(from_hex(v.key), from_hex(v.plaintext), from_hex(v.ciphertext), v.name);

  // FIPS-197 Appendix A.1: the last word of the AES-128 key expansion, w[43] = b6630ca6.
  std::vector<uint8_t> key = from_hex("2b7e151628aed2a6abf7158809cf4f3c");
  aes_key_schedule ks;
  aes_expand_key_enc(&ks, key.data(), 16, gc_aes_sbox);
  uint8_t last_word[4], want[4] = {0xb6, 0x63, 0x0c, 0xa6};
  gc_store_le32(last_word, ks.rk[43]);
  check_bytes(last_word, want, 4, "FIPS-197 A.1 w[43]");
}

// NIST CAVP response file: "KEY = ", "PLAINTEXT = ", "CIPHERTEXT = " lines, one record per COUNT,
// in [ENCRYPT] and [DECRYPT] sections; both kinds are checked in both directions.
void test_nist_file(const std::filesystem::path& path, int expected_records) {
  std::ifstream file(path);
  check(file.good(), "open " + path.string());
  std::string line, count;
  std::vector<uint8_t> key, plaintext, ciphertext;
  int num_records = 0;
  auto flush = [&]() {
    if (!key.empty() || !plaintext.empty() || !ciphertext.empty()) {
      check_known_answer(key, plaintext, ciphertext, path.filename().string() + " " + count);
      ++num_records;
    }
    key.clear();
    plaintext.clear();
    ciphertext.clear();
  };
  while (std::getline(file, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t equals = line.find(" = ");
    std::string name = line.substr(0, equals), value = equals == std::string::npos ? "" : line.substr(equals + 3);
    if (line.empty() || line[0] == '[') flush();
    else if (name == "COUNT") count = line;
    else if (name == "KEY") key = from_hex(value);
    else if (name == "PLAINTEXT") plaintext = from_hex(value);
    else if (name == "CIPHERTEXT") ciphertext = from_hex(value);
  }
  flush();
  check(num_records == expected_records, path.filename().string() + ": expected " +
                                             std::to_string(expected_records) + " records, read " +
                                             std::to_string(num_records));
}

void test_nist_ecb(const std::filesystem::path& vectors_dir) {
  struct Family { const char* name; int records[3]; };  // records for 128/192/256-bit keys
  const Family families[] = {{"GFSbox", {14, 12, 10}},   {"KeySbox", {42, 48, 32}},
                             {"VarKey", {256, 384, 512}}, {"VarTxt", {256, 256, 256}},
                             {"MMT", {20, 20, 20}}};
  for (const Family& family : families)
    for (int k = 0; k < 3; ++k)
      test_nist_file(vectors_dir / "nist" / "aes" / "ECB" /
                         ("ECB" + std::string(family.name) + std::to_string(128 + 64 * k) + ".rsp"),
                     family.records[k]);
}

void test_bad_key_lengths() {
  const uint8_t key[64] = {0};
  const int bad_lengths[] = {0, 8, 15, 17, 20, 31, 33, 64, -16};
  for (int key_len : bad_lengths) {
    aes_key_schedule ks;
    aes_bitsliced_key bks;
    aes_bitsliced32_key ks32;
    aes_bitsliced8_key ks8;
    std::memset(&ks, 0xa5, sizeof ks);
    std::memset(&bks, 0xa5, sizeof bks);
    std::memset(&ks32, 0xa5, sizeof ks32);
    std::memset(&ks8, 0xa5, sizeof ks8);
    std::string what = " refuses key_len " + std::to_string(key_len);
    check(aes_expand_key_enc(&ks, key, key_len, gc_aes_sbox) == -1, "aes_expand_key_enc" + what);
    check(aes_expand_key_dec(&ks, key, key_len, gc_aes_sbox) == -1, "aes_expand_key_dec" + what);
    check(aes_bitsliced_expand_key(&bks, key, key_len) == -1, "aes_bitsliced_expand_key" + what);
    check(aes_bitsliced32_expand_key(&ks32, key, key_len) == -1,
          "aes_bitsliced32_expand_key" + what);
    check(aes_bitsliced8_expand_key(&ks8, key, key_len) == -1, "aes_bitsliced8_expand_key" + what);
    check(ks.rk[0] == 0xa5a5a5a5u && ks.num_rounds == (int)0xa5a5a5a5u &&
              bks.sk[0] == 0xa5a5a5a5u && bks.num_rounds == (int)0xa5a5a5a5u &&
              ks32.rk[0] == 0xa5a5a5a5u && ks32.num_rounds == (int)0xa5a5a5a5u &&
              ks8.rk[0] == 0xa5a5a5a5u && ks8.num_rounds == (int)0xa5a5a5a5u,
          "schedule untouched when it" + what);
  }
}

// A wide primitive on distinct random blocks in every lane (so a lane mix-up in the transposes
// shows), against aes_ttable block by block and the 2-way aes_bitsliced two blocks at a time, for
// every entry point; and decryption of the ciphertext gives the plaintext back.
template <class Wide>
void test_wide_differential(int key_len, int num_keys) {
  constexpr int kBlocks = Wide::kBlocks;
  // Fixed seed per primitive and key size: failures reproduce.
  std::mt19937_64 rng(0x62733332ull + (uint64_t)key_len + ((uint64_t)kBlocks << 32));
  for (int n = 0; n < num_keys; ++n) {
    std::vector<uint8_t> key(key_len);
    for (uint8_t& byte : key) byte = (uint8_t)rng();
    gc_block plain[kBlocks];
    for (gc_block& block : plain)
      for (uint32_t& word : block.w) word = (uint32_t)rng();
    const std::string what = "AES-" + std::to_string(8 * key_len) + " key " + to_hex(key);

    aes_key_schedule enc, dec;
    aes_expand_key_enc(&enc, key.data(), key_len, gc_aes_sbox);
    aes_expand_key_dec(&dec, key.data(), key_len, gc_aes_sbox);
    aes_bitsliced_key bks;
    aes_bitsliced_expand_key(&bks, key.data(), key_len);
    gc_block want_enc[kBlocks], want_dec[kBlocks];
    gc_block two_way_enc[kBlocks], two_way_dec[kBlocks];
    for (int j = 0; j < kBlocks; ++j) {
      want_enc[j] = aes_ttable_encrypt(gc_aes_te0, &enc, plain[j]);
      want_dec[j] = aes_ttable_decrypt(gc_aes_td0, gc_aes_inv_sbox_words, &dec, plain[j]);
      two_way_enc[j] = two_way_dec[j] = plain[j];
    }
    for (int j = 0; j < kBlocks; j += AES_BITSLICED_BLOCKS) {
      aes_bitsliced_encrypt(&bks, two_way_enc + j);
      aes_bitsliced_decrypt(&bks, two_way_dec + j);
    }
    check(std::memcmp(two_way_enc, want_enc, sizeof want_enc) == 0 &&
              std::memcmp(two_way_dec, want_dec, sizeof want_dec) == 0,
          what + ": aes_bitsliced agrees with aes_ttable");

    typename Wide::Key ks;
    Wide::expand_key(&ks, key.data(), key_len);
    for (int encrypt = 0; encrypt < 2; ++encrypt) {
      const gc_block* want = encrypt ? want_enc : want_dec;
      const std::string where = what + (encrypt ? " encrypt" : " decrypt");
      const auto check_lanes = [&](const gc_block* got, const std::string& name) {
        for (int j = 0; j < kBlocks; ++j) {
          if (std::memcmp(&got[j], &want[j], 16) != 0) {
            uint8_t got_bytes[16], want_bytes[16];
            gc_block_store(got_bytes, got[j]);
            gc_block_store(want_bytes, want[j]);
            check_bytes(got_bytes, want_bytes, 16,
                        name + " " + where + " lane " + std::to_string(j));
            return;
          }
        }
        check(true, name + " " + where);
      };
      const std::string name = Wide::kName, cipher_name = Wide::kCipherName;
      gc_block blocks[kBlocks];
      std::memcpy(blocks, plain, sizeof blocks);
      Wide::crypt(encrypt, &ks, blocks);
      check_lanes(blocks, name);
      std::memcpy(blocks, plain, sizeof blocks);
      wide_literal<Wide>(encrypt, &ks, blocks);
      check_lanes(blocks, name + " *_rounds");
      std::memcpy(blocks, plain, sizeof blocks);
      wide_cipher_literal<Wide>(encrypt, key.data(), key_len, blocks);
      check_lanes(blocks, cipher_name + "<rounds>");
      std::memcpy(blocks, plain, sizeof blocks);
      wide_cipher<Wide, 0>(encrypt, key.data(), key_len, blocks);
      check_lanes(blocks, cipher_name + "<0>");
      // And back: the other direction undoes it.
      Wide::crypt(!encrypt, &ks, blocks);
      check(std::memcmp(blocks, plain, sizeof blocks) == 0, name + " round trip " + where);
    }
  }
}

// gc_lop3 (platform.h), the three-input gate the bitsliced S-box is written in: on the host its
// portable form, against the truth table bit by bit, for every lut and random words. (On CUDA it is
// one LOP3; the GPU checks run the S-box through it.)
void test_lop3() {
  std::mt19937_64 rng(0x6c6f7033ull);
  int bad = 0;
  for (uint32_t lut = 0; lut < 256; ++lut) {
    for (int n = 0; n < 64; ++n) {
      const uint32_t a = n == 0 ? 0u : n == 1 ? ~0u : (uint32_t)rng();
      const uint32_t b = n == 2 ? 0u : n == 3 ? ~0u : (uint32_t)rng();
      const uint32_t c = (uint32_t)rng();
      uint32_t want = 0;
      for (int bit = 0; bit < 32; ++bit) {
        const uint32_t index = (((a >> bit) & 1u) << 2) | (((b >> bit) & 1u) << 1) | ((c >> bit) & 1u);
        want |= ((lut >> index) & 1u) << bit;
      }
      bad += gc_lop3(a, b, c, lut) != want;
    }
  }
  check(bad == 0, "gc_lop3 agrees with its truth table for all 256 luts (" + std::to_string(bad) + " wrong)");
}

// The aes_bitsliced8 cipher without its outer round keys (what its XTS kernels run, adding them
// with the tweak): with first_round_key() added before and last_round_key() after (the other way
// round for decryption), the same blocks as the whole cipher, on distinct random blocks.
void test_unkeyed_outer_round_keys(int key_len, int num_keys) {
  std::mt19937_64 rng(0x756e6b65ull + (uint64_t)key_len);  // fixed seed: failures reproduce
  for (int n = 0; n < num_keys; ++n) {
    std::vector<uint8_t> key(key_len);
    for (uint8_t& byte : key) byte = (uint8_t)rng();
    const auto cipher = gpucrypt::modes::AesBitsliced8<0>::make_host(key.data(), key_len);
    for (bool decrypt : {false, true}) {
      gc_block whole[AES_BITSLICED8_BLOCKS], unkeyed[AES_BITSLICED8_BLOCKS];
      for (int b = 0; b < AES_BITSLICED8_BLOCKS; ++b)
        for (uint32_t& w : whole[b].w) w = (uint32_t)rng();
      const gc_block key_in = decrypt ? cipher.last_round_key() : cipher.first_round_key();
      const gc_block key_out = decrypt ? cipher.first_round_key() : cipher.last_round_key();
      for (int b = 0; b < AES_BITSLICED8_BLOCKS; ++b) unkeyed[b] = gc_block_xor(whole[b], key_in);
      if (decrypt) {
        cipher.decrypt_blocks(whole);
        cipher.decrypt_blocks_unkeyed(unkeyed);
      } else {
        cipher.encrypt_blocks(whole);
        cipher.encrypt_blocks_unkeyed(unkeyed);
      }
      for (int b = 0; b < AES_BITSLICED8_BLOCKS; ++b) {
        uint8_t got[16], want[16];
        gc_block_store(got, gc_block_xor(unkeyed[b], key_out));
        gc_block_store(want, whole[b]);
        check_bytes(got, want, 16, "AesBitsliced8 " + std::string(decrypt ? "decrypt" : "encrypt") +
                                       "_blocks_unkeyed, AES-" + std::to_string(8 * key_len) + " block " +
                                       std::to_string(b));
      }
    }
  }
}

// aes_bitsliced8_ctr_stride32 (CTR counters built straight into bit planes) against CTR computed
// block by block: the 256-block keystream from `first` (OpenSSL's EVP_aes_*_ctr on zeros where
// built with it, else aes_ttable on gc_ctr128_add), whose blocks 32 b are the call's. The
// counters cover each value of byte 15's top three bits (every carry pattern into byte 14),
// carries through bytes 12..14 (0x..ffff..), the transposing path (bytes 12..14 all 0xff, one
// counter in 2^24) and the wrap of the whole 128-bit counter.
void test_ctr_stride32(int key_len, int num_keys) {
  std::mt19937_64 rng(0x63747233ull + (uint64_t)key_len);  // fixed seed: failures reproduce
  for (int n = 0; n < num_keys; ++n) {
    std::vector<uint8_t> key(key_len);
    for (uint8_t& byte : key) byte = (uint8_t)rng();
    aes_bitsliced8_key ks;
    aes_bitsliced8_expand_key(&ks, key.data(), key_len);
    aes_key_schedule enc;
    aes_expand_key_enc(&enc, key.data(), key_len, gc_aes_sbox);
    std::vector<std::array<uint8_t, 16>> counters;
    for (int low = 0; low < 256; low += 13) {  // every value of bits 5..7, odd low bits too
      std::array<uint8_t, 16> c;
      for (uint8_t& byte : c) byte = (uint8_t)rng();
      c[15] = (uint8_t)low;
      counters.push_back(c);
    }
    for (const char* tail : {"00fffffff0", "00ffffff00", "00ffffffe0", "00fffffeff", "0000ffffe1",
                             "000000ffe0", "01ffffffff", "ffffffffff"}) {
      std::array<uint8_t, 16> c;
      for (uint8_t& byte : c) byte = (uint8_t)rng();
      for (int i = 0; i < 5; ++i) c[11 + i] = (uint8_t)std::stoi(std::string(tail + 2 * i, 2), nullptr, 16);
      counters.push_back(c);
    }
    std::array<uint8_t, 16> all_ones;
    all_ones.fill(0xff);
    all_ones[15] = 0xe5;
    counters.push_back(all_ones);  // counters past 2^128 - 1 wrap to 0

    for (const auto& counter : counters) {
      const std::string what = "AES-" + std::to_string(8 * key_len) + " key " + to_hex(key) +
                               " counter " + to_hex(counter.data(), 16);
      uint8_t stream[256 * 16];
#if defined(GPUCRYPT_WITH_OPENSSL)
      {
        const EVP_CIPHER* cipher = key_len == 16   ? EVP_aes_128_ctr()
                                   : key_len == 24 ? EVP_aes_192_ctr()
                                                   : EVP_aes_256_ctr();
        EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
        uint8_t zeros[sizeof stream] = {};
        int out_len = 0;
        check(EVP_EncryptInit_ex(ctx, cipher, nullptr, key.data(), counter.data()) == 1 &&
                  EVP_EncryptUpdate(ctx, stream, &out_len, zeros, (int)sizeof zeros) == 1,
              what + ": OpenSSL CTR");
        EVP_CIPHER_CTX_free(ctx);
      }
#else
      for (int i = 0; i < 256; ++i)
        gc_block_store(stream + 16 * i,
                       aes_ttable_encrypt(gc_aes_te0, &enc, gc_ctr128_add(gc_block_load(counter.data()), i)));
#endif
      // The T-table AES agrees with the reference on block 255 (an independent spot check).
      uint8_t last[16];
      gc_block_store(last, aes_ttable_encrypt(gc_aes_te0, &enc, gc_ctr128_add(gc_block_load(counter.data()), 255)));
      check_bytes(last, stream + 16 * 255, 16, what + ": reference block 255");

      for (int lane = 0; lane < 32; lane += 31) {  // lanes 0 and 31: counter + 0 and + 31
        const gc_block first = gc_ctr128_add(gc_block_load(counter.data()), (uint64_t)lane);
        gc_block got[AES_BITSLICED8_BLOCKS], got_literal[AES_BITSLICED8_BLOCKS];
        aes_bitsliced8_ctr_stride32(&ks, first, got, ks.num_rounds);
        gpucrypt::modes::AesBitsliced8<0> wrapper = gpucrypt::modes::AesBitsliced8<0>::make_host(key.data(), key_len);
        wrapper.ctr_keystream_stride32(first, got_literal);
        for (int b = 0; b < AES_BITSLICED8_BLOCKS; ++b) {
          uint8_t got_bytes[16], wrapper_bytes[16];
          gc_block_store(got_bytes, got[b]);
          // The wrapper leaves out the last round key, which the kernels add with the data.
          gc_block_store(wrapper_bytes, gc_block_xor(got_literal[b], wrapper.last_round_key()));
          const std::string where = what + " lane " + std::to_string(lane) + " block " + std::to_string(b);
          check_bytes(got_bytes, stream + 16 * (lane + 32 * b), 16, where + ": aes_bitsliced8_ctr_stride32");
          check_bytes(wrapper_bytes, stream + 16 * (lane + 32 * b), 16, where + ": AesBitsliced8::ctr_keystream_stride32");
        }
      }
    }
  }
}

#if defined(GPUCRYPT_WITH_OPENSSL)
// OpenSSL encrypts two random blocks and decrypts the same two; we must agree on both.
void test_openssl_random(int key_len, int num_cases) {
  const EVP_CIPHER* cipher = key_len == 16   ? EVP_aes_128_ecb()
                             : key_len == 24 ? EVP_aes_192_ecb()
                                             : EVP_aes_256_ecb();
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  std::mt19937_64 rng(0x6165735f636f7265ull + (uint64_t)key_len);  // fixed seed: failures reproduce
  for (int i = 0; i < num_cases; ++i) {
    std::vector<uint8_t> key(key_len), blocks(32), encrypted(32), decrypted(32);
    for (uint8_t& byte : key) byte = (uint8_t)rng();
    for (uint8_t& byte : blocks) byte = (uint8_t)rng();
    int out_len = 0;
    bool ok = EVP_EncryptInit_ex(ctx, cipher, nullptr, key.data(), nullptr) == 1 &&
              EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 &&
              EVP_EncryptUpdate(ctx, encrypted.data(), &out_len, blocks.data(), 32) == 1 &&
              EVP_DecryptInit_ex(ctx, cipher, nullptr, key.data(), nullptr) == 1 &&
              EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 &&
              EVP_DecryptUpdate(ctx, decrypted.data(), &out_len, blocks.data(), 32) == 1;
    std::string what = "OpenSSL AES-" + std::to_string(8 * key_len) + " case " + std::to_string(i) +
                       " key " + to_hex(key.data(), key.size()) + " blocks " + to_hex(blocks.data(), 32);
    check(ok, what + ": OpenSSL call");
    check_known_answer(key, blocks, encrypted, what + " (OpenSSL encrypted)");
    check_known_answer(key, decrypted, blocks, what + " (OpenSSL decrypted)");
  }
  EVP_CIPHER_CTX_free(ctx);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  test_lop3();
  test_fips197();
  test_bad_key_lengths();
  for (int key_len : {16, 24, 32}) {
    test_wide_differential<Bitsliced32>(key_len, 50);
    test_wide_differential<Bitsliced8>(key_len, 200);
    test_ctr_stride32(key_len, 6);
    test_unkeyed_outer_round_keys(key_len, 20);
  }
  if (auto dir = vectors_dir(argc, argv, "NIST CAVP files")) test_nist_ecb(*dir);
#if defined(GPUCRYPT_WITH_OPENSSL)
  for (int key_len : {16, 24, 32}) test_openssl_random(key_len, 1000);
#else
  std::printf("note: built without OpenSSL, differential test skipped\n");
#endif
  return report();
}
