// format_bindings.cpp: the file format's chunk ranges (include/gpucrypt/format.hpp) for Python.
//   format_seal_chunks(key, chunk_len, plaintext_len, first, count, plaintext, out, device, variant)
//     -> (variant that ran, {h2d_s, compute_s, d2h_s})
//   format_open_chunks(...same, sealed...) -> (variant, info, failed chunk index or None); the ranges of
//     failed chunks in `out` are left untouched.
//   FormatSealer(key, chunk_len, device, variant): .header, .update(data) -> bytes, .finish() -> bytes
//   FormatOpener(key, device, variant): .update(data) -> bytes, .finish() -> bytes (raises ValueError
//     naming the failure; kdf 2, raw keys only: passphrases are Python's)
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <optional>

#include "gpucrypt/format.hpp"
#include "python/buffer_view.hpp"

namespace nb = nanobind;

namespace gpucrypt::python {

void register_format_bindings(nb::module_& m);

namespace {

nb::dict info_of(const format::ChunkRun& run) {
  nb::dict info;
  info["h2d_s"] = run.h2d_s;
  info["compute_s"] = run.compute_s;
  info["d2h_s"] = run.d2h_s;
  return info;
}

nb::bytes to_bytes(const std::vector<uint8_t>& v) { return nb::bytes(reinterpret_cast<const char*>(v.data()), v.size()); }

std::pair<std::string, nb::dict> seal_range(nb::handle key, uint32_t chunk_len, uint64_t plaintext_len, uint64_t first, uint64_t count,
                       nb::handle plaintext, nb::handle out, std::string_view device, std::string_view variant) {
  BufferView key_view(key), in(plaintext), output(out, true);
  format::ChunkRun run;
  {
    nb::gil_scoped_release release;
    run = format::seal_chunks(key_view.span(), format::Layout{chunk_len, plaintext_len}, first, count, in.span(),
                              MutableByteSpan(output.data(), output.size()), device, variant);
  }
  return {run.variant, info_of(run)};
}

nb::tuple open_range(nb::handle key, uint32_t chunk_len, uint64_t plaintext_len,
                                                           uint64_t first, uint64_t count, nb::handle sealed,
                                                           nb::handle out, std::string_view device,
                                                           std::string_view variant) {
  BufferView key_view(key), in(sealed), output(out, true);
  format::ChunkRun run;
  std::optional<uint64_t> failed;
  {
    nb::gil_scoped_release release;
    try {
      run = format::open_chunks(key_view.span(), format::Layout{chunk_len, plaintext_len}, first, count, in.span(),
                                MutableByteSpan(output.data(), output.size()), device, variant);
    } catch (const format::DecryptionError& failure) {
      failed = failure.chunk_index;
    }
  }
  return nb::make_tuple(run.variant, info_of(run), failed ? nb::cast(*failed) : nb::none());
}

struct PySealer {
  format::Sealer sealer;
  PySealer(nb::handle key, uint32_t chunk_len, std::string_view device, std::string_view variant)
      : sealer(BufferView(key).span(), chunk_len, device, variant) {}
};

struct PyOpener {
  format::Opener opener;
  PyOpener(nb::handle key, std::string_view device, std::string_view variant)
      : opener(BufferView(key).span(), device, variant) {}
};

}  // namespace

void register_format_bindings(nb::module_& m) {
  m.def("format_seal_chunks", &seal_range);
  m.def("format_open_chunks", &open_range);
  nb::class_<PySealer>(m, "FormatSealer")
      .def(nb::init<nb::handle, uint32_t, std::string_view, std::string_view>(), nb::arg("key"),
           nb::arg("chunk_len") = format::kDefaultChunkLen, nb::arg("device") = "cpu", nb::arg("variant") = "")
      .def_prop_ro("header", [](PySealer& s) { return to_bytes(s.sealer.header()); })
      .def("update", [](PySealer& s, nb::handle data) {
        BufferView view(data);
        std::vector<uint8_t> out;
        { nb::gil_scoped_release release; s.sealer.update(view.span(), out); }
        return to_bytes(out);
      })
      .def("finish", [](PySealer& s) {
        std::vector<uint8_t> out;
        { nb::gil_scoped_release release; s.sealer.finish(out); }
        return to_bytes(out);
      });
  nb::class_<PyOpener>(m, "FormatOpener")
      .def(nb::init<nb::handle, std::string_view, std::string_view>(), nb::arg("key"), nb::arg("device") = "cpu",
           nb::arg("variant") = "")
      .def("update", [](PyOpener& o, nb::handle data) {
        BufferView view(data);
        std::vector<uint8_t> out;
        { nb::gil_scoped_release release; o.opener.update(view.span(), out); }
        return to_bytes(out);
      })
      .def("finish", [](PyOpener& o) {
        std::vector<uint8_t> out;
        { nb::gil_scoped_release release; o.opener.finish(out); }
        return to_bytes(out);
      });
}

}  // namespace gpucrypt::python
