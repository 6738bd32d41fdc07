// cuda_bindings.cpp: the device-pointer entry points of gpucrypt._native, for data already in GPU
// memory (CuPy, PyTorch, Numba). Thin: pointers and the stream arrive as integers (the Python
// side takes them from __cuda_array_interface__ / DLPack and the array's stream); the GIL is
// released while the work is enqueued. module.cpp calls register_cuda_bindings(m).
//
//   cuda_cipher_device(name, encrypt, key, iv, variant, device_index, in_ptr, out_ptr, nbytes,
//                      stream) -> variant name; asynchronous on `stream`
//   cuda_aead_device_seal(name, key, nonce, aad, tag_len, variant, device_index, in_ptr, out_ptr,
//                         nbytes, stream) -> tag (bytes); waits for the stream
//   cuda_aead_device_open(name, key, nonce, aad, tag, variant, device_index, in_ptr, out_ptr,
//                         nbytes, stream) -> bool (out untouched when False); waits for the stream
//   dlpack_tensor_info(capsule) -> (address, nbytes, device_type, device_id, c_contiguous)
//   PageLockedBuffer(nbytes): page-locked (pinned) host memory with the buffer protocol, for the
//                         stream engine's staging buffers: the GPU copies straight from and to it
//
// In a build without CUDA the same names exist and raise DeviceError.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <cstdint>
#include <string>

#include "gpucrypt/cipher.hpp"
#if defined(GPUCRYPT_WITH_CUDA)
#include "backends/cuda/device.hpp"
#endif

namespace nb = nanobind;

namespace gpucrypt::python {

namespace {

ByteSpan span_of(const nb::bytes& b) { return {reinterpret_cast<const uint8_t*>(b.c_str()), b.size()}; }

#if defined(GPUCRYPT_WITH_CUDA)
cudaStream_t stream_of(uintptr_t handle) { return reinterpret_cast<cudaStream_t>(handle); }
const void* pointer_of(uintptr_t address) { return reinterpret_cast<const void*>(address); }
#else
[[noreturn]] void no_cuda() {
  throw DeviceError("this build of gpucrypt has no CUDA backend (built without a CUDA toolkit)");
}
#endif

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

// Freed, after zeroing, when the last reference goes (a memoryview of it holds one).
class PageLockedBuffer {
 public:
  explicit PageLockedBuffer(size_t size) : size_(size) {
#if defined(GPUCRYPT_WITH_CUDA)
    data_ = static_cast<uint8_t*>(cuda::alloc_page_locked(size == 0 ? 1 : size));
    if (data_ == nullptr)
      throw DeviceError("cannot allocate " + std::to_string(size) + " bytes of page-locked host memory");
#else
    no_cuda();
#endif
  }
  ~PageLockedBuffer() {
#if defined(GPUCRYPT_WITH_CUDA)
    cuda::free_page_locked(data_, size_);
#endif
  }
  PageLockedBuffer(const PageLockedBuffer&) = delete;
  PageLockedBuffer& operator=(const PageLockedBuffer&) = delete;
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

int page_locked_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  const PageLockedBuffer* buffer = nb::inst_ptr<PageLockedBuffer>(self);
  return PyBuffer_FillInfo(view, self, buffer->data(), static_cast<Py_ssize_t>(buffer->size()), /*readonly=*/0,
                           flags);
}

PyType_Slot page_locked_slots[] = {{Py_bf_getbuffer, reinterpret_cast<void*>(page_locked_getbuffer)},
                                   {0, nullptr}};

}  // namespace

void register_cuda_bindings(nb::module_& m) {
  nb::class_<PageLockedBuffer>(m, "PageLockedBuffer", nb::type_slots(page_locked_slots),
                               "Page-locked host memory (buffer protocol), zeroed and freed with its last reference.")
      .def(nb::init<size_t>(), nb::arg("nbytes"))
      .def("__len__", &PageLockedBuffer::size);
  m.def("dlpack_tensor_info", &dlpack_tensor_info, nb::arg("capsule"),
        "(address, nbytes, device_type, device_id, c_contiguous) of a DLPack 'dltensor' capsule, not consumed.");
  m.def(
      "is_page_locked",
      [](nb::handle buffer) {
        Py_buffer view;
        if (PyObject_GetBuffer(buffer.ptr(), &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
#if defined(GPUCRYPT_WITH_CUDA)
        const bool locked = cuda::is_page_locked(view.buf, static_cast<size_t>(view.len));
#else
        const bool locked = false;
#endif
        PyBuffer_Release(&view);
        return locked;
      },
      nb::arg("buffer"), "True when the buffer's memory is page-locked: the GPU copies it with no staging.");

  m.def(
      "cuda_cipher_device",
      [](std::string_view name, bool encrypt, nb::bytes key, nb::object iv, std::string_view variant,
         int device_index, uintptr_t in_ptr, uintptr_t out_ptr, size_t nbytes, uintptr_t stream) -> std::string {
#if defined(GPUCRYPT_WITH_CUDA)
        const CipherName cipher_name = parse_cipher_name(name);
        const std::string key_bytes(key.c_str(), key.size());
        std::string iv_bytes;
        if (!iv.is_none()) {
          nb::bytes b = nb::cast<nb::bytes>(iv);
          iv_bytes.assign(b.c_str(), b.size());
        }
        nb::gil_scoped_release release;
        const VariantInfo& ran = cuda::process_device(
            cipher_name, encrypt ? Direction::encrypt : Direction::decrypt,
            ByteSpan(reinterpret_cast<const uint8_t*>(key_bytes.data()), key_bytes.size()),
            ByteSpan(reinterpret_cast<const uint8_t*>(iv_bytes.data()), iv_bytes.size()), variant, device_index,
            pointer_of(in_ptr), const_cast<void*>(pointer_of(out_ptr)), nbytes, stream_of(stream));
        return ran.name;
#else
        (void)name, (void)encrypt, (void)key, (void)iv, (void)variant, (void)device_index;
        (void)in_ptr, (void)out_ptr, (void)nbytes, (void)stream;
        no_cuda();
#endif
      },
      nb::arg("name"), nb::arg("encrypt"), nb::arg("key"), nb::arg("iv").none(), nb::arg("variant"),
      nb::arg("device_index"), nb::arg("in_ptr"), nb::arg("out_ptr"), nb::arg("nbytes"), nb::arg("stream"),
      "Encrypt or decrypt nbytes of device memory (one whole message) on a CUDA stream; returns the variant.");

  m.def(
      "cuda_aead_device_seal",
      [](std::string_view name, nb::bytes key, nb::bytes nonce, nb::bytes aad, size_t tag_len,
         std::string_view variant, int device_index, uintptr_t in_ptr, uintptr_t out_ptr, size_t nbytes,
         uintptr_t stream) -> nb::bytes {
#if defined(GPUCRYPT_WITH_CUDA)
        const CipherName cipher_name = parse_cipher_name(name);
        auto gcm = cuda::DeviceGcm::create(cipher_name, span_of(key), variant, device_index);
        uint8_t tag[16] = {};
        if (tag_len > sizeof tag) throw std::invalid_argument("GCM tag length must be 4..16 bytes");
        {
          nb::gil_scoped_release release;
          gcm->seal(span_of(nonce), span_of(aad), pointer_of(in_ptr), const_cast<void*>(pointer_of(out_ptr)),
                    nbytes, tag, tag_len, stream_of(stream));
        }
        return nb::bytes(reinterpret_cast<const char*>(tag), tag_len);
#else
        (void)name, (void)key, (void)nonce, (void)aad, (void)tag_len, (void)variant, (void)device_index;
        (void)in_ptr, (void)out_ptr, (void)nbytes, (void)stream;
        no_cuda();
#endif
      },
      nb::arg("name"), nb::arg("key"), nb::arg("nonce"), nb::arg("aad"), nb::arg("tag_len"), nb::arg("variant"),
      nb::arg("device_index"), nb::arg("in_ptr"), nb::arg("out_ptr"), nb::arg("nbytes"), nb::arg("stream"),
      "GCM-encrypt nbytes of device memory; returns the tag.");

  m.def(
      "cuda_aead_device_open",
      [](std::string_view name, nb::bytes key, nb::bytes nonce, nb::bytes aad, nb::bytes tag,
         std::string_view variant, int device_index, uintptr_t in_ptr, uintptr_t out_ptr, size_t nbytes,
         uintptr_t stream) -> bool {
#if defined(GPUCRYPT_WITH_CUDA)
        const CipherName cipher_name = parse_cipher_name(name);
        auto gcm = cuda::DeviceGcm::create(cipher_name, span_of(key), variant, device_index);
        nb::gil_scoped_release release;
        return gcm->open(span_of(nonce), span_of(aad), pointer_of(in_ptr), const_cast<void*>(pointer_of(out_ptr)),
                         nbytes, span_of(tag), stream_of(stream));
#else
        (void)name, (void)key, (void)nonce, (void)aad, (void)tag, (void)variant, (void)device_index;
        (void)in_ptr, (void)out_ptr, (void)nbytes, (void)stream;
        no_cuda();
#endif
      },
      nb::arg("name"), nb::arg("key"), nb::arg("nonce"), nb::arg("aad"), nb::arg("tag"), nb::arg("variant"),
      nb::arg("device_index"), nb::arg("in_ptr"), nb::arg("out_ptr"), nb::arg("nbytes"), nb::arg("stream"),
      "GCM-decrypt nbytes of device memory after checking the tag; False (out untouched) on mismatch.");
}

}  // namespace gpucrypt::python
