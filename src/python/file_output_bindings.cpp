// file_output_bindings.cpp: format.hpp's output files (AtomicOutput and its rules) for
// gpucrypt.fileformat's atomic_output, output_exists, remove_stale_temps, and the MPI mode.
//   AtomicOutput(path, overwrite, mode (-1: keep / 0600), input_fd (-1: none), anonymous):
//     .fd, .in_place, .temp_path ("" unless named), .commit(), .discard(); errors as OSError naming `path`.
//     It is also the raw writer under fileformat.atomic_output's io.BufferedWriter (write, seek, tell,
//     fileno, name: the path as given; close() leaves the output to commit() or discard()), so that
//     every write error, a full disk among them, names `path` (format.hpp AtomicOutput::write).
//   format_output_exists(path), format_refuse_input_as_output(input_path, output_path) (ValueError),
//   format_remove_stale_temps(directory, final_name) -> [paths], format_anonymous_files_work(),
//   format_naming_input(message, path) -> the message naming the input (authentication failures).
// A format::PathError anywhere becomes OSError(errno, strerror (detail), path): Python picks the
// subclass from errno (FileExistsError, IsADirectoryError, ...), as os.open's errors do.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gpucrypt/format.hpp"
#include "buffer_view.hpp"

namespace nb = nanobind;

namespace gpucrypt::python {

void register_file_output_bindings(nb::module_& m);

void register_file_output_bindings(nb::module_& m) {
  nb::register_exception_translator([](const std::exception_ptr& thrown, void*) {
    try {
      std::rethrow_exception(thrown);
    } catch (const format::PathError& error) {
      const int code = error.code().value();
      const std::string message =
          std::string(std::strerror(code)) + (error.detail().empty() ? "" : " (" + error.detail() + ")");
      nb::object os_error = nb::module_::import_("builtins").attr("OSError")(code, message, error.path());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(os_error.ptr())), os_error.ptr());
    }
  });
  nb::class_<format::AtomicOutput>(m, "AtomicOutput")
      .def(
          "__init__",
          [](format::AtomicOutput* self, std::string path, bool overwrite, int mode, int input_fd, bool anonymous) {
            new (self) format::AtomicOutput(std::move(path), format::OutputOptions{overwrite, mode, input_fd, anonymous});
          },
          nb::arg("path"), nb::arg("overwrite") = true, nb::arg("mode") = -1, nb::arg("input_fd") = -1,
          nb::arg("anonymous") = true)
      .def_prop_ro("fd", &format::AtomicOutput::fd)
      .def_prop_ro("in_place", &format::AtomicOutput::in_place)
      .def_prop_ro("temp_path", &format::AtomicOutput::temp_path)
      .def("commit", &format::AtomicOutput::commit, nb::call_guard<nb::gil_scoped_release>())
      .def("discard", &format::AtomicOutput::discard)
      // io.RawIOBase's methods, which io.BufferedWriter calls: the writes through the library's
      // AtomicOutput::write, the position by the descriptor (a FIFO or device in place has none).
      .def(
          "write",
          [](format::AtomicOutput& self, nb::handle data) {
            BufferView bytes(data);
            nb::gil_scoped_release release;
            self.write(bytes.span());
            return bytes.size();
          },
          nb::arg("data"))
      .def(
          "seek",
          [](format::AtomicOutput& self, int64_t offset, int whence) {
            const off_t position = ::lseek(self.fd(), offset, whence);
            if (position < 0) throw format::PathError(errno, self.path());
            return int64_t(position);
          },
          nb::arg("offset"), nb::arg("whence") = SEEK_SET)
      .def("tell", [](format::AtomicOutput& self) {
        const off_t position = ::lseek(self.fd(), 0, SEEK_CUR);
        if (position < 0) throw format::PathError(errno, self.path());
        return int64_t(position);
      })
      .def("seekable", [](const format::AtomicOutput& self) { return ::lseek(self.fd(), 0, SEEK_CUR) >= 0; })
      .def("writable", [](const format::AtomicOutput&) { return true; })
      .def("readable", [](const format::AtomicOutput&) { return false; })
      .def("isatty", [](const format::AtomicOutput& self) { return ::isatty(self.fd()) == 1; })
      .def("fileno", &format::AtomicOutput::fd)
      .def("flush", [](const format::AtomicOutput&) {})  // nothing held: every write reached the descriptor
      .def("close", [](const format::AtomicOutput&) {})  // the output ends by commit() or discard()
      .def_prop_ro("closed", [](const format::AtomicOutput& self) { return self.fd() < 0; })
      .def_prop_ro("name", &format::AtomicOutput::path)
      // The file format's bindings write it by its descriptor (format_bindings.cpp descriptor_of), as a
      // FileIO: it is only its descriptor.
      .def_prop_ro("reads_its_descriptor", [](const format::AtomicOutput&) { return true; });
  m.def("format_output_exists", &format::output_exists, nb::arg("path"));
  m.def("format_refuse_input_as_output", &format::refuse_input_as_output, nb::arg("input_path"),
        nb::arg("output_path"));
  m.def("format_remove_stale_temps", &format::remove_stale_temps, nb::arg("directory"), nb::arg("final_name"));
  m.def("format_anonymous_files_work", &format::anonymous_files_work);
  m.def("format_naming_input", &format::naming_input, nb::arg("message"), nb::arg("path"));
}

}  // namespace gpucrypt::python
