// scheduler_bindings.cpp: the C++ scheduler (include/gpucrypt/scheduler.hpp) for Python's stream engine,
// so that gpucrypt.stream.Pipeline and the in-memory file format choose devices by one rule.
//   Scheduler(devices, cpu_share, device_workers, depth, run_work, retire_job, cancelled)
//     devices: names, described to the scheduler by their traits (gpucrypt::scheduler_devices);
//     device_workers: workers per GPU, 0 for each GPU's own (DeviceTraits::workers).
//     run_work(job_id, device) runs on a worker thread with the GIL; it must not raise (the
//     Python side keeps a job's exception and raises it from retire_job, in order).
//     retire_job(job_id) runs on the calling thread, in submission order, with the GIL.
//     cancelled() -> bool, polled on the calling thread with the GIL (with pending signals:
//     Ctrl-C raises KeyboardInterrupt); True raises gpucrypt.stream.Cancelled.
//   .submit(job_id, num_bytes)  queues a job (blocks, with the GIL released, while depth jobs are
//                               in flight); .drain(); .stop() (running jobs finish, queued ones are
//                               dropped); .stats() -> {"devices": {name: {jobs, bytes, busy_s,
//                               rate}}, "wait_s"}
// The native lambdas hold no Python object: only job ids and this binding, whose Python callables
// are touched with the GIL held, so nothing is copied or released without it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "gpucrypt/device.hpp"
#include "gpucrypt/scheduler.hpp"
#include "scheduler_callbacks.hpp"

namespace nb = nanobind;

namespace gpucrypt::python {

void register_scheduler_bindings(nb::module_& m);

namespace {

class PyScheduler {
 public:
  PyScheduler(std::vector<std::string> devices, double cpu_share, unsigned device_workers, size_t depth,
              nb::object run_work, nb::object retire_job, nb::object cancelled)
      : run_work_(std::move(run_work)), retire_job_(std::move(retire_job)), cancelled_(std::move(cancelled)) {
    engine::SchedulerOptions options;
    options.cpu_share = cpu_share;
    options.depth = depth;
    // Signals too: the calling thread waits in C++, where Ctrl-C would otherwise go unnoticed.
    options.cancelled = [this] { return callbacks_.poll_cancelled(cancelled_, true); };
    scheduler_.emplace(scheduler_devices(devices, 0, device_workers), std::move(options));
  }

  ~PyScheduler() { stop(); }

  void submit(uint64_t job_id, uint64_t num_bytes) {
    run_released([&] {
      scheduler_->submit(
          num_bytes,
          [this, job_id](const std::string& device) {
            nb::gil_scoped_acquire gil;
            try {
              run_work_(job_id, device);
            } catch (nb::python_error& error) {  // run_work keeps its errors; this is a last resort
              error.discard_as_unraisable("gpucrypt.stream worker");
            }
          },
          [this, job_id] { callbacks_.call(retire_job_, job_id); });
    });
  }

  void drain() {
    run_released([&] { scheduler_->drain(); });
  }

  void stop() {
    if (!scheduler_) return;
    nb::gil_scoped_release release;  // a running job's run_work needs the GIL to finish
    scheduler_->stop();
  }

  nb::dict stats() const { return scheduler_stats_dict(scheduler_->stats()); }

 private:
  // Runs a blocking scheduler call with the GIL released (the workers need it); a Python error
  // kept by a callback, or a cancellation, comes out as the Python exception.
  // Runs a blocking scheduler call with the GIL released (the workers need it).
  template <typename Call>
  void run_released(Call&& call) {
    try {
      nb::gil_scoped_release release;
      call();
    } catch (const engine::Cancelled&) {
      callbacks_.raise_stopped();
    }
  }

  nb::object run_work_, retire_job_, cancelled_;
  SchedulerCallbacks callbacks_;
  std::optional<engine::Scheduler> scheduler_;  // last: its workers stop before the callables go
};

}  // namespace

void register_scheduler_bindings(nb::module_& m) {
  nb::class_<PyScheduler>(m, "Scheduler", "The C++ scheduler of include/gpucrypt/scheduler.hpp (stream.Pipeline's core).")
      .def(nb::init<std::vector<std::string>, double, unsigned, size_t, nb::object, nb::object, nb::object>(),
           nb::arg("devices"), nb::arg("cpu_share"), nb::arg("device_workers"), nb::arg("depth"), nb::arg("run_work"),
           nb::arg("retire_job"), nb::arg("cancelled").none())
      .def("submit", &PyScheduler::submit, nb::arg("job_id"), nb::arg("num_bytes"))
      .def("drain", &PyScheduler::drain)
      .def("stop", &PyScheduler::stop)
      .def("stats", &PyScheduler::stats);
}

}  // namespace gpucrypt::python
