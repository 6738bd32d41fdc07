// resident_bindings.cpp: the device-memory entry points of gpucrypt._native (Device's resident
// work, include/gpucrypt/device.hpp), for data already in GPU memory (CuPy, PyTorch, Numba), and
// the host memory a device copies fastest. Thin: pointers and the stream arrive as integers (the
// Python side takes them from __cuda_array_interface__ / DLPack and the array's stream); the GIL
// is released while the work is enqueued. module.cpp calls register_resident_bindings(m).
//
//   ResidentCipher(device, name, encrypt, key, variant): keyed once (the key schedule stays on the
//                         device for the object's life); .process(iv, in_ptr, out_ptr, nbytes,
//                         stream) is asynchronous on `stream`; .process_units(first_unit, unit_len,
//                         in_ptr, out_ptr, nbytes, stream) the same for XTS data units; .variant
//   ResidentGcm(device, name, key, variant): .seal(nonce, aad, tag_len, in_ptr, out_ptr, nbytes,
//                         stream) -> tag; .open(nonce, aad, tag, in_ptr, out_ptr, nbytes, stream)
//                         -> bool (out untouched when False); both wait for the stream; .variant
//   dlpack_tensor_info(capsule) -> (address, nbytes, device_type, device_id, c_contiguous)
//   HostBuffer(device, nbytes): the device's own host memory (Device::alloc_host; CUDA: page-locked)
//                         with the buffer protocol, for the stream engine's staging buffers
//   holds_host_memory(device, buffer) -> bool: whether the buffer is such memory
//
// A device without these (the CPU, OpenCL) raises DeviceError("device ... does not support ...").
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "gpucrypt/cipher.hpp"
#include "gpucrypt/device.hpp"

namespace nb = nanobind;

namespace gpucrypt::python {

namespace {

ByteSpan span_of(const nb::bytes& b) { return {reinterpret_cast<const uint8_t*>(b.c_str()), b.size()}; }
const void* pointer_of(uintptr_t address) { return reinterpret_cast<const void*>(address); }
void* writable_pointer_of(uintptr_t address) { return reinterpret_cast<void*>(address); }

// DLPack (https://dmlc.github.io/dlpack/latest/c_api.html), the unversioned ABI of a "dltensor"
// capsule: read, not consumed, so the capsule's own destructor still releases the producer's tensor.
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};

// (address, bytes, device type, device id, C-contiguous) of the tensor in a "dltensor" capsule.
nb::tuple dlpack_tensor_info(nb::handle capsule) {
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (managed == nullptr) throw nb::python_error();
  const DLTensor& t = managed->dl_tensor;
  const uint64_t item_bytes = (uint64_t(t.dtype.bits) * t.dtype.lanes + 7) / 8;
  uint64_t count = 1;
  for (int32_t d = 0; d < t.ndim; ++d) count *= static_cast<uint64_t>(t.shape[d]);
  bool contiguous = true;  // null strides mean C order; otherwise each must match it
  if (t.strides != nullptr) {
    int64_t expected = 1;
    for (int32_t d = t.ndim - 1; d >= 0; --d) {
      if (t.shape[d] != 1 && t.strides[d] != expected) contiguous = false;
      expected *= t.shape[d];
    }
  }
  const uintptr_t address = reinterpret_cast<uintptr_t>(t.data) + t.byte_offset;
  return nb::make_tuple(address, count * item_bytes, t.device.device_type, t.device.device_id, contiguous);
}

// Freed, after zeroing (Device::free_host), when the last reference goes (a memoryview of it holds one).
class HostBuffer {
 public:
  HostBuffer(std::string_view device_name, size_t size) : device_(&device(device_name)), size_(size) {
    data_ = static_cast<uint8_t*>(device_->alloc_host(size == 0 ? 1 : size));
  }
  ~HostBuffer() { device_->free_host(data_, size_ == 0 ? 1 : size_); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const Device* device_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// ResidentCipher and ResidentGcm as Python objects: the Device's, made once per key. They take
// one caller at a time, and a Python Cipher may be shared by threads: calls take turns on `turn`
// (waited for with the GIL released, so the thread inside can finish).
struct PyResidentCipher {
  std::unique_ptr<ResidentCipher> cipher;
  std::mutex turn;
  PyResidentCipher(std::string_view device_name, std::string_view name, bool encrypt, nb::bytes key,
                   std::string_view variant)
      : cipher(device(device_name)
                   .create_resident_cipher(parse_cipher_name(name), encrypt ? Direction::encrypt : Direction::decrypt,
                                           span_of(key), variant)) {}
  void process(nb::object iv, uintptr_t in_ptr, uintptr_t out_ptr, size_t nbytes, uintptr_t stream) {
    std::string iv_bytes;
    if (!iv.is_none()) {
      nb::bytes b = nb::cast<nb::bytes>(iv);
      iv_bytes.assign(b.c_str(), b.size());
    }
    nb::gil_scoped_release release;
    std::lock_guard lock(turn);
    cipher->process(ByteSpan(reinterpret_cast<const uint8_t*>(iv_bytes.data()), iv_bytes.size()),
                    pointer_of(in_ptr), writable_pointer_of(out_ptr), nbytes, stream);
  }
  void process_units(uint64_t first_unit, size_t unit_len, uintptr_t in_ptr, uintptr_t out_ptr, size_t nbytes,
                     uintptr_t stream) {
    nb::gil_scoped_release release;
    std::lock_guard lock(turn);
    cipher->process_units(first_unit, unit_len, pointer_of(in_ptr), writable_pointer_of(out_ptr), nbytes, stream);
  }
};

struct PyResidentGcm {
  std::unique_ptr<ResidentGcm> gcm;
  std::mutex turn;
  PyResidentGcm(std::string_view device_name, std::string_view name, nb::bytes key, std::string_view variant)
      : gcm(device(device_name).create_resident_gcm(parse_cipher_name(name), span_of(key), variant)) {}
  nb::bytes seal(nb::bytes nonce, nb::bytes aad, size_t tag_len, uintptr_t in_ptr, uintptr_t out_ptr, size_t nbytes,
                 uintptr_t stream) {
    uint8_t tag[16] = {};
    if (tag_len > sizeof tag) throw std::invalid_argument("GCM tag length must be 4..16 bytes");
    {
      nb::gil_scoped_release release;
      std::lock_guard lock(turn);
      gcm->seal(span_of(nonce), span_of(aad), pointer_of(in_ptr), writable_pointer_of(out_ptr), nbytes, tag, tag_len,
                stream);
    }
    return nb::bytes(reinterpret_cast<const char*>(tag), tag_len);
  }
  bool open(nb::bytes nonce, nb::bytes aad, nb::bytes tag, uintptr_t in_ptr, uintptr_t out_ptr, size_t nbytes,
            uintptr_t stream) {
    nb::gil_scoped_release release;
    std::lock_guard lock(turn);
    return gcm->open(span_of(nonce), span_of(aad), pointer_of(in_ptr), writable_pointer_of(out_ptr), nbytes,
                     span_of(tag), stream);
  }
};

int host_buffer_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  const HostBuffer* buffer = nb::inst_ptr<HostBuffer>(self);
  return PyBuffer_FillInfo(view, self, buffer->data(), static_cast<Py_ssize_t>(buffer->size()), /*readonly=*/0,
                           flags);
}

PyType_Slot host_buffer_slots[] = {{Py_bf_getbuffer, reinterpret_cast<void*>(host_buffer_getbuffer)},
                                   {0, nullptr}};

}  // namespace

void register_resident_bindings(nb::module_& m) {
  nb::class_<HostBuffer>(m, "HostBuffer", nb::type_slots(host_buffer_slots),
                         "A device's own host memory (CUDA: page-locked), buffer protocol; zeroed and freed with "
                         "its last reference.")
      .def(nb::init<std::string_view, size_t>(), nb::arg("device"), nb::arg("nbytes"))
      .def("__len__", &HostBuffer::size);
  m.def("dlpack_tensor_info", &dlpack_tensor_info, nb::arg("capsule"),
        "(address, nbytes, device_type, device_id, c_contiguous) of a DLPack 'dltensor' capsule, not consumed.");
  m.def(
      "holds_host_memory",
      [](std::string_view device_name, nb::handle buffer) {
        const Device& where = device(device_name);
        Py_buffer view;
        if (PyObject_GetBuffer(buffer.ptr(), &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
        const bool held = where.holds_host_memory(view.buf, static_cast<size_t>(view.len));
        PyBuffer_Release(&view);
        return held;
      },
      nb::arg("device"), nb::arg("buffer"),
      "True when the buffer is the device's own host memory (CUDA: page-locked): it copies it with no staging.");
  m.def(
      "resident_memory", [](std::string_view device_name) { return device(device_name).resident_memory(); },
      nb::arg("device"), "Whether the device works on its own memory (GPU arrays, speed --resident).");

  nb::class_<PyResidentCipher>(m, "ResidentCipher",
                               "A cipher keyed once for device memory (Device::create_resident_cipher).")
      .def(nb::init<std::string_view, std::string_view, bool, nb::bytes, std::string_view>(), nb::arg("device"),
           nb::arg("name"), nb::arg("encrypt"), nb::arg("key"), nb::arg("variant"))
      .def("process", &PyResidentCipher::process, nb::arg("iv").none(), nb::arg("in_ptr"), nb::arg("out_ptr"),
           nb::arg("nbytes"), nb::arg("stream"),
           "Encrypts or decrypts nbytes of device memory (one whole message) on a stream; asynchronous.")
      .def("process_units", &PyResidentCipher::process_units, nb::arg("first_unit"), nb::arg("unit_len"),
           nb::arg("in_ptr"), nb::arg("out_ptr"), nb::arg("nbytes"), nb::arg("stream"),
           "XTS over nbytes // unit_len data units of device memory, unit u under the tweak first_unit + u; "
           "asynchronous.")
      .def_prop_ro("variant", [](const PyResidentCipher& c) { return c.cipher->variant().name; });
  nb::class_<PyResidentGcm>(m, "ResidentGcm", "GCM keyed once for device memory (Device::create_resident_gcm).")
      .def(nb::init<std::string_view, std::string_view, nb::bytes, std::string_view>(), nb::arg("device"),
           nb::arg("name"), nb::arg("key"), nb::arg("variant"))
      .def("seal", &PyResidentGcm::seal, nb::arg("nonce"), nb::arg("aad"), nb::arg("tag_len"), nb::arg("in_ptr"),
           nb::arg("out_ptr"), nb::arg("nbytes"), nb::arg("stream"), "GCM-encrypts nbytes of device memory; the tag.")
      .def("open", &PyResidentGcm::open, nb::arg("nonce"), nb::arg("aad"), nb::arg("tag"), nb::arg("in_ptr"),
           nb::arg("out_ptr"), nb::arg("nbytes"), nb::arg("stream"),
           "GCM-decrypts nbytes of device memory after checking the tag; False (out untouched) on mismatch.")
      .def_prop_ro("variant", [](const PyResidentGcm& g) { return g.gcm->variant().name; });
}

}  // namespace gpucrypt::python
