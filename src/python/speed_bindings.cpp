// speed_bindings.cpp: gpucrypt._native.speed_kind and speed_run, the native timing loop of
// include/gpucrypt/speed.hpp behind `gpucrypt speed` (python/gpucrypt/bench.py). Plumbing only: the GIL is
// released for the whole loop. module.cpp's NB_MODULE calls register_speed_bindings(m).
//
//   speed_kind(algorithm) -> "cipher" | "aead" | "hash"; ValueError for an unknown name
//   speed_run(algorithm, encrypt, variant, device, device_resident, buffer_len, seconds)
//       -> {"num_calls", "seconds", "algorithm", "variant", "device", "cpu_threads"}
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <string>
#include <string_view>

#include "gpucrypt/speed.hpp"

namespace nb = nanobind;

namespace gpucrypt::python {

void register_speed_bindings(nb::module_& m) {
  m.def(
      "speed_kind", [](std::string_view algorithm) { return std::string(speed::kind_name(speed::kind_of(algorithm))); },
      nb::arg("algorithm"), "'cipher', 'aead' or 'hash'; ValueError naming the accepted forms for anything else.");
  m.def(
      "speed_run",
      [](std::string algorithm, bool encrypt, std::string variant, std::string device, bool device_resident,
         size_t buffer_len, double seconds) {
        speed::Request request;
        request.algorithm = std::move(algorithm);
        request.direction = encrypt ? Direction::encrypt : Direction::decrypt;
        request.variant = std::move(variant);
        request.device = std::move(device);
        request.placement = device_resident ? speed::Placement::device : speed::Placement::host;
        request.buffer_len = buffer_len;
        request.seconds = seconds;
        speed::Result result;
        {
          nb::gil_scoped_release release;
          result = speed::run(request);
        }
        nb::dict out;
        out["num_calls"] = result.num_calls;
        out["seconds"] = result.seconds;
        out["algorithm"] = result.algorithm;
        out["variant"] = result.variant;
        out["device"] = result.device;
        out["cpu_threads"] = result.num_cpu_threads;
        return out;
      },
      nb::arg("algorithm"), nb::arg("encrypt"), nb::arg("variant"), nb::arg("device"), nb::arg("device_resident"),
      nb::arg("buffer_len"), nb::arg("seconds"),
      "Times one cell of `gpucrypt speed` in a native loop (include/gpucrypt/speed.hpp); the GIL is released.");
}

}  // namespace gpucrypt::python
