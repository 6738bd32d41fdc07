// select_devices.cpp: the one device policy (gpucrypt/device.hpp): what "auto", a device name or a
// list of them and a CPU share mean, for the stream engine, the file format, the CLI, MPI ranks,
// the C API and the lab alike; and the engine's view of the chosen devices (scheduler_devices,
// host_memory_device).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "device/registry.hpp"
#include "gpucrypt/scheduler.hpp"

namespace gpucrypt {

namespace {

// Whether an OpenCL ICD other than PoCL is registered (OCL_ICD_VENDORS, else /etc/OpenCL/vendors).
// PoCL's devices are this machine's CPU, which "auto" runs natively (OpenSSL's AES-NI, far faster
// than PoCL's kernels); asking the OpenCL backend would load the ICD loader, PoCL and LLVM (about
// 40 ms and 60 MiB) into every run on a machine whose answer is the CPU anyway.
bool other_opencl_icd_registered() {
  namespace fs = std::filesystem;
  const char* vendors = std::getenv("OCL_ICD_VENDORS");
  const fs::path where = vendors != nullptr && *vendors != '\0' ? fs::path(vendors) : fs::path("/etc/OpenCL/vendors");
  std::error_code error;
  std::vector<fs::path> icds;
  if (fs::is_directory(where, error)) {
    for (const auto& entry : fs::directory_iterator(where, error))
      if (entry.path().extension() == ".icd") icds.push_back(entry.path());
  } else if (fs::exists(where, error)) {
    icds.push_back(where);  // OCL_ICD_VENDORS may name one .icd file
  }
  for (const fs::path& icd : icds) {
    std::ifstream file(icd);
    const std::string library((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (library.find("pocl") == std::string::npos) return true;
  }
  return false;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<double> parse_cpu_share(std::string_view text) {
  text = trimmed(text);
  if (text.empty()) return std::nullopt;
  if (text == "auto") return -1.0;
  const std::string s(text);
  char* end = nullptr;
  const double share = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || std::isnan(share))
    throw std::invalid_argument("cpu_share must be 'auto' or a number from 0 to 1, not '" + s + "'");
  if (share < 0.0 || share > 1.0) throw std::invalid_argument("cpu_share must be between 0 and 1, got " + s);
  return share;
}

std::vector<std::string> auto_gpus() {
  // Found once per process (the devices of a process do not change; callers ask per message).
  static const std::vector<std::string> found = [] {
    // The first backend in the registry's order that lists a device other than a CPU: CUDA before
    // OpenCL, whose NVIDIA ICD lists the same GPUs again (and runs them slower).
    for (const registry::DeviceBackend& backend : registry::backends()) {
      if (backend.kind == "cpu") continue;
      if (backend.kind == "opencl" && !other_opencl_icd_registered()) continue;  // before asking it anything
      if (!backend.unavailable_reason().empty()) continue;
      std::vector<std::string> gpus;
      for (const DeviceInfo& d : backend.devices())
        if (d.type != "cpu") gpus.push_back(d.name);
      if (!gpus.empty()) return gpus;
    }
    return std::vector<std::string>{};
  }();
  return found;
}

const std::string& machine_description() {
  static const std::string described = [] {
    namespace fs = std::filesystem;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::string text = std::string("host ") + host + ", " + std::to_string(std::thread::hardware_concurrency()) +
                       " threads";
    // Each GPU's "Model:" and "Bus Location:" lines, in the driver's order of its bus addresses.
    std::error_code error;
    std::vector<std::string> gpus;
    for (const auto& entry : fs::directory_iterator("/proc/driver/nvidia/gpus", error)) {
      std::ifstream information(entry.path() / "information");
      std::string line, gpu;
      while (std::getline(information, line))
        if (line.rfind("Model:", 0) == 0 || line.rfind("Bus Location:", 0) == 0) gpu.append(" ").append(trimmed(line));
      gpus.push_back(gpu.empty() ? entry.path().filename().string() : gpu);
    }
    std::sort(gpus.begin(), gpus.end());
    text += gpus.empty() ? ", no NVIDIA GPU" : ", NVIDIA:";
    for (const std::string& gpu : gpus) text += gpu + ";";
    for (const char* name : {"CUDA_VISIBLE_DEVICES", "GPUCRYPT_GPU_WORKERS", "OCL_ICD_VENDORS"})
      if (const char* value = std::getenv(name)) text += std::string(", ") + name + "=" + value;
    if (other_opencl_icd_registered()) text += ", an OpenCL ICD other than PoCL";
    for (char& c : text)
      if (c == '\t' || c == '\n') c = ' ';
    return text;
  }();
  return described;
}

namespace {

// The early start's thread. Never destroyed: a std::thread still joinable at exit would terminate
// the process, and wait_devices_started is the one place that joins it.
struct EarlyStart {
  std::mutex mutex;
  std::thread thread;
  bool begun = false;
};
EarlyStart& early_start() {
  static EarlyStart* state = new EarlyStart;
  return *state;
}

}  // namespace

std::vector<std::string> deal_gpus(const std::vector<std::string>& gpus, int local_rank, int local_size) {
  if (local_size < 1 || local_rank < 0 || local_rank >= local_size)
    throw std::invalid_argument("local rank " + std::to_string(local_rank) + " of " + std::to_string(local_size) +
                                " ranks is not a rank");
  if (gpus.empty()) return {};
  if (static_cast<size_t>(local_size) >= gpus.size()) return {gpus[static_cast<size_t>(local_rank) % gpus.size()]};
  std::vector<std::string> mine;
  for (size_t i = static_cast<size_t>(local_rank); i < gpus.size(); i += static_cast<size_t>(local_size))
    mine.push_back(gpus[i]);
  return mine;
}

void start_devices_early(const std::vector<std::string>& devices, int local_rank, int local_size) {
  EarlyStart& state = early_start();
  std::lock_guard lock(state.mutex);
  if (state.begun) return;
  state.begun = true;
  if (local_size < 1 || local_rank < 0 || local_rank >= local_size) return;  // not a rank: nothing to start
  state.thread = std::thread([devices, local_rank, local_size] {
    try {
      std::map<std::string, std::vector<int>> indices;  // backend kind -> its devices' indices
      for (const std::string& named : devices) {
        std::vector<std::string> names{named};
        if (trimmed(named) == "auto") names = deal_gpus(auto_gpus(), local_rank, local_size);
        for (const std::string& name : names) {
          try {
            const DeviceName parsed = parse_device_name(trimmed(name));
            indices[parsed.kind].push_back(parsed.index);
          } catch (const std::exception&) {  // a malformed name: the caller's own parse says so
          }
        }
      }
      for (const auto& [kind, numbers] : indices)
        if (const registry::DeviceBackend* backend = registry::find_backend(kind); backend && backend->start_up)
          backend->start_up(numbers);
    } catch (...) {  // nothing to report here: the first use of a device names its error
    }
  });
}

void wait_devices_started() {
  EarlyStart& state = early_start();
  std::lock_guard lock(state.mutex);
  if (state.thread.joinable()) state.thread.join();
}

DeviceSelection select_devices(std::string_view device, std::string_view devices, std::string_view cpu_share,
                               bool check_present) {
  std::optional<double> share = parse_cpu_share(cpu_share);
  const bool given_share = share.has_value();
  std::vector<std::string> chosen;
  auto add = [&](std::string_view name) {
    const std::string canonical = parse_device_name(trimmed(name)).canonical;
    if (std::find(chosen.begin(), chosen.end(), canonical) == chosen.end()) chosen.push_back(canonical);
  };
  for (size_t at = 0; at <= devices.size();) {  // a list replaces `device` (refused beside a named one)
    const size_t comma = std::min(devices.find(',', at), devices.size());
    if (!trimmed(devices.substr(at, comma - at)).empty()) add(devices.substr(at, comma - at));
    at = comma + 1;
  }
  const bool named_cpu = std::find(chosen.begin(), chosen.end(), "cpu") != chosen.end();
  const std::string_view one = trimmed(device);
  const bool one_is_auto = one.empty() || one == "auto";
  // Both given, one would be dropped without a word: refused, as every other meaningless option is.
  if (!chosen.empty() && !one_is_auto)
    throw std::invalid_argument("both a device ('" + std::string(one) +
                                "') and a list of devices were given; the list replaces the device: give one");
  const bool auto_selection = chosen.empty() && one_is_auto;  // auto_gpus() plus the CPU
  if (chosen.empty()) {
    if (one_is_auto) {
      chosen = auto_gpus();
      if (!share) share = -1.0;  // every GPU and the CPU, shares measured
    } else {
      add(one);
    }
  }
  std::vector<std::string> gpus;
  for (const std::string& name : chosen)
    if (name != "cpu") gpus.push_back(name);
  // Naming the CPU beside GPUs asks for it: measured shares unless a share is given.
  if (!share) share = gpus.empty() ? 1.0 : named_cpu ? -1.0 : 0.0;
  if (gpus.empty()) {
    if (*share == 0.0) throw std::invalid_argument("cpu_share=0 leaves no device: no GPU was named or found");
    // Named devices that are only the CPU: it does all the work, so a share would be ignored.
    // Under "auto" a share is kept for the GPUs another machine has (a script runs on both).
    if (given_share && !auto_selection)
      throw std::invalid_argument("a CPU share divides the work between the CPU and GPUs, but the only device "
                                  "named is the CPU, which does all of it: give no share, or name a GPU too");
    share = 1.0;
  }
  DeviceSelection selection;
  selection.devices = gpus;
  if (*share != 0.0) selection.devices.push_back("cpu");  // the CPU last
  selection.cpu_share = gpus.empty() ? 1.0 : *share;
  if (check_present)
    for (const std::string& name : gpus) gpucrypt::device(name).info();  // DeviceError saying why not
  return selection;
}

std::vector<engine::SchedulerDevice> scheduler_devices(const std::vector<std::string>& devices, unsigned cpu_workers,
                                                       unsigned gpu_workers) {
  std::vector<engine::SchedulerDevice> scheduled;
  for (const std::string& name : devices) {
    const DeviceTraits traits = device_traits(name);
    const unsigned tuned = traits.is_gpu ? gpu_workers : cpu_workers;
    scheduled.push_back({name, !traits.is_gpu, tuned != 0 ? tuned : traits.workers});
  }
  return scheduled;
}

const Device* host_memory_device(const std::vector<std::string>& devices) {
  for (const std::string& name : devices) {
    const Device& candidate = device(name);
    if (candidate.offers_host_memory()) return &candidate;
  }
  return nullptr;
}

}  // namespace gpucrypt
