// buffer_view.hpp: the one view of a Python buffer the bindings use.
#pragma once

#include <Python.h>
#include <nanobind/nanobind.h>

#include <cstddef>
#include <cstdint>

#include "gpucrypt/cipher.hpp"

namespace gpucrypt::python {

// A view of any object with the buffer protocol (bytes, bytearray, memoryview, numpy), read-only
// or writable, C-contiguous; released when the view goes out of scope.
class BufferView {
 public:
  explicit BufferView(nanobind::handle obj, bool writable = false) {
    const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj.ptr(), &view_, flags) != 0) throw nanobind::python_error();
  }
  ~BufferView() { PyBuffer_Release(&view_); }
  BufferView(const BufferView&) = delete;
  BufferView& operator=(const BufferView&) = delete;
  uint8_t* data() const { return static_cast<uint8_t*>(view_.buf); }
  size_t size() const { return static_cast<size_t>(view_.len); }
  ByteSpan span() const { return {data(), size()}; }

 private:
  Py_buffer view_{};
};

}  // namespace gpucrypt::python
