// opencl_runtime.cpp: see opencl_runtime.hpp.
#include "backends/opencl/opencl_runtime.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <thread>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <atomic>
#include <cstdlib>
#include <set>
#include <sstream>

#include "gpucrypt/cipher.hpp"
#include "gpucrypt/hash.hpp"

namespace gpucrypt::opencl {

// The kernel sources and the src/core headers they include, embedded at build time
// (cmake/embed_opencl_sources.cmake writes the table).
struct EmbeddedSource {
  const char* name;  // "core/aes.h", "ciphers.cl"
  const char* text;
};
extern const EmbeddedSource kEmbeddedSources[];
extern const size_t kNumEmbeddedSources;

namespace {

std::atomic<uint64_t> g_programs_built{0}, g_programs_cached{0}, g_programs_rejected{0}, g_kernels_run{0};

struct Registry {
  Api api;
  std::string error;  // why there is no OpenCL ("" when the library loaded and listed devices)
  std::vector<std::unique_ptr<Device>> devices;
};

std::string device_string(cl_device_id id, cl_device_info what) {
  size_t len = 0;
  if (api().clGetDeviceInfo(id, what, 0, nullptr, &len) != CL_SUCCESS || len == 0) return "";
  std::string s(len, '\0');
  api().clGetDeviceInfo(id, what, len, s.data(), nullptr);
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

template <typename T>
T device_value(cl_device_id id, cl_device_info what) {
  T value{};
  api().clGetDeviceInfo(id, what, sizeof value, &value, nullptr);
  return value;
}

// The launch policy table: GPUs keep one table copy per local-memory bank (32 banks of 4 bytes
// on NVIDIA and AMD) where local memory has room for it, as the CUDA variants do; CPU devices
// (PoCL) have "local" memory in cache, one copy, small work-groups, and more work-items than
// cores so each core gets several groups.
LaunchPolicy policy_for(const Device& d) {
  LaunchPolicy p;
  // GPUCRYPT_OPENCL_LAUNCH_POLICY=gpu|cpu overrides the choice (tests run the GPU shapes, table
  // copies and strided passes included, on PoCL's CPU device).
  const char* forced = std::getenv("GPUCRYPT_OPENCL_LAUNCH_POLICY");
  const bool gpu_shapes = forced && *forced ? std::string_view(forced) == "gpu" : d.is_gpu();
  if (gpu_shapes) {
    // 512 work-items and 2 blocks each per pass: the shape the CUDA sweep chose on an H200
    // (launch_policy.hpp's Sm90Policy: kBulkThreads 512, kBulkSteps 2).
    p.local_size = std::min<size_t>(512, d.max_work_group);
    p.groups_per_unit = 4;
    p.bulk_steps = 2;
    const auto copies_fitting = [&](size_t table_words) {
      int copies = 32;
      while (copies > 1 && table_words * 4 * copies > d.local_mem_bytes) copies /= 2;
      return copies;
    };
    p.table_copies_enc = copies_fitting(256);  // Te0, Camellia's S-box words, SC2000's MS table
    p.table_copies_dec = copies_fitting(512);  // AES: Td0 and the inverse S-box words
    p.chunk_bytes = size_t{64} << 20;
    p.name = "gpu" + std::to_string(p.table_copies_enc);
  } else {
    p.local_size = std::min<size_t>(64, d.max_work_group);
    p.groups_per_unit = 4;
    p.bulk_steps = 1;
    p.table_copies_enc = p.table_copies_dec = 1;
    p.chunk_bytes = size_t{32} << 20;
    p.name = "cpu1";
  }
  // NVIDIA's compiler takes inline PTX: platform.h's gc_byte_perm is then one PRMT, as in the
  // CUDA kernels. GPUCRYPT_OPENCL_NVIDIA_PTX=0 builds the portable forms instead (to measure the
  // difference on the same device).
  const char* ptx = std::getenv("GPUCRYPT_OPENCL_NVIDIA_PTX");
  if (d.vendor.find("NVIDIA") != std::string::npos && !(ptx && std::string_view(ptx) == "0")) {
    p.defines = "-DGC_OPENCL_NVIDIA ";
    p.name += "+ptx";
  }
  // GPUCRYPT_OPENCL_BULK_STEPS=N: blocks per work-item per pass of the bulk kernels (the
  // benchmark's knob for trying other shapes on one device; rounded to the cipher's unit).
  if (const char* steps = std::getenv("GPUCRYPT_OPENCL_BULK_STEPS"); steps && *steps)
    p.bulk_steps = std::clamp(std::atoi(steps), 1, 8);
  // GPUCRYPT_OPENCL_LOCAL_SIZE / GPUCRYPT_OPENCL_GROUPS_PER_UNIT: the other two shape knobs.
  if (const char* local = std::getenv("GPUCRYPT_OPENCL_LOCAL_SIZE"); local && *local)
    p.local_size = std::clamp<size_t>(std::strtoull(local, nullptr, 10), 1, d.max_work_group);
  if (const char* groups = std::getenv("GPUCRYPT_OPENCL_GROUPS_PER_UNIT"); groups && *groups)
    p.groups_per_unit = std::clamp<size_t>(std::strtoull(groups, nullptr, 10), 1, 64);
  // Tests move data through small chunks to cross chunk boundaries without hundreds of MiB.
  if (const char* chunk = std::getenv("GPUCRYPT_OPENCL_CHUNK_BYTES"); chunk && *chunk)
    p.chunk_bytes = std::max<size_t>(16, std::strtoull(chunk, nullptr, 10) / 16 * 16);
  return p;
}

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;
    const char* override_path = std::getenv("GPUCRYPT_OPENCL_LIBRARY");
    const std::vector<std::string> candidates =
        override_path && *override_path ? std::vector<std::string>{override_path}
                                        : std::vector<std::string>{"libOpenCL.so.1", "libOpenCL.so"};
    void* handle = nullptr;
    for (const std::string& path : candidates)
      if ((handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (handle == nullptr) {
      reg->error = "no OpenCL library (" + candidates.front() + " not found; install an ICD loader such as "
                   "ocl-icd-libopencl1 and a driver such as pocl-opencl-icd)";
      return reg;
    }
#define GC_CL_FUNCTION(name) reg->api.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));
#include "backends/opencl/opencl_functions.inc"
#undef GC_CL_FUNCTION
    bool complete = true;
#define GC_CL_FUNCTION(name) complete = complete && reg->api.name != nullptr;
#include "backends/opencl/opencl_functions.inc"
#undef GC_CL_FUNCTION
    if (!complete) {
      reg->error = "the OpenCL library lacks OpenCL 1.2 entry points";
      return reg;
    }
    cl_uint num_platforms = 0;
    cl_int status = reg->api.clGetPlatformIDs(0, nullptr, &num_platforms);
    if (status != CL_SUCCESS || num_platforms == 0) {
      reg->error = "no OpenCL platform (the ICD loader found no driver: install one, e.g. pocl-opencl-icd, or "
                   "point OCL_ICD_VENDORS at a directory of .icd files)";
      return reg;
    }
    std::vector<cl_platform_id> platforms(num_platforms);
    reg->api.clGetPlatformIDs(num_platforms, platforms.data(), nullptr);
    for (cl_platform_id platform : platforms) {
      cl_uint num = 0;
      if (reg->api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &num) != CL_SUCCESS || num == 0) continue;
      std::vector<cl_device_id> ids(num);
      reg->api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, num, ids.data(), nullptr);
      size_t len = 0;
      reg->api.clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, nullptr, &len);
      std::string platform_name(len, '\0');
      reg->api.clGetPlatformInfo(platform, CL_PLATFORM_NAME, len, platform_name.data(), nullptr);
      while (!platform_name.empty() && platform_name.back() == '\0') platform_name.pop_back();
      for (cl_device_id id : ids) {
        auto d = std::make_unique<Device>();
        d->index = static_cast<int>(reg->devices.size());
        d->platform = platform;
        d->id = id;
        d->platform_name = platform_name;
        reg->devices.push_back(std::move(d));
      }
    }
    if (reg->devices.empty()) reg->error = "the OpenCL platforms list no device";
    return reg;
  }();
  return *r;
}

// Device properties are read after registry() has published the API.
void describe(Device& d) {
  if (!d.name.empty()) return;
  d.name = device_string(d.id, CL_DEVICE_NAME);
  d.vendor = device_string(d.id, CL_DEVICE_VENDOR);
  d.version = device_string(d.id, CL_DEVICE_VERSION);
  d.type = device_value<cl_device_type>(d.id, CL_DEVICE_TYPE);
  d.local_mem_bytes = device_value<cl_ulong>(d.id, CL_DEVICE_LOCAL_MEM_SIZE);
  d.global_mem_bytes = device_value<cl_ulong>(d.id, CL_DEVICE_GLOBAL_MEM_SIZE);
  d.max_work_group = std::max<size_t>(1, device_value<size_t>(d.id, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  d.compute_units = std::max<cl_uint>(1, device_value<cl_uint>(d.id, CL_DEVICE_MAX_COMPUTE_UNITS));
  d.policy = policy_for(d);
}

const EmbeddedSource* find_source(const std::string& name) {
  for (size_t i = 0; i < kNumEmbeddedSources; ++i)
    if (name == kEmbeddedSources[i].name) return &kEmbeddedSources[i];
  return nullptr;
}

// Inlines #include "x" lines (resolved against the including file's directory, then "core/"),
// each file once: OpenCL compilers get one self-contained source, built from the very headers
// the CPU and CUDA backends compile.
void append_source(const std::string& name, std::set<std::string>& seen, std::string& out) {
  if (!seen.insert(name).second) return;
  const EmbeddedSource* source = find_source(name);
  if (source == nullptr) throw DeviceError("OpenCL kernel source '" + name + "' is not embedded in this build");
  const std::string dir = name.find('/') == std::string::npos ? "" : name.substr(0, name.rfind('/') + 1);
  std::istringstream lines(source->text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t hash = line.find_first_not_of(" \t");
    if (hash != std::string::npos && line.compare(hash, 8, "#include") == 0 && line.find('"') != std::string::npos) {
      const size_t open = line.find('"'), close = line.find('"', open + 1);
      const std::string included = line.substr(open + 1, close - open - 1);
      append_source(find_source(dir + included) ? dir + included : included, seen, out);
      continue;
    }
    out += line;
    out += '\n';
  }
}

// GPUCRYPT_OPENCL_DUMP_DIR=DIR writes each built program's binary there (PTX on NVIDIA, which
// ptxas -v then reports registers and spills for), named by device and build options.
void dump_binary(const Device& d, cl_program program, const std::string& key) {
  const char* dir = std::getenv("GPUCRYPT_OPENCL_DUMP_DIR");
  if (dir == nullptr || *dir == '\0') return;
  size_t size = 0;
  if (api().clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0)
    return;
  std::string binary(size, '\0');
  unsigned char* pointer = reinterpret_cast<unsigned char*>(binary.data());
  if (api().clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof pointer, &pointer, nullptr) != CL_SUCCESS) return;
  std::string name = "opencl" + std::to_string(d.index) + "_" + key;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') c = '_';
  if (FILE* f = std::fopen((std::string(dir) + "/" + name + ".bin").c_str(), "wb")) {
    std::fwrite(binary.data(), 1, binary.size(), f);
    std::fclose(f);
  }
}

// The on-disk program cache: a program's binary (PTX on NVIDIA, an object on PoCL) is stored
// under the SHA3-256 of everything it depends on (device, driver, build options and the full
// source text) and reused by later processes, which then skip the OpenCL C compiler (about a
// second per program on NVIDIA: a CLI command would pay it on every run). The file begins with
// that whole description and a checksum of the binary, both checked on load, so a damaged file
// only costs a rebuild. Neither stops someone who can write the directory from putting another
// program's binary under this one's description (the checksum has no key), so the directory is
// used only when it is ours and writable by no one else (trusted_cache_dir), and a program loaded
// from it is used only after its caller's known-answer check passes (kernel(), ProgramCheck).
// GPUCRYPT_OPENCL_CACHE=DIR moves it (default $XDG_CACHE_HOME/gpucrypt/opencl or
// ~/.cache/gpucrypt/opencl), =off disables it. Failures to read or write it are not errors.
std::string cache_dir() {
  const char* configured = std::getenv("GPUCRYPT_OPENCL_CACHE");
  if (configured && *configured) return std::string_view(configured) == "off" ? "" : configured;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/gpucrypt/opencl";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/gpucrypt/opencl";
  return "";
}

// cache_dir() if it may be used: created mode 0700 when missing; an existing one must be a
// directory owned by this user and writable by no one else (group- or world-writable, or
// another user's: not used, every program is compiled fresh), and is narrowed to 0700.
std::string trusted_cache_dir() {
  const std::string dir = cache_dir();
  if (dir.empty()) return dir;
  std::error_code error;
  if (!std::filesystem::exists(dir, error)) {
    std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), error);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return "";
  }
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != ::geteuid() ||
      (info.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return "";
  if ((info.st_mode & 0077) != 0 && ::chmod(dir.c_str(), 0700) != 0) return "";
  return dir;
}

// The entry's file name: the SHA3-256 of its description, in hex.
std::string entry_name(const std::string& description) {
  uint8_t digest[32];
  hash::hash_once("sha3-256", "", reinterpret_cast<const uint8_t*>(description.data()), description.size(), digest,
                  sizeof digest);
  std::string name;
  for (uint8_t byte : digest) {
    static const char kHex[] = "0123456789abcdef";
    name += kHex[byte >> 4];
    name += kHex[byte & 15];
  }
  return name;
}

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex64(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

cl_program load_cached(Device& d, const std::string& path, const std::string& description) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return nullptr;
  std::string content;
  char buffer[65536];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) content.append(buffer, n);
  std::fclose(f);
  // description \0 checksum (16 hex digits) \0 binary
  const size_t header_len = description.size() + 1 + 16 + 1;
  if (content.size() <= header_len || content.compare(0, description.size(), description) != 0 ||
      content[description.size()] != '\0' || content[header_len - 1] != '\0')
    return nullptr;
  const std::string binary_text = content.substr(header_len);
  if (content.compare(description.size() + 1, 16, hex64(fnv1a(binary_text))) != 0) return nullptr;  // damaged
  const size_t binary_len = binary_text.size();
  const auto* binary = reinterpret_cast<const unsigned char*>(binary_text.data());
  cl_int status = CL_SUCCESS, binary_status = CL_SUCCESS;
  cl_program program = api().clCreateProgramWithBinary(d.context, 1, &d.id, &binary_len, &binary, &binary_status,
                                                       &status);
  if (status != CL_SUCCESS || binary_status != CL_SUCCESS) return nullptr;
  if (api().clBuildProgram(program, 1, &d.id, "", nullptr, nullptr) != CL_SUCCESS) {
    api().clReleaseProgram(program);
    return nullptr;
  }
  return program;
}

void store_cached(Device& d, cl_program program, const std::string& path, const std::string& description) {
  size_t size = 0;
  if (api().clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0)
    return;
  std::string binary(size, '\0');
  unsigned char* pointer = reinterpret_cast<unsigned char*>(binary.data());
  if (api().clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof pointer, &pointer, nullptr) != CL_SUCCESS) return;
  std::error_code error;
  // Written under a temporary name and renamed: a concurrent reader sees the whole file or none.
  const std::string temporary = path + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(&d)) +
                                std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  FILE* f = std::fopen(temporary.c_str(), "wb");
  if (f == nullptr) return;
  const std::string checksum = hex64(fnv1a(binary));
  const bool written = std::fwrite(description.data(), 1, description.size() + 1, f) == description.size() + 1 &&
                       std::fwrite(checksum.c_str(), 1, 17, f) == 17 &&
                       std::fwrite(binary.data(), 1, binary.size(), f) == binary.size();
  if (std::fclose(f) != 0 || !written) {
    std::remove(temporary.c_str());
    return;
  }
  std::filesystem::rename(temporary, path, error);
  if (error) std::remove(temporary.c_str());
}

cl_program build_program(Device& d, const std::string& source_name, const std::string& options,
                          const ProgramCheck& check_cached) {
  std::set<std::string> seen;
  std::string text;
  append_source(source_name, seen, text);
  // -w: the compilers print warnings to the process's stderr, which is the user's terminal.
  const std::string build_options = "-cl-std=CL1.2 -w " + d.policy.defines + options;
  const std::string dir = trusted_cache_dir();
  const std::string description = "gpucrypt OpenCL program 2\n" + d.platform_name + "\n" + d.name + "\n" +
                                  device_string(d.id, CL_DRIVER_VERSION) + "\n" + d.version + "\n" +
                                  build_options + "\n" + text;
  const std::string path = dir.empty() ? "" : dir + "/" + entry_name(description) + ".bin";
  if (!path.empty())
    if (cl_program cached = load_cached(d, path, description)) {
      // Another program's binary under this description gives wrong answers: compiled afresh,
      // and the fresh binary replaces the entry.
      bool answers = false;
      try {
        answers = !check_cached || check_cached(cached);
      } catch (const std::exception&) {  // e.g. a kernel the swapped binary lacks
      }
      if (answers) {
        ++g_programs_cached;
        return cached;
      }
      api().clReleaseProgram(cached);
      ++g_programs_rejected;
    }

  const char* text_pointer = text.c_str();
  cl_int status = CL_SUCCESS;
  cl_program built = api().clCreateProgramWithSource(d.context, 1, &text_pointer, nullptr, &status);
  check(status, "clCreateProgramWithSource");
  status = api().clBuildProgram(built, 1, &d.id, build_options.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS) {
    size_t log_len = 0;
    api().clGetProgramBuildInfo(built, d.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &log_len);
    std::string log(log_len, '\0');
    api().clGetProgramBuildInfo(built, d.id, CL_PROGRAM_BUILD_LOG, log_len, log.data(), nullptr);
    api().clReleaseProgram(built);
    if (log.size() > 4000) log = log.substr(0, 4000) + "...";
    throw DeviceError("OpenCL could not build " + source_name + " (" + options + ") for opencl:" +
                      std::to_string(d.index) + " (" + d.name + "): " + error_name(status) + "\n" + log);
  }
  ++g_programs_built;
  dump_binary(d, built, source_name + " " + options);
  if (!path.empty()) store_cached(d, built, path, description);
  return built;
}

}  // namespace

const char* error_name(cl_int status) {
  switch (status) {
#define GC_CASE(code) case code: return #code;
    GC_CASE(CL_DEVICE_NOT_FOUND) GC_CASE(CL_DEVICE_NOT_AVAILABLE) GC_CASE(CL_COMPILER_NOT_AVAILABLE)
    GC_CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE) GC_CASE(CL_OUT_OF_RESOURCES) GC_CASE(CL_OUT_OF_HOST_MEMORY)
    GC_CASE(CL_PROFILING_INFO_NOT_AVAILABLE) GC_CASE(CL_BUILD_PROGRAM_FAILURE) GC_CASE(CL_INVALID_VALUE)
    GC_CASE(CL_INVALID_DEVICE) GC_CASE(CL_INVALID_CONTEXT) GC_CASE(CL_INVALID_COMMAND_QUEUE)
    GC_CASE(CL_INVALID_MEM_OBJECT) GC_CASE(CL_INVALID_BUILD_OPTIONS) GC_CASE(CL_INVALID_PROGRAM)
    GC_CASE(CL_INVALID_KERNEL_NAME) GC_CASE(CL_INVALID_KERNEL) GC_CASE(CL_INVALID_ARG_INDEX)
    GC_CASE(CL_INVALID_ARG_VALUE) GC_CASE(CL_INVALID_ARG_SIZE) GC_CASE(CL_INVALID_KERNEL_ARGS)
    GC_CASE(CL_INVALID_WORK_GROUP_SIZE) GC_CASE(CL_INVALID_WORK_ITEM_SIZE) GC_CASE(CL_INVALID_GLOBAL_OFFSET)
    GC_CASE(CL_INVALID_EVENT) GC_CASE(CL_INVALID_BUFFER_SIZE) GC_CASE(CL_INVALID_GLOBAL_WORK_SIZE)
    GC_CASE(CL_INVALID_OPERATION) GC_CASE(CL_INVALID_PLATFORM)
#undef GC_CASE
    default: return "CL error";
  }
}

void check(cl_int status, const char* what) {
  if (status != CL_SUCCESS)
    throw DeviceError(std::string("OpenCL ") + what + " failed: " + error_name(status) + " (" + std::to_string(status) + ")");
}

const Api& api() {
  Registry& r = registry();
  if (r.api.clGetPlatformIDs == nullptr) throw DeviceError("OpenCL is not available: " + r.error);
  return r.api;
}

std::vector<Device*> all_devices() {
  std::vector<Device*> out;
  for (auto& d : registry().devices) {
    describe(*d);
    out.push_back(d.get());
  }
  return out;
}

std::string unavailable_reason() {
  Registry& r = registry();
  return r.devices.empty() ? r.error : "";
}

Device& device(int index) {
  Registry& r = registry();
  if (index < 0 || static_cast<size_t>(index) >= r.devices.size()) {
    const std::string why = r.devices.empty() ? r.error
                                              : std::to_string(r.devices.size()) + " OpenCL device(s): opencl:0.." +
                                                    std::to_string(r.devices.size() - 1);
    throw DeviceError("device 'opencl:" + std::to_string(index) + "' is not available: " + why);
  }
  describe(*r.devices[index]);
  return *r.devices[index];
}

void open(Device& d) {
  if (d.queue != nullptr) return;
  cl_int status = CL_SUCCESS;
  d.context = api().clCreateContext(nullptr, 1, &d.id, nullptr, nullptr, &status);
  check(status, "clCreateContext");
  d.queue = api().clCreateCommandQueue(d.context, d.id, CL_QUEUE_PROFILING_ENABLE, &status);
  check(status, "clCreateCommandQueue");
}

cl_kernel kernel(Device& d, const std::string& source_name, const std::string& options, const char* kernel_name,
                 const ProgramCheck& check_cached) {
  open(d);
  const std::string program_key = source_name + " " + options;
  const std::string kernel_key = program_key + " :: " + kernel_name;
  if (auto it = d.kernels.find(kernel_key); it != d.kernels.end()) return it->second;
  cl_program& program = d.programs[program_key];
  if (program == nullptr) {
    try {
      program = build_program(d, source_name, options, check_cached);
    } catch (...) {
      d.programs.erase(program_key);
      throw;
    }
  }
  cl_int status = CL_SUCCESS;
  cl_kernel k = api().clCreateKernel(program, kernel_name, &status);
  check(status, "clCreateKernel");
  d.kernels[kernel_key] = k;
  return k;
}

ProgramKernel::ProgramKernel(cl_program program, const char* kernel_name) {
  cl_int status = CL_SUCCESS;
  kernel_ = api().clCreateKernel(program, kernel_name, &status);
  check(status, "clCreateKernel");
}

ProgramKernel::~ProgramKernel() {
  if (kernel_) api().clReleaseKernel(kernel_);
}

Stats stats() { return {g_programs_built.load(), g_programs_cached.load(), g_kernels_run.load(), g_programs_rejected.load()}; }

Buffer::Buffer(Device& d, size_t bytes, cl_mem_flags flags) : bytes_(bytes), device_(&d) {
  open(d);
  cl_int status = CL_SUCCESS;
  mem_ = api().clCreateBuffer(d.context, flags, std::max<size_t>(bytes, 16), nullptr, &status);
  check(status, "clCreateBuffer");
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (mem_) api().clReleaseMemObject(mem_);
    mem_ = other.mem_;
    bytes_ = other.bytes_;
    device_ = other.device_;
    other.mem_ = nullptr;
  }
  return *this;
}

Buffer::~Buffer() {
  if (mem_) api().clReleaseMemObject(mem_);
}

void Buffer::write(const void* host, size_t bytes, size_t offset) {
  if (bytes == 0) return;
  check(api().clEnqueueWriteBuffer(device_->queue, mem_, CL_TRUE, offset, bytes, host, 0, nullptr, nullptr),
        "clEnqueueWriteBuffer");
}

void Buffer::read(void* host, size_t bytes, size_t offset) const {
  if (bytes == 0) return;
  check(api().clEnqueueReadBuffer(device_->queue, mem_, CL_TRUE, offset, bytes, host, 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
}

void Buffer::fill_zero(size_t bytes, size_t offset) {
  if (bytes == 0) return;
  const cl_uchar zero = 0;
  check(api().clEnqueueFillBuffer(device_->queue, mem_, &zero, 1, offset, bytes, 0, nullptr, nullptr),
        "clEnqueueFillBuffer");
  check(api().clFinish(device_->queue), "clFinish");
}

size_t grid_items(const Device& d, uint64_t units) {
  const size_t full = d.policy.local_size * d.policy.groups_per_unit * d.compute_units;
  return static_cast<size_t>(std::max<uint64_t>(1, std::min<uint64_t>(units, full)));
}

void launch(Device& d, cl_kernel k, size_t global_items, double* profile_seconds) {
  size_t kernel_max = d.policy.local_size;
  api().clGetKernelWorkGroupInfo(k, d.id, CL_KERNEL_WORK_GROUP_SIZE, sizeof kernel_max, &kernel_max, nullptr);
  const size_t local = std::max<size_t>(1, std::min(d.policy.local_size, kernel_max));
  const size_t global = (std::max<size_t>(global_items, 1) + local - 1) / local * local;
  cl_event event = nullptr;
  check(api().clEnqueueNDRangeKernel(d.queue, k, 1, nullptr, &global, &local, 0, nullptr,
                                     profile_seconds ? &event : nullptr),
        "clEnqueueNDRangeKernel");
  ++g_kernels_run;
  if (profile_seconds) {
    check(api().clWaitForEvents(1, &event), "clWaitForEvents");
    cl_ulong start = 0, end = 0;
    api().clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
    api().clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
    api().clReleaseEvent(event);
    *profile_seconds = static_cast<double>(end - start) * 1e-9;
  }
}

void finish(Device& d) { check(api().clFinish(d.queue), "clFinish"); }

}  // namespace gpucrypt::opencl
