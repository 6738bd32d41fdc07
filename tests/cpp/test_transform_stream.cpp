// test_transform_stream.cpp: gpucrypt::TransformStream and transform_range (include/gpucrypt/transform.hpp)
// against one CipherStream over the whole input, for every mode and direction they take (the
// parallel ones cut into jobs with their own IVs, the serial ones one stream on one device): odd
// update sizes, input staged or read in place (`keep`), transform_range in place and with a
// shifted overlap; then progress, the refusals, and the end of a stream.
#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpucrypt/cipher.hpp"
#include "gpucrypt/transform.hpp"
#include "test_support.hpp"

using namespace gpucrypt;
using test_support::check;

namespace {

const std::vector<uint8_t> kKey(32, 0x5a);
const std::vector<uint8_t> kIv = {0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7,
                                  0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff};  // CTR carries past 2^64

std::vector<uint8_t> random_bytes(size_t len, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(len);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

ByteSpan iv_for(const CipherName& name) { return name.mode == Mode::ecb ? ByteSpan() : ByteSpan(kIv); }

std::vector<uint8_t> reference(const CipherName& name, Direction direction, const std::vector<uint8_t>& in) {
  std::vector<uint8_t> out(in.size());
  create_cipher_stream(name, direction, kKey, iv_for(name), "", "cpu")->update(in.data(), out.data(), in.size());
  return out;
}

TransformOptions small_jobs(uint64_t job_len, size_t depth) {
  TransformOptions options;
  options.job_len = job_len;
  options.depth = depth;
  return options;
}

// Fed in odd pieces; `in_place`: each piece handed over with `keep` (read where it lies).
std::vector<uint8_t> through_stream(const CipherName& name, Direction direction, const std::vector<uint8_t>& in,
                                    bool in_place, size_t depth) {
  TransformStream stream(name, direction, kKey, iv_for(name), small_jobs(4096, depth));
  std::vector<uint8_t> out;
  const size_t steps[] = {1, 15, 17, 4095, 4096, 4097, 9000, 30000};
  auto append = [&out](uint64_t ready) {
    out.resize(out.size() + ready);
    return MutableByteSpan(out.data() + out.size() - ready, ready);
  };
  for (size_t position = 0, i = 0; position < in.size(); ++i) {
    const size_t take = std::min(steps[i % std::size(steps)], in.size() - position);
    const auto piece = std::make_shared<std::vector<uint8_t>>(in.begin() + position, in.begin() + position + take);
    if (in_place)
      stream.update(*piece, append, piece);
    else
      stream.update(*piece, append);
    position += take;
  }
  stream.finalize(append);
  return out;
}

void every_mode_equals_one_stream() {
  const Mode modes[] = {Mode::ecb, Mode::cbc, Mode::cfb, Mode::ofb, Mode::ctr};
  for (const char* cipher : {"aes-256", "camellia-256"}) {
    for (Mode mode : modes) {
      const CipherName name = parse_cipher_name(std::string(cipher) + "-" + std::string(mode_name(mode)));
      const size_t len = (mode == Mode::ecb || mode == Mode::cbc) ? 100000 - 100000 % 16 : 100003;
      const std::vector<uint8_t> in = random_bytes(len, static_cast<unsigned>(len) + static_cast<unsigned>(mode));
      for (Direction direction : {Direction::encrypt, Direction::decrypt}) {
        const std::vector<uint8_t> expected = reference(name, direction, in);
        const std::string what = name.canonical + (direction == Direction::encrypt ? " encrypt" : " decrypt");
        for (size_t depth : {size_t{0}, size_t{1}, size_t{3}}) {
          check(through_stream(name, direction, in, false, depth) == expected, what + ": stream, staged");
          check(through_stream(name, direction, in, true, depth) == expected, what + ": stream, read in place");
        }
        std::vector<uint8_t> inplace = in;
        transform_range(name, direction, kKey, iv_for(name), inplace, inplace, small_jobs(4096, 2));
        check(inplace == expected, what + ": transform_range in place");
        // out one block after in, within one buffer: as if in were copied first
        std::vector<uint8_t> shifted(len + 16);
        std::copy(in.begin(), in.end(), shifted.begin());
        transform_range(name, direction, kKey, iv_for(name), ByteSpan(shifted.data(), len),
                        MutableByteSpan(shifted.data() + 16, len), small_jobs(4096, 2));
        check(std::equal(expected.begin(), expected.end(), shifted.begin() + 16), what + ": transform_range shifted");
      }
    }
  }
}

void progress_devices_and_end() {
  const CipherName ctr = parse_cipher_name("aes-128-ctr");
  const std::vector<uint8_t> key(16, 1);
  TransformOptions options = small_jobs(1000, 2);  // rounded down to 992
  uint64_t reported = 0, calls = 0;
  options.progress = [&](uint64_t count) { reported += count, ++calls; };
  TransformStream stream(ctr, Direction::encrypt, key, kIv, options);
  check(stream.job_len() == 992, "job_len rounded down to whole blocks");
  check(stream.devices() == std::vector<std::string>{"cpu"}, "devices as given");
  const std::vector<uint8_t> in = random_bytes(5000, 7);
  std::vector<uint8_t> out = stream.update(in);
  const std::vector<uint8_t> rest = stream.finalize();
  out.insert(out.end(), rest.begin(), rest.end());
  check(out.size() == 5000 && reported == 5000 && calls == 6, "progress per job, every byte");
  check(stream.closed(), "finalize closes");
  check(stream.stats().devices.at(0).bytes == 5000, "stats kept after close");
  bool refused = false;
  try {
    stream.update(in);
  } catch (const std::invalid_argument& e) {
    refused = std::string(e.what()).find("finalized") != std::string::npos;
  }
  check(refused, "update after finalize refused");

  // Serial directions run on one device (the CPU when among them), default job lengths.
  TransformOptions two;
  two.devices = {"cpu", "cpu"};
  TransformStream serial(parse_cipher_name("aes-128-ofb"), Direction::encrypt, key, kIv, two);
  check(serial.devices().size() == 1 && serial.job_len() == (4u << 20), "serial: one device, 4 MiB jobs with the CPU");
}

void refusals() {
  const std::vector<uint8_t> key(16, 1);
  auto refuses = [](const std::function<void()>& call, const std::string& words, const std::string& what) {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      check(std::string(e.what()).find(words) != std::string::npos, what + ": " + e.what());
      return;
    }
    check(false, what + ": not refused");
  };
  const CipherName gcm = parse_cipher_name("aes-128-gcm"), ctr = parse_cipher_name("aes-128-ctr");
  refuses([&] { TransformStream(gcm, Direction::encrypt, key, ByteSpan(kIv).first(12), {}); }, "ECB/CBC/CFB/OFB/CTR",
          "GCM");
  refuses([&] { TransformStream(ctr, Direction::encrypt, ByteSpan(key).first(15), kIv, {}); }, "key", "short key");
  TransformStream ecb(parse_cipher_name("aes-128-ecb"), Direction::encrypt, key, {}, small_jobs(64, 0));
  ecb.update(std::vector<uint8_t>(100));
  refuses([&] { ecb.finalize(); }, "multiple of 16 bytes in all", "ECB of 100 bytes");
  check(ecb.closed(), "an error ends the stream");
}

}  // namespace

int main() {
  every_mode_equals_one_stream();
  progress_devices_and_end();
  refusals();
  return test_support::report();
}
