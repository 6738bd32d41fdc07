// test_format_pipeline.cpp: the file format memory to memory in C++ (format.hpp: seal_buffer /
// open_buffer over seal_body / open_body). Files it writes are read by the streaming Opener and
// the other way round (the Python suite checks both against an independent decoder); many
// small jobs are in flight; a tampered chunk yields DecryptionError for it, its released_len, and
// zeros after the authenticated prefix; bad lengths and overlapping buffers are refused. The
// streaming ChunkStream writes the same files and reads them back, job by job.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
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
  // layout_for_file after a header of any length (version 2's stanzas): the same chunks after it.
  const uint64_t longer = format::kHeaderLen + 300;
  check(format::layout_for_file(layout.file_len() + 300, kChunkLen, longer).plaintext_len == plaintext.size() &&
            format::layout_for_file(layout.file_len(), kChunkLen).plaintext_len == plaintext.size(),
        "layout_for_file after an 80-byte and a 380-byte header");
  std::string why;
  try {
    format::layout_for_file(layout.file_len() + 300 - format::kTagLen, kChunkLen, longer);
  } catch (const format::DecryptionError& error) {
    why = error.what();
  }
  check(why.find("the final chunk is missing") != std::string::npos, "a missing final chunk after a longer header: " + why);
  why.clear();
  try {
    format::layout_for_file(longer - 1, kChunkLen, longer);
  } catch (const format::DecryptionError&) {
    why = "DecryptionError";
  } catch (const format::FormatError& error) {
    why = error.what();
  }
  check(why == "file shorter than its 380-byte header", "a file shorter than its header: " + why);
}

// ChunkStream: the pipeline fed job by job. `job_chunks` lists each job's whole input units
// before the last, as far as the input has them; the last job gets the rest. Returns the output retired, in order, and the
// DecryptionError if one was thrown.
struct StreamRun {
  std::vector<uint8_t> out;
  std::optional<format::DecryptionError> failure;
  std::vector<uint64_t> retired_ids;
};

StreamRun run_stream(format::ChunkStream::Operation operation, ByteSpan payload_key, ByteSpan input,
                     const std::vector<uint64_t>& job_chunks, bool trailing = false) {
  StreamRun run;
  std::vector<std::vector<uint8_t>> outputs;
  std::unique_ptr<format::ChunkStream> stream;
  stream = std::make_unique<format::ChunkStream>(operation, payload_key, kChunkLen, small_jobs(),
                                                 [&](uint64_t id, uint64_t, uint64_t len) {
                                                   run.retired_ids.push_back(id);
                                                   run.out.insert(run.out.end(), outputs[id].begin(),
                                                                  outputs[id].begin() + len);
                                                 });
  outputs.reserve(job_chunks.size() + 1);
  try {
    size_t at = 0;
    for (size_t job = 0;; ++job) {
      const bool last = job == job_chunks.size() || at + job_chunks[job] * stream->input_unit_len() > input.size();
      const size_t len = last ? input.size() - at : job_chunks[job] * stream->input_unit_len();
      outputs.emplace_back(stream->output_capacity(len));
      stream->submit(job, input.subspan(at, len), outputs.back(), last, last && trailing);
      at += len;
      if (last) break;
    }
    stream->drain();
  } catch (const format::DecryptionError& error) {
    run.failure.emplace(error);
  }
  return run;
}

void chunk_stream_matches_the_buffer_pipeline() {
  using Operation = format::ChunkStream::Operation;
  for (size_t len : {size_t(0), size_t(kChunkLen), size_t(5 * kChunkLen + 7), size_t(12 * kChunkLen)}) {
    const auto plaintext = random_bytes(len, unsigned(len) + 11);
    const std::string name = "stream of " + std::to_string(len) + " bytes";
    uint8_t payload_key[format::kKeyLen];
    std::vector<uint8_t> file = format::build_header_with_key(kKey, kChunkLen, payload_key);
    const ByteSpan key(payload_key, format::kKeyLen);
    // Jobs of 1, 3, 0 (a pipe that had nothing) and 2 chunks, as a reader fills them; the rest last.
    const std::vector<uint64_t> jobs{1, 3, 0, 2};
    const StreamRun sealed = run_stream(Operation::seal, key, plaintext, jobs);
    file.insert(file.end(), sealed.out.begin(), sealed.out.end());
    check(!sealed.failure && file.size() == format::Layout{kChunkLen, len}.file_len(), name + ": sealed length");
    bool in_order = !sealed.retired_ids.empty();
    for (size_t i = 0; i < sealed.retired_ids.size(); ++i) in_order = in_order && sealed.retired_ids[i] == i;
    check(in_order, name + ": jobs retire in order");
    std::vector<uint8_t> opened(len);
    check(format::open_buffer(kKey, file, opened) == len && opened == plaintext, name + ": open_buffer reads it");

    const ByteSpan body = ByteSpan(file).subspan(format::kHeaderLen);
    const StreamRun reopened = run_stream(Operation::open, key, body, {2, 1});
    check(!reopened.failure && reopened.out == plaintext, name + ": ChunkStream opens it");
    // Truncated at a chunk boundary (the final chunk missing) and inside the final tag.
    const size_t full = kChunkLen + format::kTagLen;
    if (len >= kChunkLen) {
      const StreamRun missing = run_stream(Operation::open, key, body.first(full), {});
      check(missing.failure && missing.failure->chunk_index == 1 && missing.out == std::vector<uint8_t>(
                plaintext.begin(), plaintext.begin() + kChunkLen) && missing.failure->released_len == kChunkLen,
            name + ": final chunk missing, the first chunk released");
    }
    const StreamRun short_tag = run_stream(Operation::open, key, body.first(body.size() - (len % kChunkLen) - 1), {});
    check(short_tag.failure && short_tag.failure->chunk_index == len / kChunkLen, name + ": final tag cut short");
    const StreamRun extended = run_stream(Operation::open, key, body, {}, true);
    check(extended.failure && extended.failure->chunk_index == len / kChunkLen &&
              extended.out.size() == len / kChunkLen * kChunkLen,
          name + ": data after the final chunk: its plaintext is not released");
    if (len > 2 * kChunkLen) {
      auto changed = std::vector<uint8_t>(body.begin(), body.end());
      changed[2 * full + 1] ^= 1;
      const StreamRun tampered = run_stream(Operation::open, key, changed, {1, 3});
      check(tampered.failure && tampered.failure->chunk_index == 2 && tampered.failure->released_len == 2 * kChunkLen &&
                tampered.out == std::vector<uint8_t>(plaintext.begin(), plaintext.begin() + 2 * kChunkLen),
            name + ": a modified chunk: the chunks before it only");
    }
  }
  uint8_t key[format::kKeyLen] = {};
  format::ChunkStream stream(format::ChunkStream::Operation::seal, ByteSpan(key, sizeof key), kChunkLen, small_jobs(),
                             [](uint64_t, uint64_t, uint64_t) {});
  std::vector<uint8_t> in(kChunkLen + 1), out(2 * kChunkLen + 3 * format::kTagLen);
  check(throws_invalid_argument([&] { stream.submit(0, in, out, false); }), "a job of part of a chunk before the end");
  check(throws_invalid_argument([&] { stream.submit(0, in, MutableByteSpan(out).first(10), true); }),
        "an output too small for the job");
}

// seal_stream / open_stream: a reader that hands out odd-sized pieces, many small jobs; the files
// are open_buffer's and seal_buffer's; a modified chunk writes only the chunks before it.
format::StreamReader reader_of(ByteSpan data, size_t& at, size_t piece) {
  return [data, &at, piece](MutableByteSpan buffer) {
    const size_t n = std::min({piece, buffer.size(), data.size() - at});
    std::memcpy(buffer.data(), data.data() + at, n);
    at += n;
    return n;
  };
}

void streams_through_callbacks() {
  for (size_t len : {size_t(0), size_t(kChunkLen), size_t(29 * kChunkLen + 3)}) {
    const auto plaintext = random_bytes(len, unsigned(len) + 5);
    const std::string name = "seal_stream of " + std::to_string(len) + " bytes";
    std::vector<uint8_t> file;
    size_t at = 0;
    const uint64_t sealed_len = format::seal_stream(
        kKey, reader_of(plaintext, at, 1000), [&](ByteSpan b) { file.insert(file.end(), b.begin(), b.end()); },
        kChunkLen, small_jobs());
    check(sealed_len == len && file.size() == format::Layout{kChunkLen, len}.file_len(), name + ": lengths");
    std::vector<uint8_t> opened(len);
    check(format::open_buffer(kKey, file, opened) == len && opened == plaintext, name + ": open_buffer reads it");
    const auto other = format::seal_buffer(kKey, plaintext, kChunkLen);
    std::vector<uint8_t> streamed;
    at = 0;
    const uint64_t opened_len = format::open_stream(
        kKey, reader_of(other, at, 777), [&](ByteSpan b) { streamed.insert(streamed.end(), b.begin(), b.end()); },
        small_jobs());
    check(opened_len == len && streamed == plaintext, name + ": open_stream reads seal_buffer's file");
  }
  const auto plaintext = random_bytes(20 * kChunkLen, 9);
  auto file = format::seal_buffer(kKey, plaintext, kChunkLen);
  file[format::kHeaderLen + 9 * (kChunkLen + format::kTagLen) + 5] ^= 1;
  std::vector<uint8_t> streamed;
  size_t at = 0;
  uint64_t failed = UINT64_MAX, released = UINT64_MAX;
  try {
    format::open_stream(kKey, reader_of(file, at, 4096),
                        [&](ByteSpan b) { streamed.insert(streamed.end(), b.begin(), b.end()); }, small_jobs());
  } catch (const format::DecryptionError& error) {
    failed = error.chunk_index, released = error.released_len;
  }
  check(failed == 9 && released == 9 * kChunkLen &&
            streamed == std::vector<uint8_t>(plaintext.begin(), plaintext.begin() + 9 * kChunkLen),
        "open_stream of a modified chunk 9: chunks 0..8 written, then DecryptionError");
  std::vector<uint8_t> none;
  at = 0;
  std::string message;
  try {
    format::open_stream(kKey, reader_of(ByteSpan(file).first(50), at, 4096), [&](ByteSpan) {});
  } catch (const format::FormatError& error) {
    message = error.what();
  }
  check(message.find("file truncated inside the header (50 of 80 bytes)") != std::string::npos, "open_stream of 50 bytes: " + message);
}

// The known-answer check before a device's first chunk: every CPU AES variant that runs GCM
// passes it; a wrong answer (one tag bit) is refused with DeviceError naming device and variant.
void known_answer_check() {
  for (const VariantInfo& v : list_variants()) {
    if (v.backend != "cpu" || v.algorithm != "aes") continue;
    bool passed = false;
    try {
      format::check_device_answers("cpu", v.name);
      passed = true;
    } catch (const std::invalid_argument&) {
      continue;  // a variant without GCM
    } catch (const DeviceError&) {
    }
    check(passed, "cpu/" + v.name + ": the known-answer check passes");
  }
  const format::detail::GcmAnswer wrong[] = {
      {"268ed1b5d7c9c7304f9cae5fc437b4cd3aebe2ec65f0d85c3918d3d3b5bba89b", "9ed9d8180564e0e945f5e5d4",
       "fe29a40d8ebf57262bdb87191d01843f4ca4b2de97d88273154a0b7d9e2fdb80",
       "791a4a026f16f3a5ea06274bf02baab469860abde5e645f3dd473a5acddeecfc" "05b2b74db0662550435ef1900e136b14"}};
  std::string message;
  try {
    format::detail::check_gcm_answers("cpu", "aes_openssl", wrong);
  } catch (const DeviceError& error) {
    message = error.what();
  }
  check(message.find("device 'cpu' failed the file format's known-answer check") != std::string::npos &&
            message.find("aes_openssl") != std::string::npos,
        "a wrong known answer is refused: " + message);
}

// hash_file: a regular file's digest through the positional reader equals create_hash over the
// same bytes, for a sponge and a tree hash, across its 8 MiB blocks and KT's leaves, from an
// offset; a pipe is refused (streams are the caller's to read).
void hash_file_equals_the_in_memory_hash() {
  char path[] = "/tmp/gpucrypt-hash-file-XXXXXX";
  const int fd = ::mkstemp(path);
  check(fd >= 0, "mkstemp");
  ::unlink(path);
  const size_t block = format::kHashFileBlockLen;
  for (size_t len : {size_t(0), size_t(8191), size_t(8192), size_t(3 * 8192 + 1), block, 2 * block + 3 * 8192 + 5}) {
    const auto data = random_bytes(len, unsigned(len) + 11);
    check(::ftruncate(fd, 0) == 0 && ::pwrite(fd, data.data(), len, 0) == ssize_t(len), "writing the file");
    for (const auto& [name, out_len] : {std::pair<std::string, size_t>{"sha3-256", 32}, {"kt128", 32}, {"shake256", 70}}) {
      for (uint64_t offset : {uint64_t(0), uint64_t(5)}) {
        if (offset > len) continue;
        auto context = hash::create_hash(name, {});
        context->update(data.data() + offset, len - offset);
        std::vector<uint8_t> expected(out_len);
        context->finalize(expected.data(), out_len);
        format::FileHashStats stats;
        const auto digest = format::hash_file(fd, offset, name, {}, out_len, {}, 2, &stats);
        check(digest == expected && stats.bytes == len - offset,
              name + " of " + std::to_string(len) + " bytes from " + std::to_string(offset) + ": hash_file's digest");
      }
    }
  }
  // Many readers sharing each block's pieces (2 MiB each; blocks here of 3 MiB and 8 KiB, so the
  // last piece of every block is short and the slots wrap many times), against one reader.
  {
    const size_t len = 40 * size_t(1 << 20) + 12345;
    const auto data = random_bytes(len, 77);
    check(::ftruncate(fd, 0) == 0 && ::pwrite(fd, data.data(), len, 0) == ssize_t(len), "writing the file");
    format::PipelineOptions options;
    options.job_len = (3 << 20) + 8192;
    for (const std::string name : {"kt128", "sha3-256"}) {
      auto context = hash::create_hash(name, {});
      context->update(data.data() + 7, len - 7);
      std::vector<uint8_t> expected(32);
      context->finalize(expected.data(), 32);
      for (unsigned readers : {1u, 3u, 16u})
        check(format::hash_file(fd, 7, name, {}, 32, options, readers) == expected,
              name + " with " + std::to_string(readers) + " readers of 2 MiB pieces: hash_file's digest");
      // Blocks of one KT leaf: the hashing thread takes runs of many read blocks at once, cut
      // where the ring wraps and where a block is not read yet.
      format::PipelineOptions one_leaf = options;
      one_leaf.job_len = 8192;
      for (unsigned readers : {2u, 16u})
        check(format::hash_file(fd, 7, name, {}, 32, one_leaf, readers) == expected,
              name + " in 8 KiB blocks, " + std::to_string(readers) + " readers: hash_file's digest");
    }
  }
  // Stopped after its first block, while that block's chaining values may still be absorbing on
  // the absorber's thread: the stop reaches the caller (a cancellation as Cancelled, a progress
  // callback's error as itself), and hash_file returns only once that thread is done. Then the
  // same file hashes right again.
  const auto data = random_bytes(3 * block, 7);
  check(::ftruncate(fd, 0) == 0 && ::pwrite(fd, data.data(), data.size(), 0) == ssize_t(data.size()),
        "writing the file");
  for (const bool by_cancel : {true, false}) {
    format::PipelineOptions options;
    options.job_len = block;  // three blocks
    uint64_t polls = 0;
    if (by_cancel)
      options.cancelled = [&] { return ++polls > 1; };
    else
      options.progress = [](uint64_t) { throw std::runtime_error("progress failed"); };
    std::string stopped;
    try {
      format::hash_file(fd, 0, "kt128", {}, 32, options, 2);
    } catch (const std::runtime_error& e) {
      stopped = e.what();
    }
    check(stopped == (by_cancel ? "cancelled" : "progress failed"),
          std::string("kt128 stopped by ") + (by_cancel ? "a cancellation" : "progress") + ": got '" + stopped + "'");
  }
  auto context = hash::create_hash("kt128", {});
  context->update(data.data(), data.size());
  std::vector<uint8_t> expected(32);
  context->finalize(expected.data(), 32);
  check(format::hash_file(fd, 0, "kt128", {}, 32, {}, 2) == expected, "kt128 after the stopped hashes");
  // A named CPU variant (options.variant) hashes every byte in that variant's one context, a tree's
  // leaves too, on the CPU; one that does not exist is refused before any read.
  for (const std::string name : {"sha3-256", "kt128"}) {
    format::PipelineOptions options;
    options.variant = "keccak_portable";
    auto portable = hash::create_hash(name, {}, "keccak_portable");
    portable->update(data.data(), data.size());
    std::vector<uint8_t> wanted(32);
    portable->finalize(wanted.data(), 32);
    format::FileHashStats stats;
    check(format::hash_file(fd, 0, name, {}, 32, options, 2, &stats) == wanted && stats.device == "cpu" &&
              stats.bytes == data.size(),
          name + " in the variant keccak_portable");
    options.variant = "no_such_variant";
    check(throws_invalid_argument([&] { format::hash_file(fd, 0, name, {}, 32, options, 2); }),
          name + ": an unknown variant is refused");
  }
  ::close(fd);
  int pipe_fds[2];
  check(::pipe(pipe_fds) == 0, "pipe");
  check(throws_invalid_argument([&] { format::hash_file(pipe_fds[0], 0, "sha3-256", {}, 32); }),
        "hash_file refuses a pipe");
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

// direct_input: the file pipeline reading with O_DIRECT (aligned blocks around each job's range;
// the sealed file's jobs start at unaligned offsets) writes and reads the same files as through
// the page cache. Skipped where /tmp has no O_DIRECT.
void direct_input_reads_the_same_files() {
  auto temp_file = [] {
    char path[] = "/tmp/gpucrypt-direct-XXXXXX";
    const int fd = ::mkstemp(path);
    check(fd >= 0, "mkstemp");
    ::unlink(path);
    return fd;
  };
  for (size_t len : {size_t(0), size_t(4095), size_t(100 * kChunkLen + 7), size_t(3 << 20) + 5}) {
    const auto plaintext = random_bytes(len, unsigned(len) + 3);
    const int plain = temp_file(), sealed = temp_file(), opened = temp_file();
    check(::pwrite(plain, plaintext.data(), len, 0) == ssize_t(len), "writing the plaintext");
    format::PipelineOptions options = small_jobs();
    options.direct_input = true;
    const std::vector<uint8_t> header(format::kHeaderLen, 0);  // opaque to seal_file
    uint8_t payload_key[format::kKeyLen];
    std::memset(payload_key, 7, sizeof payload_key);
    const std::string name = "direct_input, " + std::to_string(len) + " bytes";
    try {
      format::seal_file(plain, 0, sealed, 0, header, ByteSpan(payload_key, format::kKeyLen), kChunkLen, options);
    } catch (const format::FileError& error) {
      ::close(plain), ::close(sealed), ::close(opened);
      if (error.code().value() != EINVAL) throw;
      std::printf("skipped: /tmp has no O_DIRECT\n");
      return;
    }
    const format::FileRun run =
        format::open_file(sealed, format::kHeaderLen, opened, 0, ByteSpan(payload_key, format::kKeyLen), kChunkLen, options);
    std::vector<uint8_t> back(len);
    check(run.output_len == len && ::pread(opened, back.data(), len, 0) == ssize_t(len) && back == plaintext,
          name + ": sealed and opened back");
    ::close(plain), ::close(sealed), ::close(opened);
  }
}

// seal_stream_fd / open_stream_fd / hash_stream_fd: a pipe fed by a slow producer in odd-sized
// pieces (the first bytes handed over as already read, the read end non-blocking: EAGAIN waits in
// poll) seals to a file that opens back through a pipe; a tampered chunk leaves the output holding
// only the authenticated prefix; the pipe's digest is the in-memory one.
int temp_fd(const char* what) {
  char path[] = "/tmp/gpucrypt-stream-fd-XXXXXX";
  const int fd = ::mkstemp(path);
  check(fd >= 0, what);
  ::unlink(path);
  return fd;
}

// A pipe whose write end a thread feeds `bytes` from `skip` on, in pieces with pauses; the read end
// non-blocking. join() before reading the result.
struct FedPipe {
  int read_fd = -1;
  std::thread feeder;
  FedPipe(const std::vector<uint8_t>& bytes, size_t skip) {
    int fds[2];
    check(::pipe(fds) == 0, "pipe");
    read_fd = fds[0];
    ::fcntl(read_fd, F_SETFL, ::fcntl(read_fd, F_GETFL) | O_NONBLOCK);
    feeder = std::thread([&bytes, skip, write_fd = fds[1]] {
      std::mt19937 rng(unsigned(bytes.size()));
      for (size_t at = skip; at < bytes.size();) {
        const size_t n = std::min<size_t>(bytes.size() - at, 1 + rng() % 3000);
        const ssize_t written = ::write(write_fd, bytes.data() + at, n);
        if (written > 0) at += size_t(written);
        if (rng() % 8 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(8));  // past kStreamIdleMs
      }
      ::close(write_fd);
    });
  }
  ~FedPipe() {
    if (feeder.joinable()) feeder.join();
    ::close(read_fd);
  }
};

std::vector<uint8_t> file_bytes(int fd) {
  std::vector<uint8_t> bytes(size_t(::lseek(fd, 0, SEEK_END)));
  check(::pread(fd, bytes.data(), bytes.size(), 0) == ssize_t(bytes.size()), "reading back");
  return bytes;
}

// On tmpfs the mapped output allocates each job's pages as the job is written (MADV_POPULATE_WRITE):
// a file system that someone else fills during the run is the output's ENOSPC, not a SIGBUS that
// kills the process. A real 4 MiB tmpfs (root and mount(2); skipped with the reason elsewhere),
// filled by the first job's progress.
void mapped_output_on_a_tmpfs_filled_during_the_run_is_enospc() {
  char dir[] = "/tmp/gpucrypt-small-tmpfs-XXXXXX";
  check(::mkdtemp(dir) != nullptr, "mkdtemp");
  if (::mount("tmpfs", dir, "tmpfs", 0, "size=4m") != 0) {
    std::printf("skipped: mapped output on a full tmpfs (cannot mount a tmpfs: %s)\n", std::strerror(errno));
    ::rmdir(dir);
    return;
  }
  ::setenv("GPUCRYPT_FILE_MAPPED_OUTPUT", "1", 1);
  const size_t len = 3 << 20;
  const auto plaintext = random_bytes(len, 77);
  char plain_path[] = "/dev/shm/gpucrypt-plain-XXXXXX";
  const int plain = ::mkstemp(plain_path);
  check(plain >= 0, "mkstemp");
  ::unlink(plain_path);
  check(::pwrite(plain, plaintext.data(), len, 0) == ssize_t(len), "writing the plaintext");
  const std::string out_path = std::string(dir) + "/out", filler_path = std::string(dir) + "/filler";
  const int out = ::open(out_path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  check(out >= 0, "opening the output");
  format::PipelineOptions options = small_jobs();
  bool filled = false;
  options.progress = [&](uint64_t) {
    if (filled) return;
    filled = true;
    const int filler = ::open(filler_path.c_str(), O_WRONLY | O_CREAT, 0600);
    const std::vector<uint8_t> block(64 << 10, 1);
    while (::write(filler, block.data(), block.size()) > 0) {
    }
    ::close(filler);
  };
  const std::vector<uint8_t> header(format::kHeaderLen, 0x5c);
  uint8_t payload_key[format::kKeyLen];
  std::memset(payload_key, 9, sizeof payload_key);
  int code = 0;
  bool on_output = false;
  try {
    format::seal_file(plain, 0, out, 0, header, ByteSpan(payload_key, format::kKeyLen), kChunkLen, options);
  } catch (const format::FileError& error) {
    code = error.code().value();
    on_output = error.on_output;
  }
  check(filled && code == ENOSPC && on_output,
        "a tmpfs filled during a mapped run: the output's ENOSPC, got errno " + std::to_string(code));
  ::close(out), ::close(plain);
  ::unsetenv("GPUCRYPT_FILE_MAPPED_OUTPUT");
  ::umount2(dir, MNT_DETACH);
  ::rmdir(dir);
}

// GPUCRYPT_FILE_MAPPED_OUTPUT=1: the file pipeline writes each job's output by a copy into a shared
// mapping of the output's range (after the output's header offset and behind bytes already there),
// the same bytes as its pwrites; a tampered chunk still leaves only the authenticated prefix; a
// value other than 0, 1 or auto is refused, naming the variable.
void mapped_output_writes_the_same_files() {
  auto temp_file = [] {
    char path[] = "/dev/shm/gpucrypt-mapped-XXXXXX";  // tmpfs: fallocate, so the mapping is taken
    const int fd = ::mkstemp(path);
    check(fd >= 0, "mkstemp");
    ::unlink(path);
    return fd;
  };
  const std::vector<uint8_t> header(format::kHeaderLen, 0x5c);  // opaque to seal_file
  uint8_t payload_key[format::kKeyLen];
  std::memset(payload_key, 9, sizeof payload_key);
  const ByteSpan key(payload_key, format::kKeyLen);
  for (size_t len : {size_t(0), size_t(4095), size_t(100 * kChunkLen + 7), size_t(3 << 20) + 5}) {
    const auto plaintext = random_bytes(len, unsigned(len) + 29);
    const int plain = temp_file();
    check(::pwrite(plain, plaintext.data(), len, 0) == ssize_t(len), "writing the plaintext");
    std::vector<uint8_t> written[2], opened_bytes[2];
    for (int mapped : {0, 1}) {
      ::setenv("GPUCRYPT_FILE_MAPPED_OUTPUT", mapped ? "1" : "0", 1);
      const int sealed = temp_file(), opened = temp_file();
      check(::pwrite(sealed, "prefix", 6, 0) == 6 && ::pwrite(opened, "abc", 3, 0) == 3, "the outputs' own bytes");
      format::seal_file(plain, 0, sealed, 6, header, key, kChunkLen, small_jobs());
      format::open_file(sealed, 6 + format::kHeaderLen, opened, 3, key, kChunkLen, small_jobs());
      written[mapped] = file_bytes(sealed);
      opened_bytes[mapped] = file_bytes(opened);
      ::close(sealed), ::close(opened);
    }
    const std::string name = "mapped output, " + std::to_string(len) + " bytes";
    check(written[1] == written[0], name + ": the sealed file equals the pwrite pipeline's");
    check(opened_bytes[1].size() == len + 3 && std::equal(plaintext.begin(), plaintext.end(), opened_bytes[1].begin() + 3) &&
              std::memcmp(opened_bytes[1].data(), "abc", 3) == 0,
          name + ": opened back after the output's first bytes");
    // A chunk in the middle tampered with: only the prefix before it stays; the first: nothing.
    for (uint64_t bad : {uint64_t{40}, uint64_t{0}}) {
      if (len <= 50 * kChunkLen) break;
      std::vector<uint8_t> changed = written[1];
      changed[6 + format::kHeaderLen + bad * (kChunkLen + format::kTagLen) + 1] ^= 1;
      const int sealed = temp_file(), opened = temp_file();
      check(::pwrite(sealed, changed.data(), changed.size(), 0) == ssize_t(changed.size()), "writing the tampered file");
      uint64_t released = UINT64_MAX;
      try {
        format::open_file(sealed, 6 + format::kHeaderLen, opened, 0, key, kChunkLen, small_jobs());
      } catch (const format::DecryptionError& error) {
        released = error.released_len;
      }
      const std::vector<uint8_t> kept = file_bytes(opened);
      check(released == bad * kChunkLen && kept.size() == released &&
                std::equal(kept.begin(), kept.end(), plaintext.begin()),
            name + ": a tampered chunk " + std::to_string(bad) + " leaves the chunks before it");
      ::close(sealed), ::close(opened);
    }
    ::close(plain);
  }
  ::setenv("GPUCRYPT_FILE_MAPPED_OUTPUT", "yes", 1);
  const int plain = temp_file(), sealed = temp_file();
  check(::pwrite(plain, "x", 1, 0) == 1, "writing the plaintext");
  std::string message;
  try {
    format::seal_file(plain, 0, sealed, 0, header, key, kChunkLen, small_jobs());
  } catch (const std::invalid_argument& error) {
    message = error.what();
  }
  check(message.find("GPUCRYPT_FILE_MAPPED_OUTPUT") != std::string::npos && message.find("yes") != std::string::npos,
        "a value other than 0, 1 or auto is refused: " + message);
  ::close(plain), ::close(sealed);
  ::unsetenv("GPUCRYPT_FILE_MAPPED_OUTPUT");
}

void streams_between_descriptors() {
  uint8_t payload_key[format::kKeyLen];
  std::memset(payload_key, 9, sizeof payload_key);
  const ByteSpan key(payload_key, format::kKeyLen);
  for (size_t len : {size_t(0), size_t(5), size_t(4 * kChunkLen), size_t(37 * kChunkLen + 3), size_t(200000)}) {
    const auto plaintext = random_bytes(len, unsigned(len) + 21);
    const std::string name = "stream_fd, " + std::to_string(len) + " bytes";
    const size_t ahead = std::min<size_t>(len, 10);
    const int sealed = temp_fd("sealed");
    std::vector<uint64_t> progress;
    format::PipelineOptions options = small_jobs();
    options.progress = [&](uint64_t done) { progress.push_back(done); };
    {
      FedPipe input(plaintext, ahead);
      const format::FileRun run = format::seal_stream_fd(input.read_fd, ByteSpan(plaintext.data(), ahead), false, sealed,
                                                         key, kChunkLen, options);
      check(run.input_len == len && progress.size() >= 1 && progress.back() == len, name + ": sealed every byte");
    }
    const auto body = file_bytes(sealed);
    const format::Layout layout{kChunkLen, len};
    check(body.size() == layout.file_len() - format::kHeaderLen, name + ": the body's length");
    const int opened = temp_fd("opened");
    {
      FedPipe input(body, 0);
      const format::FileRun run = format::open_stream_fd(input.read_fd, {}, false, opened, key, kChunkLen, small_jobs());
      check(run.output_len == len && file_bytes(opened) == plaintext, name + ": opened back through a pipe");
    }
    if (len > 2 * kChunkLen) {
      auto tampered = body;
      tampered[(kChunkLen + format::kTagLen) * 2 + 1] ^= 1;  // chunk 2
      check(::ftruncate(opened, 0) == 0 && ::lseek(opened, 0, SEEK_SET) == 0, "emptying the output");
      FedPipe input(tampered, 0);
      bool failed = false;
      try {
        format::open_stream_fd(input.read_fd, {}, false, opened, key, kChunkLen, small_jobs());
      } catch (const format::DecryptionError& error) {
        failed = error.chunk_index == 2 && error.released_len == 2 * kChunkLen;
      }
      const auto out = file_bytes(opened);
      check(failed && out == std::vector<uint8_t>(plaintext.begin(), plaintext.begin() + 2 * kChunkLen),
            name + ": a tampered chunk leaves only the authenticated prefix written");
    }
    {
      FedPipe input(plaintext, ahead);
      auto context = hash::create_hash("kt128", {});
      context->update(plaintext.data(), len);
      std::vector<uint8_t> expected(32);
      context->finalize(expected.data(), 32);
      format::PipelineOptions blocks;
      blocks.job_len = 1000;
      format::FileHashStats stats;
      const auto digest = format::hash_stream_fd(input.read_fd, ByteSpan(plaintext.data(), ahead), false, "kt128", {},
                                                 32, blocks, &stats);
      check(digest == expected && stats.bytes == len, name + ": hash_stream_fd's digest");
    }
    ::close(sealed), ::close(opened);
  }
}


// build_header / open_header (either version for what the caller holds, Python's one call each): a
// key's and a passphrase's header open with the same secret only, naming a mismatch; version 2
// around the stanzas `wrap` returns opens with the file key it was handed; a work factor out of range
// and scrypt's memory are refused before any work.
template <typename Error, typename F>
std::string thrown(F&& f) {
  try {
    f();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

void headers_of_either_version() {
  using Kind = format::HeaderSecret::Kind;
  const std::vector<uint8_t> passphrase_bytes{'p', 'w'};
  const format::HeaderSecret key{Kind::key, kKey, {}}, passphrase{Kind::passphrase, passphrase_bytes, {}};
  uint8_t built[format::kKeyLen], opened[format::kKeyLen];
  for (const auto* secret : {&key, &passphrase}) {
    const std::string name = secret == &key ? "a key's header" : "a passphrase's header";
    const auto header = format::build_header(*secret, 1, kChunkLen, {}, std::nullopt, built);
    const format::OpenedHeader at = format::open_header(header, *secret, 22, std::nullopt, opened);
    check(at.chunk_len == kChunkLen && at.header_len == format::kHeaderLen && std::memcmp(built, opened, 32) == 0,
          name + ": opens with its secret to the same payload key");
    const auto& other = secret == &key ? passphrase : key;
    check(thrown<format::FormatError>([&] { format::open_header(header, other, 22, std::nullopt, opened); })
                  .find("but a") != std::string::npos,
          name + ": the other kind of secret is named");
    check(thrown<format::FormatError>([&] { format::open_header(header, {}, 22, std::nullopt, opened); })
                  .find("identities cannot open it") != std::string::npos,
          name + ": no version 1 secret");
    auto tampered = header;
    tampered[20] ^= 1;  // the salt
    check(!thrown<format::DecryptionError>([&] { format::open_header(tampered, *secret, 22, std::nullopt, opened); })
               .empty(),
          name + ": a modified header fails its MAC");
  }
  check(thrown<format::FormatError>([&] { format::build_header(passphrase, 23, kChunkLen, {}, std::nullopt, built); })
                .find("must be 1..22") != std::string::npos,
        "a work factor out of range");
  check(thrown<format::FormatError>([&] { format::build_header(passphrase, 12, kChunkLen, {}, int64_t(1), built); })
                .find("needs 4 MiB of memory") != std::string::npos,
        "scrypt's memory is checked first");
  // A cgroup's room counts its file cache as free: a container at its limit (memory.current ==
  // memory.max), most of it cache, still runs scrypt.
  const std::string stat = "anon 3221225472\nfile 130000000000\nshmem 1073741824\nactive_file 60000000000\n"
                           "inactive_file 68926258176\nunevictable 0\n";
  check(format::cgroup_memory_room("137438953472\n", "137438953472\n", stat) == int64_t(128926258176),
        "a cgroup at its limit with its cache: the cache is room");
  check(format::cgroup_memory_room("137438953472\n", "137438953472\n", "anon 137438953472\n") == 0,
        "a cgroup at its limit with no cache: no room");
  check(format::cgroup_memory_room("1000\n", "3000\n", "active_file 5000\n") == 1000,
        "cache counted beyond the usage cannot make more room than the limit");
  check(!format::cgroup_memory_room("max\n", "137438953472\n", stat) && !format::cgroup_memory_room("", "", ""),
        "no limit, or no cgroup v2 files: nothing to bound");
  check(thrown<format::FormatError>([&] { format::check_scrypt_memory(10, format::cgroup_memory_room("137438953472", "137438953472", stat)); })
            .empty(),
        "scrypt 2^10 runs in a cgroup full of cache");
  std::vector<uint8_t> file_key;
  format::HeaderSecret recipients;
  recipients.wrap = [&](ByteSpan fresh) {
    file_key.assign(fresh.begin(), fresh.end());
    return std::vector<std::pair<uint8_t, std::vector<uint8_t>>>{{2, std::vector<uint8_t>(64, 0x33)}};  // key-file
  };
  const auto header = format::build_header(recipients, 1, kChunkLen, {}, std::nullopt, built);
  const format::HeaderSecret unwrapped{Kind::file_key, file_key, {}};
  const format::OpenedHeader at = format::open_header(header, unwrapped, 22, std::nullopt, opened);
  check(file_key.size() == 32 && header[8] == 2 && at.header_len == header.size() && std::memcmp(built, opened, 32) == 0,
        "version 2: opens with the file key its stanzas wrap");
  auto wrong = file_key;
  wrong[0] ^= 1;
  const format::HeaderSecret wrong_key{Kind::file_key, wrong, {}};
  check(!thrown<format::DecryptionError>([&] { format::open_header(header, wrong_key, 22, std::nullopt, opened); })
             .empty(),
        "version 2: another file key fails the MAC");
}

// seal_ends / open_ends: regular files at offsets take the file pipeline and are left after what
// was read and written; a pipe streams; nowhere authenticates only; direct I/O is refused off the
// file pipeline.
void ends_choose_their_path() {
  const auto plaintext = random_bytes(9 * kChunkLen + 5, 77);
  const std::vector<uint8_t> header(format::kHeaderLen, 0x48);
  const format::Layout layout{kChunkLen, plaintext.size()};
  const int plain = temp_fd("plain"), sealed = temp_fd("sealed"), opened = temp_fd("opened");
  check(::pwrite(plain, "abc", 3, 0) == 3 && ::pwrite(plain, plaintext.data(), plaintext.size(), 3) == ssize_t(plaintext.size()),
        "writing the input");
  const format::InputEnd in{plain, 3, {}, false};
  format::OutputEnd out;
  out.fd = sealed, out.offset = 5;
  check(format::ends_by_offset(in, out), "regular files at offsets go by offset");
  const format::FileRun run = format::seal_ends(in, out, header, kKey, kChunkLen, small_jobs());
  check(run.input_len == plaintext.size() && ::lseek(plain, 0, SEEK_CUR) == off_t(3 + plaintext.size()) &&
            ::lseek(sealed, 0, SEEK_CUR) == off_t(5 + layout.file_len()),
        "seal_ends: both descriptors stand after what was read and written");
  format::OutputEnd to;
  to.fd = opened, to.offset = 0;
  const format::FileRun back =
      format::open_ends({sealed, off_t(5 + format::kHeaderLen), {}, false}, to, kKey, kChunkLen, small_jobs());
  check(back.output_len == plaintext.size() && file_bytes(opened) == plaintext, "open_ends: the plaintext back");
  format::OutputEnd nowhere;
  nowhere.discard = true;
  check(format::open_ends({sealed, off_t(5 + format::kHeaderLen), {}, false}, nowhere, kKey, kChunkLen).output_len ==
            plaintext.size(),
        "open_ends: nowhere authenticates the whole file");
  std::vector<uint8_t> streamed;
  format::OutputEnd writer;
  writer.write = [&](ByteSpan bytes) { streamed.insert(streamed.end(), bytes.begin(), bytes.end()); };
  {
    FedPipe input(plaintext, 0);
    const format::InputEnd piped{input.read_fd, -1, {}, false};
    check(!format::ends_by_offset(piped, out), "a pipe streams");
    format::seal_ends(piped, writer, header, kKey, kChunkLen, small_jobs());
  }
  const auto body = file_bytes(sealed);
  check(streamed == std::vector<uint8_t>(body.begin() + 5, body.end()), "the stream writes the same file, header first");
  format::PipelineOptions direct = small_jobs();
  direct.direct_input = true;
  {
    FedPipe input(plaintext, 0);
    check(throws_invalid_argument([&] {
            format::seal_ends({input.read_fd, -1, {}, false}, writer, header, kKey, kChunkLen, direct);
          }),
          "direct I/O is refused on a stream");
  }
  ::close(plain), ::close(sealed), ::close(opened);
}

// A caller's reader (InputEnd::read, Python's file objects with no descriptor) in short pieces:
// the same file as the buffer pipeline writes, and back; more after its reported end is trailing
// data; its own exception stops the stream and leaves as it is.
void ends_read_through_a_reader() {
  const auto plaintext = random_bytes(11 * kChunkLen + 9, 78);
  std::mt19937 rng(79);
  const auto reader_of = [&rng](const std::vector<uint8_t>& data, size_t& position) {
    return [&rng, &data, &position](MutableByteSpan buffer) -> size_t {
      const size_t n = std::min({buffer.size(), data.size() - position, size_t(1 + rng() % 100)});
      std::memcpy(buffer.data(), data.data() + position, n);
      position += n;
      return n;
    };
  };
  std::vector<uint8_t> sealed;
  format::OutputEnd to_sealed;
  to_sealed.write = [&](ByteSpan bytes) { sealed.insert(sealed.end(), bytes.begin(), bytes.end()); };
  uint8_t payload_key[format::kKeyLen];
  const std::vector<uint8_t> header = format::build_header_with_key(kKey, kChunkLen, payload_key);
  const ByteSpan key(payload_key, format::kKeyLen);
  size_t position = 0;
  format::InputEnd in;
  in.read = reader_of(plaintext, position);
  check(!format::ends_by_offset(in, to_sealed), "a reader streams");
  check(format::seal_ends(in, to_sealed, header, key, kChunkLen, small_jobs()).input_len == plaintext.size(),
        "seal_ends from a reader: every byte read");
  std::vector<uint8_t> opened(plaintext.size());
  check(format::open_buffer(kKey, sealed, opened) == plaintext.size() && opened == plaintext,
        "the reader's file opens as a whole file");

  const std::vector<uint8_t> body(sealed.begin() + format::kHeaderLen, sealed.end());
  std::vector<uint8_t> back;
  format::OutputEnd to_plain;
  to_plain.write = [&](ByteSpan bytes) { back.insert(back.end(), bytes.begin(), bytes.end()); };
  position = 0;
  in.read = reader_of(body, position);
  check(format::open_ends(in, to_plain, key, kChunkLen, small_jobs()).output_len == plaintext.size() &&
            back == plaintext,
        "open_ends from a reader: the plaintext back");

  // A file appended to while read: the reader says "end" once, then gives more.
  bool reported_end = false;
  position = 0;
  back.clear();
  in.read = [&](MutableByteSpan buffer) -> size_t {
    if (position == body.size() && !reported_end) {
      reported_end = true;
      return 0;
    }
    if (position == body.size()) {
      buffer[0] = 1;
      return 1;
    }
    const size_t n = std::min(buffer.size(), body.size() - position);
    std::memcpy(buffer.data(), body.data() + position, n);
    position += n;
    return n;
  };
  try {
    format::open_ends(in, to_plain, key, kChunkLen, small_jobs());
    check(false, "data after the reported end is refused");
  } catch (const format::DecryptionError& error) {
    // The final chunk's own plaintext is never released: the file it ends is not the one read.
    const size_t before_final = plaintext.size() / kChunkLen * kChunkLen;
    check(std::string(error.what()).find("trailing data after final chunk 11") != std::string::npos &&
              back == std::vector<uint8_t>(plaintext.begin(), plaintext.begin() + before_final) &&
              error.released_len == before_final,
          "trailing data after the final chunk, once the chunks before it were written");
  }

  // The reader's own failure mid-way leaves as it is, once the jobs in flight stopped.
  position = 0;
  in.read = [&](MutableByteSpan buffer) -> size_t {
    if (position >= 5 * kChunkLen) throw std::runtime_error("the source went away");
    const size_t n = std::min<size_t>(buffer.size(), kChunkLen);
    position += n;
    return n;
  };
  try {
    format::seal_ends(in, to_sealed, header, key, kChunkLen, small_jobs());
    check(false, "a failing reader stops the stream");
  } catch (const std::runtime_error& error) {
    check(std::string(error.what()) == "the source went away", "the reader's exception leaves unchanged");
  }
}

// A caller's writer that takes short pieces (writing_all: OutputEnd::write of Python's file objects with no
// descriptor, fileformat.write_all): the whole file reaches it, in order; a writer that takes nothing is
// FileError EAGAIN on the output, one claiming more than it was given is refused, and its own exception
// stops the stream and leaves as it is.
void ends_write_through_a_partial_writer() {
  const auto plaintext = random_bytes(7 * kChunkLen + 5, 81);
  std::mt19937 rng(82);
  uint8_t payload_key[format::kKeyLen];
  const std::vector<uint8_t> header = format::build_header_with_key(kKey, kChunkLen, payload_key);
  const ByteSpan key(payload_key, format::kKeyLen);
  size_t position = 0;
  format::InputEnd in;
  in.read = [&](MutableByteSpan buffer) -> size_t {
    const size_t n = std::min(buffer.size(), plaintext.size() - position);
    std::memcpy(buffer.data(), plaintext.data() + position, n);
    position += n;
    return n;
  };
  std::vector<uint8_t> sealed;
  size_t calls = 0;
  format::OutputEnd out;
  out.write = format::writing_all([&](ByteSpan bytes) -> size_t {
    ++calls;
    const size_t n = std::min(bytes.size(), size_t(1 + rng() % 50));
    sealed.insert(sealed.end(), bytes.begin(), bytes.begin() + n);
    return n;
  });
  const format::FileRun run = format::seal_ends(in, out, header, key, kChunkLen, small_jobs());
  std::vector<uint8_t> opened(plaintext.size());
  check(header.size() + run.output_len == sealed.size() && calls > sealed.size() / 50 &&
            std::equal(header.begin(), header.end(), sealed.begin()) &&
            format::open_buffer(kKey, sealed, opened) == plaintext.size() && opened == plaintext,
        "writing_all: short counts are followed by the rest, in order");

  const auto refusal = [&](format::PartialWriter write_some) -> std::string {
    position = 0;
    out.write = format::writing_all(std::move(write_some));
    try {
      format::seal_ends(in, out, header, key, kChunkLen, small_jobs());
    } catch (const format::FileError& error) {
      return error.code().value() == EAGAIN && error.on_output ? std::string("EAGAIN ") + error.what() : "";
    } catch (const std::invalid_argument& error) {
      return error.what();
    } catch (const std::runtime_error& error) {
      return std::string("runtime ") + error.what();
    }
    return "";
  };
  size_t taken = 0;
  check(refusal([&](ByteSpan bytes) -> size_t {
          const size_t n = taken < 300 ? std::min<size_t>(bytes.size(), 100) : 0;
          taken += n;
          return n;
        }).find("EAGAIN writing the output (it accepted no bytes") == 0,
        "a writer that takes nothing is EAGAIN on the output, not a loss");
  check(refusal([](ByteSpan bytes) -> size_t { return bytes.size() + 1; }) ==
            "the output said it took " + std::to_string(header.size() + 1) + " bytes of the " +
                std::to_string(header.size()) + " it was given",
        "a writer claiming more than it was given is refused");
  taken = 0;
  check(refusal([&](ByteSpan bytes) -> size_t {
          if (taken > 3 * kChunkLen) throw std::runtime_error("the destination went away");  // after the header
          taken += bytes.size();
          return bytes.size();
        }) == "runtime the destination went away",
        "the writer's own exception leaves as it is");
}

// The suites and the in-memory pipeline's device choice are the library's (Python asks for them).
void suites_and_buffer_devices() {
  check(format::suite_name(1) == "AES-256-GCM" && format::suite_of_aead("aes-256-gcm") == 1, "suite 1 both ways");
  const auto refused = [](auto&& call) {
    try {
      call();
    } catch (const format::FormatError& error) {
      return std::string(error.what()).find("unknown cipher suite") == 0;
    }
    return false;
  };
  check(refused([] { format::suite_name(2); }) && refused([] { format::suite_of_aead("rot13"); }),
        "an unknown suite is a FormatError naming it");
  // Pageable buffers (a GPU would copy them through staging): the CPU alone, with or without a GPU.
  const std::vector<uint8_t> in(4096), out(4096 + 16);
  const DeviceSelection chosen = format::buffer_devices(in, out);
  check(chosen.devices == std::vector<std::string>{"cpu"} && chosen.cpu_share == 1.0,
        "pageable buffers run on the CPU alone");
}

// hash_ends: a regular file at an offset by hash_file, left at its end; a reader (no descriptor) by the
// stream hasher on its reader thread; the same digest as create_hash either way.
void hash_ends_takes_a_file_or_a_reader() {
  const auto data = random_bytes(3 * 8192 + 77, 80);
  auto context = hash::create_hash("kt128", {});
  context->update(data.data() + 5, data.size() - 5);
  std::vector<uint8_t> expected(32);
  context->finalize(expected.data(), expected.size());
  const int fd = temp_fd("hash-ends");
  check(::pwrite(fd, data.data(), data.size(), 0) == ssize_t(data.size()), "writing the file");
  format::FileHashStats stats;
  check(format::hash_ends({fd, 5, {}, false}, "kt128", {}, 32, {}, &stats) == expected &&
            stats.bytes == data.size() - 5 && ::lseek(fd, 0, SEEK_CUR) == off_t(data.size()),
        "hash_ends of a regular file from an offset, left at its end");
  ::close(fd);
  size_t position = 5;
  format::InputEnd in;
  in.read = [&](MutableByteSpan buffer) -> size_t {
    const size_t n = std::min<size_t>({buffer.size(), data.size() - position, 1000});
    std::memcpy(buffer.data(), data.data() + position, n);
    position += n;
    return n;
  };
  format::PipelineOptions options;
  options.job_len = 8192;
  check(format::hash_ends(in, "kt128", {}, 32, options, &stats) == expected && stats.bytes == data.size() - 5 &&
            stats.device == "cpu",
        "hash_ends through a reader, on the CPU");
  // A digest longer than the memory available: bad_alloc before the input is read, whatever the
  // kernel's overcommit would grant (the CLI's `-l 2^40` on a GPU host ran into the OOM killer).
  const size_t too_long = size_t(std::max<int64_t>(format::available_memory_len().value_or(int64_t(1) << 40), 0)) + 1;
  position = 5;
  bool refused = false;
  try {
    format::hash_ends(in, "shake128", {}, too_long, options);
  } catch (const std::bad_alloc&) {
    refused = true;
  }
  check(refused && position == 5, "hash_ends refuses a digest longer than the memory available, reading nothing");
}

// AtomicOutput::write: every byte at the descriptor's position, the output appearing whole at
// commit(); a failed write (a full device, a file size limit on the temporary file) is a PathError
// naming the path given, never the temporary, and discard() leaves nothing; no write after the end.
void atomic_output_writes_and_names_its_errors() {
  char directory[] = "/tmp/gpucrypt-atomic-write-XXXXXX";
  check(::mkdtemp(directory) != nullptr, "mkdtemp");
  const std::string target = std::string(directory) + "/out";
  const auto data = random_bytes(100000, 3);
  for (const bool anonymous : {true, false}) {
    ::unlink(target.c_str());
    format::AtomicOutput out(target, {true, -1, -1, anonymous});
    out.write(ByteSpan(data.data(), 1000));
    out.write(ByteSpan(data.data() + 1000, data.size() - 1000));
    check(::access(target.c_str(), F_OK) != 0, "nothing at the target before commit");
    out.commit();
    std::vector<uint8_t> back(data.size() + 1);
    const int fd = ::open(target.c_str(), O_RDONLY);
    check(fd >= 0 && ::read(fd, back.data(), back.size()) == ssize_t(data.size()) &&
              std::equal(data.begin(), data.end(), back.begin()),
          std::string("the written bytes, committed (") + (anonymous ? "anonymous" : "named") + ")");
    ::close(fd);
    bool refused = false;
    try {
      out.write(ByteSpan(data.data(), 1));
    } catch (const std::logic_error&) {
      refused = true;
    }
    check(refused, "no write after commit");
  }
  auto failure_of = [&](const std::string& path, bool anonymous) -> std::pair<int, std::string> {
    try {
      format::AtomicOutput out(path, {true, -1, -1, anonymous});
      out.write(ByteSpan(data.data(), data.size()));
      out.commit();
    } catch (const format::PathError& error) {
      return {error.code().value(), error.path()};
    }
    return {0, ""};
  };
  if (::access("/dev/full", W_OK) == 0) {
    const auto [code, path] = failure_of("/dev/full", true);
    check(code == ENOSPC && path == "/dev/full", "a full device: ENOSPC naming /dev/full, got " + path);
  }
  // A file size limit (SIGXFSZ ignored: EFBIG instead) meets the temporary file's write.
  struct rlimit before {};
  ::getrlimit(RLIMIT_FSIZE, &before);
  struct rlimit small = before;
  small.rlim_cur = 4096;
  void (*old_handler)(int) = ::signal(SIGXFSZ, SIG_IGN);
  ::setrlimit(RLIMIT_FSIZE, &small);
  const std::string other = std::string(directory) + "/limited";
  for (const bool anonymous : {true, false}) {
    const auto [code, path] = failure_of(other, anonymous);
    check(code == EFBIG && path == other, "a file size limit: EFBIG naming the target, got " + path);
  }
  ::setrlimit(RLIMIT_FSIZE, &before);
  ::signal(SIGXFSZ, old_handler);
  DIR* listing = ::opendir(directory);
  int entries = 0;
  while (const dirent* entry = ::readdir(listing)) entries += entry->d_name[0] != '.' || std::strlen(entry->d_name) > 2;
  ::closedir(listing);
  check(entries == 1, "only the committed output is left (no temporary, no partial target)");
  ::unlink(target.c_str());
  ::rmdir(directory);
}
}  // namespace

int main() {
  hash_file_equals_the_in_memory_hash();
  atomic_output_writes_and_names_its_errors();
  direct_input_reads_the_same_files();
  mapped_output_writes_the_same_files();
  mapped_output_on_a_tmpfs_filled_during_the_run_is_enospc();
#if defined(GPUCRYPT_WITH_OPENSSL)
  round_trips();
  tampering_keeps_the_authenticated_prefix();
  bad_arguments();
  chunk_stream_matches_the_buffer_pipeline();
  known_answer_check();
  streams_through_callbacks();
  streams_between_descriptors();
  headers_of_either_version();
  ends_choose_their_path();
  ends_read_through_a_reader();
  ends_write_through_a_partial_writer();
  suites_and_buffer_devices();
  hash_ends_takes_a_file_or_a_reader();
#else
  std::printf("skipped: the format's header needs OpenSSL\n");
#endif
  return gpucrypt::test_support::report();
}
