// opencl_runtime.hpp: the OpenCL backend's device layer: the OpenCL library loaded at run time,
// the devices it lists, one context and in-order queue per device, programs built from the
// embedded kernel sources and cached per device, the launch policy per device, and RAII buffers.
//
// The library is opened with dlopen (libOpenCL.so.1, the ICD loader; GPUCRYPT_OPENCL_LIBRARY names
// another), so gpucrypt builds and imports on machines without OpenCL: the backend then lists no
// device and says why (unavailable_reason). Devices are numbered across platforms in the order the
// loader reports them: "opencl:0" is the first device of the first platform.
//
// Threads: a Device's queue and kernel objects are used under its mutex (lock()); callers hold it
// for a whole call, so calls on one device run one after another.
// Constant-time position: nothing here touches secret data except Buffer::wipe, which overwrites.
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gpucrypt::opencl {

// Launch shapes, chosen per device from its probed capabilities (policy_for in the .cpp): the
// counterpart of the CUDA backend's launch_policy.hpp.
struct LaunchPolicy {
  size_t local_size;        // work-items per work-group
  size_t groups_per_unit;   // work-groups per compute unit in a grid-stride launch
  int table_copies_enc;     // copies of each encryption table in local memory (ciphers.cl)
  int table_copies_dec;     // same for the decryption tables (AES needs two)
  int bulk_steps;           // blocks per work-item per pass of the bulk kernels (ciphers.cl GC_STEPS)
  size_t chunk_bytes;       // host data move through the device in chunks of this size (< 2^35:
                            // block indices in the kernels are 32-bit)
  std::string name;         // "gpu32" / "cpu1": shown by gpucrypt info
  std::string defines;      // build options every program of the device gets ("-DGC_OPENCL_NVIDIA ")
};

struct Device {
  int index = 0;  // N of "opencl:N"
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string name, vendor, platform_name, version;
  cl_device_type type = 0;
  cl_ulong local_mem_bytes = 0, global_mem_bytes = 0;
  size_t max_work_group = 1;
  cl_uint compute_units = 1;
  LaunchPolicy policy;
  bool is_gpu() const { return (type & CL_DEVICE_TYPE_GPU) != 0; }

  // Lazily created; guarded by mutex.
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::map<std::string, cl_program> programs;  // build options + source name -> program
  std::map<std::string, cl_kernel> kernels;    // program key + kernel name -> kernel
  std::mutex mutex;
};

// Throws gpucrypt::DeviceError("OpenCL <what> failed: CL_... (code)") unless status is CL_SUCCESS.
void check(cl_int status, const char* what);
const char* error_name(cl_int status);

// The loaded library's entry points (null members when a symbol is missing).
struct Api {
#define GC_CL_FUNCTION(name) decltype(&::name) name = nullptr;
#include "backends/opencl/opencl_functions.inc"
#undef GC_CL_FUNCTION
};
const Api& api();  // throws DeviceError when the library cannot be loaded

std::vector<Device*> all_devices();  // empty when OpenCL is unavailable
Device& device(int index);           // DeviceError naming the device when it does not exist
std::string unavailable_reason();    // "" when at least one device exists

// The device's context and queue exist after this; call with the device's mutex held.
void open(Device& d);

// A known-answer check of a program: true when its kernels compute what they should (the caller
// knows what that is; it runs them with the device's mutex held). May throw (a missing kernel).
using ProgramCheck = std::function<bool(cl_program)>;

// One kernel of a given program, released with this object: what a ProgramCheck runs (the
// device's kernel map holds only kernels of programs that passed).
class ProgramKernel {
 public:
  ProgramKernel(cl_program program, const char* kernel_name);
  ~ProgramKernel();
  ProgramKernel(const ProgramKernel&) = delete;
  ProgramKernel& operator=(const ProgramKernel&) = delete;
  cl_kernel get() const { return kernel_; }

 private:
  cl_kernel kernel_ = nullptr;
};

// A kernel of a program built from an embedded source (ciphers.cl, keccak.cl) with the given
// -D options, built on first use and cached; the device's mutex must be held. A program loaded
// from the on-disk cache is used only once check_cached passes; otherwise it is compiled fresh.
cl_kernel kernel(Device& d, const std::string& source_name, const std::string& options, const char* kernel_name,
                 const ProgramCheck& check_cached);

// Counters for tests: programs built, kernels enqueued (a CI that stays green while every OpenCL
// test silently skips is a known failure mode; tests assert these grew).
struct Stats {
  uint64_t programs_built = 0;   // compiled from source
  uint64_t programs_cached = 0;  // loaded from the on-disk program cache
  uint64_t kernels_run = 0;
  uint64_t programs_rejected = 0;  // loaded from the cache but failed their known-answer check
};
Stats stats();

// A device buffer; wipe() overwrites it with zeros (key schedules, plaintext) before release.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Device& d, size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE);
  Buffer(Buffer&& other) noexcept : mem_(other.mem_), bytes_(other.bytes_), device_(other.device_) { other.mem_ = nullptr; }
  Buffer& operator=(Buffer&& other) noexcept;
  ~Buffer();
  cl_mem get() const { return mem_; }
  size_t size() const { return bytes_; }
  void write(const void* host, size_t bytes, size_t offset = 0);
  void read(void* host, size_t bytes, size_t offset = 0) const;
  void fill_zero(size_t bytes, size_t offset = 0);
  void wipe() { if (mem_ && bytes_) fill_zero(bytes_); }

 private:
  cl_mem mem_ = nullptr;
  size_t bytes_ = 0;
  Device* device_ = nullptr;
};

// Kernel arguments and launch: set_args(k, a, b, ...) then launch(d, k, global) with global
// rounded up to the policy's work-group size. profile != nullptr returns the kernel's device time
// in seconds (the queue is created with profiling on).
template <typename T>
void set_arg(cl_kernel k, cl_uint index, const T& value) {
  check(api().clSetKernelArg(k, index, sizeof(T), &value), "clSetKernelArg");
}
inline void set_arg(cl_kernel k, cl_uint index, const Buffer& b) { set_arg(k, index, b.get()); }
// An argument passed by value whose size is known at run time (a struct such as ciphers.cl's
// gc_key_blob); the runtime copies the bytes at the call.
struct ValueArg {
  const void* data;
  size_t size;
};
inline void set_arg(cl_kernel k, cl_uint index, const ValueArg& v) {
  check(api().clSetKernelArg(k, index, v.size, v.data), "clSetKernelArg");
}
template <typename... Args>
void set_args(cl_kernel k, const Args&... args) {
  cl_uint index = 0;
  (set_arg(k, index++, args), ...);
}
void launch(Device& d, cl_kernel k, size_t global_items, double* profile_seconds = nullptr);
void finish(Device& d);
// Work-items for a grid-stride launch over `units` independent units (at most one per unit).
size_t grid_items(const Device& d, uint64_t units);

}  // namespace gpucrypt::opencl
