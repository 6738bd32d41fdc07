// transform_bindings.cpp: transform_range (src/api/transform.hpp) for Python's stream.transform_into.
//   transform_range(name, encrypt, key, iv or None, variant, data, out, devices, cpu_share (None or
//                   "auto": measured; a number 0..1: scheduler_callbacks.hpp cpu_share_of),
//                   device_workers, depth, job_len, progress, cancelled) -> scheduler stats dict
//     (scheduler_stats_dict), with the GIL released; progress(job bytes) and cancelled() -> bool run
//     with the GIL on the calling thread (SchedulerCallbacks: a Python exception from either, or a
//     pending signal, stops the work and is raised here; cancelled() True raises stream.Cancelled).
//   TransformStream(name, encrypt, key, iv or None, variant, devices, cpu_share, depth, job_len (0: the
//                   stream's)): stream.StreamCipher's engine (transform.hpp). update(data, progress,
//     cancelled) -> bytes ready and finalize(progress, cancelled) -> bytes, with the GIL released
//     and the callbacks as transform_range's (given per call, so the object holds no Python
//     reference that could make a cycle); close(); stats() -> scheduler stats dict; devices.
//     An exact bytes input is read in place, held until its jobs are done; any other is copied.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <mutex>
#include <optional>

#include "gpucrypt/transform.hpp"
#include "buffer_view.hpp"
#include "scheduler_callbacks.hpp"

namespace nb = nanobind;

namespace gpucrypt::python {

namespace {

// The options both entry points take from Python (the callbacks are each one's own).
TransformOptions options_from(std::vector<std::string> devices, nb::handle cpu_share, uint64_t job_len, std::string variant,
                              size_t depth, unsigned device_workers) {
  TransformOptions options;
  options.devices = std::move(devices);
  options.cpu_share = cpu_share_of(cpu_share);
  options.job_len = job_len;
  options.variant = std::move(variant);
  options.depth = depth;
  options.device_workers = device_workers;
  return options;
}

// A TransformStream and the Python side of its calls.
class PyTransformStream {
 public:
  PyTransformStream(const CipherName& name, Direction direction, ByteSpan key, ByteSpan iv, TransformOptions options) {
    options.progress = [this](uint64_t count) {
      if (!progress_.is_none()) callbacks_.call(progress_, count);
    };
    options.cancelled = [this] { return callbacks_.poll_cancelled(cancelled_, true); };
    stream_.emplace(name, direction, key, iv, std::move(options));
  }
  ~PyTransformStream() {
    stream_.reset();  // its workers run no Python; what its jobs held is released below, with the GIL
    release_kept();
  }

  nb::bytes update(nb::handle data, nb::handle progress, nb::handle cancelled) {
    BufferView in(data);
    std::shared_ptr<const void> keep;
    if (PyBytes_CheckExact(data.ptr())) {  // immutable: read in place until its jobs are done
      Py_INCREF(data.ptr());
      keep = std::shared_ptr<const void>(data.ptr(), [this](const void* object) {
        std::lock_guard lock(kept_mutex_);  // maybe without the GIL: released by release_kept
        kept_.push_back(static_cast<PyObject*>(const_cast<void*>(object)));
      });
    }
    return run(progress, cancelled, [&](const TransformStream::Sink& sink) {
      stream_->update(in.span(), sink, keep);
      keep.reset();  // the stream's jobs hold it now, as long as they need
    });
  }

  nb::bytes finalize(nb::handle progress, nb::handle cancelled) {
    return run(progress, cancelled, [&](const TransformStream::Sink& sink) { stream_->finalize(sink); });
  }

  void close() {
    {
      nb::gil_scoped_release release;
      stream_->close();
    }
    release_kept();
  }

  TransformStream& stream() { return *stream_; }

 private:
  template <typename Call>
  nb::bytes run(nb::handle progress, nb::handle cancelled, Call call) {
    progress_ = progress;
    cancelled_ = cancelled;
    nb::bytes out;
    const TransformStream::Sink sink = [&out](uint64_t ready) {
      nb::gil_scoped_acquire gil;
      uint8_t* data = nullptr;
      out = new_bytes(ready, &data);
      return MutableByteSpan(data, ready);
    };
    try {
      nb::gil_scoped_release release;
      call(sink);
    } catch (const engine::Cancelled&) {
      release_kept();
      callbacks_.raise_stopped();
    } catch (...) {
      release_kept();
      throw;
    }
    release_kept();
    callbacks_.raise_if_stopped();
    return out;
  }

  void release_kept() {  // with the GIL
    std::vector<PyObject*> objects;
    {
      std::lock_guard lock(kept_mutex_);
      objects.swap(kept_);
    }
    for (PyObject* object : objects) Py_DECREF(object);
  }

  SchedulerCallbacks callbacks_;
  nb::handle progress_, cancelled_;  // the current call's (borrowed for its duration)
  std::mutex kept_mutex_;
  std::vector<PyObject*> kept_;       // inputs whose jobs are done, to release with the GIL
  std::optional<TransformStream> stream_;
};

}  // namespace

void register_transform_bindings(nb::module_& m);

void register_transform_bindings(nb::module_& m) {
  m.def(
      "transform_range",
      [](std::string_view cipher, bool encrypt, nb::handle key, nb::handle iv, std::string variant, nb::handle data,
         nb::handle out, std::vector<std::string> devices, nb::handle cpu_share, unsigned device_workers, size_t depth,
         uint64_t job_len, nb::handle progress, nb::handle cancelled) {
        const CipherName name = parse_cipher_name(cipher);
        BufferView key_view(key), in(data), target(out, true);
        std::optional<BufferView> iv_view;
        if (!iv.is_none()) iv_view.emplace(iv);
        TransformOptions options =
            options_from(std::move(devices), cpu_share, job_len, std::move(variant), depth, device_workers);
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
        callbacks.raise_if_stopped();
        return scheduler_stats_dict(stats);
      },
      nb::arg("name"), nb::arg("encrypt"), nb::arg("key"), nb::arg("iv").none(), nb::arg("variant"), nb::arg("data"),
      nb::arg("out"), nb::arg("devices"), nb::arg("cpu_share").none(), nb::arg("device_workers"), nb::arg("depth"),
      nb::arg("job_len"), nb::arg("progress").none(), nb::arg("cancelled").none());

  nb::class_<PyTransformStream>(m, "TransformStream")
      .def(
          "__init__",
          [](PyTransformStream* self, std::string_view cipher, bool encrypt, nb::handle key, nb::handle iv,
             std::string variant, std::vector<std::string> devices, nb::handle cpu_share, size_t depth, uint64_t job_len) {
            BufferView key_view(key);
            std::optional<BufferView> iv_view;
            if (!iv.is_none()) iv_view.emplace(iv);
            new (self) PyTransformStream(parse_cipher_name(cipher), encrypt ? Direction::encrypt : Direction::decrypt,
                                         key_view.span(), iv_view ? iv_view->span() : ByteSpan(),
                                         options_from(std::move(devices), cpu_share, job_len, std::move(variant),
                                                      depth, 0));
          },
          nb::arg("name"), nb::arg("encrypt"), nb::arg("key"), nb::arg("iv").none(), nb::arg("variant"),
          nb::arg("devices"), nb::arg("cpu_share").none(), nb::arg("depth"), nb::arg("job_len"))
      .def("update", &PyTransformStream::update, nb::arg("data"), nb::arg("progress").none(),
           nb::arg("cancelled").none())
      .def("finalize", &PyTransformStream::finalize, nb::arg("progress").none(), nb::arg("cancelled").none())
      .def("close", &PyTransformStream::close)
      .def("stats", [](PyTransformStream& self) { return scheduler_stats_dict(self.stream().stats()); })
      .def_prop_ro("devices", [](PyTransformStream& self) { return self.stream().devices(); });
}

}  // namespace gpucrypt::python
