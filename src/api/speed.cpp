// speed.cpp: the native timing loop behind `gpucrypt speed` (see gpucrypt/speed.hpp for what one call is).
#include "gpucrypt/speed.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "backends/cpu/thread_pool.hpp"
#include "gpucrypt/aead.hpp"
#include "gpucrypt/device.hpp"
#include "gpucrypt/hash.hpp"

namespace gpucrypt::speed {

namespace {

using Clock = std::chrono::steady_clock;

// The clock is read between batches of calls, not after each: at 16 bytes one call takes tens
// of nanoseconds, about what a clock read costs. Batches are sized from the rate so far to last
// about this long, so a cell overshoots its budget by at most this much.
constexpr double kClockReadInterval = 0.01;
constexpr size_t kGcmNonceLen = 12;
constexpr size_t kGcmTagLen = 16;
constexpr size_t kVariableOutputLen = 32;  // XOFs and ParallelHash: what speed asks of them

struct Timing {
  uint64_t num_calls = 0;
  double seconds = 0;
};

// Runs call() until `seconds` of wall clock have passed, after one untimed warm-up call (first-call
// allocations, lazy initialisation, GPU staging). finish() completes queued work (a GPU stream)
// before each clock read, so the time covers everything that was started.
Timing time_loop(double seconds, const std::function<void()>& call, const std::function<void()>& finish) {
  call();
  finish();
  const Clock::time_point start = Clock::now();
  Timing timing;
  uint64_t batch = 1;
  for (;;) {
    for (uint64_t i = 0; i < batch; ++i) call();
    finish();
    timing.num_calls += batch;
    timing.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (timing.seconds >= seconds) return timing;
    const double seconds_per_call = timing.seconds / static_cast<double>(timing.num_calls);
    const double wanted = std::min(kClockReadInterval, seconds - timing.seconds) / seconds_per_call;
    batch = static_cast<uint64_t>(std::clamp(wanted, 1.0, 2.0 * static_cast<double>(batch)));
  }
}

void no_finish() {}

std::vector<uint8_t> random_bytes(size_t len) {
  std::vector<uint8_t> bytes(len);
  std::mt19937_64 generator{std::random_device{}()};
  for (uint8_t& byte : bytes) byte = static_cast<uint8_t>(generator());
  return bytes;
}

// Whether a device hashes through its Device (a GPU: Device::hash_many / tree_hash, its backend's
// Keccak variant) rather than the CPU's hash registry. A malformed name throws here.
bool hashes_on_device(std::string_view device) { return gpucrypt::device(device).traits().is_gpu; }

bool is_tree_hash(const hash::HashInfo& info) {
  return info.name.starts_with("parallelhash") || info.name.starts_with("kt");
}

// The Keccak variant a device's backend hashes with (keccak_cuda, keccak_opencl): the one it
// lists; a variant the caller names must be it.
std::string device_keccak_variant(const Device& where, const Request& request, const hash::HashInfo& info) {
  std::string listed;
  for (const VariantInfo& v : where.variants())
    if (v.algorithm == "keccak") listed = v.name;
  if (!request.variant.empty() && request.variant != listed)
    throw std::invalid_argument("unknown variant '" + request.variant + "' for " + info.name + " on " +
                                request.device + ": the GPU has " + listed);
  return listed;
}

size_t hash_output_len(const hash::HashInfo& info) {
  return info.digest_size != 0 ? info.digest_size : kVariableOutputLen;
}

Result host_cipher(const Request& request, const CipherName& name, Result result) {
  const std::vector<uint8_t> key = random_bytes(name.key_len());
  const std::vector<uint8_t> iv = random_bytes(name.mode == Mode::ecb ? 0 : 16);
  auto stream = create_cipher_stream(name, request.direction, key, iv, request.variant, request.device);
  std::vector<uint8_t> buffer = random_bytes(request.buffer_len);
  const Timing timing = time_loop(
      request.seconds, [&] { stream->update(buffer.data(), buffer.data(), buffer.size()); }, no_finish);
  result.variant = stream->variant().name;
  result.device = stream->device();
  result.num_calls = timing.num_calls;
  result.seconds = timing.seconds;
  return result;
}

Result host_aead(const Request& request, const AeadName& name, Result result) {
  const std::vector<uint8_t> key = random_bytes(name.key_len);
  const std::vector<uint8_t> nonce = random_bytes(kGcmNonceLen);  // 12 bytes: every AEAD's
  auto gcm = create_aead(name.canonical, key, request.variant, request.device);
  std::vector<uint8_t> plaintext = random_bytes(request.buffer_len);
  std::vector<uint8_t> sealed(request.buffer_len + kGcmTagLen);
  Timing timing;
  if (request.direction == Direction::encrypt) {
    timing = time_loop(
        request.seconds, [&] { gcm->seal(nonce, {}, plaintext, kGcmTagLen, sealed.data()); }, no_finish);
  } else {
    gcm->seal(nonce, {}, plaintext, kGcmTagLen, sealed.data());
    timing = time_loop(
        request.seconds,
        [&] {
          if (!gcm->open(nonce, {}, sealed, kGcmTagLen, plaintext.data()))
            throw std::runtime_error(name.canonical + ": a message sealed for the benchmark failed to open");
        },
        no_finish);
  }
  result.variant = gcm->variant().name;
  result.device = gcm->device();
  result.num_calls = timing.num_calls;
  result.seconds = timing.seconds;
  return result;
}

Result host_hash(const Request& request, const hash::HashInfo& info, Result result) {
  const std::vector<uint8_t> buffer = random_bytes(request.buffer_len);
  std::vector<uint8_t> digest(hash_output_len(info));
  Timing timing;
  if (!hashes_on_device(request.device)) {
    const std::unique_ptr<hash::HashContext> fresh = hash::create_hash(info.name, {}, request.variant);
    timing = time_loop(
        request.seconds,
        [&] {
          const std::unique_ptr<hash::HashContext> context = fresh->clone();
          context->update(buffer.data(), buffer.size());
          context->finalize(digest.data(), digest.size());
        },
        no_finish);
    result.variant = fresh->variant();
    result.device = "cpu";
  } else {
    const Device& where = gpucrypt::device(request.device);
    result.variant = device_keccak_variant(where, request, info);
    const uint8_t* message = buffer.data();
    const size_t message_len = buffer.size();
    timing = time_loop(
        request.seconds,
        [&] {
          if (is_tree_hash(info))
            where.tree_hash(info.name, {}, message, message_len, digest.data(), digest.size());
          else
            where.hash_many(info.name, &message, &message_len, 1, digest.data(), digest.size());
        },
        no_finish);
    result.device = where.name().canonical;
  }
  result.num_calls = timing.num_calls;
  result.seconds = timing.seconds;
  return result;
}

// Device memory of `where`, freed on scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer(const Device& where, size_t len) : where_(where), data_(where.alloc_device(len)) {}
  ~DeviceBuffer() { where_.free_device(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  uint8_t* get() const { return static_cast<uint8_t*>(data_); }

 private:
  const Device& where_;
  void* data_;
};

// Placement::device: the buffers in the device's memory and its resident work (Device's
// ResidentCipher / ResidentGcm / resident_hash) on the default stream (handle 0), which is
// synchronised before every clock read.
Result resident(const Request& request, Kind kind, Result result) {
  const Device& where = gpucrypt::device(request.device);
  if (!where.resident_memory())
    throw std::invalid_argument("device-resident timing needs a CUDA device (one that works on its own memory), not '" +
                                request.device + "'");
  result.device = where.name().canonical;
  const size_t len = request.buffer_len;
  constexpr StreamHandle kDefaultStream = 0;
  std::unique_ptr<ResidentCipher> cipher;
  std::unique_ptr<ResidentGcm> gcm;
  std::vector<uint8_t> key, iv;
  if (kind == Kind::aead && parse_aead_name(request.algorithm).construction != AeadConstruction::gcm)
    throw std::invalid_argument("device-resident timing runs GCM only, not " + request.algorithm);
  if (kind != Kind::hash) {  // created before any allocation: they check that the device exists
    const CipherName name = parse_cipher_name(request.algorithm);
    key = random_bytes(name.key_len());
    iv = random_bytes(kind == Kind::aead ? kGcmNonceLen : name.mode == Mode::ecb ? 0 : 16);
    if (kind == Kind::aead)
      gcm = where.create_resident_gcm(name, key, request.variant);
    else
      cipher = where.create_resident_cipher(name, request.direction, key, request.variant);
    result.variant = kind == Kind::aead ? gcm->variant().name : cipher->variant().name;
  }
  DeviceBuffer input(where, len), output(where, len);  // alloc_device makes it the current device
  const std::vector<uint8_t> data = random_bytes(len);
  where.copy_to_device(input.get(), data.data(), len);
  uint8_t tag[kGcmTagLen] = {};
  std::function<void()> call;
  std::unique_ptr<DeviceBuffer> hash_digest;  // the hashes' output
  if (kind == Kind::cipher) {
    call = [&] { cipher->process(iv, input.get(), output.get(), len, kDefaultStream); };
  } else if (kind == Kind::aead && request.direction == Direction::encrypt) {
    call = [&] { gcm->seal(iv, {}, input.get(), output.get(), len, tag, kGcmTagLen, kDefaultStream); };
  } else if (kind == Kind::aead) {
    gcm->seal(iv, {}, input.get(), output.get(), len, tag, kGcmTagLen, kDefaultStream);  // output: one sealed message
    call = [&] {
      if (!gcm->open(iv, {}, output.get(), input.get(), len, ByteSpan(tag, kGcmTagLen), kDefaultStream))
        throw std::runtime_error(request.algorithm + ": a message sealed for the benchmark failed to open");
    };
  } else {
    const hash::HashInfo& info = hash::hash_info(request.algorithm);
    result.variant = device_keccak_variant(where, request, info);
    const size_t out_len = hash_output_len(info);
    hash_digest = std::make_unique<DeviceBuffer>(where, out_len);
    call = [&, out_len] {
      where.resident_hash(info.name, input.get(), len, hash_digest->get(), out_len, kDefaultStream);
    };
  }
  const Timing timing = time_loop(request.seconds, call, [&] { where.synchronize(kDefaultStream); });
  result.num_calls = timing.num_calls;
  result.seconds = timing.seconds;
  return result;
}

}  // namespace

Kind kind_of(std::string_view algorithm) {
  try {
    hash::hash_info(algorithm);
    return Kind::hash;
  } catch (const std::invalid_argument&) {
  }
  try {
    parse_aead_name(algorithm);  // GCM and the other AEADs (gpucrypt/aead.hpp)
    return Kind::aead;
  } catch (const std::invalid_argument&) {
  }
  try {
    parse_cipher_name(algorithm);
    return Kind::cipher;
  } catch (const std::invalid_argument&) {
  }
  std::string hashes, modes;
  for (const hash::HashInfo& info : hash::list_hashes()) hashes += (hashes.empty() ? "" : ", ") + info.name;
  for (Mode mode : list_modes()) modes += (modes.empty() ? "" : ", ") + std::string(mode_name(mode));
  throw std::invalid_argument("unknown algorithm '" + std::string(algorithm) +
                              "': expected a cipher ALGORITHM-KEYBITS-MODE (aes, camellia, sc2000; 128, 192, "
                              "256; " + modes + "), e.g. aes-128-ctr, aes-128-gcm-siv or aes-256-gcm-siv, or a hash (" +
                              hashes + ")");
}

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::cipher: return "cipher";
    case Kind::aead: return "aead";
    case Kind::hash: return "hash";
  }
  return "?";
}

Result run(const Request& request) {
  if (request.buffer_len == 0) throw std::invalid_argument("buffer length must be at least 1 byte");
  if (!(request.seconds > 0)) throw std::invalid_argument("seconds must be positive");
  const Kind kind = kind_of(request.algorithm);
  Result result;
  result.num_cpu_threads = cpu::ThreadPool::global().num_threads();
  result.algorithm = kind == Kind::hash   ? hash::hash_info(request.algorithm).name
                     : kind == Kind::aead ? parse_aead_name(request.algorithm).canonical
                                          : parse_cipher_name(request.algorithm).canonical;
  if (request.placement == Placement::device) return resident(request, kind, result);
  switch (kind) {
    case Kind::cipher: return host_cipher(request, parse_cipher_name(request.algorithm), result);
    case Kind::aead: return host_aead(request, parse_aead_name(request.algorithm), result);
    case Kind::hash: return host_hash(request, hash::hash_info(request.algorithm), result);
  }
  return result;
}

}  // namespace gpucrypt::speed
