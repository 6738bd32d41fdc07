// api.cpp: name parsing, argument checks, and the public API's way to a backend: the Device the
// registry (src/device/) gives for the device name.
#include <cctype>
#include <charconv>
#include <cstring>

#include "backends/block_engine.hpp"
#include "device/registry.hpp"
#include "gpucrypt/device.hpp"
#include "gpucrypt/cipher.hpp"
#include "modes/block_cipher.hpp"

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

// "cpu, cuda, cuda:N, opencl or opencl:N": the names the registered backends take.
std::string device_name_forms() {
  std::vector<std::string> forms;
  for (const registry::DeviceBackend& b : registry::backends()) {
    forms.push_back(b.kind);
    if (b.takes_index) forms.push_back(b.kind + ":N");
  }
  std::string text;
  for (size_t i = 0; i < forms.size(); ++i)
    text += (i == 0 ? "" : i + 1 == forms.size() ? " or " : ", ") + forms[i];
  return text;
}

}  // namespace

DeviceName parse_device_name(std::string_view device) {
  const std::string name = lower(device);
  auto unknown = [&]() -> DeviceName {
    throw std::invalid_argument("unknown device '" + std::string(device) + "': expected " + device_name_forms());
  };
  for (const registry::DeviceBackend& b : registry::backends()) {
    const std::string& kind = b.kind;
    if (name == kind) return {kind, 0, b.takes_index ? kind + ":0" : kind};
    if (!b.takes_index || !name.starts_with(kind + ":")) continue;
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
  std::vector<VariantInfo> all;
  for (const registry::DeviceBackend& b : registry::backends())
    all.insert(all.end(), b.variants().begin(), b.variants().end());
  return all;
}

std::string constant_time_variant(std::string_view algorithm, std::string_view device, std::string_view mode) {
  // The backend's variants, not a Device's: the choice is the build's, so it is answered for a
  // backend whose device is absent too (a CUDA build on a machine without a GPU), and the name is
  // read only up to ':' as it always was.
  static const std::vector<VariantInfo> none;
  const registry::DeviceBackend* backend = registry::find_backend(device.substr(0, device.find(':')));
  return registry::fastest_constant_time(backend ? backend->variants() : none, algorithm, mode, device).name;
}

std::string cuda_unavailable_reason() { return registry::find_backend("cuda")->unavailable_reason(); }

std::string opencl_unavailable_reason() { return registry::find_backend("opencl")->unavailable_reason(); }

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> all;
  for (const registry::DeviceBackend& b : registry::backends())
    for (DeviceInfo& d : b.devices()) all.push_back(std::move(d));
  return all;
}

std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& name, Direction direction,
                                                   ByteSpan key, ByteSpan iv,
                                                   std::string_view variant,
                                                   std::string_view device) {
  if (name.mode == Mode::gcm)
    throw std::invalid_argument(name.canonical + " is an AEAD: use AEAD, not Cipher");
  check_cipher_key(name, key);
  check_cipher_iv(name, iv);
  return gpucrypt::device(device).create_cipher_stream(name, direction, key, iv, variant);
}

std::unique_ptr<GcmCipher> create_gcm(const CipherName& name, ByteSpan key,
                                      std::string_view variant, std::string_view device) {
  if (name.mode != Mode::gcm)
    throw std::invalid_argument(name.canonical + " is not an AEAD (use a -gcm name)");
  check_cipher_key(name, key);
  return gpucrypt::device(device).create_gcm(name, key, variant);
}

}  // namespace gpucrypt
