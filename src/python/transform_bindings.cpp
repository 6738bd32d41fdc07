// transform_bindings.cpp: transform_range (src/api/transform.hpp) for Python's stream.transform_into.
//   transform_range(name, encrypt, key, iv or None, variant, data, out, devices, cpu_share (< 0: auto),
//                   device_workers, depth, job_len, progress, cancelled) -> scheduler stats dict
//     (scheduler_stats_dict), with the GIL released; progress(job bytes) and cancelled() -> bool run
//     with the GIL on the calling thread (SchedulerCallbacks: a Python exception from either, or a
//     pending signal, stops the work and is raised here; cancelled() True raises stream.Cancelled).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "gpucrypt/transform.hpp"
#include "buffer_view.hpp"
#include "scheduler_callbacks.hpp"

namespace nb = nanobind;

namespace gpucrypt::python {

void register_transform_bindings(nb::module_& m);

void register_transform_bindings(nb::module_& m) {
  m.def(
      "transform_range",
      [](std::string_view cipher, bool encrypt, nb::handle key, nb::handle iv, std::string variant, nb::handle data,
         nb::handle out, std::vector<std::string> devices, double cpu_share, unsigned device_workers, size_t depth,
         uint64_t job_len, nb::handle progress, nb::handle cancelled) {
        const CipherName name = parse_cipher_name(cipher);
        BufferView key_view(key), in(data), target(out, true);
        std::optional<BufferView> iv_view;
        if (!iv.is_none()) iv_view.emplace(iv);
        TransformOptions options;
        options.devices = std::move(devices);
        options.cpu_share = cpu_share;
        options.job_len = job_len;
        options.variant = std::move(variant);
        options.depth = depth;
        options.device_workers = device_workers;
        SchedulerCallbacks callbacks;
        if (!progress.is_none()) options.progress = [&](uint64_t count) { callbacks.call(progress, count); };
        options.cancelled = [&] { return callbacks.poll_cancelled(cancelled, true); };
        engine::SchedulerStats stats;
        try {
          nb::gil_scoped_release release;
          stats = transform_range(name, encrypt ? Direction::encrypt : Direction::decrypt, key_view.span(),
                                  iv_view ? iv_view->span() : ByteSpan(), in.span(),
                                  MutableByteSpan(target.data(), target.size()), options);
        } catch (const engine::Cancelled&) {
          callbacks.raise_stopped();
        }
        return scheduler_stats_dict(stats);
      },
      nb::arg("name"), nb::arg("encrypt"), nb::arg("key"), nb::arg("iv").none(), nb::arg("variant"), nb::arg("data"),
      nb::arg("out"), nb::arg("devices"), nb::arg("cpu_share"), nb::arg("device_workers"), nb::arg("depth"),
      nb::arg("job_len"), nb::arg("progress").none(), nb::arg("cancelled").none());
}

}  // namespace gpucrypt::python
