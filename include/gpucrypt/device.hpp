// device.hpp: the Device interface every backend implements ("cpu", "cuda:N", "opencl:N"), and
// gpucrypt::device(), the registry's one door. The free functions of gpucrypt.hpp
// (create_cipher_stream, create_gcm, list_devices, list_variants, constant_time_variant) and the
// batch engine reach a backend only through a Device; adding a backend is implementing this class
// and registering its factory (src/device/registry.cpp; ARCHITECTURE.md "Adding a backend").
//
// Ownership: gpucrypt::device() returns a Device that lives until the process ends; one Device may
// be used from several threads at once. Errors as in gpucrypt.hpp: std::invalid_argument for the
// caller's mistakes, DeviceError when a device is missing or fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpucrypt/aead.hpp"
#include "gpucrypt/cipher.hpp"

namespace gpucrypt {

// The batch engine's plan and the tree hashes' parameters have headers of their own
// (gpucrypt/batch.hpp, gpucrypt/hash.hpp); a Device takes them so that each backend decides
// how it runs them. Declared here only, so that this header stays small.
namespace engine {
struct BatchPlan;
struct BatchResult;
struct SchedulerDevice;  // gpucrypt/scheduler.hpp
}  // namespace engine
namespace hash {
struct HashParams;
}  // namespace hash

// ---- work on a device's own memory -------------------------------------------------------
// GPU arrays (CuPy, PyTorch, Numba: Python's Cipher(...).encrypt(array)) and `speed --resident`
// hand a device pointers on it and a stream: the backend's own queue as an opaque handle (CUDA: a
// cudaStream_t; 0 is the legacy default stream). Work is enqueued on that stream, ordered after
// what the caller queued there. Each call is one whole message (ECB and CBC: a multiple of 16
// bytes, XTS: at least 16); in == out works, and so does an out that overlaps in partially (the
// result is then what a copy of in would give).
using StreamHandle = std::uintptr_t;

// ResidentCipher: a keyed cipher in one direction; its key schedule is made once, on the device,
// and kept for the object's life (a caller that encrypts many arrays under one key keeps one).
// process returns before the work is done. One caller at a time (its scratch memory is per
// object): threads that share one take turns (Python's binding holds a lock).
class ResidentCipher {
 public:
  virtual ~ResidentCipher() = default;
  // iv: 16 bytes (IV, initial counter or XTS tweak), empty for ECB.
  virtual void process(ByteSpan iv, const void* in, void* out, size_t len, StreamHandle stream) = 0;
  // XTS only (std::invalid_argument otherwise): len / unit_len data units back to back, unit u
  // under the tweak first_unit + u, its number as a 128-bit little-endian integer (IEEE 1619's
  // data unit sequence number; CipherStream::update_units' contract). Every unit in one launch
  // where unit_len is a multiple of 16.
  virtual void process_units(uint64_t first_unit, size_t unit_len, const void* in, void* out, size_t len,
                             StreamHandle stream) = 0;
  virtual const VariantInfo& variant() const = 0;
};

// ResidentGcm: GCM on device memory. seal writes len bytes of ciphertext to out (device memory)
// and tag_len bytes of tag to tag (host memory); open checks tag (host memory) before it deciphers
// anything: false leaves out untouched (in place too). Both wait for the stream before they return
// (the tag is a result). One caller at a time, as ResidentCipher.
class ResidentGcm {
 public:
  virtual ~ResidentGcm() = default;
  virtual void seal(ByteSpan nonce, ByteSpan aad, const void* in, void* out, size_t len, uint8_t* tag,
                    size_t tag_len, StreamHandle stream) = 0;
  virtual bool open(ByteSpan nonce, ByteSpan aad, const void* in, void* out, size_t len, ByteSpan tag,
                    StreamHandle stream) = 0;
  virtual const VariantInfo& variant() const = 0;
};

// KernelTiming: a backend's own timing of its encryption kernel alone over data already on the
// device (Device::time_kernel).
struct KernelTiming {
  std::string variant;
  std::string device_name;      // what the hardware calls itself
  std::vector<double> seconds;  // one per timed launch
  uint64_t checked_blocks = 0;  // output blocks compared with the host cipher
  uint64_t mismatched_blocks = 0;
};

// DeviceTraits: what a caller that spreads host-memory work over devices (the scheduler, the
// file format's pipelines, Python's stream engine) needs to know of one, instead of its name.
struct DeviceTraits {
  // Whether work and data are handed to a runtime of its own, as to a GPU (CUDA; OpenCL, a CPU
  // device through PoCL included); false for the host's own CPU backend, which the scheduler's
  // cpu_share and its measured device set's "CPU alone" are about.
  bool is_gpu = false;
  // A job length, in bytes of host memory, that runs near this device's full speed: the file
  // format's default job (a mix of devices takes the smallest of theirs). CPU: 512 KiB per core,
  // 2 to 8 MiB; a GPU: 16 MiB.
  uint64_t job_len = 0;
  // Jobs a scheduler keeps in flight on it: the CPU 1 (each of its calls already uses every core);
  // a GPU 3 (one copying in, one computing, one copying out). Callers may tune their own.
  unsigned workers = 1;
};

class Device {
 public:
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceName& name() const { return name_; }  // kind, index, canonical ("cuda:0")
  // info: what the hardware is. Throws DeviceError when this index names no device (a backend
  // that works but has fewer devices than the index).
  virtual DeviceInfo info() const = 0;
  // traits: see DeviceTraits; its backend's (registered with it: every device of a kind shares
  // them), so device_traits(name) below answers the same without opening the device.
  DeviceTraits traits() const;
  // variants: every variant this device's backend offers, fastest first within an algorithm,
  // each with its constant-time flag. The build decides them, so they are the same for every
  // device of a kind.
  virtual const std::vector<VariantInfo>& variants() const = 0;

  // select: the variant that runs `algorithm` in `mode` here when the caller names none. Without
  // constant_time it is the backend's own default (what create_cipher_stream and create_gcm run);
  // with it, the fastest constant-time variant that implements the mode (what the file format
  // runs unless told otherwise). Throws std::invalid_argument when there is none (Camellia and
  // SC2000 have no constant-time variant).
  VariantInfo select(Algorithm algorithm, Mode mode, bool constant_time = false) const;

  // create_cipher_stream / create_gcm: as gpucrypt.hpp's functions of the same names, whose
  // argument checks have already run; variant "" means select(algorithm, mode).
  virtual std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& name, Direction direction,
                                                             ByteSpan key, ByteSpan iv,
                                                             std::string_view variant) const = 0;
  virtual std::unique_ptr<GcmCipher> create_gcm(const CipherName& name, ByteSpan key,
                                                std::string_view variant) const = 0;

  // create_aead: the AEAD `name` (gpucrypt/aead.hpp; key length already checked) on this device;
  // variant "" means this device's default for the construction. The default serves GCM through
  // create_gcm and refuses other constructions (std::invalid_argument naming the AEAD and the
  // device); a backend that implements more overrides it (CPU, OpenCL, CUDA: AES-GCM-SIV).
  virtual std::unique_ptr<Aead> create_aead(const AeadName& name, ByteSpan key, std::string_view variant) const;

  // run_batch: runs a whole plan with this device's batch executor. The default is the generic
  // executor (each request through create_cipher_stream / create_aead here), for backends that
  // have no batch kernels yet. An override with its own executor takes the plan's AEADs beyond
  // GCM apart first (registry::run_batch_aeads_apart, src/device: they run per message through
  // create_aead), so that its executor plans ciphers, GCM and hashes only.
  virtual engine::BatchResult run_batch(const engine::BatchPlan& plan) const;

  // hash_many: num_messages messages of one sequential Keccak-family hash (sha3-*, shake*,
  // keccak-*, cshake* without N and S), out_len_each bytes each into out, back to back.
  // tree_hash: ParallelHash128/256(-xof) or KT128/KT256 of one input, its leaves on this device.
  virtual void hash_many(std::string_view hash_name, const uint8_t* const* messages, const size_t* lens,
                         size_t num_messages, uint8_t* out, size_t out_len_each) const = 0;
  virtual void tree_hash(std::string_view hash_name, const hash::HashParams& params, const uint8_t* data,
                         size_t len, uint8_t* out, size_t out_len) const = 0;
  // tree_leaves: the chaining values of num_leaves whole leaves of tree hash `hash_name` (data:
  // num_leaves * leaf_len host bytes, hash::tree_shape) into out (num_leaves * chaining_value_len
  // bytes) on this device, for a caller that assembles the tree itself (format::hash_file reads a
  // file block by block and absorbs each block's values into the final node): hash::tree_leaves'
  // result, computed here. Host memory from alloc_host is read in place.
  virtual void tree_leaves(std::string_view hash_name, const hash::HashParams& params, const uint8_t* data,
                           size_t num_leaves, uint8_t* out) const = 0;

  // offers_host_memory / alloc_host / free_host: host memory this device copies to and from
  // fastest (CUDA: page-locked, which a GPU reads and writes without staging), for callers that
  // fill buffers for it (the file pipeline's job buffers). Devices without such memory (the CPU,
  // OpenCL here) say false and must not be asked for it. alloc_host throws DeviceError when the
  // memory cannot be had; free_host zeroes the bytes before releasing them.
  virtual bool offers_host_memory() const { return false; }
  virtual void* alloc_host(size_t len) const;
  virtual void free_host(void* memory, size_t len) const;
  // holds_host_memory: whether [memory, memory + len) is host memory of that kind (from alloc_host,
  // or registered with the backend by another library, e.g. a pinned PyTorch tensor), so that this
  // device copies it with no staging. False on devices without such memory.
  virtual bool holds_host_memory(const void* memory, size_t len) const;

  // Work on this device's own memory (see ResidentCipher above). A device whose memory is the
  // host's (the CPU) or that offers none of this (OpenCL here) throws DeviceError("device 'NAME'
  // does not support ...") from each; argument errors as create_cipher_stream / create_gcm.
  // resident_memory: whether it does (the others then work).
  virtual bool resident_memory() const { return false; }
  virtual std::unique_ptr<ResidentCipher> create_resident_cipher(const CipherName& name, Direction direction,
                                                                 ByteSpan key, std::string_view variant) const;
  virtual std::unique_ptr<ResidentGcm> create_resident_gcm(const CipherName& name, ByteSpan key,
                                                           std::string_view variant) const;
  // alloc_device / free_device / copy_to_device / synchronize: device memory (freed unzeroed: what
  // a benchmark fills; alloc_device makes this device the calling thread's current one, which
  // resident_hash runs on), a host-to-device copy, and a wait for everything queued on a stream.
  virtual void* alloc_device(size_t len) const;
  virtual void free_device(void* memory) const;
  virtual void copy_to_device(void* device_memory, const void* host, size_t len) const;
  virtual void synchronize(StreamHandle stream) const;
  // resident_hash: one message of `hash_name` (any Keccak-family hash hash_many or tree_hash takes,
  // without parameters) in device memory, hashed on the device; out_len bytes of digest to
  // `digest`, device memory too. Asynchronous on `stream` (a tree hash's final node runs on the
  // host, so that form returns when it is done).
  virtual void resident_hash(std::string_view hash_name, const void* data, size_t len, void* digest,
                             size_t out_len, StreamHandle stream) const;

  // time_kernel: the backend's own timing of its CTR or ECB encryption kernel over `bytes` of
  // random data on the device (OpenCL: profiling events, output poisoned and checked on sampled
  // blocks against the host cipher; the lab's experiments). Devices without it throw DeviceError.
  // kernel_timing: whether this device has it, so that callers ask instead of naming a backend.
  virtual KernelTiming time_kernel(const CipherName& name, std::string_view variant, size_t bytes,
                                   int repeats) const;
  virtual bool kernel_timing() const { return false; }
  // counters: what this device's backend has done in this process, by name (OpenCL: programs
  // built, cached, rejected and kernels run, so that tests can tell that OpenCL really ran).
  // Empty for backends that count nothing.
  virtual std::vector<std::pair<std::string, uint64_t>> counters() const { return {}; }

 protected:
  explicit Device(DeviceName name) : name_(std::move(name)) {}
  // default_variant: the backend's rule for select() without constant_time (for the CPU,
  // cpu::select_variant_for; CUDA and OpenCL: the first registered for the algorithm).
  virtual VariantInfo default_variant(Algorithm algorithm, Mode mode) const = 0;

 private:
  DeviceName name_;
};

// device: the Device a name ("cpu", "cuda", "cuda:N", "opencl", "opencl:N"; any case) names, read
// by parse_device_name. Throws std::invalid_argument("unknown device ...") for a malformed name,
// and DeviceError("device 'NAME' is not available: REASON") when the backend is not in this build
// or its factory finds it cannot run here (NAME as the caller wrote it, REASON as
// cuda_unavailable_reason and opencl_unavailable_reason give it). Whether index N exists is the
// backend's check when the device is used, after the variant's: a wrong variant name is reported
// as such on any machine.
const Device& device(std::string_view name);

// directly_copied: whether one of `devices` (the CPU among them answers no) holds [memory, memory +
// len) as host memory it copies with no staging (Device::holds_host_memory: page-locked).
bool directly_copied(const std::vector<std::string>& devices, const void* memory, size_t len);

// device_traits: the traits of the devices `name` names (Device::traits), from its backend's
// registration: no device is opened, so a name whose backend is absent or has no such device
// answers too (CUDA's are a GPU's in a build without CUDA). std::invalid_argument for a malformed
// name.
DeviceTraits device_traits(std::string_view name);

// ---- the device policy (src/device/select_devices.cpp) ---------------------------------------
// What a caller's device options mean, the same for the stream engine, the file format, the CLI,
// MPI ranks (each takes its GPU from auto_gpus), the C API and the lab.
struct DeviceSelection {
  std::vector<std::string> devices;  // canonical names, GPUs first, the CPU last when it takes part
  double cpu_share = 1.0;            // < 0: measured per job by the scheduler ("auto"); else 0..1
};
// auto_gpus: the GPUs "auto" uses, in index order: the devices other than CPUs of the first backend
// in the registry's order that lists any (every CUDA device; without one, every OpenCL GPU, asked
// only where an OpenCL ICD other than PoCL's is registered: PoCL's devices are this CPU, which
// "auto" runs natively). Empty on a machine without a GPU. A new backend needs no change here.
std::vector<std::string> auto_gpus();
// This machine as the engine keeps measured device sets for it across processes
// (engine::SchedulerOptions::machine): the host's name, its CPU threads, its NVIDIA GPUs as the
// kernel driver lists them (/proc/driver/nvidia/gpus: model and bus, read without a CUDA call, so
// that a command whose kept set is the CPU alone starts no GPU at all), OpenCL's registered ICDs,
// CUDA_VISIBLE_DEVICES and GPUCRYPT_GPU_WORKERS. A change in any of them is another machine,
// measured afresh. Found once per process.
const std::string& machine_description();
// start_devices_early: begins, on a library thread, what the first use of the GPUs among `devices`
// (device names; "auto" for auto_gpus()) costs: a CUDA device's driver initialisation and primary
// context, about 0.5 s for two H200s. A program that knows early that it will use them (the CLI,
// before its imports and argument checks) overlaps that with its own start; every later call
// waits for what it needs of it as a first use would. Once per process (later calls do nothing);
// names that are malformed, absent or of a backend without such a start-up are skipped, and
// errors are left to the first real use. wait_devices_started returns once that thread is done:
// call it before the process exits (the Python package does, at exit), since the drivers'
// teardown must not run beside it.
// `local_rank` of `local_size` (an MPI rank on its node, known from its launcher before MPI starts):
// "auto" means that rank's GPUs (deal_gpus).
void start_devices_early(const std::vector<std::string>& devices, int local_rank = 0, int local_size = 1);
void wait_devices_started();
// deal_gpus: the GPUs of local rank `local_rank` of `local_size` on a node with `gpus` (MPI ranks
// under "auto"): GPUs local_rank, local_rank + local_size, ... (one each when there are as many ranks
// as GPUs; all of them for a lone rank, which would otherwise leave the others idle), or GPU
// local_rank mod their number when there are more ranks than GPUs. std::invalid_argument for a
// rank outside 0..local_size-1; empty for no GPUs.
std::vector<std::string> deal_gpus(const std::vector<std::string>& gpus, int local_rank, int local_size);
// select_devices: `devices` (a comma-separated list, "" for none) or `device` ("auto" or "" for
// auto_gpus() plus the CPU with measured shares; else one device name); naming both is refused.
// `cpu_share` is "" (not given), "auto" or a number 0..1: given with GPUs it adds the CPU ("0"
// keeps it out); naming "cpu" in a list beside GPUs means measured shares. Names are parsed by
// parse_device_name and repeats dropped. std::invalid_argument for a malformed name or share, a
// device beside a list, a share of 0 with no GPU, or any share when the devices named are only the
// CPU (under "auto" without a GPU it is accepted and the CPU does the work); with check_present,
// DeviceError for a named GPU that is not there (before any work).
DeviceSelection select_devices(std::string_view device, std::string_view devices = "",
                               std::string_view cpu_share = "", bool check_present = true);
// The CPU share as select_devices reads it (Python's stream.parse_cpu_share, the CLI's --cpu-share):
// nullopt for "" (not given), -1 for "auto" (measured), else a number 0..1; blanks around it are
// ignored. std::invalid_argument "cpu_share must be ..." for anything else.
std::optional<double> parse_cpu_share(std::string_view text);
// scheduler_devices: the scheduler's view of `devices` (names as select_devices gives them), from
// each one's device_traits: is_cpu for the host's CPU, workers from traits().workers, or cpu_workers /
// gpu_workers where the caller tunes its own (non-zero).
std::vector<engine::SchedulerDevice> scheduler_devices(const std::vector<std::string>& devices,
                                                       unsigned cpu_workers = 0, unsigned gpu_workers = 0);
// host_memory_device: the first of `devices` that offers host memory of its own
// (Device::offers_host_memory: a GPU's page-locked memory), or nullptr: where the engine's staging
// buffers go so that the GPU copies them with no staging of its own (the file pipeline,
// TransformStream).
const Device* host_memory_device(const std::vector<std::string>& devices);

}  // namespace gpucrypt
