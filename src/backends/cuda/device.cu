// device.cu: the CUDA backend's devices (which work, launch support) and variants (the one place
// that selects a CUDA variant), and the device and variant lists of backend.hpp. The engines over
// host memory are in host_engine.cu, the device-pointer API (device.hpp) in device_api.cu, the
// page-locked host memory helpers in page_locked.cu; what they share with this file is declared
// in device_internal.hpp.
//
// Constant-time position: the variant's. Nothing here touches data; keys only pass through to a
// variant's factory (key schedules in kernel parameters) and to the portable CPU code of the same
// technique that encrypts single blocks on the host (aes_ttable for aes_ttable_smem32,
// aes_bitsliced for aes_bitsliced, ...): a kernel launch per block would cost tens of microseconds.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "backends/backend.hpp"
#include "backends/block_engine.hpp"
#include "backends/cuda/device.hpp"
#include "backends/cuda/device_internal.hpp"
#include "backends/cuda/keyed_cipher.hpp"
#include "backends/cuda/launch_policy.hpp"

namespace gpucrypt::cuda {

// ---- devices --------------------------------------------------------------------------------

namespace {

// The kernels are built for sm_90 only (CMakeLists.txt); older GPUs cannot run them.
constexpr int kMinComputeMajor = 9;

struct DeviceTable {
  std::vector<int> ordinals;  // usable CUDA ordinals ("cuda:N" names ordinal N)
  std::map<int, cudaDeviceProp> properties;
  std::string reason;  // why none is usable
};

const DeviceTable& device_table() {
  static const DeviceTable table = [] {
    DeviceTable t;
    int count = 0;
    // With the static runtime and no driver this returns an error instead of failing to load.
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      // The runtime reports a missing driver as an insufficient one ("CUDA driver version is
      // insufficient"), which sends a user without any NVIDIA driver looking for an upgrade.
      void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
      if (driver == nullptr) driver = dlopen("libcuda.so.1", RTLD_LAZY);
      if (driver == nullptr) {
        t.reason = "no NVIDIA driver installed (libcuda.so.1 not found)";
      } else {
        dlclose(driver);
        t.reason = std::string("no usable CUDA driver or device (") + cudaGetErrorString(status) + ")";
      }
      cudaGetLastError();
      return t;
    }
    std::string too_old;
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp prop{};
      if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
      t.properties[i] = prop;
      if (prop.major >= kMinComputeMajor) {
        t.ordinals.push_back(i);
      } else {
        too_old += std::string(too_old.empty() ? "" : ", ") + "cuda:" + std::to_string(i) + " " + prop.name +
                   " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ")";
      }
    }
    if (count == 0) t.reason = "no CUDA device found";
    else if (t.ordinals.empty())
      t.reason = "no CUDA device of compute capability 9.0 or newer (this build has sm_90 kernels only): " + too_old;
    return t;
  }();
  return table;
}

}  // namespace

void require_device(int device_index) {
  const DeviceTable& t = device_table();
  if (std::find(t.ordinals.begin(), t.ordinals.end(), device_index) != t.ordinals.end()) return;
  throw DeviceError("device 'cuda:" + std::to_string(device_index) + "' is not available: " +
                    (t.reason.empty() ? "usable devices are " + [&] {
                      std::string s;
                      for (int o : t.ordinals) s += (s.empty() ? "cuda:" : ", cuda:") + std::to_string(o);
                      return s;
                    }()
                                      : t.reason));
}

void start_up(const std::vector<int>& indices) {
  std::vector<std::thread> contexts;
  for (int ordinal : device_table().ordinals) {
    if (!indices.empty() && std::find(indices.begin(), indices.end(), ordinal) == indices.end()) continue;
    contexts.emplace_back([ordinal] {
      // cudaFree(nullptr) is the runtime's way to create the current device's primary context, the
      // one every later call on this device (any thread's) uses.
      if (cudaSetDevice(ordinal) == cudaSuccess) cudaFree(nullptr);
      cudaGetLastError();  // this thread's; a device that fails says so at its first real use
    });
  }
  for (std::thread& thread : contexts) thread.join();
}

// ---- variants -------------------------------------------------------------------------------

namespace {

// Preference order within an algorithm: the first is the default (the fastest measured; see
// docs/performance.md).
const std::vector<GpuVariant>& registered_variants() {
  static const std::vector<GpuVariant> all = {
      {{"aes_ttable_smem32", "cuda", "aes", false,
        "T-table AES, Te0/Td0 replicated 32x across shared-memory banks (Tezcan layout); "
        "secret-indexed lookups"},
       make_aes_ttable_smem32, "aes_ttable"},
      // The constant-time default in every mode: 1.3-1.5x aes_bitsliced in CTR, ECB, CBC/CFB
      // decryption and XTS on the H200 (bench/results/h200-2026-11-25-bench-bitsliced-modes.json),
      // and in GCM since it seals as CTR + a GHASH pass (1.60-1.62 vs 1.28 Tbps for AES-128 on an H100,
      // bench/results/h100-2026-11-27-bench-gcm-routes.json). The batch kernels run aes_bitsliced
      // for it (cuda_batch.cu's family_for: a lane there holds one message).
      {{"aes_bitsliced8", "cuda", "aes", true,
        "bitsliced AES (Boyar-Peralta S-box circuit), no tables, 8 blocks per call (state rows as "
        "32-bit words, ShiftRows a byte rotation)"},
       make_aes_bitsliced8, "aes_bitsliced"},
      {{"aes_bitsliced", "cuda", "aes", true,
        "bitsliced AES (Boyar-Peralta S-box circuit), no tables, 2 blocks per call"},
       make_aes_bitsliced, "aes_bitsliced"},
      {{"aes_bitsliced32", "cuda", "aes", true,
        "bitsliced AES (Boyar-Peralta S-box circuit), no tables, 32 blocks per call (one bit of 32 "
        "blocks per word); slower than aes_bitsliced on the H200 (register spills)"},
       make_aes_bitsliced32, "aes_bitsliced"},
      {{"camellia_sbox_smem32", "cuda", "camellia", false,
        "Camellia with its four S-boxes packed in one word table replicated 32x across shared-memory "
        "banks (conflict-free); secret-indexed lookups"},
       make_camellia_sbox_smem32, "camellia_ttable"},
      {{"camellia_ttable_smem", "cuda", "camellia", false,
        "Camellia with the SP tables in shared memory; secret-indexed lookups"},
       make_camellia_ttable_smem, "camellia_ttable"},
      {{"sc2000_table_smem", "cuda", "sc2000", false,
        "SC2000 with the S-box/M tables in shared memory; secret-indexed lookups"},
       make_sc2000_table_smem, "sc2000_table"},
  };
  return all;
}

CipherName single_block_name(const CipherName& name) {
  CipherName n = name;
  n.mode = Mode::ecb;
  n.canonical = std::string(algorithm_name(name.algorithm)) + "-" + std::to_string(name.key_bits) + "-ecb";
  return n;
}

}  // namespace

// The one place that chooses a CUDA variant: the requested one (it must be a CUDA variant of
// the algorithm), else the first registered for the algorithm. Every CUDA variant implements
// every mode.
const GpuVariant& select_variant(Algorithm algorithm, std::string_view requested) {
  const std::string_view algo = algorithm_name(algorithm);
  std::string known;
  for (const auto& v : registered_variants()) {
    if (v.info.algorithm != algo) continue;
    if (requested.empty() || v.info.name == requested) return v;
    known += (known.empty() ? "" : ", ") + v.info.name;
  }
  throw std::invalid_argument("variant '" + std::string(requested) + "' is not a CUDA variant of " +
                              std::string(algo) + " (CUDA variants: " + known + ")");
}

// Host engine for single blocks under one key (one XTS half).
std::unique_ptr<BlockEngine> make_host_engine(const CipherName& name, const uint8_t* key, const GpuVariant& v) {
  return cpu::make_portable_engine(single_block_name(name), ByteSpan(key, name.key_bits / 8), v.host_variant);
}

// ---- launch support (keyed_cipher.hpp, kernels.cuh) ---------------------------------------

int current_sm_count() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const DeviceTable& t = device_table();
  auto it = t.properties.find(device);
  if (it != t.properties.end()) return it->second.multiProcessorCount;
  int count = 0;
  check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return count;
}

PolicyName current_launch_policy() {
  // Read each time: tests switch it between ciphers in one process (it costs one getenv per key).
  if (const char* forced = std::getenv("GPUCRYPT_CUDA_LAUNCH_POLICY"); forced != nullptr && *forced != '\0') {
    const std::string_view name(forced);
    if (name == "sm90") return PolicyName::sm90;
    if (name == "default") return PolicyName::generic;
    throw std::invalid_argument("GPUCRYPT_CUDA_LAUNCH_POLICY must be 'sm90' or 'default', got '" +
                                std::string(name) + "'");
  }
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const DeviceTable& t = device_table();
  auto it = t.properties.find(device);
  return it != t.properties.end() && it->second.major == 9 ? PolicyName::sm90 : PolicyName::generic;
}

GhashRoute ghash_route_from_env() {
  const char* text = std::getenv("GPUCRYPT_CUDA_GHASH");
  if (text == nullptr || *text == '\0') return GhashRoute::automatic;
  const std::string_view name(text);
  if (name == "auto") return GhashRoute::automatic;
  if (name == "tensor") return GhashRoute::tensor;
  if (name == "integer") return GhashRoute::integer;
  throw std::invalid_argument("GPUCRYPT_CUDA_GHASH must be 'auto', 'tensor' or 'integer', got '" + std::string(name) +
                              "'");
}

std::string_view launch_policy_name(PolicyName policy) {
  return policy == PolicyName::sm90 ? "sm90" : "default";
}

int max_resident_blocks(const void* kernel, size_t smem_bytes, int threads_per_block) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, int> cache;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = cache.try_emplace({kernel, device}, 0);
  if (inserted) {
    try {
      if (smem_bytes > 48 * 1024)
        check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_bytes)),
              "cudaFuncSetAttribute");
      int blocks = 0;
      check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads_per_block, smem_bytes),
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
      if (blocks < 1) throw DeviceError("a kernel does not fit on this GPU (shared memory or registers)");
      it->second = blocks;
    } catch (...) {
      cache.erase(it);
      throw;
    }
  }
  return it->second;
}

// ---- backend.hpp entry points --------------------------------------------------------------

int device_count() { return static_cast<int>(device_table().ordinals.size()); }

std::string unavailable_reason() { return device_count() > 0 ? "" : device_table().reason; }

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> out;
  const DeviceTable& t = device_table();
  for (int ordinal : t.ordinals) {
    const cudaDeviceProp& prop = t.properties.at(ordinal);
    DeviceInfo d;
    d.name = "cuda:" + std::to_string(ordinal);
    d.kind = "cuda";
    d.type = "gpu";
    d.num_compute_units = prop.multiProcessorCount;
    d.memory_bytes = prop.totalGlobalMem;
    d.description = std::string(prop.name) + ", compute capability " + std::to_string(prop.major) + "." +
                    std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) + " SMs, " +
                    std::to_string(prop.totalGlobalMem >> 20) + " MiB";
    out.push_back(d);
  }
  return out;
}

const std::vector<VariantInfo>& variants() {
  static const std::vector<VariantInfo> all = [] {
    std::vector<VariantInfo> out;
    for (const auto& v : registered_variants()) out.push_back(v.info);
    // The Keccak kernels (keccak_kernels.cu) serve hash_many and the tree hashes.
    out.push_back({"keccak_cuda", "cuda", "keccak", true,
                   "Keccak-f[1600] lanes in registers, one thread per message or leaf (no tables)"});
    return out;
  }();
  return all;
}

const VariantInfo& default_variant(Algorithm algorithm) { return select_variant(algorithm, "").info; }

}  // namespace gpucrypt::cuda
