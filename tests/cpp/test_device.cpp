// test_device.cpp: the Device registry (include/gpucrypt/device.hpp, src/device/). The CPU is
// always registered and listed first; a name the parser rejects is std::invalid_argument, a backend
// this build or machine lacks is DeviceError with the message the public API has always given;
// Device::select names the variant that really runs, for every cipher on every device listed (the
// CPU, PoCL's CPU OpenCL device in CI, GPUs where present), with and without constant_time; the free
// functions (list_devices, list_variants, constant_time_variant) agree with the Devices.
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gpucrypt/device.hpp"
#include "gpucrypt/cipher.hpp"
#include "gpucrypt/format.hpp"
#include "gpucrypt/hash.hpp"
#include "gpucrypt/scheduler.hpp"
#include "device/registry.hpp"
#include "test_support.hpp"

using namespace gpucrypt;
using test_support::check;

namespace {

// The message of the exception `call` throws as E, or "" (and a failed check) when it throws
// nothing or something else.
template <typename E>
std::string message_of(const std::function<void()>& call, const std::string& what) {
  try {
    call();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    check(false, what + ": threw the wrong type: " + e.what());
    return "";
  }
  check(false, what + ": did not throw");
  return "";
}

void check_registry_lists_the_cpu_first() {
  const std::vector<DeviceInfo> listed = list_devices();
  check(!listed.empty() && listed[0].name == "cpu" && listed[0].kind == "cpu", "list_devices starts with cpu");
  const Device& cpu = device("CPU");
  check(cpu.name().kind == "cpu" && cpu.name().canonical == "cpu" && cpu.name().index == 0, "device(\"CPU\") is cpu");
  check(&cpu == &device("cpu"), "one Device per canonical name");
  check(cpu.info().name == "cpu" && cpu.info().num_compute_units >= 1, "cpu info");
  for (const DeviceInfo& d : listed) check(device(d.name).info().name == d.name, "device(" + d.name + ").info()");
}

void check_variants_come_from_the_devices() {
  // list_variants is every backend's list in registry order: the CPU's is exactly its Device's.
  std::vector<std::string> listed_cpu, device_cpu;
  for (const VariantInfo& v : list_variants())
    if (v.backend == "cpu") listed_cpu.push_back(v.name);
  for (const VariantInfo& v : device("cpu").variants()) device_cpu.push_back(v.name);
  check(!device_cpu.empty() && listed_cpu == device_cpu, "list_variants' cpu part is device(\"cpu\").variants()");
  for (const DeviceInfo& d : list_devices())
    for (const VariantInfo& v : device(d.name).variants())
      check(v.backend == d.kind, d.name + " offers " + v.name + " of backend " + v.backend);
}

void check_name_errors() {
  const std::string expected = "unknown device 'tpu': expected cpu, cuda, cuda:N, opencl or opencl:N";
  check(message_of<std::invalid_argument>([] { device("tpu"); }, "device(tpu)") == expected, "unknown device message");
  for (const char* bad : {"cpu:0", "cuda:", "cuda:-1", "cuda:x", "opencl:1x", ""})
    message_of<std::invalid_argument>([bad] { device(bad); }, std::string("device(") + bad + ")");
  check(parse_device_name("OpenCL").canonical == "opencl:0" && parse_device_name("cuda:3").index == 3,
        "parse_device_name still reads kinds and indices");
}

// A backend that cannot run gives the same DeviceError through device() as through the API, with
// the name as the caller spelt it.
void check_missing_backend(const std::string& reason, const std::vector<std::string>& names) {
  if (reason.empty()) return;  // this machine has such a device
  for (const std::string& name : names) {
    const std::string expected = "device '" + name + "' is not available: " + reason;
    const std::string through_api = message_of<DeviceError>(
        [&] {
          create_cipher_stream(parse_cipher_name("aes-128-ctr"), Direction::encrypt, std::vector<uint8_t>(16),
                               std::vector<uint8_t>(16), "", name);
        },
        "create_cipher_stream on " + name);
    check(through_api == expected, "API message on " + name + ": " + through_api);
    const std::string through_registry = message_of<DeviceError>([&] { device(name).info(); }, "device(" + name + ")");
    check(through_registry == expected, "device() message on " + name + ": " + through_registry);
  }
  check(message_of<DeviceError>([&] { create_gcm(parse_cipher_name("aes-128-gcm"), std::vector<uint8_t>(16), "",
                                                 names[0]); },
                                "create_gcm on " + names[0]) == "device '" + names[0] + "' is not available: " + reason,
        "create_gcm message on " + names[0]);
}

void check_missing_backends() {
#if !defined(GPUCRYPT_WITH_CUDA)
  check(cuda_unavailable_reason() == "this build of gpucrypt has no CUDA backend (built without a CUDA toolkit)",
        "cuda reason without CUDA: " + cuda_unavailable_reason());
#endif
#if !defined(GPUCRYPT_WITH_OPENCL)
  check(opencl_unavailable_reason() ==
            "this build of gpucrypt has no OpenCL backend (built without the OpenCL headers)",
        "opencl reason without OpenCL: " + opencl_unavailable_reason());
#endif
  check_missing_backend(cuda_unavailable_reason(), {"cuda:7", "CUDA:7", "cuda"});
  // A build with OpenCL reports a missing OpenCL device when it is used, with the backend's own
  // message (opencl_runtime.cpp), as it always has; only a build without it fails at the name.
#if !defined(GPUCRYPT_WITH_OPENCL)
  check_missing_backend(opencl_unavailable_reason(), {"opencl:7", "OpenCL"});
#endif
}

std::vector<uint8_t> key_for(const CipherName& name) {
  std::vector<uint8_t> key(name.key_len());
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(i + 1);  // XTS halves differ
  return key;
}

// The variant a cipher object reports when made on `where` with `variant`.
std::string variant_that_runs(const CipherName& name, const std::string& where, const std::string& variant) {
  if (name.mode == Mode::gcm) return create_gcm(name, key_for(name), variant, where)->variant().name;
  const std::vector<uint8_t> iv(name.mode == Mode::ecb ? 0 : 16, 7);
  return create_cipher_stream(name, Direction::encrypt, key_for(name), iv, variant, where)->variant().name;
}

void check_select_names_what_runs(const std::string& where) {
  const Device& d = device(where);
  for (const char* algorithm : {"aes", "camellia", "sc2000"}) {
    for (const char* bits : {"128", "192", "256"}) {
      for (const char* mode : {"ecb", "cbc", "cfb", "ofb", "ctr", "xts", "gcm"}) {
        if (std::string(mode) == "xts" && std::string(bits) == "192") continue;
        const CipherName name = parse_cipher_name(std::string(algorithm) + "-" + bits + "-" + mode);
        const std::string what = name.canonical + " on " + where;
        const VariantInfo chosen = d.select(name.algorithm, name.mode);
        check(chosen.backend == d.name().kind, what + ": select chose " + chosen.name + " of " + chosen.backend);
        check(variant_that_runs(name, where, "") == chosen.name, what + ": select() is not what runs");

        const std::string constant_time_what = what + " (constant-time)";
        if (name.algorithm != Algorithm::aes) {
          const std::string message = message_of<std::invalid_argument>(
              [&] { d.select(name.algorithm, name.mode, true); }, constant_time_what);
          check(message == "no constant-time " + std::string(algorithm) + " variant on " + d.name().canonical +
                               "; name a variant explicitly to accept a table-based one",
                constant_time_what + ": " + message);
          continue;
        }
        const VariantInfo safe = d.select(name.algorithm, name.mode, true);
        check(safe.constant_time, constant_time_what + ": " + safe.name + " is not constant-time");
        check(safe.name == constant_time_variant(algorithm, where, mode),
              constant_time_what + ": select and constant_time_variant differ");
        check(variant_that_runs(name, where, safe.name) == safe.name, constant_time_what + ": does not run");
      }
    }
  }
}

void check_hashing_hooks(const std::string& where) {
  const std::vector<std::string> messages = {"", "abc", std::string(300, 'x')};
  std::vector<const uint8_t*> pointers;
  std::vector<size_t> lens;
  for (const std::string& m : messages) {
    pointers.push_back(reinterpret_cast<const uint8_t*>(m.data()));
    lens.push_back(m.size());
  }
  std::vector<uint8_t> expected(32 * messages.size()), got(expected.size(), 0);
  hash::hash_many("sha3-256", hash::HashParams{}, pointers.data(), lens.data(), messages.size(), expected.data(), 32);
  device(where).hash_many("sha3-256", pointers.data(), lens.data(), messages.size(), got.data(), 32);
  check(got == expected, "hash_many on " + where);

  const std::string data(20000, 'k');
  hash::HashParams params;
  params.block_size = 1024;
  std::vector<uint8_t> tree_expected(64), tree_got(64, 0);
  auto context = hash::create_hash("parallelhash256", params, "");
  context->update(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  context->finalize(tree_expected.data(), tree_expected.size());
  device(where).tree_hash("parallelhash256", params, reinterpret_cast<const uint8_t*>(data.data()), data.size(),
                          tree_got.data(), tree_got.size());
  check(tree_got == tree_expected, "tree_hash on " + where);
}

// The constant-time rule over a made-up list: fastest first, one-mode variants only for their
// mode, and a variant slower in a mode passed over there unless nothing else runs it.
void check_constant_time_rule() {
  const std::vector<VariantInfo> listed = {
      {"table", "x", "aes", false, ""},
      {"wide", "x", "aes", true, "", "", "gcm"},
      {"gcm_only", "x", "aes", true, "", "gcm"},
      {"narrow", "x", "aes", true, ""},
      {"lonely", "x", "camellia", true, "", "", "ctr"},
  };
  auto chosen = [&](const char* algorithm, const char* mode) {
    return registry::fastest_constant_time(listed, algorithm, mode, "x:0").name;
  };
  check(chosen("aes", "ctr") == "wide", "constant-time ctr: the first");
  check(chosen("aes", "") == "wide", "constant-time, any mode: the first");
  check(chosen("aes", "gcm") == "gcm_only", "constant-time gcm: past the one slower in gcm");
  check(chosen("camellia", "ctr") == "lonely", "slower in ctr, but the only one");
  bool threw = false;
  try {
    chosen("sc2000", "ctr");
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  check(threw, "no constant-time variant: invalid_argument");
}

// The device policy: what each spelling of the options means (select_devices.cpp). Names only:
// check_present off, so the answers are the same on machines with and without GPUs.
void check_device_policy() {
  auto chosen = [](std::string_view device, std::string_view devices, std::string_view share) {
    return select_devices(device, devices, share, false);
  };
  using Names = std::vector<std::string>;
  const DeviceSelection one_gpu = chosen("cuda", "", "");
  check(one_gpu.devices == Names{"cuda:0"} && one_gpu.cpu_share == 0.0, "one GPU named: alone");
  const DeviceSelection with_cpu = chosen("cuda:1", "", "auto");
  check(with_cpu.devices == Names{"cuda:1", "cpu"} && with_cpu.cpu_share < 0, "a share adds the CPU, last");
  const DeviceSelection listed = chosen("auto", "cpu, CUDA:0,cuda:0", "");
  check(listed.devices == Names{"cuda:0", "cpu"} && listed.cpu_share < 0,
        "a list replaces auto; repeats dropped; cpu named beside a GPU: measured shares");
  const DeviceSelection fixed = chosen("auto", "cuda:0,cuda:1", "0.25");
  check(fixed.devices == Names{"cuda:0", "cuda:1", "cpu"} && fixed.cpu_share == 0.25, "a fixed share");
  const DeviceSelection cpu = chosen("cpu", "", "");
  check(cpu.devices == Names{"cpu"} && cpu.cpu_share == 1.0, "the CPU alone takes everything");
  const DeviceSelection automatic = chosen("auto", "", "");
  check(automatic.devices.back() == "cpu" && automatic.devices.size() == auto_gpus().size() + 1,
        "auto: every GPU of auto_gpus, then the CPU");
  check(automatic.cpu_share == (auto_gpus().empty() ? 1.0 : -1.0), "auto: measured shares with a GPU");
  auto refused = [&](std::string_view device, std::string_view share, std::string_view words) {
    try {
      chosen(device, "", share);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what()).find(words) != std::string::npos;
    }
    return false;
  };
  check(refused("cpu", "0", "leaves no device"), "a share of 0 with no GPU");
  // Options that would be ignored are refused: a share beside the CPU named alone, a device
  // beside a list (which replaced it without a word).
  check(refused("cpu", "0.5", "the only device named is the CPU"), "a share beside the CPU alone");
  check(refused("cpu", "auto", "the only device named is the CPU"), "a measured share beside the CPU alone");
  bool list_and_device_refused = false;
  try {
    chosen("cuda:0", "cpu", "");
  } catch (const std::invalid_argument& e) {
    list_and_device_refused = std::string(e.what()).find("a list of devices") != std::string::npos;
  }
  check(list_and_device_refused, "a device beside a list");
  try {
    chosen("auto", "cpu", "0.5");
    check(false, "a share beside a list of only the CPU: refused");
  } catch (const std::invalid_argument&) {
  }
  // Under auto a share stands for the GPUs another machine has: kept, or the CPU alone without one.
  const DeviceSelection auto_share = chosen("auto", "", "0.5");
  check(auto_share.cpu_share == (auto_gpus().empty() ? 1.0 : 0.5), "auto with a share: accepted");
  check(refused("auto", "1.5", "between 0 and 1"), "a share above 1");
  check(refused("auto", "half", "'auto' or a number"), "a share that is no number");
  // The parser select_devices reads the share with, which Python's stream.parse_cpu_share is.
  check(!parse_cpu_share(" ") && parse_cpu_share(" auto ") == -1.0 && parse_cpu_share("0.25") == 0.25 &&
            parse_cpu_share("1") == 1.0,
        "parse_cpu_share: blank, auto, numbers");
  for (const char* bad : {"nan", "-0.5", "0.5x", "1e3"}) {
    bool threw = false;
    try {
      parse_cpu_share(bad);
    } catch (const std::invalid_argument& e) {
      threw = std::string(e.what()).rfind("cpu_share must be", 0) == 0;
    }
    check(threw, std::string("parse_cpu_share refuses ") + bad);
  }
  check(refused("gpu", "", "unknown device"), "an unknown device name");
  for (const std::string& gpu : auto_gpus()) check(gpu.rfind("cpu", 0) != 0, "auto_gpus lists no CPU");
}

}  // namespace

// Traits, not names, say what a device is to the scheduler and the format (issue 31 item 1); the
// work on device memory a CPU cannot do is refused by name.
void check_traits_and_resident_refusals() {
  const DeviceTraits cpu = device("cpu").traits();
  check(!cpu.is_gpu && cpu.workers == 1, "the CPU is no GPU and takes one job at a time");
  check(cpu.job_len >= (2u << 20) && cpu.job_len <= (8u << 20), "the CPU's job length is 2..8 MiB");
  const auto scheduled = scheduler_devices({"cpu"});
  check(scheduled.size() == 1 && scheduled[0].is_cpu && scheduled[0].workers == 1, "scheduler_devices: the CPU");
  check(scheduler_devices({"cpu"}, 2, 5)[0].workers == 2, "scheduler_devices: the caller's CPU workers");
  check(format::default_job_len({"cpu"}) == cpu.job_len, "the format's default job is the CPU's");
  for (const DeviceInfo& d : list_devices()) {
    if (d.kind == "cpu") continue;
    const DeviceTraits gpu = device(d.name).traits();
    check(gpu.is_gpu && gpu.workers == 3 && gpu.job_len == (16u << 20), d.name + ": GPU traits");
    check(scheduler_devices({d.name, "cpu"}, 0, 6)[0].workers == 6, d.name + ": the caller's GPU workers");
    check(format::default_job_len({d.name}) == gpu.job_len && format::default_job_len({d.name, "cpu"}) == cpu.job_len,
          d.name + ": the smallest job length of the devices");
    // What each backend offers beyond host memory, asked instead of read from the kind (Python's
    // info.resident_memory / info.kernel_timing): CUDA works on its own memory, OpenCL times its kernels.
    const Device& listed = device(d.name);
    check(listed.resident_memory() == (d.kind == "cuda") && listed.kernel_timing() == (d.kind == "opencl"),
          d.name + ": resident_memory and kernel_timing");
  }
  const Device& host = device("cpu");
  const std::vector<uint8_t> key(16);
  const std::string refused = message_of<DeviceError>(
      [&] { host.create_resident_cipher(parse_cipher_name("aes-128-ctr"), Direction::encrypt, key, ""); },
      "resident cipher on the CPU");
  check(refused.find("device 'cpu' does not support work on device memory") != std::string::npos,
        "the CPU refuses device memory by name: " + refused);
  check(!message_of<DeviceError>([&] { host.alloc_device(16); }, "alloc_device on the CPU").empty(),
        "the CPU has no device memory");
  check(!message_of<DeviceError>([&] { host.time_kernel(parse_cipher_name("aes-128-ctr"), "", 16, 1); },
                                 "time_kernel on the CPU")
             .empty(),
        "the CPU has no kernel timing");
  check(!host.resident_memory() && !host.kernel_timing() && host.counters().empty(),
        "the CPU offers no resident work or kernel timing and counts nothing");
}

int main() {
  check_traits_and_resident_refusals();
  check_device_policy();
  check_constant_time_rule();
  check_registry_lists_the_cpu_first();
  check_variants_come_from_the_devices();
  check_name_errors();
  check_missing_backends();
  std::printf("select and hashing checked on:");
  for (const DeviceInfo& d : list_devices()) {
    std::printf(" %s", d.name.c_str());
    check_select_names_what_runs(d.name);
    check_hashing_hooks(d.name);
  }
  std::printf("\n");
  return test_support::report();
}
