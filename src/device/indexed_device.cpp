// indexed_device.cpp: the Device over a backend's table of numbered-device entry points
// (registry.hpp IndexedBackendCalls): CUDA and OpenCL.
#include "device/registry.hpp"

namespace gpucrypt::registry {

DeviceInfo IndexedDevice::info() const {
  for (DeviceInfo& d : calls_.devices())
    if (d.name == name().canonical) return d;
  const std::string reason = calls_.unavailable_reason();
  throw device_unavailable(name().canonical,
                           reason.empty() ? "no such " + std::string(calls_.label) + " device (" +
                                                std::to_string(calls_.device_count()) + " listed)"
                                          : reason);
}

DeviceBackend indexed_backend(std::string kind, const IndexedBackendCalls& calls) {
  DeviceBackend b;
  b.kind = std::move(kind);
  b.unavailable_reason = calls.unavailable_reason;
  b.devices = calls.devices;
  b.variants = calls.variants;
  return b;
}

}  // namespace gpucrypt::registry
