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
#include "gpucrypt/hash.hpp"

#if defined(GPUCRYPT_WITH_CUDA)
#include <cuda_runtime.h>

#include "backends/cuda/device.hpp"
#include "backends/cuda/keccak_cuda.hpp"
#endif

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

// Through the one device-name parser (gpucrypt.hpp): a malformed name throws there.
bool is_cuda(std::string_view device) { return parse_device_name(device).kind == "cuda"; }

#if defined(GPUCRYPT_WITH_CUDA)
int cuda_device_index(std::string_view device) { return parse_device_name(device).index; }

bool is_tree_hash(const hash::HashInfo& info) {
  return info.name.starts_with("parallelhash") || info.name.starts_with("kt");
}
#endif

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
  if (!is_cuda(request.device)) {
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
#if defined(GPUCRYPT_WITH_CUDA)
    const int device_index = cuda_device_index(request.device);
    if (!request.variant.empty() && request.variant != cuda::kKeccakVariant)
      throw std::invalid_argument("unknown variant '" + request.variant + "' for " + info.name + " on " +
                                  request.device + ": the GPU has " + std::string(cuda::kKeccakVariant));
    const uint8_t* message = buffer.data();
    const size_t message_len = buffer.size();
    timing = time_loop(
        request.seconds,
        [&] {
          if (is_tree_hash(info))
            cuda::tree_hash(info.name, {}, message, message_len, digest.data(), digest.size(), device_index);
          else
            cuda::hash_many(info.name, &message, &message_len, 1, digest.data(), digest.size(), device_index);
        },
        no_finish);
    result.variant = cuda::kKeccakVariant;
    result.device = "cuda:" + std::to_string(device_index);
#else
    throw DeviceError("device '" + request.device + "' is not available: " + cuda_unavailable_reason());
#endif
  }
  result.num_calls = timing.num_calls;
  result.seconds = timing.seconds;
  return result;
}

#if defined(GPUCRYPT_WITH_CUDA)
void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the error so that later, unrelated calls do not report it
    throw DeviceError(std::string("CUDA error in ") + what + " (speed): " + cudaGetErrorString(status));
  }
}

// Device memory on the current device, freed on scope exit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t len) { check_cuda(cudaMalloc(&data_, len == 0 ? 1 : len), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  uint8_t* get() const { return static_cast<uint8_t*>(data_); }
  void upload(const void* host, size_t len) { check_cuda(cudaMemcpy(data_, host, len, cudaMemcpyHostToDevice), "cudaMemcpy"); }

 private:
  void* data_ = nullptr;
};

void finish_default_stream() { check_cuda(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize"); }

Result resident(const Request& request, Kind kind, Result result) {
  const int device_index = cuda_device_index(request.device);
  result.device = "cuda:" + std::to_string(device_index);
  const size_t len = request.buffer_len;
  std::unique_ptr<cuda::DeviceCipher> cipher;
  std::unique_ptr<cuda::DeviceGcm> gcm;
  std::vector<uint8_t> key, iv;
  if (kind == Kind::aead && parse_aead_name(request.algorithm).construction != AeadConstruction::gcm)
    throw std::invalid_argument("device-resident timing runs GCM only, not " + request.algorithm);
  if (kind != Kind::hash) {  // created before any allocation: they check that the device exists
    const CipherName name = parse_cipher_name(request.algorithm);
    key = random_bytes(name.key_len());
    iv = random_bytes(kind == Kind::aead ? kGcmNonceLen : name.mode == Mode::ecb ? 0 : 16);
    if (kind == Kind::aead)
      gcm = cuda::DeviceGcm::create(name, key, request.variant, device_index);
    else
      cipher = cuda::DeviceCipher::create(name, request.direction, key, request.variant, device_index);
    result.variant = kind == Kind::aead ? gcm->variant().name : cipher->variant().name;
  }
  check_cuda(cudaSetDevice(device_index), "cudaSetDevice");
  DeviceBuffer input(len), output(len);
  input.upload(random_bytes(len).data(), len);
  uint8_t tag[kGcmTagLen] = {};
  std::function<void()> call;
  std::unique_ptr<DeviceBuffer> hash_offsets, hash_digest;  // the hashes' message table and output
  std::vector<uint8_t> host_digest;
  if (kind == Kind::cipher) {
    call = [&] { cipher->process(iv, input.get(), output.get(), len, nullptr); };
  } else if (kind == Kind::aead && request.direction == Direction::encrypt) {
    call = [&] { gcm->seal(iv, {}, input.get(), output.get(), len, tag, kGcmTagLen, nullptr); };
  } else if (kind == Kind::aead) {
    gcm->seal(iv, {}, input.get(), output.get(), len, tag, kGcmTagLen, nullptr);  // output: one sealed message
    call = [&] {
      if (!gcm->open(iv, {}, output.get(), input.get(), len, ByteSpan(tag, kGcmTagLen), nullptr))
        throw std::runtime_error(request.algorithm + ": a message sealed for the benchmark failed to open");
    };
  } else {
    const hash::HashInfo& info = hash::hash_info(request.algorithm);
    if (!request.variant.empty() && request.variant != cuda::kKeccakVariant)
      throw std::invalid_argument("unknown variant '" + request.variant + "' for " + info.name + " on " +
                                  result.device + ": the GPU has " + std::string(cuda::kKeccakVariant));
    result.variant = cuda::kKeccakVariant;
    host_digest.resize(hash_output_len(info));
    if (is_tree_hash(info)) {
      call = [&] {
        cuda::tree_hash_device(info.name, {}, input.get(), len, host_digest.data(), host_digest.size(), nullptr);
      };
    } else {
      const uint64_t offsets[2] = {0, len};  // one message: the whole buffer
      hash_offsets = std::make_unique<DeviceBuffer>(sizeof offsets);
      hash_offsets->upload(offsets, sizeof offsets);
      hash_digest = std::make_unique<DeviceBuffer>(host_digest.size());
      call = [&] {
        cuda::hash_many_device(info.name, input.get(), reinterpret_cast<const uint64_t*>(hash_offsets->get()),
                               nullptr, 1, hash_digest->get(), host_digest.size(), nullptr);
      };
    }
  }
  const Timing timing = time_loop(request.seconds, call, finish_default_stream);
  result.num_calls = timing.num_calls;
  result.seconds = timing.seconds;
  return result;
}
#endif

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
  std::string hashes;
  for (const hash::HashInfo& info : hash::list_hashes()) hashes += (hashes.empty() ? "" : ", ") + info.name;
  throw std::invalid_argument("unknown algorithm '" + std::string(algorithm) +
                              "': expected a cipher ALGORITHM-KEYBITS-MODE (aes, camellia, sc2000; 128, 192, "
                              "256; ecb, cbc, cfb, ofb, ctr, xts, gcm), e.g. aes-128-ctr, aes-128-gcm-siv or aes-256-gcm-siv, or a hash (" +
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
  if (request.placement == Placement::device) {
    if (!is_cuda(request.device))
      throw std::invalid_argument("device-resident timing needs a CUDA device, not '" + request.device + "'");
#if defined(GPUCRYPT_WITH_CUDA)
    return resident(request, kind, result);
#else
    throw DeviceError("device '" + request.device + "' is not available: " + cuda_unavailable_reason());
#endif
  }
  switch (kind) {
    case Kind::cipher: return host_cipher(request, parse_cipher_name(request.algorithm), result);
    case Kind::aead: return host_aead(request, parse_aead_name(request.algorithm), result);
    case Kind::hash: return host_hash(request, hash::hash_info(request.algorithm), result);
  }
  return result;
}

}  // namespace gpucrypt::speed
