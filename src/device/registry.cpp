// registry.cpp: the list of backends, gpucrypt::device(), and the parts of Device that are the same
// for every backend.
#include <algorithm>
#include "device/registry.hpp"

#include <map>
#include <mutex>

#include "gpucrypt/batch.hpp"

namespace gpucrypt {

namespace registry {

namespace {

// A backend this build does not have: its names still parse (a CUDA-less build says "no CUDA
// backend", not "unknown device"), it lists no device and no variant, and opening one says why.
DeviceBackend absent_backend(std::string kind, std::string reason) {
  DeviceBackend b;
  b.kind = std::move(kind);
  b.unavailable_reason = [reason] { return reason; };
  b.devices = [] { return std::vector<DeviceInfo>{}; };
  b.variants = []() -> const std::vector<VariantInfo>& {
    static const std::vector<VariantInfo> none;
    return none;
  };
  b.open = [reason](const DeviceName&, std::string_view as_named) -> std::unique_ptr<Device> {
    throw device_unavailable(as_named, reason);
  };
  return b;
}

}  // namespace

// The one place where backends are listed. An explicit list rather than self-registering statics:
// the library is a static archive, and the linker drops an object file that nothing references,
// registrar and all.
const std::vector<DeviceBackend>& backends() {
  static const std::vector<DeviceBackend> all = [] {
    std::vector<DeviceBackend> v{cpu_backend()};
#if defined(GPUCRYPT_WITH_CUDA)
    v.push_back(cuda_backend());
#else
    v.push_back(absent_backend("cuda", "this build of gpucrypt has no CUDA backend (built without a CUDA toolkit)"));
#endif
#if defined(GPUCRYPT_WITH_OPENCL)
    v.push_back(opencl_backend());
#else
    v.push_back(absent_backend("opencl",
                               "this build of gpucrypt has no OpenCL backend (built without the OpenCL headers)"));
#endif
    return v;
  }();
  return all;
}

const DeviceBackend* find_backend(std::string_view kind) {
  for (const DeviceBackend& b : backends())
    if (b.kind == kind) return &b;
  return nullptr;
}

DeviceError device_unavailable(std::string_view as_named, std::string_view reason) {
  return DeviceError("device '" + std::string(as_named) + "' is not available: " + std::string(reason));
}

VariantInfo fastest_constant_time(const std::vector<VariantInfo>& variants, std::string_view algorithm,
                                  std::string_view mode, std::string_view device_named) {
  const VariantInfo* slower_here = nullptr;  // taken only when nothing else runs the mode
  for (const VariantInfo& v : variants) {
    if (v.algorithm != algorithm || !v.constant_time || !(v.only_mode.empty() || v.only_mode == mode)) continue;
    if (mode.empty() || v.slower_in_mode != mode) return v;
    if (slower_here == nullptr) slower_here = &v;
  }
  if (slower_here != nullptr) return *slower_here;
  throw std::invalid_argument("no constant-time " + std::string(algorithm) + " variant on " +
                              std::string(device_named) +
                              "; name a variant explicitly to accept a table-based one");
}

}  // namespace registry

VariantInfo Device::select(Algorithm algorithm, Mode mode, bool constant_time) const {
  if (constant_time)
    return registry::fastest_constant_time(variants(), algorithm_name(algorithm), mode_name(mode), name_.canonical);
  return default_variant(algorithm, mode);
}

std::unique_ptr<Aead> Device::create_aead(const AeadName& aead, ByteSpan key, std::string_view variant) const {
  if (aead.construction == AeadConstruction::gcm) return create_gcm(aead.cipher(), key, variant);
  throw std::invalid_argument(aead.canonical + " is not available on " + name_.canonical);
}

engine::BatchResult Device::run_batch(const engine::BatchPlan& plan) const {
  return engine::run_batch_generic(plan, name_.canonical);
}

void* Device::alloc_host(size_t) const {
  throw DeviceError("device '" + name_.canonical + "' has no host memory of its own (offers_host_memory is false)");
}

void Device::free_host(void*, size_t) const {}

bool Device::holds_host_memory(const void*, size_t) const { return false; }

bool directly_copied(const std::vector<std::string>& devices, const void* memory, size_t len) {
  return std::any_of(devices.begin(), devices.end(), [&](const std::string& name) {
    return device_traits(name).is_gpu && device(name).holds_host_memory(memory, len);
  });
}

DeviceTraits Device::traits() const { return registry::find_backend(name_.kind)->traits; }

DeviceTraits device_traits(std::string_view name) {
  return registry::find_backend(parse_device_name(name).kind)->traits;  // the parser knows only registered kinds
}

namespace {
[[noreturn]] void unsupported(const DeviceName& name, std::string_view what) {
  throw DeviceError("device '" + name.canonical + "' does not support " + std::string(what));
}
constexpr std::string_view kResidentWork = "work on device memory (GPU arrays, resident timing)";
}  // namespace

std::unique_ptr<ResidentCipher> Device::create_resident_cipher(const CipherName&, Direction, ByteSpan,
                                                               std::string_view) const {
  unsupported(name_, kResidentWork);
}
std::unique_ptr<ResidentGcm> Device::create_resident_gcm(const CipherName&, ByteSpan, std::string_view) const {
  unsupported(name_, kResidentWork);
}
void* Device::alloc_device(size_t) const { unsupported(name_, kResidentWork); }
void Device::free_device(void*) const { unsupported(name_, kResidentWork); }
void Device::copy_to_device(void*, const void*, size_t) const { unsupported(name_, kResidentWork); }
void Device::synchronize(StreamHandle) const { unsupported(name_, kResidentWork); }
void Device::resident_hash(std::string_view, const void*, size_t, void*, size_t, StreamHandle) const {
  unsupported(name_, kResidentWork);
}
KernelTiming Device::time_kernel(const CipherName&, std::string_view, size_t, int) const {
  unsupported(name_, "kernel timing (time_kernel)");
}

const Device& device(std::string_view name) {
  const DeviceName where = parse_device_name(name);
  // Opened once per canonical name and kept: a backend's device state (CUDA streams, OpenCL
  // contexts) lives in the backend already, so a Device is small, and callers such as the
  // Python layer ask for one on every keyed object.
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Device>, std::less<>> opened;
  std::lock_guard lock(mutex);
  if (auto it = opened.find(where.canonical); it != opened.end()) return *it->second;
  // parse_device_name accepts only registered kinds.
  std::unique_ptr<Device> d = registry::find_backend(where.kind)->open(where, name);
  return *opened.emplace(where.canonical, std::move(d)).first->second;
}

}  // namespace gpucrypt
