// test_modes.cpp: the generic block-cipher modes (src/modes/) and the counter, tweak and GF(2^128)
// arithmetic under them (src/core/counter.h, src/core/gf128.h).
//
// The oracle is OpenSSL: every mode runs over a test-only adapter around OpenSSL's low-level AES
// (so these tests do not depend on our own AES) and is compared with OpenSSL EVP on seeded random
// keys, IVs and ragged lengths. Arithmetic helpers are checked against hand-written answers,
// against independent textbook implementations written here (byte-wise big-endian addition,
// SP 800-38D algorithm 1), and against the published GHASH value of the GCM spec's test case 2.
// The adapter comes in 1-, 2- and 3-block widths so the multi-lane paths (bitsliced AES) are
// exercised too.
//
// test_traits runs every mode through its traits (modes.hpp's ModeList: what the engines, the
// stream driver, the batch executors and the kernels run) against EVP by the mode's name, so a
// mode added to the list is checked with no edit here; test_rules pins the rules mode_rules.hpp
// reads off the traits for today's modes.
//
// Only the range and one-shot functions are here (plus padding.hpp's PKCS#7): the modes have no
// streaming state of their own. Streaming (updates split anywhere, chaining between calls) lives
// in src/backends/cipher_stream.cpp and python/gpucrypt/cipher.py, and is checked through the
// product by tests/test_differential.py::test_split_updates_equal_one_shot.
//
// Build: g++ -std=c++20 -O2 -Wall -Wextra -Isrc -Iinclude tests/cpp/test_modes.cpp -lcrypto
// Prints "N passed, M failed"; exits non-zero on any failure.
#define OPENSSL_SUPPRESS_DEPRECATED  // AES_set_encrypt_key / AES_encrypt: the oracle's raw block
#include <openssl/aes.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../../src/modes/mode_rules.hpp"
#include "../../src/modes/modes.hpp"
#include "test_support.hpp"

using namespace gpucrypt::modes;
using namespace gpucrypt::test_support;
using Bytes = std::vector<uint8_t>;

// ---------------------------------------------------------------------------------------------
// Harness

static std::mt19937_64 g_rng(0x6770756372797074ull);  // fixed seed: failures reproduce

static Bytes random_bytes(size_t len) {
  Bytes b(len);
  for (auto& x : b) x = (uint8_t)g_rng();
  return b;
}
static size_t random_below(size_t n) { return n == 0 ? 0 : (size_t)(g_rng() % n); }

static std::string hex(gc_block b) {
  uint8_t bytes[16];
  gc_block_store(bytes, b);
  return to_hex(bytes, 16);
}
static bool same(gc_block a, gc_block b) { return std::memcmp(&a, &b, sizeof a) == 0; }
static gc_block block_of(const Bytes& b) { return gc_block_load(b.data()); }
static gc_block random_block() { return block_of(random_bytes(16)); }

static const std::vector<size_t> kRaggedLens = {0, 1, 15, 16, 17, 31, 32, 33, 4095, 4096, 4097};
static std::vector<size_t> test_lens() {
  std::vector<size_t> lens = kRaggedLens;
  for (int i = 0; i < 3; ++i) lens.push_back(random_below(5000));
  return lens;
}

// Random partition of [0, num_blocks) into (first, count) ranges, returned in shuffled order.
static std::vector<std::pair<size_t, size_t>> random_block_ranges(size_t num_blocks) {
  std::vector<std::pair<size_t, size_t>> ranges;
  size_t first = 0;
  while (first < num_blocks) {
    size_t count = 1 + random_below(std::min<size_t>(num_blocks - first, 40));
    ranges.push_back({first, count});
    first += count;
  }
  std::shuffle(ranges.begin(), ranges.end(), g_rng);
  return ranges;
}

// ---------------------------------------------------------------------------------------------
// Test-only cipher adapter: OpenSSL's raw AES as a BlockCipher of kLanes blocks per call.

template <int kLanes>
struct OpenSslAes {
  static constexpr int kBlocksPerCall = kLanes;
  AES_KEY encrypt_key;
  AES_KEY decrypt_key;

  static OpenSslAes make(const uint8_t* key, size_t key_len) {
    OpenSslAes c;
    AES_set_encrypt_key(key, (int)key_len * 8, &c.encrypt_key);
    AES_set_decrypt_key(key, (int)key_len * 8, &c.decrypt_key);
    return c;
  }
  void encrypt_blocks(gc_block* blocks) const {
    for (int i = 0; i < kLanes; ++i) {
      uint8_t b[16];
      gc_block_store(b, blocks[i]);
      AES_encrypt(b, b, &encrypt_key);
      blocks[i] = gc_block_load(b);
    }
  }
  void decrypt_blocks(gc_block* blocks) const {
    for (int i = 0; i < kLanes; ++i) {
      uint8_t b[16];
      gc_block_store(b, blocks[i]);
      AES_decrypt(b, b, &decrypt_key);
      blocks[i] = gc_block_load(b);
    }
  }
};
static_assert(BlockCipher<OpenSslAes<1>> && BlockCipher<OpenSslAes<2>> && BlockCipher<OpenSslAes<3>>);

// ---------------------------------------------------------------------------------------------
// EVP oracle

static const EVP_CIPHER* evp_cipher(const std::string& mode, size_t key_bits) {
  bool k128 = key_bits == 128;
  if (mode == "ecb") return k128 ? EVP_aes_128_ecb() : EVP_aes_256_ecb();
  if (mode == "cbc") return k128 ? EVP_aes_128_cbc() : EVP_aes_256_cbc();
  if (mode == "cfb") return k128 ? EVP_aes_128_cfb128() : EVP_aes_256_cfb128();
  if (mode == "ofb") return k128 ? EVP_aes_128_ofb() : EVP_aes_256_ofb();
  if (mode == "ctr") return k128 ? EVP_aes_128_ctr() : EVP_aes_256_ctr();
  if (mode == "xts") return k128 ? EVP_aes_128_xts() : EVP_aes_256_xts();
  return nullptr;
}

static Bytes evp_crypt(const EVP_CIPHER* cipher, const Bytes& key, const uint8_t* iv, const Bytes& in, bool encrypt,
                       bool padding = false) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  Bytes out(in.size() + 32);
  int len1 = 0, len2 = 0;
  bool ok = EVP_CipherInit_ex(ctx, cipher, nullptr, key.data(), iv, encrypt ? 1 : 0) == 1;
  EVP_CIPHER_CTX_set_padding(ctx, padding ? 1 : 0);
  if (!in.empty()) ok = ok && EVP_CipherUpdate(ctx, out.data(), &len1, in.data(), (int)in.size()) == 1;
  ok = ok && EVP_CipherFinal_ex(ctx, out.data() + len1, &len2) == 1;
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) std::printf("note: EVP call failed\n");
  out.resize(ok ? (size_t)(len1 + len2) : 0);
  return out;
}

static std::pair<Bytes, Bytes> evp_gcm_encrypt(const Bytes& key, const Bytes& iv, const Bytes& aad, const Bytes& in) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  const EVP_CIPHER* cipher = key.size() == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm();
  Bytes out(in.size() + 16), tag(16);
  int len = 0;
  EVP_EncryptInit_ex(ctx, cipher, nullptr, nullptr, nullptr);
  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, (int)iv.size(), nullptr);
  EVP_EncryptInit_ex(ctx, nullptr, nullptr, key.data(), iv.data());
  if (!aad.empty()) EVP_EncryptUpdate(ctx, nullptr, &len, aad.data(), (int)aad.size());
  int out_len = 0;
  if (!in.empty()) EVP_EncryptUpdate(ctx, out.data(), &out_len, in.data(), (int)in.size());
  EVP_EncryptFinal_ex(ctx, out.data() + out_len, &len);
  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag.data());
  EVP_CIPHER_CTX_free(ctx);
  out.resize(in.size());
  return {out, tag};
}

static bool evp_gcm_decrypt_ok(const Bytes& key, const Bytes& iv, const Bytes& aad, const Bytes& ct, const uint8_t* tag,
                               size_t tag_len) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  const EVP_CIPHER* cipher = key.size() == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm();
  Bytes out(ct.size() + 16);
  int len = 0;
  EVP_DecryptInit_ex(ctx, cipher, nullptr, nullptr, nullptr);
  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, (int)iv.size(), nullptr);
  EVP_DecryptInit_ex(ctx, nullptr, nullptr, key.data(), iv.data());
  if (!aad.empty()) EVP_DecryptUpdate(ctx, nullptr, &len, aad.data(), (int)aad.size());
  if (!ct.empty()) EVP_DecryptUpdate(ctx, out.data(), &len, ct.data(), (int)ct.size());
  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, (int)tag_len, const_cast<uint8_t*>(tag));
  bool ok = EVP_DecryptFinal_ex(ctx, out.data(), &len) == 1;
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

// ---------------------------------------------------------------------------------------------
// Independent references for the arithmetic

static Bytes be_add_reference(Bytes counter, uint64_t offset) {  // byte-wise schoolbook addition
  unsigned carry = 0;
  for (int i = 15; i >= 0; --i) {
    unsigned sum = counter[i] + (unsigned)(offset & 0xff) + carry;
    counter[i] = (uint8_t)sum;
    carry = sum >> 8;
    offset >>= 8;
  }
  return counter;
}

static Bytes gf_mul_reference(const Bytes& x, const Bytes& y) {  // SP 800-38D, algorithm 1
  Bytes z(16, 0), v = y;
  for (int i = 0; i < 128; ++i) {
    if ((x[i / 8] >> (7 - i % 8)) & 1)
      for (int k = 0; k < 16; ++k) z[k] ^= v[k];
    bool lsb = v[15] & 1;
    for (int k = 15; k > 0; --k) v[k] = (uint8_t)((v[k] >> 1) | (v[k - 1] << 7));
    v[0] >>= 1;
    if (lsb) v[0] ^= 0xe1;
  }
  return z;
}

static Bytes bytes_of(gc_gf128 x) {
  uint8_t b[16];
  gc_block_store(b, gc_gf128_to_block(x));
  return Bytes(b, b + 16);
}
static gc_gf128 gf_of(const Bytes& b) { return gc_gf128_from_block(block_of(b)); }
static bool same(gc_gf128 a, gc_gf128 b) { return a.hi == b.hi && a.lo == b.lo; }

// ---------------------------------------------------------------------------------------------
// counter.h

static void test_counters() {
  Bytes all_ff(16, 0xff), zero(16, 0);
  check(same(gc_ctr128_add(block_of(all_ff), 1), block_of(zero)), "ctr128: 2^128 - 1 + 1 wraps to 0");
  Bytes low_ff = from_hex("0000000000000000ffffffffffffffff");
  check(same(gc_ctr128_add(block_of(low_ff), 1), block_of(from_hex("00000000000000010000000000000000"))),
        "ctr128: carry out of the low 64 bits");
  check(same(gc_ctr128_add(block_of(from_hex("000000000000000000000000ffffffff")), 1),
             block_of(from_hex("00000000000000000000000100000000"))),
        "ctr128: carry across 2^32");
  // (2^128 - 1) + (2^64 - 1) = 2^128 + 2^64 - 2
  check(same(gc_ctr128_add(block_of(all_ff), ~0ull), block_of(from_hex("0000000000000000fffffffffffffffe"))),
        "ctr128: (2^128 - 1) + (2^64 - 1) = 2^64 - 2 mod 2^128");
  for (int i = 0; i < 2000; ++i) {
    Bytes c = random_bytes(16);
    if (i % 4 == 1) std::fill(c.begin() + 8, c.end(), 0xff);       // near 2^64 carries
    if (i % 4 == 2) std::fill(c.begin(), c.end(), 0xff);            // near 2^128
    uint64_t offset = (i % 3 == 0) ? g_rng() : g_rng() % 100;
    if (!same(gc_ctr128_add(block_of(c), offset), block_of(be_add_reference(c, offset)))) {
      check(false, "ctr128 random vs byte-wise reference " + to_hex(c));
      break;
    }
  }
  check(true, "ctr128 random vs byte-wise reference (2000 cases)");

  Bytes j0 = from_hex("0102030405060708090a0b0cfffffffe");
  check(same(gc_ctr32_add(block_of(j0), 1), block_of(from_hex("0102030405060708090a0b0cffffffff"))), "inc32 +1");
  check(same(gc_ctr32_add(block_of(j0), 2), block_of(from_hex("0102030405060708090a0b0c00000000"))),
        "inc32 wraps mod 2^32 without carrying into byte 11");
  check(same(gc_ctr32_add(block_of(j0), 3), block_of(from_hex("0102030405060708090a0b0c00000001"))), "inc32 +3");
  check(same(gc_ctr32_add(block_of(j0), 1ull << 32), block_of(j0)), "inc32 by 2^32 is the identity");
}

static void test_xts_tweaks() {
  // Doubling: x^127 * x = x^128 = x^7 + x^2 + x + 1 -> byte 0 = 0x87; bit 63 carries into byte 8.
  check(same(gc_xts_mul_alpha(block_of(from_hex("00000000000000000000000000000080"))),
             block_of(from_hex("87000000000000000000000000000000"))),
        "xts: alpha * x^127 = 0x87");
  check(same(gc_xts_mul_alpha(block_of(from_hex("00000000000000800000000000000000"))),
             block_of(from_hex("00000000000000000100000000000000"))),
        "xts: doubling carries from byte 7 into byte 8");
  check(same(gc_xts_mul_alpha(block_of(from_hex("01000000000000000000000000000000"))),
             block_of(from_hex("02000000000000000000000000000000"))),
        "xts: doubling of 1");

  // alpha^j against serial doubling, j = 0..3000
  gc_block serial = block_of(from_hex("01000000000000000000000000000000"));
  bool all_ok = true;
  for (uint64_t j = 0; j <= 3000; ++j) {
    if (!same(gc_xts_alpha_pow(j), serial)) {
      check(false, "xts: alpha^" + std::to_string(j) + " vs serial doubling");
      all_ok = false;
      break;
    }
    serial = gc_xts_mul_alpha(serial);
  }
  check(all_ok, "xts: alpha^j equals serial doubling for j = 0..3000");

  // tweak_at(T, j) against serial doubling from random T
  for (int trial = 0; trial < 8; ++trial) {
    gc_block t0 = random_block();
    gc_block walk = t0;
    bool ok = true;
    for (uint64_t j = 0; j <= 2500; ++j) {
      if (!same(gc_xts_tweak_at(t0, j), walk)) {
        ok = false;
        check(false, "xts: tweak_at(T, " + std::to_string(j) + ") vs serial, T = " + hex(t0));
        break;
      }
      walk = gc_xts_mul_alpha(walk);
    }
    check(ok, "xts: tweak_at per block equals serial doubling (random T, j <= 2500)");
  }

  // Small shifts t * alpha^m, m = 0..120, against serial doubling.
  for (int trial = 0; trial < 20; ++trial) {
    gc_block t = random_block(), walk = t;
    bool ok = true;
    for (unsigned m = 0; m <= GC_XTS_SMALL_SHIFT_MAX; ++m) {
      ok = ok && same(gc_xts_mul_alpha_pow_small(t, m), walk);
      walk = gc_xts_mul_alpha(walk);
    }
    check(ok, "xts: t * alpha^m by one shift equals m doublings, m <= 120");
  }

  // The branch-free step below 32 (the GPU unit walk's), against serial doubling; top words all
  // ones as well, so that every overflow bit folds back.
  for (int trial = 0; trial < 40; ++trial) {
    gc_block t = random_block();
    if (trial < 4) t.w[3] = 0xffffffffu;
    if (trial == 0) t.w[0] = t.w[1] = t.w[2] = 0xffffffffu;
    gc_block walk = t;
    bool ok = true;
    for (unsigned m = 0; m < 32; ++m) {
      ok = ok && same(gc_xts_mul_alpha_pow_below32(t, m), walk);
      walk = gc_xts_mul_alpha(walk);
    }
    check(ok, "xts: t * alpha^m without a branch equals m doublings, m < 32");
  }

  // Large j: exponent laws (no serial walk reaches there).
  for (int trial = 0; trial < 200; ++trial) {
    uint64_t a = g_rng() >> 1, b = g_rng() >> 1;
    check(same(gc_xts_alpha_pow(a + b), gc_xts_mul(gc_xts_alpha_pow(a), gc_xts_alpha_pow(b))),
          "xts: alpha^(a+b) = alpha^a * alpha^b");
    gc_block t = random_block();
    check(same(gc_xts_square(t), gc_xts_mul(t, t)), "xts: squaring by bit spreading equals t * t");
    check(same(gc_xts_tweak_at(t, a), gc_xts_mul(t, gc_xts_alpha_pow(a))), "xts: tweak_at for large j");
    check(same(gc_gf128_to_xts(gc_xts_to_gf128(t)), t), "xts <-> gcm bit order round trip");
  }
}

// ---------------------------------------------------------------------------------------------
// gf128.h

static void test_gf128() {
  for (int i = 0; i < 500; ++i) {
    Bytes a = random_bytes(16), b = random_bytes(16);
    if (i < 4) std::fill(a.begin(), a.end(), i == 0 ? 0x00 : 0xff);
    Bytes expected = gf_mul_reference(a, b);
    check(bytes_of(gc_gf128_mul_ctmul64(gf_of(a), gf_of(b))) == expected, "gf128 ctmul64 vs SP 800-38D algorithm 1");
    check(bytes_of(gc_gf128_mul_ctmul32(gf_of(a), gf_of(b))) == expected, "gf128 ctmul32 vs SP 800-38D algorithm 1");
  }
  // GCM spec (McGrew-Viega) test case 2: K = 0, P = 0^128.
  gc_gf128 h = gf_of(from_hex("66e94bd4ef8a2c3b884cfa59ca342b2e"));
  Bytes c = from_hex("0388dace60b6a392f328c2b971b2fe78");
  gc_gf128 y = gc_ghash_bytes(gc_gf128_make(0, 0), h, c.data(), c.size());
  y = gc_ghash_block(y, h, gc_gf128_make(0, 128));
  check(bytes_of(y) == from_hex("f38cbb1ad69223dcc3457ae5b6b0f885"), "GHASH, GCM spec test case 2");

  // pow
  gc_gf128 hr = gf_of(random_bytes(16));
  gc_gf128 power = gc_gf128_one();
  for (uint64_t n = 0; n < 300; ++n) {
    if (!same(gc_gf128_pow(hr, n), power)) {
      check(false, "gf128 pow(h, " + std::to_string(n) + ")");
      break;
    }
    power = gc_gf128_mul(power, hr);
  }
  check(true, "gf128 pow(h, n) equals repeated multiplication, n < 300");

  // Chunked GHASH: combine in order, and shift-then-XOR in any order.
  for (int trial = 0; trial < 40; ++trial) {
    size_t len = random_below(3000);
    Bytes data = random_bytes(len);
    gc_gf128 serial = gc_ghash_bytes(gc_gf128_make(0, 0), hr, data.data(), len);
    size_t num_blocks = (len + 15) / 16;
    std::vector<size_t> cuts = {0, num_blocks};
    for (int k = 0; k < 5; ++k) cuts.push_back(random_below(num_blocks + 1));
    std::sort(cuts.begin(), cuts.end());
    gc_gf128 combined = gc_gf128_make(0, 0), xored = gc_gf128_make(0, 0);
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      size_t begin = cuts[k] * 16, end = std::min(len, cuts[k + 1] * 16);
      size_t chunk_len = end > begin ? end - begin : 0;
      uint64_t chunk_blocks = cuts[k + 1] - cuts[k];
      gc_gf128 part = gc_ghash_bytes(gc_gf128_make(0, 0), hr, data.data() + begin, chunk_len);
      combined = gc_ghash_combine(combined, gc_gf128_pow(hr, chunk_blocks), part);
      xored = gc_gf128_xor(xored, gc_ghash_shift(part, hr, num_blocks - cuts[k + 1]));
    }
    check(same(combined, serial), "GHASH chunks combined in order equal serial GHASH");
    check(same(xored, serial), "GHASH chunks shifted and XORed equal serial GHASH");
  }
}

// ---------------------------------------------------------------------------------------------
// Modes against EVP, for one key size and one cipher width

template <int kLanes>
struct ModeTests {
  using Aes = OpenSslAes<kLanes>;
  size_t key_bits;
  std::string label;

  std::string name(const std::string& what, size_t len) const {
    return label + " " + what + " len=" + std::to_string(len);
  }

  void run() {
    test_ecb();
    test_cbc();
    test_cfb();
    test_ofb();
    test_ctr();
    test_ctr_wraps();
    test_xts();
    test_gcm();
    test_gcm_ranges();
  }

  void test_ecb() {
    for (size_t len : test_lens()) {
      len -= len % 16;
      Bytes key = random_bytes(key_bits / 8), pt = random_bytes(len);
      Aes aes = Aes::make(key.data(), key.size());
      Bytes expected = evp_crypt(evp_cipher("ecb", key_bits), key, nullptr, pt, true);
      Bytes out(len);
      ecb_encrypt_blocks(aes, pt.data(), out.data(), len / 16);
      check(out == expected, name("ecb encrypt", len));
      ecb_decrypt_blocks(aes, out.data(), out.data(), len / 16);  // in place
      check(out == pt, name("ecb decrypt in place", len));
      // ranges in shuffled order
      Bytes ranged(len);
      for (auto [first, count] : random_block_ranges(len / 16))
        ecb_encrypt_blocks(aes, pt.data() + 16 * first, ranged.data() + 16 * first, count);
      check(ranged == expected, name("ecb encrypt by ranges", len));
    }
  }

  void test_cbc() {
    for (size_t len : test_lens()) {
      len -= len % 16;
      Bytes key = random_bytes(key_bits / 8), iv = random_bytes(16), pt = random_bytes(len);
      Aes aes = Aes::make(key.data(), key.size());
      Bytes expected = evp_crypt(evp_cipher("cbc", key_bits), key, iv.data(), pt, true);
      Bytes ct(len);
      gc_block chain = cbc_encrypt_blocks(aes, block_of(iv), pt.data(), ct.data(), len / 16);
      check(ct == expected, name("cbc encrypt", len));
      if (len > 0) check(same(chain, gc_block_load(ct.data() + len - 16)), name("cbc encrypt returns last block", len));

      Bytes out(len);
      cbc_decrypt_range(aes, block_of(iv), ct.data(), out.data(), len / 16);
      check(out == pt, name("cbc decrypt", len));
      // parallel ranges, out of place, shuffled order
      Bytes ranged(len);
      for (auto [first, count] : random_block_ranges(len / 16))
        cbc_decrypt_range(aes, chain_block_before(block_of(iv), ct.data(), first), ct.data() + 16 * first,
                          ranged.data() + 16 * first, count);
      check(ranged == pt, name("cbc decrypt by ranges", len));
      // parallel ranges in place: boundary blocks are read before any range writes
      Bytes in_place = ct;
      auto ranges = random_block_ranges(len / 16);
      std::vector<gc_block> chains;
      for (auto [first, count] : ranges) chains.push_back(chain_block_before(block_of(iv), in_place.data(), first));
      for (size_t r = 0; r < ranges.size(); ++r)
        cbc_decrypt_range(aes, chains[r], in_place.data() + 16 * ranges[r].first, in_place.data() + 16 * ranges[r].first,
                          ranges[r].second);
      check(in_place == pt, name("cbc decrypt by ranges in place", len));
    }
    // PKCS#7 (padding.hpp, used by the batch engine) against EVP's padding: CBC over the message
    // and our padding block, then decrypt and strip it again.
    for (size_t len : test_lens()) {
      Bytes key = random_bytes(key_bits / 8), iv = random_bytes(16), pt = random_bytes(len);
      Aes aes = Aes::make(key.data(), key.size());
      Bytes ct = evp_crypt(evp_cipher("cbc", key_bits), key, iv.data(), pt, true, true);
      Bytes padded = pt;
      padded.resize(len - len % 16 + 16);
      size_t padding_len = pkcs7_padding(len % 16, padded.data() + len);
      Bytes ours(padded.size());
      cbc_encrypt_blocks(aes, block_of(iv), padded.data(), ours.data(), ours.size() / 16);
      check(padding_len == padded.size() - len && ours == ct, name("cbc + pkcs7 encrypt vs EVP padding", len));
      Bytes out(ct.size());
      cbc_decrypt_range(aes, block_of(iv), ct.data(), out.data(), ct.size() / 16);
      size_t kept = 0;
      bool padding_ok = pkcs7_unpadded_len(out.data() + out.size() - 16, &kept);
      out.resize(out.size() - 16 + kept);
      check(padding_ok && out == pt, name("cbc + pkcs7 decrypt and unpad vs EVP padding", len));
    }
  }

  void test_cfb() {
    for (size_t len : test_lens()) {
      Bytes key = random_bytes(key_bits / 8), iv = random_bytes(16), pt = random_bytes(len);
      Aes aes = Aes::make(key.data(), key.size());
      Bytes expected = evp_crypt(evp_cipher("cfb", key_bits), key, iv.data(), pt, true);
      Bytes ct(len);
      cfb_encrypt(aes, block_of(iv), pt.data(), ct.data(), len);
      check(ct == expected, name("cfb encrypt", len));
      Bytes out(len);
      cfb_decrypt(aes, block_of(iv), ct.data(), out.data(), len);
      check(out == pt, name("cfb decrypt", len));
      // decryption ranges (the last one carries the partial block)
      Bytes ranged(len);
      size_t num_blocks = (len + 15) / 16;
      for (auto [first, count] : random_block_ranges(num_blocks)) {
        size_t range_len = std::min(len - 16 * first, 16 * count);
        cfb_decrypt_range(aes, chain_block_before(block_of(iv), ct.data(), first), ct.data() + 16 * first,
                          ranged.data() + 16 * first, range_len);
      }
      check(ranged == pt, name("cfb decrypt by ranges", len));
      Bytes in_place = pt;
      cfb_encrypt(aes, block_of(iv), in_place.data(), in_place.data(), len);
      check(in_place == expected, name("cfb encrypt in place", len));
      cfb_decrypt(aes, block_of(iv), in_place.data(), in_place.data(), len);
      check(in_place == pt, name("cfb decrypt in place", len));
    }
  }

  void test_ofb() {
    for (size_t len : test_lens()) {
      Bytes key = random_bytes(key_bits / 8), iv = random_bytes(16), pt = random_bytes(len);
      Aes aes = Aes::make(key.data(), key.size());
      Bytes expected = evp_crypt(evp_cipher("ofb", key_bits), key, iv.data(), pt, true);
      Bytes ct(len);
      ofb_xor(aes, block_of(iv), pt.data(), ct.data(), len);
      check(ct == expected, name("ofb", len));
      ofb_xor(aes, block_of(iv), ct.data(), ct.data(), len);  // decryption is the same XOR
      check(ct == pt, name("ofb decrypt in place", len));
    }
  }

  void test_ctr() {
    for (size_t len : test_lens()) {
      Bytes key = random_bytes(key_bits / 8), iv = random_bytes(16), pt = random_bytes(len);
      Aes aes = Aes::make(key.data(), key.size());
      Bytes expected = evp_crypt(evp_cipher("ctr", key_bits), key, iv.data(), pt, true);
      Bytes ct(len);
      ctr_xor_range(aes, block_of(iv), 0, pt.data(), ct.data(), len);
      check(ct == expected, name("ctr", len));
      Bytes ranged(len);
      for (auto [first, count] : random_block_ranges((len + 15) / 16))
        ctr_xor_range(aes, block_of(iv), first, pt.data() + 16 * first, ranged.data() + 16 * first,
                      std::min(len - 16 * first, 16 * count));
      check(ranged == expected, name("ctr by ranges", len));
    }
  }

  // Counters starting just below 2^32, 2^64 and 2^128 (OpenSSL's CTR carries across all 128 bits).
  void test_ctr_wraps() {
    for (int boundary_bytes : {4, 8, 16}) {
      for (size_t below : {1, 2, 5}) {
        Bytes key = random_bytes(key_bits / 8), iv = random_bytes(16), pt = random_bytes(16 * 9 + 7);
        std::fill(iv.end() - boundary_bytes, iv.end(), 0xff);
        iv[15] = (uint8_t)(0x100 - below);                        // 2^boundary - below
        if (boundary_bytes < 16) iv[15 - boundary_bytes] &= 0xfe;  // the carry must change this byte
        Aes aes = Aes::make(key.data(), key.size());
        Bytes expected = evp_crypt(evp_cipher("ctr", key_bits), key, iv.data(), pt, true);
        Bytes ct(pt.size());
        ctr_xor_range(aes, block_of(iv), 0, pt.data(), ct.data(), pt.size());
        std::string what = "ctr across 2^" + std::to_string(8 * boundary_bytes) + " (" + std::to_string(below) + " below)";
        check(ct == expected, label + " " + what);
        Bytes ranged(pt.size());
        for (auto [first, count] : random_block_ranges(10))
          ctr_xor_range(aes, block_of(iv), first, pt.data() + 16 * first, ranged.data() + 16 * first,
                        std::min(pt.size() - 16 * first, 16 * count));
        check(ranged == expected, label + " " + what + " by ranges");
      }
    }
    // A range far into the stream: block index near 2^64, compared with EVP started at IV + index.
    for (int trial = 0; trial < 4; ++trial) {
      Bytes key = random_bytes(key_bits / 8), iv = random_bytes(16), pt = random_bytes(100);
      uint64_t first_block = ~0ull - random_below(3);
      Aes aes = Aes::make(key.data(), key.size());
      Bytes expected = evp_crypt(evp_cipher("ctr", key_bits), key, be_add_reference(iv, first_block).data(), pt, true);
      Bytes ct(pt.size());
      ctr_xor_range(aes, block_of(iv), first_block, pt.data(), ct.data(), pt.size());
      check(ct == expected, label + " ctr range at block index near 2^64");
    }
  }

  void test_xts() {
    for (size_t len : test_lens()) {
      if (len < 16) continue;
      Bytes key = random_bytes(key_bits / 4), tweak = random_bytes(16), pt = random_bytes(len);
      size_t half = key.size() / 2;
      Aes data_aes = Aes::make(key.data(), half), tweak_aes = Aes::make(key.data() + half, half);
      Bytes expected = evp_crypt(evp_cipher("xts", key_bits), key, tweak.data(), pt, true);
      Bytes ct(len);
      check(xts_encrypt(data_aes, tweak_aes, block_of(tweak), pt.data(), ct.data(), len) == ModeStatus::ok &&
                ct == expected,
            name("xts encrypt", len));
      Bytes out = ct;
      check(xts_decrypt(data_aes, tweak_aes, block_of(tweak), out.data(), out.data(), len) == ModeStatus::ok && out == pt,
            name("xts decrypt in place", len));
      // ranges: split on block boundaries; the last range holds the ragged tail
      gc_block encrypted_tweak = xts_encrypted_tweak(tweak_aes, block_of(tweak));
      size_t num_full = len / 16;
      for (bool encrypting : {true, false}) {
        Bytes ranged(len);
        const Bytes& source = encrypting ? pt : ct;
        bool ok = true;
        for (auto [first, count] : random_block_ranges(num_full)) {
          size_t range_len = first + count == num_full ? len - 16 * first : 16 * count;
          ModeStatus status = encrypting ? xts_encrypt_range(data_aes, encrypted_tweak, first, source.data() + 16 * first,
                                                             ranged.data() + 16 * first, range_len)
                                         : xts_decrypt_range(data_aes, encrypted_tweak, first, source.data() + 16 * first,
                                                             ranged.data() + 16 * first, range_len);
          ok = ok && status == ModeStatus::ok;
        }
        check(ok && ranged == (encrypting ? expected : pt), name(encrypting ? "xts encrypt by ranges" : "xts decrypt by ranges", len));
      }
    }
    Bytes key = random_bytes(key_bits / 4), data = random_bytes(15), out(15);
    size_t half = key.size() / 2;
    Aes data_aes = Aes::make(key.data(), half), tweak_aes = Aes::make(key.data() + half, half);
    check(xts_encrypt(data_aes, tweak_aes, zero_block(), data.data(), out.data(), 15) == ModeStatus::invalid_length,
          label + " xts refuses a data unit under 16 bytes");
    check(xts_decrypt(data_aes, tweak_aes, zero_block(), data.data(), out.data(), 0) == ModeStatus::invalid_length,
          label + " xts refuses an empty data unit");
    check(xts_key_halves_differ(key.data(), key.size()), label + " xts key halves differ (random key)");
    Bytes twin = key;
    std::copy(twin.begin(), twin.begin() + half, twin.begin() + half);
    check(!xts_key_halves_differ(twin.data(), twin.size()), label + " xts equal key halves detected");
  }

  void test_gcm() {
    std::vector<size_t> iv_lens = {1, 12, 60, 16, 8, 13, 1 + random_below(100)};
    for (size_t len : test_lens()) {
      for (size_t iv_len : {iv_lens[random_below(iv_lens.size())], (size_t)12}) {
        Bytes key = random_bytes(key_bits / 8), iv = random_bytes(iv_len), pt = random_bytes(len);
        Bytes aad = random_bytes(random_below(4) == 0 ? 0 : random_below(70));
        Aes aes = Aes::make(key.data(), key.size());
        auto [expected_ct, expected_tag] = evp_gcm_encrypt(key, iv, aad, pt);
        std::string what = "gcm iv_len=" + std::to_string(iv_len) + " aad_len=" + std::to_string(aad.size());
        Bytes ct(len), tag(16);
        check(gcm_encrypt(aes, iv.data(), iv_len, aad.data(), aad.size(), pt.data(), ct.data(), len, tag.data(), 16) ==
                      ModeStatus::ok &&
                  ct == expected_ct && tag == expected_tag,
              name(what + " encrypt", len));
        Bytes out(len);
        check(gcm_decrypt(aes, iv.data(), iv_len, aad.data(), aad.size(), ct.data(), out.data(), len, tag.data(), 16) ==
                      ModeStatus::ok &&
                  out == pt,
              name(what + " decrypt", len));
      }
    }

    // Truncated tags 4..16: our tag is a prefix of EVP's, EVP accepts it, we accept it, and
    // tampering with tag, ciphertext or AAD is rejected without releasing plaintext.
    for (size_t tag_len = 4; tag_len <= 16; ++tag_len) {
      Bytes key = random_bytes(key_bits / 8), iv = random_bytes(12), pt = random_bytes(1 + random_below(100));
      Bytes aad = random_bytes(random_below(40));
      Aes aes = Aes::make(key.data(), key.size());
      auto [expected_ct, expected_tag] = evp_gcm_encrypt(key, iv, aad, pt);
      Bytes ct(pt.size()), tag(tag_len);
      gcm_encrypt(aes, iv.data(), 12, aad.data(), aad.size(), pt.data(), ct.data(), pt.size(), tag.data(), tag_len);
      std::string what = label + " gcm tag_len=" + std::to_string(tag_len);
      check(ct == expected_ct && std::equal(tag.begin(), tag.end(), expected_tag.begin()), what + " is a prefix of EVP's tag");
      check(evp_gcm_decrypt_ok(key, iv, aad, ct, tag.data(), tag_len), what + " accepted by EVP");
      Bytes out(pt.size());
      check(gcm_decrypt(aes, iv.data(), 12, aad.data(), aad.size(), ct.data(), out.data(), ct.size(), tag.data(), tag_len) ==
                    ModeStatus::ok &&
                out == pt,
            what + " verifies");
      auto rejected = [&](const Bytes& c, const Bytes& a, const Bytes& t) {
        Bytes sentinel(c.size(), 0xa5);
        bool refused = gcm_decrypt(aes, iv.data(), 12, a.data(), a.size(), c.data(), sentinel.data(), c.size(), t.data(),
                                   tag_len) == ModeStatus::authentication_failed;
        return refused && sentinel == Bytes(c.size(), 0xa5);
      };
      Bytes bad_tag = tag;
      bad_tag[random_below(tag_len)] ^= (uint8_t)(1u << random_below(8));
      check(rejected(ct, aad, bad_tag), what + " tampered tag rejected, no plaintext released");
      Bytes bad_ct = ct;
      bad_ct[random_below(ct.size())] ^= 0x01;
      check(rejected(bad_ct, aad, tag), what + " tampered ciphertext rejected");
      Bytes bad_aad = aad;
      bad_aad.push_back(0);
      check(rejected(ct, bad_aad, tag), what + " extended AAD rejected");
    }

    // Parameter checks and the 2^32 - 2 block limit (refused before any buffer is touched).
    Bytes key = random_bytes(key_bits / 8), iv = random_bytes(12);
    Aes aes = Aes::make(key.data(), key.size());
    uint8_t tag[16];
    check(gcm_encrypt(aes, iv.data(), 12, nullptr, 0, nullptr, nullptr, (size_t)kGcmMaxDataLen + 1, tag, 16) ==
              ModeStatus::message_too_long,
          label + " gcm refuses 2^32 - 2 blocks + 1 byte");
    check(gcm_decrypt(aes, iv.data(), 12, nullptr, 0, nullptr, nullptr, (size_t)kGcmMaxDataLen + 16, tag, 16) ==
              ModeStatus::message_too_long,
          label + " gcm decrypt refuses 2^32 - 1 blocks");
    check(gcm_check_lengths(12, 0, kGcmMaxDataLen, 16) == ModeStatus::ok, label + " gcm accepts exactly 2^32 - 2 blocks");
    check(gcm_encrypt(aes, iv.data(), 0, nullptr, 0, nullptr, nullptr, 0, tag, 16) == ModeStatus::invalid_iv_length,
          label + " gcm refuses an empty IV");
    check(gcm_encrypt(aes, iv.data(), 12, nullptr, 0, nullptr, nullptr, 0, tag, 3) == ModeStatus::invalid_tag_length,
          label + " gcm refuses a 3-byte tag");
    check(gcm_encrypt(aes, iv.data(), 12, nullptr, 0, nullptr, nullptr, 0, tag, 17) == ModeStatus::invalid_tag_length,
          label + " gcm refuses a 17-byte tag");
  }

  // GCM through the parallel entry points: CTR ranges in shuffled order, GHASH per chunk combined,
  // tag from the parts; plus a J0 placed just below the inc32 wrap.
  void test_gcm_ranges() {
    for (size_t len : test_lens()) {
      Bytes key = random_bytes(key_bits / 8), iv = random_bytes(random_below(2) ? 12 : 1 + random_below(64));
      Bytes pt = random_bytes(len), aad = random_bytes(random_below(50));
      Aes aes = Aes::make(key.data(), key.size());
      auto [expected_ct, expected_tag] = evp_gcm_encrypt(key, iv, aad, pt);
      GcmContext context;
      gcm_setup(aes, iv.data(), iv.size(), &context);
      Bytes ct(len);
      size_t num_blocks = (len + 15) / 16;
      auto ranges = random_block_ranges(num_blocks);
      std::vector<gc_gf128> chunk_hashes(ranges.size());
      // fused ranges: one pass per range, then the in-order combination
      Bytes fused(len), decrypted(len);
      std::vector<gc_gf128> fused_hashes(num_blocks), decrypt_hashes(num_blocks);
      for (auto [first, count] : ranges) {
        size_t range_len = std::min(len - 16 * first, 16 * count);
        fused_hashes[first] = gcm_encrypt_range(aes, context, first, pt.data() + 16 * first, fused.data() + 16 * first, range_len);
      }
      for (auto [first, count] : ranges) {
        size_t range_len = std::min(len - 16 * first, 16 * count);
        decrypt_hashes[first] = gcm_decrypt_range(aes, context, first, fused.data() + 16 * first, decrypted.data() + 16 * first,
                                                  range_len);
      }
      auto sorted_ranges = ranges;
      std::sort(sorted_ranges.begin(), sorted_ranges.end());
      gc_gf128 fused_hash = gc_gf128_make(0, 0), decrypt_hash = gc_gf128_make(0, 0);
      for (auto [first, count] : sorted_ranges) {
        gc_gf128 h_pow = gc_gf128_pow(context.hash_subkey, count);
        fused_hash = gc_ghash_combine(fused_hash, h_pow, fused_hashes[first]);
        decrypt_hash = gc_ghash_combine(decrypt_hash, h_pow, decrypt_hashes[first]);
      }
      Bytes fused_tag(16);
      gcm_tag_from_hashes(context, gcm_ghash_range(context.hash_subkey, aad.data(), aad.size()), fused_hash, aad.size(), len,
                          fused_tag.data(), 16);
      check(fused == expected_ct && fused_tag == expected_tag, name("gcm_encrypt_range (fused) + in-order combine", len));
      check(decrypted == pt && same(decrypt_hash, fused_hash), name("gcm_decrypt_range (fused) hashes the ciphertext", len));

      for (size_t r = 0; r < ranges.size(); ++r) {  // each "thread": its CTR part, then its GHASH part
        auto [first, count] = ranges[r];
        size_t range_len = std::min(len - 16 * first, 16 * count);
        gcm_ctr_xor_range(aes, context.pre_counter, first, pt.data() + 16 * first, ct.data() + 16 * first, range_len);
        chunk_hashes[r] = gc_ghash_shift(gcm_ghash_range(context.hash_subkey, ct.data() + 16 * first, range_len),
                                         context.hash_subkey, num_blocks - first - count);
      }
      gc_gf128 ciphertext_hash = gc_gf128_make(0, 0);
      for (auto h : chunk_hashes) ciphertext_hash = gc_gf128_xor(ciphertext_hash, h);
      Bytes tag(16);
      gcm_tag_from_hashes(context, gcm_ghash_range(context.hash_subkey, aad.data(), aad.size()), ciphertext_hash,
                          aad.size(), len, tag.data(), 16);
      check(ct == expected_ct && tag == expected_tag, name("gcm by ranges (ctr ranges + ghash chunks)", len));
    }

    // inc32 wrap: choose J0 = R || fffffffe, derive the 16-byte IV whose GHASH gives it
    // (IV = ((J0 H^-1) xor L) H^-1 with L = 0^64 || [128]_64), and compare with EVP.
    for (int trial = 0; trial < 3; ++trial) {
      Bytes key = random_bytes(key_bits / 8), pt = random_bytes(16 * 6 + 5), aad = random_bytes(20);
      Aes aes = Aes::make(key.data(), key.size());
      gc_gf128 h = gc_gf128_from_block(encrypt_one(aes, zero_block()));
      gc_gf128 h_inverse = h;  // h^(2^128 - 2) = h^-1
      for (int bit = 126; bit >= 1; --bit) h_inverse = gc_gf128_mul(gc_gf128_mul(h_inverse, h_inverse), h);
      h_inverse = gc_gf128_mul(h_inverse, h_inverse);
      check(same(gc_gf128_mul(h, h_inverse), gc_gf128_one()), label + " gf128 inverse (test setup)");
      Bytes j0 = random_bytes(16);
      uint32_t low_word = 0xffffffffu - (uint32_t)trial;  // data block 0 uses J0 + 1
      for (int i = 0; i < 4; ++i) j0[12 + i] = (uint8_t)(low_word >> (24 - 8 * i));
      gc_gf128 iv_element = gc_gf128_mul(
          gc_gf128_xor(gc_gf128_mul(gf_of(j0), h_inverse), gc_gf128_make(0, 128)), h_inverse);
      Bytes iv = bytes_of(iv_element);
      check(same(gcm_pre_counter(h, iv.data(), 16), block_of(j0)), label + " gcm constructed IV gives the chosen J0");
      auto [expected_ct, expected_tag] = evp_gcm_encrypt(key, iv, aad, pt);
      Bytes ct(pt.size()), tag(16);
      gcm_encrypt(aes, iv.data(), 16, aad.data(), aad.size(), pt.data(), ct.data(), pt.size(), tag.data(), 16);
      check(ct == expected_ct && tag == expected_tag,
            label + " gcm inc32 wraps to 0 within the message (J0 low word " + std::to_string(low_word) + ")");
      GcmContext context;
      gcm_setup(aes, iv.data(), 16, &context);
      Bytes ranged(pt.size());
      for (auto [first, count] : random_block_ranges(7))
        gcm_ctr_xor_range(aes, context.pre_counter, first, pt.data() + 16 * first, ranged.data() + 16 * first,
                          std::min(pt.size() - 16 * first, 16 * count));
      check(ranged == expected_ct, label + " gcm ranges across the inc32 wrap");
    }
  }
};

// ---------------------------------------------------------------------------------------------
// The modes through their traits (mode_kind.hpp, modes.hpp)

#define GC_TEST_MODE_NAME(name) #name,
static const char* const kModeNames[] = {GPUCRYPT_MODES(GC_TEST_MODE_NAME)};
#undef GC_TEST_MODE_NAME

// Every direction of every mode of the bulk or serial kind, run as the generic code runs it, equals
// EVP's "aes-BITS-NAME" over the whole message: a bulk one cut into random block ranges (shuffled,
// each from its traits' range_start, the block before read from the input), a serial one in random
// whole-block pieces along serial_blocks' chain and then serial_tail. For a mode that takes any
// length, next_register continues the message after a block done byte by byte (the stream
// driver's rule): block 2 is block 1's register's successor, E(that) XOR the plaintext.
template <int kLanes>
static void test_traits(size_t key_bits) {
  const Bytes key = random_bytes(key_bits / 8);
  const auto aes = OpenSslAes<kLanes>::make(key.data(), key.size());
  for_each_mode([&](auto traits) {
    using Traits = decltype(traits);
    const std::string name = "aes-" + std::to_string(key_bits) + "-" + kModeNames[static_cast<int>(Traits::kMode)];
    for (const gpucrypt::Direction d : {gpucrypt::Direction::encrypt, gpucrypt::Direction::decrypt}) {
      const bool encrypt = d == gpucrypt::Direction::encrypt;
      const ModeKind kind = Traits::kind(d);
      if (kind != ModeKind::bulk && kind != ModeKind::serial) continue;
      EVP_CIPHER* evp = EVP_CIPHER_fetch(nullptr, name.c_str(), nullptr);
      if (!check(evp != nullptr, name + ": OpenSSL has the mode (the traits test's oracle)")) continue;
      const std::string label = name + (encrypt ? " encrypt" : " decrypt") + " kernel-style through its traits";
      for (size_t len : test_lens()) {
        if (Traits::kWholeBlocks) len -= len % 16;
        const Bytes in = random_bytes(len), iv = random_bytes(16);
        const Bytes expected = evp_crypt(evp, key, iv.data(), in, encrypt);
        Bytes out(len);
        if constexpr (Traits::kind(gpucrypt::Direction::encrypt) == ModeKind::bulk ||
                      Traits::kind(gpucrypt::Direction::decrypt) == ModeKind::bulk) {
          if (kind == ModeKind::bulk) {
            for (auto [first, count] : random_block_ranges((len + 15) / 16)) {
              const gc_block start =
                  Traits::range_start(block_of(iv), first, first > 0 ? in.data() + 16 * (first - 1) : nullptr);
              Traits::bulk_range(aes, d, start, in.data() + 16 * first, out.data() + 16 * first,
                                 std::min(len - 16 * first, 16 * count));
            }
          }
        }
        if constexpr (Traits::kind(gpucrypt::Direction::encrypt) == ModeKind::serial ||
                      Traits::kind(gpucrypt::Direction::decrypt) == ModeKind::serial) {
          if (kind == ModeKind::serial) {
            // Through the traits, and as the CUDA serial kernels pick it: by serial_op's number.
            const SerialOp op = serial_op(Traits::kMode, d);
            Bytes by_number(len);
            gc_block chain = block_of(iv), numbered_chain = chain;
            size_t done = 0;
            while (done + 16 <= len) {
              const size_t n = 1 + random_below(std::min<size_t>((len - done) / 16, 40));
              chain = Traits::serial_blocks(aes, d, chain, in.data() + done, out.data() + done, n);
              numbered_chain = serial_blocks(op, aes, numbered_chain, in.data() + done, by_number.data() + done, n);
              done += 16 * n;
            }
            if constexpr (!Traits::kWholeBlocks) {
              if (done < len) {
                Traits::serial_tail(aes, d, chain, in.data() + done, out.data() + done, len - done);
                serial_tail(op, aes, numbered_chain, in.data() + done, by_number.data() + done, len - done);
              }
            }
            check(by_number == expected, label + " by serial_op number, " + std::to_string(len) + " bytes");
          }
        }
        check(out == expected, label + ", " + std::to_string(len) + " bytes");
      }
      if constexpr (Traits::kind(gpucrypt::Direction::encrypt) == ModeKind::serial ||
                    Traits::kind(gpucrypt::Direction::decrypt) == ModeKind::serial) {
        if (kind == ModeKind::serial) {  // the chain a serial call returns is next_register's
          const Bytes in = random_bytes(32), iv = random_bytes(16);
          Bytes out(32);
          const gc_block chain1 = Traits::serial_blocks(aes, d, block_of(iv), in.data(), out.data(), 1);
          const gc_block chain2 = Traits::serial_blocks(aes, d, chain1, in.data() + 16, out.data() + 16, 1);
          const Bytes in2(in.begin() + 16, in.end()), out2(out.begin() + 16, out.end());
          const gc_block ciphertext = block_of(encrypt ? out2 : in2);
          check(same(Traits::next_register(chain1, gc_block_xor(block_of(in2), block_of(out2)), ciphertext), chain2),
                name + (encrypt ? " encrypt" : " decrypt") + ": next_register is the chain serial_blocks returns");
        }
      }
      constexpr bool kStreamKind = Traits::kind(gpucrypt::Direction::encrypt) == ModeKind::bulk ||
                                   Traits::kind(gpucrypt::Direction::encrypt) == ModeKind::serial;
      if constexpr (kStreamKind && !Traits::kWholeBlocks) {
        const Bytes in = random_bytes(32), iv = random_bytes(16);
        const Bytes expected = evp_crypt(evp, key, iv.data(), in, encrypt);
        const gc_block keystream1 = encrypt_one(aes, block_of(iv));
        const Bytes ciphertext1(encrypt ? expected.begin() : in.begin(), (encrypt ? expected.begin() : in.begin()) + 16);
        const gc_block reg2 = Traits::next_register(block_of(iv), keystream1, block_of(ciphertext1));
        const gc_block out2 = gc_block_xor(encrypt_one(aes, reg2), block_of(Bytes(in.begin() + 16, in.end())));
        check(same(gc_block_xor(keystream1, block_of(in)), block_of(expected)) &&
                  same(out2, block_of(Bytes(expected.begin() + 16, expected.end()))),
              name + (encrypt ? " encrypt" : " decrypt") + ": next_register continues the keystream");
      }
      EVP_CIPHER_free(evp);
    }
  });
}

// The rules mode_rules.hpp reads off the traits, pinned for today's modes (what the splitters, the
// IV-reuse guard, padding, the stream engine and the CLI's lists depend on).
static void test_rules() {
  using gpucrypt::Direction;
  using gpucrypt::Mode;
  struct Expected {
    Mode mode;
    bool parallel_encrypt, parallel_decrypt, keystream, whole_blocks, aead, stream;
  };
  const Expected table[] = {
      {Mode::ecb, true, true, false, true, false, true},    {Mode::cbc, false, true, false, true, false, true},
      {Mode::cfb, false, true, true, false, false, true},   {Mode::ofb, false, false, true, false, false, true},
      {Mode::ctr, true, true, true, false, false, true},    {Mode::xts, false, false, false, false, false, false},
      {Mode::gcm, false, false, false, false, true, false},
  };
  for (const Expected& e : table) {
    const std::string name = kModeNames[static_cast<int>(e.mode)];
    check(is_parallel(e.mode, Direction::encrypt) == e.parallel_encrypt &&
              is_parallel(e.mode, Direction::decrypt) == e.parallel_decrypt,
          name + ": is_parallel per direction");
    check(is_keystream(e.mode) == e.keystream, name + ": is_keystream");
    check(needs_whole_blocks(e.mode) == e.whole_blocks, name + ": needs_whole_blocks");
    check(is_aead(e.mode) == e.aead, name + ": is_aead");
    check(is_stream(e.mode) == e.stream, name + ": is_stream");
  }
  // range_iv: CTR counts on (across the 64-bit boundary), CBC/CFB take the block before, the
  // others keep the IV.
  const Bytes iv = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
  const Bytes previous = random_bytes(16);
  uint8_t out[16];
  range_iv(Mode::ctr, iv.data(), 3, nullptr, out);
  check(Bytes(out, out + 16) == be_add_reference(iv, 3), "range_iv: CTR counter + 3");
  for (Mode m : {Mode::cbc, Mode::cfb}) {
    range_iv(m, iv.data(), 5, previous.data(), out);
    check(Bytes(out, out + 16) == previous, std::string(kModeNames[static_cast<int>(m)]) + " range_iv: the block before");
    range_iv(m, iv.data(), 0, nullptr, out);
    check(Bytes(out, out + 16) == iv, std::string(kModeNames[static_cast<int>(m)]) + " range_iv at block 0: the IV");
  }
  for (Mode m : {Mode::ecb, Mode::ofb}) {
    range_iv(m, iv.data(), 5, previous.data(), out);
    check(Bytes(out, out + 16) == iv, std::string(kModeNames[static_cast<int>(m)]) + " range_iv: the IV");
  }
  check(serial_op(Mode::ofb, Direction::encrypt) == serial_op(Mode::ofb, Direction::decrypt) &&
            serial_op(Mode::cbc, Direction::encrypt) != serial_op(Mode::cfb, Direction::encrypt),
        "serial_op: one code for OFB's two directions, one per other serial operation");
}

// ---------------------------------------------------------------------------------------------

static void test_helpers() {
  Bytes key = random_bytes(16);
  auto aes1 = OpenSslAes<1>::make(key.data(), 16);
  auto aes3 = OpenSslAes<3>::make(key.data(), 16);
  gc_block b = random_block();
  check(same(encrypt_one(aes3, b), encrypt_one(aes1, b)), "encrypt_one through a 3-lane cipher");
  check(same(decrypt_one(aes3, encrypt_one(aes3, b)), b), "decrypt_one through a 3-lane cipher");
  uint8_t x[16] = {1, 2, 3}, y[16] = {1, 2, 3};
  check(constant_time_equal(x, y, 16), "constant_time_equal: equal");
  y[15] ^= 0x80;
  check(!constant_time_equal(x, y, 16), "constant_time_equal: last byte differs");
  check(constant_time_equal(x, y, 15), "constant_time_equal: compares only len bytes");

  // PKCS#7: every valid padding, then the classic invalid ones.
  for (size_t data_len = 0; data_len < 16; ++data_len) {
    uint8_t block[16];
    for (size_t i = 0; i < data_len; ++i) block[i] = (uint8_t)g_rng();
    size_t padding_len = pkcs7_padding(data_len, block + data_len);
    size_t recovered = 99;
    check(padding_len == 16 - data_len && pkcs7_unpadded_len(block, &recovered) && recovered == data_len,
          "pkcs7 round trip, " + std::to_string(data_len) + " data bytes");
  }
  uint8_t bad[16];
  size_t recovered = 99;
  std::memset(bad, 0, 16);
  check(!pkcs7_unpadded_len(bad, &recovered) && recovered == 0, "pkcs7 rejects padding byte 0");
  std::memset(bad, 17, 16);
  check(!pkcs7_unpadded_len(bad, &recovered), "pkcs7 rejects padding byte 17");
  std::memset(bad, 0xff, 16);
  check(!pkcs7_unpadded_len(bad, &recovered), "pkcs7 rejects padding byte 255");
  std::memset(bad, 4, 16);
  bad[12] = 3;
  check(!pkcs7_unpadded_len(bad, &recovered), "pkcs7 rejects a wrong byte inside the padding");
  bad[12] = 4;
  bad[11] = 9;
  check(pkcs7_unpadded_len(bad, &recovered) && recovered == 12, "pkcs7 ignores data bytes before the padding");
}

int main() {
  test_counters();
  test_xts_tweaks();
  test_gf128();
  test_helpers();
  test_rules();
  for (size_t key_bits : {128, 256}) {
    test_traits<1>(key_bits);
    test_traits<3>(key_bits);
    ModeTests<1>{key_bits, "aes-" + std::to_string(key_bits) + " x1"}.run();
    ModeTests<2>{key_bits, "aes-" + std::to_string(key_bits) + " x2"}.run();
    ModeTests<3>{key_bits, "aes-" + std::to_string(key_bits) + " x3"}.run();
  }
  return report();
}
