// buffer_view.hpp: the one view of a Python buffer the bindings use.
#pragma once

#include <Python.h>
#include <nanobind/nanobind.h>

#include <cstddef>
#include <cstdint>

#include "gpucrypt/cipher.hpp"
#include "gpucrypt/format.hpp"
#include "gpucrypt/parallel.hpp"

namespace gpucrypt::python {

// A view of any object with the buffer protocol (bytes, bytearray, memoryview, numpy), read-only
// or writable, C-contiguous; released when the view goes out of scope.
class BufferView {
 public:
  explicit BufferView(nanobind::handle obj, bool writable = false) {
    if (!writable && PyBytes_CheckExact(obj.ptr())) {
      // bytes, the common case: its storage directly, without the buffer protocol's look-ups.
      // The view holds a reference, as PyObject_GetBuffer's does (a Batch keeps views until run).
      view_.buf = PyBytes_AS_STRING(obj.ptr());
      view_.len = PyBytes_GET_SIZE(obj.ptr());
      Py_INCREF(obj.ptr());
      bytes_ = obj.ptr();
      return;
    }
    const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj.ptr(), &view_, flags) != 0) throw nanobind::python_error();
  }
  ~BufferView() {
    if (bytes_ != nullptr)
      Py_DECREF(bytes_);
    else
      PyBuffer_Release(&view_);
  }
  BufferView(const BufferView&) = delete;
  BufferView& operator=(const BufferView&) = delete;
  uint8_t* data() const { return static_cast<uint8_t*>(view_.buf); }
  size_t size() const { return static_cast<size_t>(view_.len); }
  ByteSpan span() const { return {data(), size()}; }

 private:
  Py_buffer view_{};
  PyObject* bytes_ = nullptr;  // set instead of view_.obj for an exact bytes object
};

// A new bytes object of `len` uninitialised bytes and where to write them: native code fills it
// (with the GIL released, if it likes) before Python sees it.
inline nanobind::bytes new_bytes(size_t len, uint8_t** data) {
  PyObject* obj = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(len));
  if (!obj) throw nanobind::python_error();
  *data = reinterpret_cast<uint8_t*>(PyBytes_AsString(obj));
  if (len >= (size_t{4} << 20)) gpucrypt::cpu::advise_huge_pages(*data, len);  // about to be written once, whole
  return nanobind::steal<nanobind::bytes>(obj);
}

// new_bytes for a digest: refused (MemoryError) where out_len cannot fit in the memory left, before
// the allocation (format::check_digest_memory says why).
inline nanobind::bytes new_digest_bytes(size_t out_len, uint8_t** data) {
  format::check_digest_memory(out_len);
  return new_bytes(out_len, data);
}

}  // namespace gpucrypt::python
