// device_hash_bindings.cpp: gpucrypt._native.device_hash_many and device_tree_hash, the Keccak
// family on a GPU or OpenCL device (Device::hash_many / tree_hash, include/gpucrypt/device.hpp),
// named by device string ("cuda:0", "opencl:1"); and the older cuda_hash_many / cuda_tree_hash,
// which take a CUDA device index; a device's counters and kernel timing (Device::counters,
// time_kernel). Plumbing only: buffers in, bytes out, the GIL released around
// the device work. A backend this build lacks raises DeviceError.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpucrypt/device.hpp"
#include "gpucrypt/cipher.hpp"
#include "gpucrypt/hash.hpp"
#include "buffer_view.hpp"

namespace nb = nanobind;

namespace gpucrypt::python {

void register_cuda_hash_bindings(nb::module_& m);

namespace {

// device_hash_many(name, messages, out_len, device) -> list[bytes], one digest per message.
nb::list device_hash_many(std::string_view name, nb::iterable messages, size_t out_len, std::string_view device) {
  const DeviceName where = parse_device_name(device);
  if (!device_traits(device).is_gpu)
    throw std::invalid_argument("device_hash_many runs on a GPU or OpenCL device, not the CPU");
  std::vector<std::unique_ptr<BufferView>> views;
  std::vector<const uint8_t*> pointers;
  std::vector<size_t> lens;
  for (nb::handle message : messages) {
    views.push_back(std::make_unique<BufferView>(message));
    pointers.push_back(views.back()->data());
    lens.push_back(views.back()->size());
  }
  format::check_digest_memory(out_len * pointers.size());
  std::vector<uint8_t> digests(out_len * pointers.size());
  {
    nb::gil_scoped_release release;
    // The canonical name, as these errors have always spelt the device ("cuda:0" for "cuda").
    gpucrypt::device(where.canonical)
        .hash_many(name, pointers.data(), lens.data(), pointers.size(), digests.data(), out_len);
  }
  nb::list result;
  for (size_t i = 0; i < pointers.size(); ++i)
    result.append(nb::bytes(reinterpret_cast<const char*>(digests.data() + i * out_len), out_len));
  return result;
}

// device_tree_hash(name, data, out_len, customization, block_size, device) -> bytes, for
// parallelhash128/256(-xof) and kt128/kt256.
nb::bytes device_tree_hash(std::string_view name, nb::handle data, size_t out_len, nb::handle customization,
                           size_t block_size, std::string_view device) {
  const DeviceName where = parse_device_name(device);
  if (!device_traits(device).is_gpu)
    throw std::invalid_argument("device_tree_hash runs on a GPU or OpenCL device, not the CPU");
  BufferView input(data);
  hash::HashParams params;
  {
    BufferView s(customization);
    params.customization.assign(reinterpret_cast<const char*>(s.data()), s.size());
  }
  params.block_size = block_size;
  format::check_digest_memory(out_len);
  std::vector<uint8_t> digest(out_len);
  {
    nb::gil_scoped_release release;
    gpucrypt::device(where.canonical).tree_hash(name, params, input.data(), input.size(), digest.data(), out_len);
  }
  return nb::bytes(reinterpret_cast<const char*>(digest.data()), out_len);
}

std::string cuda_device(int device_index) { return "cuda:" + std::to_string(device_index); }

}  // namespace

void register_cuda_hash_bindings(nb::module_& m) {
  m.def("device_hash_many", &device_hash_many, nb::arg("name"), nb::arg("messages"), nb::arg("out_len"),
        nb::arg("device"),
        "Hashes many messages on a GPU or OpenCL device (sha3-*, shake*, keccak-*, cshake* without N/S); "
        "list of bytes.");
  m.def("device_tree_hash", &device_tree_hash, nb::arg("name"), nb::arg("data"), nb::arg("out_len"),
        nb::arg("customization") = nb::bytes(""), nb::arg("block_size") = 8192, nb::arg("device"),
        "ParallelHash128/256(-xof) or KT128/KT256 of one input, leaves on a GPU or OpenCL device; bytes.");
  m.def(
      "cuda_hash_many",
      [](std::string_view name, nb::iterable messages, size_t out_len, int device_index) {
        return device_hash_many(name, messages, out_len, cuda_device(device_index));
      },
      nb::arg("name"), nb::arg("messages"), nb::arg("out_len"), nb::arg("device_index") = 0,
      "device_hash_many on cuda:device_index.");
  m.def(
      "cuda_tree_hash",
      [](std::string_view name, nb::handle data, size_t out_len, nb::handle customization, size_t block_size,
         int device_index) {
        return device_tree_hash(name, data, out_len, customization, block_size, cuda_device(device_index));
      },
      nb::arg("name"), nb::arg("data"), nb::arg("out_len"), nb::arg("customization") = nb::bytes(""),
      nb::arg("block_size") = 8192, nb::arg("device_index") = 0, "device_tree_hash on cuda:device_index.");
  m.def(
      "device_counters",
      [](std::string_view device_name) {
        nb::dict counters;
        for (const auto& [name, value] : gpucrypt::device(device_name).counters()) counters[name.c_str()] = value;
        return counters;
      },
      nb::arg("device"),
      "What the device's backend has done in this process, by name (OpenCL: programs built, cached and "
      "rejected, kernels run: tests check that OpenCL really ran); empty where it counts nothing.");
  m.def("opencl_unavailable_reason", &opencl_unavailable_reason);
  m.def(
      "time_kernel",
      [](std::string_view cipher, std::string_view variant, std::string_view device_name, size_t bytes, int repeats) {
        const Device& where = gpucrypt::device(device_name);
        const CipherName name = parse_cipher_name(cipher);
        KernelTiming t;
        {
          nb::gil_scoped_release release;
          t = where.time_kernel(name, variant, bytes, repeats);
        }
        nb::list seconds;
        for (double s : t.seconds) seconds.append(s);
        nb::dict out;
        out["variant"] = t.variant;
        out["device_name"] = t.device_name;
        out["seconds"] = seconds;
        out["checked_blocks"] = t.checked_blocks;
        out["mismatched_blocks"] = t.mismatched_blocks;
        return out;
      },
      nb::arg("cipher"), nb::arg("variant"), nb::arg("device"), nb::arg("bytes"), nb::arg("repeats"),
      "The backend's own timing of its CTR/ECB kernel on device-resident data (Device::time_kernel; OpenCL: "
      "profiling events), checked on sampled blocks.");
  m.def(
      "kernel_timing", [](std::string_view device_name) { return gpucrypt::device(device_name).kernel_timing(); },
      nb::arg("device"), "Whether time_kernel works on this device (Device::kernel_timing; OpenCL's do).");
}

}  // namespace gpucrypt::python
