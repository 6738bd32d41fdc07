// registry.hpp: what a backend registers so that gpucrypt::device() can find it, and the rules the
// registry applies to every backend alike. The list of backends is registry.cpp's backends().
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpucrypt/device.hpp"

namespace gpucrypt::registry {

// run_batch_aeads_apart: `plan` on `device` (batch_run.cpp): `executor`, the backend's batch executor,
// runs what it plans (ciphers, GCM, hashes), and each request of another AEAD construction goes
// through the device's Aead (Device::create_aead): over the thread pool on the host's CPU, one
// message after another on a GPU. A plan without such requests is the executor's alone. The CPU
// and CUDA Devices' run_batch call it; the generic executor runs every AEAD itself.
engine::BatchResult run_batch_aeads_apart(const engine::BatchPlan& plan, const Device& device,
                                          const std::function<engine::BatchResult(const engine::BatchPlan&)>& executor);

// One backend: a device kind and the factory of its devices. A backend this build lacks is still
// registered (absent_backend), so that its names parse and its errors say why it is missing.
struct DeviceBackend {
  std::string kind;          // "cpu", "cuda", "opencl": the device name before ':'
  bool takes_index = true;   // "kind:N" names (all but the CPU, which is one device)
  // Why no device of this kind works here; "" when at least one does.
  std::function<std::string()> unavailable_reason;
  // The devices present, in index order; empty when none works.
  std::function<std::vector<DeviceInfo>()> devices;
  // The variants compiled in, fastest first within an algorithm; listed whether or not a device is
  // present (they are the build's, not the machine's).
  std::function<const std::vector<VariantInfo>&()> variants;
  // open: the Device for a parsed name; `as_named` is the caller's spelling, for error messages.
  // Throws DeviceError (device_unavailable) when the backend cannot run here.
  std::function<std::unique_ptr<Device>(const DeviceName& where, std::string_view as_named)> open;
  // Optional: bring the driver and the devices of these indices (every one when empty) up ahead of
  // their first use, on the caller's thread (start_devices_early's); unset where nothing is gained.
  std::function<void(const std::vector<int>& indices)> start_up;
  // What its devices are to a caller that spreads work (Device::traits); a GPU's unless set.
  DeviceTraits traits = gpu_traits();

  // A GPU's traits: 16 MiB jobs, a transfer this large runs near PCIe speed (the file format's
  // measurements, docs/performance.md 2026-11-26/27); three workers: copy in, compute, copy out.
  static DeviceTraits gpu_traits() { return {true, 16 << 20, 3}; }
};

// The entry points of a backend whose devices are numbered and whose functions take the device
// index last (cuda::, opencl::), stated once: IndexedBackendCalls holds one pointer per entry, and
// a backend's table is GPUCRYPT_INDEXED_BACKEND_CALLS("LABEL", its namespace), which takes each
// entry from that namespace by name (so a signature that drifts fails to compile there). A new
// entry is one line here, its forwarding in IndexedDevice and the function in each such backend.
// IndexedDevice is the Device over such a table, so a backend of this shape registers its
// functions, not a class of forwarding calls (indexed_device.cpp).
// ENTRY(NS, name, result, (parameters)); comments in the list are /* */, since a // comment would
// swallow the line continuation.
#define GPUCRYPT_INDEXED_BACKEND_ENTRIES(ENTRY, NS)                                                        \
  ENTRY(NS, device_count, int, ())                                                                        \
  ENTRY(NS, unavailable_reason, std::string, ()) /* "" when a device works */                             \
  ENTRY(NS, devices, std::vector<DeviceInfo>, ())                                                         \
  ENTRY(NS, variants, const std::vector<VariantInfo>&, ())                                                \
  ENTRY(NS, default_variant, const VariantInfo&, (Algorithm))                                             \
  ENTRY(NS, create_cipher_stream, std::unique_ptr<CipherStream>,                                          \
        (const CipherName&, Direction, ByteSpan key, ByteSpan iv, std::string_view variant, int device_index)) \
  ENTRY(NS, create_gcm, std::unique_ptr<GcmCipher>,                                                       \
        (const CipherName&, ByteSpan key, std::string_view variant, int device_index))                    \
  ENTRY(NS, hash_many, void,                                                                              \
        (std::string_view hash_name, const uint8_t* const* messages, const size_t* lens, size_t num_messages, \
         uint8_t* out, size_t out_len_each, int device_index))                                            \
  ENTRY(NS, tree_hash, void,                                                                              \
        (std::string_view hash_name, const hash::HashParams& params, const uint8_t* data, size_t len,     \
         uint8_t* out, size_t out_len, int device_index))                                                 \
  ENTRY(NS, tree_leaves, void,                                                                            \
        (std::string_view hash_name, const hash::HashParams& params, const uint8_t* data, size_t num_leaves, \
         uint8_t* out, int device_index))                                                                 \
  /* The AEADs beyond GCM (Device::create_aead: GCM goes to create_gcm). */                               \
  ENTRY(NS, create_aead, std::unique_ptr<Aead>,                                                           \
        (const AeadName&, ByteSpan key, std::string_view variant, int device_index))

#define GPUCRYPT_INDEXED_BACKEND_FIELD(NS, name, result, parameters) result(*name) parameters;
#define GPUCRYPT_INDEXED_BACKEND_ADDRESS(NS, name, result, parameters) &NS::name,

struct IndexedBackendCalls {
  const char* label;  // "CUDA", "OpenCL": for "no such CUDA device (2 listed)"
  GPUCRYPT_INDEXED_BACKEND_ENTRIES(GPUCRYPT_INDEXED_BACKEND_FIELD, )
};

// The table of the indexed backend whose entry points are in namespace NS (gpucrypt::NS).
#define GPUCRYPT_INDEXED_BACKEND_CALLS(LABEL, NS) \
  IndexedBackendCalls { LABEL, GPUCRYPT_INDEXED_BACKEND_ENTRIES(GPUCRYPT_INDEXED_BACKEND_ADDRESS, NS) }

class IndexedDevice : public Device {
 public:
  IndexedDevice(DeviceName name, const IndexedBackendCalls& calls) : Device(std::move(name)), calls_(calls) {}
  // The listed device of this index; DeviceError with the backend's reason, or "no such
  // LABEL device (N listed)".
  DeviceInfo info() const override;
  const std::vector<VariantInfo>& variants() const override { return calls_.variants(); }
  std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& cipher, Direction direction, ByteSpan key,
                                                     ByteSpan iv, std::string_view variant) const override {
    return calls_.create_cipher_stream(cipher, direction, key, iv, variant, name().index);
  }
  std::unique_ptr<GcmCipher> create_gcm(const CipherName& cipher, ByteSpan key,
                                        std::string_view variant) const override {
    return calls_.create_gcm(cipher, key, variant, name().index);
  }
  std::unique_ptr<Aead> create_aead(const AeadName& aead, ByteSpan key, std::string_view variant) const override {
    if (aead.construction == AeadConstruction::gcm) return Device::create_aead(aead, key, variant);
    return calls_.create_aead(aead, key, variant, name().index);
  }
  void hash_many(std::string_view hash_name, const uint8_t* const* messages, const size_t* lens,
                 size_t num_messages, uint8_t* out, size_t out_len_each) const override {
    calls_.hash_many(hash_name, messages, lens, num_messages, out, out_len_each, name().index);
  }
  void tree_hash(std::string_view hash_name, const hash::HashParams& params, const uint8_t* data, size_t len,
                 uint8_t* out, size_t out_len) const override {
    calls_.tree_hash(hash_name, params, data, len, out, out_len, name().index);
  }
  void tree_leaves(std::string_view hash_name, const hash::HashParams& params, const uint8_t* data,
                   size_t num_leaves, uint8_t* out) const override {
    calls_.tree_leaves(hash_name, params, data, num_leaves, out, name().index);
  }

 protected:
  VariantInfo default_variant(Algorithm algorithm, Mode) const override { return calls_.default_variant(algorithm); }

 private:
  const IndexedBackendCalls& calls_;
};

// A DeviceBackend of `kind` with its lists from `calls`; the caller sets `open`.
DeviceBackend indexed_backend(std::string kind, const IndexedBackendCalls& calls);

// Every registered backend, the CPU first, in the order list_devices and list_variants report them.
const std::vector<DeviceBackend>& backends();
// The backend of `kind` ("cuda"), or null.
const DeviceBackend* find_backend(std::string_view kind);

// The error every backend raises for a device it cannot offer.
DeviceError device_unavailable(std::string_view as_named, std::string_view reason);

// The constant-time rule, one for every backend: the first (fastest) constant-time variant of
// `algorithm` in `variants` that implements `mode` ("" = every mode, so variants made for one mode
// only are skipped), passing over one whose slower_in_mode is `mode` unless no other runs it.
// Throws std::invalid_argument naming `device_named` when there is none.
VariantInfo fastest_constant_time(const std::vector<VariantInfo>& variants, std::string_view algorithm,
                                  std::string_view mode, std::string_view device_named);

// Each backend's registration (src/device/*_device.cpp).
DeviceBackend cpu_backend();
DeviceBackend cuda_backend();    // only in builds with GPUCRYPT_WITH_CUDA
DeviceBackend opencl_backend();  // only in builds with GPUCRYPT_WITH_OPENCL

}  // namespace gpucrypt::registry
