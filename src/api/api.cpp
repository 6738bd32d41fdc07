// api.cpp: name parsing and the dispatch from the public API to a backend.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <thread>

#include "backends/backend.hpp"
#include "backends/block_engine.hpp"
#include "backends/opencl/opencl.hpp"
#include "gpucrypt/gpucrypt.hpp"
#include "modes/xts.hpp"

namespace gpucrypt {

namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

[[noreturn]] void bad_cipher_name(std::string_view name, std::string_view why) {
  throw std::invalid_argument("unknown cipher '" + std::string(name) + "': " + std::string(why) +
                              " (expected ALGORITHM-KEYBITS-MODE, e.g. aes-256-ctr; algorithms "
                              "aes, camellia, sc2000; key bits 128, 192, 256; modes ecb, cbc, "
                              "cfb, ofb, ctr, xts, gcm)");
}

[[noreturn]] void no_cuda(std::string_view device) {
  throw DeviceError("device '" + std::string(device) + "' is not available: " +
                    cuda_unavailable_reason());
}

[[maybe_unused]] [[noreturn]] void no_opencl(std::string_view device) {
  throw DeviceError("device '" + std::string(device) + "' is not available: " + opencl_unavailable_reason());
}

}  // namespace

DeviceName parse_device_name(std::string_view device) {
  const std::string name = lower(device);
  auto unknown = [&]() -> DeviceName {
    throw std::invalid_argument("unknown device '" + std::string(device) +
                                "': expected cpu, cuda, cuda:N, opencl or opencl:N");
  };
  if (name == "cpu") return {"cpu", 0, "cpu"};
  for (const std::string kind : {"cuda", "opencl"}) {
    if (name == kind) return {kind, 0, kind + ":0"};
    if (!name.starts_with(kind + ":")) continue;
    int index = -1;
    const char* digits = name.data() + kind.size() + 1;
    const auto [end, error] = std::from_chars(digits, name.data() + name.size(), index);
    if (digits == name.data() + name.size() || error != std::errc() || end != name.data() + name.size() || index < 0)
      return unknown();
    return {kind, index, kind + ":" + std::to_string(index)};
  }
  return unknown();
}

std::string_view algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::aes: return "aes";
    case Algorithm::camellia: return "camellia";
    case Algorithm::sc2000: return "sc2000";
  }
  return "?";
}

std::string_view mode_name(Mode m) {
  switch (m) {
    case Mode::ecb: return "ecb";
    case Mode::cbc: return "cbc";
    case Mode::cfb: return "cfb";
    case Mode::ofb: return "ofb";
    case Mode::ctr: return "ctr";
    case Mode::xts: return "xts";
    case Mode::gcm: return "gcm";
  }
  return "?";
}

CipherName parse_cipher_name(std::string_view name) {
  const std::string s = lower(name);
  const size_t first = s.find('-');
  const size_t second = first == std::string::npos ? first : s.find('-', first + 1);
  if (second == std::string::npos || s.find('-', second + 1) != std::string::npos)
    bad_cipher_name(name, "wrong shape");
  const std::string algorithm = s.substr(0, first);
  const std::string bits = s.substr(first + 1, second - first - 1);
  const std::string mode = s.substr(second + 1);
  CipherName r{};
  if (algorithm == "aes") r.algorithm = Algorithm::aes;
  else if (algorithm == "camellia") r.algorithm = Algorithm::camellia;
  else if (algorithm == "sc2000") r.algorithm = Algorithm::sc2000;
  else bad_cipher_name(name, "unknown algorithm '" + algorithm + "'");
  if (bits == "128") r.key_bits = 128;
  else if (bits == "192") r.key_bits = 192;
  else if (bits == "256") r.key_bits = 256;
  else bad_cipher_name(name, "unknown key size '" + bits + "'");
  static const Mode modes[] = {Mode::ecb, Mode::cbc, Mode::cfb, Mode::ofb,
                               Mode::ctr, Mode::xts, Mode::gcm};
  bool found = false;
  for (Mode m : modes)
    if (mode == mode_name(m)) { r.mode = m; found = true; }
  if (!found) bad_cipher_name(name, "unknown mode '" + mode + "'");
  if (r.mode == Mode::xts && r.key_bits == 192)
    bad_cipher_name(name, "XTS is defined for 128- and 256-bit keys only");
  r.canonical = algorithm + "-" + bits + "-" + mode;
  return r;
}

void secure_zero(void* p, size_t len) { modes::secure_zero(p, len); }

std::vector<VariantInfo> list_variants() {
  std::vector<VariantInfo> all = cpu::variants();
#if defined(GPUCRYPT_WITH_CUDA)
  for (auto& v : cuda::variants()) all.push_back(v);
#endif
#if defined(GPUCRYPT_WITH_OPENCL)
  for (auto& v : opencl::variants()) all.push_back(v);
#endif
  return all;
}

std::string constant_time_variant(std::string_view algorithm, std::string_view device, std::string_view mode) {
  const std::string_view backend = device.substr(0, device.find(':'));
  for (const VariantInfo& v : list_variants())  // fastest first within a backend and algorithm
    if (v.backend == backend && v.algorithm == algorithm && v.constant_time &&
        (v.only_mode.empty() || v.only_mode == mode))
      return v.name;
  throw std::invalid_argument("no constant-time " + std::string(algorithm) + " variant on " + std::string(device) +
                              "; name a variant explicitly to accept a table-based one");
}

std::string cuda_unavailable_reason() {
#if defined(GPUCRYPT_WITH_CUDA)
  return cuda::unavailable_reason();
#else
  return "this build of gpucrypt has no CUDA backend (built without a CUDA toolkit)";
#endif
}

std::string opencl_unavailable_reason() {
#if defined(GPUCRYPT_WITH_OPENCL)
  return opencl::unavailable_reason();
#else
  return "this build of gpucrypt has no OpenCL backend (built without the OpenCL headers)";
#endif
}

std::vector<DeviceInfo> list_devices() {
  DeviceInfo cpu_device;
  cpu_device.name = "cpu";
  cpu_device.kind = "cpu";
  cpu_device.type = "cpu";
  cpu_device.num_compute_units = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cpu_device.description = std::to_string(cpu_device.num_compute_units) + " hardware threads";
  std::vector<DeviceInfo> all{cpu_device};
#if defined(GPUCRYPT_WITH_CUDA)
  for (auto& d : cuda::devices()) all.push_back(d);
#endif
#if defined(GPUCRYPT_WITH_OPENCL)
  for (auto& d : opencl::devices()) all.push_back(d);
#endif
  return all;
}

std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& name, Direction direction,
                                                   ByteSpan key, ByteSpan iv,
                                                   std::string_view variant,
                                                   std::string_view device) {
  if (name.mode == Mode::gcm)
    throw std::invalid_argument(name.canonical + " is an AEAD: use AEAD, not Cipher");
  if (key.size() != name.key_len())
    throw std::invalid_argument(name.canonical + " needs a " + std::to_string(name.key_len()) +
                                "-byte key, got " + std::to_string(key.size()) + " bytes");
  check_cipher_iv(name, iv);
  if (name.mode == Mode::xts) {
    // IEEE 1619-2018 5.1 requires distinct halves; equal halves make XTS a weaker mode. Compared
    // in constant time, as everywhere else (the key is secret).
    if (!modes::xts_key_halves_differ(key.data(), key.size()))
      throw std::invalid_argument(name.canonical + ": the two key halves must differ");
  }
  const DeviceName where = parse_device_name(device);  // a malformed name is the caller's error, GPU or not
  if (where.kind == "cpu") return cpu::create_cipher_stream(name, direction, key, iv, variant);
  if (where.kind == "opencl") {
#if defined(GPUCRYPT_WITH_OPENCL)
    return opencl::create_cipher_stream(name, direction, key, iv, variant, where.index);
#else
    no_opencl(device);
#endif
  }
#if defined(GPUCRYPT_WITH_CUDA)
  if (cuda::device_count() == 0) no_cuda(device);
  return cuda::create_cipher_stream(name, direction, key, iv, variant, where.index);
#else
  no_cuda(device);
#endif
}

std::unique_ptr<GcmCipher> create_gcm(const CipherName& name, ByteSpan key,
                                      std::string_view variant, std::string_view device) {
  if (name.mode != Mode::gcm)
    throw std::invalid_argument(name.canonical + " is not an AEAD (use a -gcm name)");
  if (key.size() != name.key_len())
    throw std::invalid_argument(name.canonical + " needs a " + std::to_string(name.key_len()) +
                                "-byte key, got " + std::to_string(key.size()) + " bytes");
  const DeviceName where = parse_device_name(device);
  if (where.kind == "cpu") return cpu::create_gcm(name, key, variant);
  if (where.kind == "opencl") {
#if defined(GPUCRYPT_WITH_OPENCL)
    return opencl::create_gcm(name, key, variant, where.index);
#else
    no_opencl(device);
#endif
  }
#if defined(GPUCRYPT_WITH_CUDA)
  if (cuda::device_count() == 0) no_cuda(device);
  return cuda::create_gcm(name, key, variant, where.index);
#else
  no_cuda(device);
#endif
}

}  // namespace gpucrypt
