// cuda_hash_bindings.cpp: gpucrypt._native.cuda_hash_many and cuda_tree_hash, the Keccak family
// on a CUDA GPU (src/backends/cuda/keccak_cuda.hpp). Plumbing only: buffers in, bytes out, the
// GIL released around the GPU work.
//
// module.cpp's NB_MODULE calls register_cuda_hash_bindings(m). In a build without CUDA the same
// two functions exist and raise gpucrypt.DeviceError, so Python code needs no hasattr checks.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpucrypt/gpucrypt.hpp"

#if defined(GPUCRYPT_WITH_CUDA)
#include "backends/cuda/keccak_cuda.hpp"
#include "python/buffer_view.hpp"
#endif

namespace nb = nanobind;

namespace gpucrypt::python {

void register_cuda_hash_bindings(nb::module_& m);

namespace {

#if defined(GPUCRYPT_WITH_CUDA)


// cuda_hash_many(name, messages, out_len, device_index) -> list[bytes], one digest per message.
nb::list cuda_hash_many(std::string_view name, nb::iterable messages, size_t out_len, int device_index) {
  std::vector<std::unique_ptr<BufferView>> views;
  std::vector<const uint8_t*> pointers;
  std::vector<size_t> lens;
  for (nb::handle message : messages) {
    views.push_back(std::make_unique<BufferView>(message));
    pointers.push_back(views.back()->data());
    lens.push_back(views.back()->size());
  }
  std::vector<uint8_t> digests(out_len * pointers.size());
  {
    nb::gil_scoped_release release;
    cuda::hash_many(name, pointers.data(), lens.data(), pointers.size(), digests.data(), out_len, device_index);
  }
  nb::list result;
  for (size_t i = 0; i < pointers.size(); ++i)
    result.append(nb::bytes(reinterpret_cast<const char*>(digests.data() + i * out_len), out_len));
  return result;
}

// cuda_tree_hash(name, data, out_len, customization, block_size, device_index) -> bytes, for
// parallelhash128/256(-xof) and kt128/kt256.
nb::bytes cuda_tree_hash(std::string_view name, nb::handle data, size_t out_len, nb::handle customization,
                         size_t block_size, int device_index) {
  BufferView input(data);
  hash::HashParams params;
  {
    BufferView s(customization);
    params.customization.assign(reinterpret_cast<const char*>(s.data()), s.size());
  }
  params.block_size = block_size;
  std::vector<uint8_t> digest(out_len);
  {
    nb::gil_scoped_release release;
    cuda::tree_hash(name, params, input.data(), input.size(), digest.data(), out_len, device_index);
  }
  return nb::bytes(reinterpret_cast<const char*>(digest.data()), out_len);
}

#else  // built without CUDA

[[noreturn]] void no_cuda() { throw DeviceError("gpucrypt was built without CUDA"); }

nb::list cuda_hash_many(std::string_view, nb::iterable, size_t, int) { no_cuda(); }
nb::bytes cuda_tree_hash(std::string_view, nb::handle, size_t, nb::handle, size_t, int) { no_cuda(); }

#endif

}  // namespace

void register_cuda_hash_bindings(nb::module_& m) {
  m.def("cuda_hash_many", &cuda_hash_many, nb::arg("name"), nb::arg("messages"), nb::arg("out_len"),
        nb::arg("device_index") = 0,
        "Hashes many messages on a CUDA GPU (sha3-*, shake*, keccak-*, cshake* without N/S); list of bytes.");
  m.def("cuda_tree_hash", &cuda_tree_hash, nb::arg("name"), nb::arg("data"), nb::arg("out_len"),
        nb::arg("customization") = nb::bytes(""), nb::arg("block_size") = 8192, nb::arg("device_index") = 0,
        "ParallelHash128/256(-xof) or KT128/KT256 of one input, leaves on a CUDA GPU; bytes.");
}

}  // namespace gpucrypt::python
