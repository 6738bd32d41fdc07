// device_name.cpp: parse_device_name, the one device-name parser every entry point uses (Python's
// included). It reads the kinds from the registry's list of backends (registry.cpp), so a new
// backend needs no parser change; that is why it lives in the device layer and not with the
// cipher names in src/base.
#include <charconv>

#include "base/names.hpp"
#include "device/registry.hpp"
#include "gpucrypt/cipher.hpp"

namespace gpucrypt {

namespace {

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
  const std::string name = lower_ascii(device);
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

}  // namespace gpucrypt
