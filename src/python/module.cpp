// module.cpp: the nanobind extension gpucrypt._native. Thin: argument plumbing and the GIL;
// every decision lives in the C++ API or in python/gpucrypt/.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "gpucrypt/gpucrypt.hpp"
#include "hash/hash.hpp"

namespace nb = nanobind;
using namespace gpucrypt;

// Bindings that live in their own files (CUDA device-pointer entry points, GPU hashing).
namespace gpucrypt::python {
void register_cuda_bindings(nb::module_& m);
void register_cuda_hash_bindings(nb::module_& m);
void register_engine_bindings(nb::module_& m);
void register_tree_bindings(nb::module_& m);
}  // namespace gpucrypt::python

namespace {

// A view of any object with the buffer protocol (bytes, bytearray, memoryview, numpy), read-only
// or writable; released when the view goes out of scope.
class BufferView {
 public:
  explicit BufferView(nb::handle obj, bool writable = false) {
    const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj.ptr(), &view_, flags) != 0) throw nb::python_error();
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

nb::bytes new_bytes(size_t len, uint8_t** data) {
  PyObject* obj = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(len));
  if (!obj) throw nb::python_error();
  *data = reinterpret_cast<uint8_t*>(PyBytes_AsString(obj));
  return nb::steal<nb::bytes>(obj);
}

nb::dict variant_dict(const VariantInfo& v) {
  nb::dict d;
  d["name"] = v.name;
  d["backend"] = v.backend;
  d["algorithm"] = v.algorithm;
  d["constant_time"] = v.constant_time;
  d["technique"] = v.technique;
  return d;
}

struct PyCipherStream {
  std::unique_ptr<CipherStream> stream;

  nb::bytes update(nb::handle data) {
    BufferView in(data);
    uint8_t* out = nullptr;
    nb::bytes result = new_bytes(in.size(), &out);
    {
      nb::gil_scoped_release release;
      stream->update(in.data(), out, in.size());
    }
    return result;
  }
  size_t update_into(nb::handle data, nb::handle buffer) {
    BufferView in(data);
    BufferView out(buffer, /*writable=*/true);
    if (out.size() < in.size())
      throw std::invalid_argument("output buffer too small: " + std::to_string(out.size()) +
                                  " bytes for " + std::to_string(in.size()));
    {
      nb::gil_scoped_release release;
      stream->update(in.data(), out.data(), in.size());
    }
    return in.size();
  }
};

struct PyGcm {
  std::unique_ptr<GcmCipher> gcm;

  nb::bytes seal(nb::handle nonce, nb::handle aad, nb::handle plaintext, size_t tag_len) {
    BufferView n(nonce), a(aad), p(plaintext);
    uint8_t* out = nullptr;
    nb::bytes result = new_bytes(p.size() + tag_len, &out);
    {
      nb::gil_scoped_release release;
      gcm->seal(n.span(), a.span(), p.span(), tag_len, out);
    }
    return result;
  }
  // Returns None when the tag does not verify; the Python layer raises InvalidTag.
  nb::object open(nb::handle nonce, nb::handle aad, nb::handle ciphertext, size_t tag_len) {
    BufferView n(nonce), a(aad), c(ciphertext);
    if (c.size() < tag_len) return nb::none();
    uint8_t* out = nullptr;
    nb::bytes result = new_bytes(c.size() - tag_len, &out);
    bool ok;
    {
      nb::gil_scoped_release release;
      ok = gcm->open(n.span(), a.span(), c.span(), tag_len, out);
    }
    if (!ok) return nb::none();
    return result;
  }
};

struct PyHash {
  std::unique_ptr<hash::HashContext> ctx;

  void update(nb::handle data) {
    BufferView in(data);
    if (in.size() >= 4096) {
      nb::gil_scoped_release release;
      ctx->update(in.data(), in.size());
    } else {
      ctx->update(in.data(), in.size());
    }
  }
  nb::bytes finalize(size_t out_len) {
    uint8_t* out = nullptr;
    nb::bytes result = new_bytes(out_len, &out);
    ctx->finalize(out, out_len);
    return result;
  }
  PyHash copy() const { return PyHash{ctx->clone()}; }
};

}  // namespace

NB_MODULE(_native, m) {
  m.doc() = "gpucrypt native core (C++/CUDA); use the gpucrypt package, not this module";

  nb::exception<DeviceError>(m, "DeviceError", PyExc_RuntimeError);
  gpucrypt::python::register_cuda_bindings(m);
  gpucrypt::python::register_cuda_hash_bindings(m);
  gpucrypt::python::register_engine_bindings(m);
  gpucrypt::python::register_tree_bindings(m);

  m.def("variants", [] {
    nb::list out;
    for (const auto& v : list_variants()) out.append(variant_dict(v));
    return out;
  });
  m.def("devices", [] {
    nb::list out;
    for (const auto& d : list_devices()) {
      nb::dict e;
      e["name"] = d.name;
      e["kind"] = d.kind;
      e["description"] = d.description;
      e["compute_units"] = d.num_compute_units;
      e["memory_bytes"] = d.memory_bytes;
      out.append(e);
    }
    return out;
  });
  m.def("cuda_unavailable_reason", &cuda_unavailable_reason);
  m.def("parse_cipher_name", [](std::string_view name) {
    CipherName n = parse_cipher_name(name);
    nb::dict d;
    d["canonical"] = n.canonical;
    d["algorithm"] = std::string(algorithm_name(n.algorithm));
    d["key_bits"] = n.key_bits;
    d["mode"] = std::string(mode_name(n.mode));
    d["key_len"] = n.key_len();
    return d;
  });

  nb::class_<PyCipherStream>(m, "CipherStream")
      .def("update", &PyCipherStream::update)
      .def("update_into", &PyCipherStream::update_into)
      .def_prop_ro("variant", [](const PyCipherStream& s) { return s.stream->variant().name; })
      .def_prop_ro("constant_time",
                   [](const PyCipherStream& s) { return s.stream->variant().constant_time; })
      .def_prop_ro("device", [](const PyCipherStream& s) { return s.stream->device(); });
  m.def("create_cipher_stream", [](std::string_view name, bool encrypt, nb::handle key,
                                   nb::handle iv, std::string_view variant, std::string_view device) {
    BufferView k(key);
    std::vector<uint8_t> iv_bytes;
    if (!iv.is_none()) {
      BufferView v(iv);
      iv_bytes.assign(v.data(), v.data() + v.size());
    }
    return PyCipherStream{create_cipher_stream(parse_cipher_name(name),
                                               encrypt ? Direction::encrypt : Direction::decrypt,
                                               k.span(), iv_bytes, variant, device)};
  }, nb::arg("name"), nb::arg("encrypt"), nb::arg("key"), nb::arg("iv").none(), nb::arg("variant"),
     nb::arg("device"));

  nb::class_<PyGcm>(m, "Gcm")
      .def("seal", &PyGcm::seal)
      .def("open", &PyGcm::open)
      .def_prop_ro("variant", [](const PyGcm& g) { return g.gcm->variant().name; })
      .def_prop_ro("constant_time", [](const PyGcm& g) { return g.gcm->variant().constant_time; })
      .def_prop_ro("device", [](const PyGcm& g) { return g.gcm->device(); });
  m.def("create_gcm", [](std::string_view name, nb::handle key, std::string_view variant,
                         std::string_view device) {
    BufferView k(key);
    return PyGcm{create_gcm(parse_cipher_name(name), k.span(), variant, device)};
  });

  nb::class_<PyHash>(m, "Hash")
      .def("update", &PyHash::update)
      .def("finalize", &PyHash::finalize)
      .def("copy", &PyHash::copy)
      .def_prop_ro("variant", [](const PyHash& h) { return h.ctx->variant(); });
  m.def("hash_info", [](std::string_view name) {
    const hash::HashInfo& info = hash::hash_info(name);
    nb::dict d;
    d["name"] = info.name;
    d["digest_size"] = info.digest_size;
    d["rate"] = info.rate;
    d["is_xof"] = info.is_xof;
    d["takes_customization"] = info.takes_customization;
    d["takes_block_size"] = info.takes_block_size;
    return d;
  });
  m.def("hash_names", [] {
    std::vector<std::string> names;
    for (const auto& h : hash::list_hashes()) names.push_back(h.name);
    return names;
  });
  m.def("create_hash", [](std::string_view name, nb::handle function_name,
                          nb::handle customization, size_t block_size, std::string_view variant) {
    hash::HashParams params;
    BufferView n(function_name), s(customization);
    params.function_name.assign(reinterpret_cast<const char*>(n.data()), n.size());
    params.customization.assign(reinterpret_cast<const char*>(s.data()), s.size());
    params.block_size = block_size;
    return PyHash{hash::create_hash(name, params, variant)};
  });
  m.def("hash_many", [](std::string_view name, nb::list messages, size_t out_len,
                        std::string_view variant) {
    std::vector<std::unique_ptr<BufferView>> buffers;
    std::vector<const uint8_t*> ptrs;
    std::vector<size_t> lens;
    for (nb::handle msg : messages) {
      buffers.push_back(std::make_unique<BufferView>(msg));
      ptrs.push_back(buffers.back()->data());
      lens.push_back(buffers.back()->size());
    }
    std::vector<uint8_t> out(out_len * ptrs.size());
    {
      nb::gil_scoped_release release;
      hash::hash_many(name, hash::HashParams{}, ptrs.data(), lens.data(), ptrs.size(), out.data(),
                      out_len, variant);
    }
    nb::list result;
    for (size_t i = 0; i < ptrs.size(); ++i)
      result.append(nb::bytes(reinterpret_cast<const char*>(out.data() + i * out_len), out_len));
    return result;
  });
}
