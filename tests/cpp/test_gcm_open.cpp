// test_gcm_open.cpp: the GcmCipher contract of include/gpucrypt/cipher.hpp on every CPU variant:
// open verifies the tag before it writes, so a failed open leaves `out` byte for byte as it was
// (a separate buffer and in place), and a good one returns the plaintext. Every variant must seal
// the same bytes (aes_openssl's tag comes from a GHASH pass through EVP with a length-block
// correction, openssl_gcm.hpp, checked here against the portable GCM over ragged AAD and data
// lengths and every nonce-length path). One object is also used from several threads at once.
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpucrypt/cipher.hpp"
#include "test_support.hpp"

using namespace gpucrypt;
using test_support::check;

namespace {

std::mt19937_64 rng(20261123);

std::vector<uint8_t> random_bytes(size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// The CPU variants that implement `cipher` (camellia_openssl has no GCM, for instance).
std::vector<std::string> gcm_variants_of(const std::string& cipher) {
  const CipherName name = parse_cipher_name(cipher);
  std::vector<std::string> names;
  for (const auto& v : list_variants()) {
    if (v.backend != "cpu" || v.algorithm != algorithm_name(name.algorithm)) continue;
    try {
      create_gcm(name, std::vector<uint8_t>(name.key_len()), v.name, "cpu");
      names.push_back(v.name);
    } catch (const std::invalid_argument&) {
    }
  }
  return names;
}

struct Case {
  size_t nonce_len, aad_len, data_len, tag_len;
};

void check_variant(const std::string& cipher, const std::string& variant, const Case& c,
                   const std::vector<uint8_t>& key, const std::vector<uint8_t>& expected_sealed) {
  const std::string what = cipher + " " + variant + " nonce " + std::to_string(c.nonce_len) + " aad " +
                           std::to_string(c.aad_len) + " data " + std::to_string(c.data_len) + " tag " +
                           std::to_string(c.tag_len);
  auto gcm = create_gcm(parse_cipher_name(cipher), key, variant, "cpu");
  if (!check(gcm->variant().name == variant, what + ": ran " + gcm->variant().name)) return;
  rng.seed(c.nonce_len * 1000003 + c.data_len * 31 + c.aad_len);
  const auto nonce = random_bytes(c.nonce_len), aad = random_bytes(c.aad_len), plaintext = random_bytes(c.data_len);
  std::vector<uint8_t> sealed(c.data_len + c.tag_len);
  gcm->seal(nonce, aad, plaintext, c.tag_len, sealed.data());
  if (!expected_sealed.empty()) check(sealed == expected_sealed, what + ": sealed bytes differ between variants");

  std::vector<uint8_t> out(c.data_len + 1, 0xA5);
  check(gcm->open(nonce, aad, sealed, c.tag_len, out.data()), what + ": good tag refused");
  check(std::memcmp(out.data(), plaintext.data(), c.data_len) == 0, what + ": wrong plaintext");
  check(out[c.data_len] == 0xA5, what + ": wrote past the plaintext");

  for (size_t flipped : {c.data_len, c.data_len + c.tag_len - 1, size_t(0)}) {  // tag, last tag byte, data
    if (flipped >= sealed.size()) continue;
    std::vector<uint8_t> bad = sealed;
    bad[flipped] ^= 0x01;
    std::vector<uint8_t> separate(c.data_len + 1);
    for (size_t i = 0; i < separate.size(); ++i) separate[i] = static_cast<uint8_t>(i * 7 + 3);
    const std::vector<uint8_t> separate_before = separate;
    check(!gcm->open(nonce, aad, bad, c.tag_len, separate.data()), what + ": bad input accepted");
    check(separate == separate_before, what + ": a failed open changed a separate out");
    std::vector<uint8_t> in_place = bad;
    check(!gcm->open(nonce, aad, in_place, c.tag_len, in_place.data()), what + ": bad input accepted in place");
    check(in_place == bad, what + ": a failed open in place changed the ciphertext");
  }
  std::vector<uint8_t> in_place = sealed;
  check(gcm->open(nonce, aad, in_place, c.tag_len, in_place.data()), what + ": good tag refused in place");
  check(std::memcmp(in_place.data(), plaintext.data(), c.data_len) == 0, what + ": wrong plaintext in place");
}

void check_threads(const std::string& cipher, const std::string& variant) {
  auto gcm = create_gcm(parse_cipher_name(cipher), random_bytes(parse_cipher_name(cipher).key_len()), variant, "cpu");
  std::vector<int> failures(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 local(t);
      for (int i = 0; i < 300; ++i) {
        std::vector<uint8_t> nonce(i % 3 == 0 ? 16 : 12), data(64 + (local() % 200));
        for (auto& b : nonce) b = static_cast<uint8_t>(local());
        for (auto& b : data) b = static_cast<uint8_t>(local());
        std::vector<uint8_t> sealed(data.size() + 16), opened(data.size());
        gcm->seal(nonce, {}, data, 16, sealed.data());
        if (!gcm->open(nonce, {}, sealed, 16, opened.data()) || opened != data) ++failures[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  int total = 0;
  for (int f : failures) total += f;
  check(total == 0, cipher + " " + variant + ": " + std::to_string(total) + " wrong results from 8 threads");
}

}  // namespace

int main() {
  const std::vector<Case> cases = {
      {12, 0, 0, 16},    {12, 0, 1, 16},    {12, 13, 15, 16},  {12, 16, 16, 16},   {12, 1, 17, 12},
      {12, 33, 1000, 4}, {1, 0, 100, 16},   {16, 5, 4097, 16}, {60, 20, 31, 8},    {200, 7, 77, 16},
      {12, 0, 100000, 16}, {12, 100, (size_t(1) << 20) + 5, 16},
  };
  for (const std::string algorithm : {"aes", "camellia", "sc2000"}) {
    for (const int key_bits : {128, 256}) {
      const std::string cipher = algorithm + "-" + std::to_string(key_bits) + "-gcm";
      const auto key = random_bytes(key_bits / 8);
      for (const Case& c : cases) {
        std::vector<uint8_t> reference;  // the first variant's sealed bytes
        for (const std::string& variant : gcm_variants_of(cipher)) {
          check_variant(cipher, variant, c, key, reference);
          if (reference.empty()) {
            auto gcm = create_gcm(parse_cipher_name(cipher), key, variant, "cpu");
            rng.seed(c.nonce_len * 1000003 + c.data_len * 31 + c.aad_len);
            const auto nonce = random_bytes(c.nonce_len), aad = random_bytes(c.aad_len),
                       plaintext = random_bytes(c.data_len);
            reference.resize(c.data_len + c.tag_len);
            gcm->seal(nonce, aad, plaintext, c.tag_len, reference.data());
          }
        }
      }
    }
    for (const std::string& variant : gcm_variants_of(algorithm + "-128-gcm")) check_threads(algorithm + "-128-gcm", variant);
  }
  return test_support::report();
}
