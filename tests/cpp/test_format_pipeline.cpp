// test_format_pipeline.cpp: the file format memory to memory in C++ (format.hpp: seal_buffer /
// open_buffer over seal_body / open_body). Files it writes are read by the streaming Opener and
// the other way round (the Python suite checks both against an independent decoder); many
// small jobs are in flight; a tampered chunk yields DecryptionError for it, its released_len, and
// zeros after the authenticated prefix; bad lengths and overlapping buffers are refused.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpucrypt/format.hpp"
#include "test_support.hpp"

using namespace gpucrypt;
using gpucrypt::test_support::check;

namespace {

const std::vector<uint8_t> kKey(32, 0x5a);
constexpr uint32_t kChunkLen = 64;

std::vector<uint8_t> random_bytes(size_t len, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(len);
  for (auto& b : bytes) b = uint8_t(rng());
  return bytes;
}

format::PipelineOptions small_jobs() {
  format::PipelineOptions options;
  options.job_len = 4 * kChunkLen;
  return options;
}

template <typename F>
bool throws_invalid_argument(F&& f) {
  try {
    f();
  } catch (const format::DecryptionError&) {
    return false;
  } catch (const std::invalid_argument&) {
    return true;
  }
  return false;
}

void round_trips() {
  for (size_t len : {size_t(0), size_t(1), size_t(kChunkLen - 1), size_t(kChunkLen), size_t(kChunkLen + 1),
                     size_t(37 * kChunkLen + 5)}) {
    const auto plaintext = random_bytes(len, unsigned(len));
    format::PipelineStats stats;
    const auto file = format::seal_buffer(kKey, plaintext, kChunkLen, small_jobs(), &stats);
    const std::string name = std::to_string(len) + " bytes";
    check(file.size() == format::Layout{kChunkLen, len}.file_len(), name + ": file length");
    check(stats.devices.size() == 1 && stats.devices[0].bytes == len &&
              stats.devices[0].jobs == (len / kChunkLen + 1 + 3) / 4,
          name + ": jobs of four chunks");
    std::vector<uint8_t> opened(len + 1, 0xaa);
    check(format::open_buffer(kKey, file, opened, small_jobs()) == len, name + ": open_buffer returns the length");
    check(std::equal(plaintext.begin(), plaintext.end(), opened.begin()) && opened[len] == 0xaa,
          name + ": open_buffer round trip, nothing written past the plaintext");
    format::Opener opener(kKey);
    std::vector<uint8_t> streamed;
    opener.update(file, streamed);
    opener.finish(streamed);
    check(streamed == plaintext, name + ": the streaming Opener reads it");
    format::Sealer sealer(kKey, kChunkLen);
    std::vector<uint8_t> sealed = sealer.header();
    sealer.update(plaintext, sealed);
    sealer.finish(sealed);
    std::vector<uint8_t> reopened(len);
    format::open_buffer(kKey, sealed, reopened);
    check(reopened == plaintext, name + ": open_buffer reads the Sealer's file");
  }
}

void tampering_keeps_the_authenticated_prefix() {
  const auto plaintext = random_bytes(40 * kChunkLen - 9, 7);
  const auto file = format::seal_buffer(kKey, plaintext, kChunkLen, small_jobs());
  for (uint64_t index : {0, 5, 13, 39}) {
    auto changed = file;
    changed[format::kHeaderLen + index * (kChunkLen + format::kTagLen) + 3] ^= 1;
    std::vector<uint8_t> out(plaintext.size(), 0xaa);
    uint64_t failed = UINT64_MAX, released = UINT64_MAX;
    try {
      format::open_buffer(kKey, changed, out, small_jobs());
    } catch (const format::DecryptionError& error) {
      failed = error.chunk_index, released = error.released_len;
    }
    const std::string name = "chunk " + std::to_string(index);
    check(failed == index && released == index * kChunkLen, name + ": DecryptionError names it, released_len");
    check(std::equal(out.begin(), out.begin() + released, plaintext.begin()), name + ": prefix kept");
    bool zeros = true;
    for (size_t i = released; i < out.size(); ++i) zeros = zeros && out[i] == 0;
    check(zeros, name + ": everything after the prefix is zero");
  }
}

void bad_arguments() {
  const auto plaintext = random_bytes(3 * kChunkLen, 3);
  auto file = format::seal_buffer(kKey, plaintext, kChunkLen);
  std::vector<uint8_t> small(file.size() - 1);
  check(throws_invalid_argument([&] { format::seal_buffer(kKey, plaintext, small, kChunkLen); }), "out too small");
  std::vector<uint8_t> short_out(plaintext.size() - 1);
  check(throws_invalid_argument([&] { format::open_buffer(kKey, file, short_out); }), "plaintext out too small");
  std::vector<uint8_t> space(plaintext.size() + file.size());
  std::memcpy(space.data(), plaintext.data(), plaintext.size());
  check(throws_invalid_argument([&] {
          format::seal_buffer(kKey, ByteSpan(space.data(), plaintext.size()), MutableByteSpan(space).subspan(8),
                              kChunkLen);
        }),
        "overlapping input and output");
  check(throws_invalid_argument([&] { format::open_buffer(kKey, file, MutableByteSpan(file).subspan(100)); }),
        "overlapping file and output");
  const format::Layout layout{kChunkLen, plaintext.size()};
  std::vector<uint8_t> body(layout.file_len() - format::kHeaderLen);
  check(throws_invalid_argument(
            [&] { format::seal_body(ByteSpan(kKey.data(), 16), layout, plaintext, body); }),
        "a 16-byte payload key");
  check(throws_invalid_argument([&] { format::seal_body(kKey, layout, ByteSpan(plaintext).first(10), body); }),
        "plaintext shorter than the layout");
  format::PipelineOptions no_devices;
  no_devices.devices.clear();
  check(throws_invalid_argument([&] { format::seal_body(kKey, layout, plaintext, body, no_devices); }), "no device");
}

}  // namespace

int main() {
#if defined(GPUCRYPT_WITH_OPENSSL)
  round_trips();
  tampering_keeps_the_authenticated_prefix();
  bad_arguments();
#else
  std::printf("skipped: the format's header needs OpenSSL\n");
#endif
  return gpucrypt::test_support::report();
}
