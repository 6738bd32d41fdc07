// scheduler_callbacks.hpp: Python callbacks around the C++ scheduler (include/gpucrypt/scheduler.hpp),
// one rule for the bindings that run it with the GIL released (format_bindings.cpp,
// transform_bindings.cpp), and the CPU share those bindings take (cpu_share_of).
//
// A callback runs with the GIL taken back. A Python exception it raises is kept here and the
// scheduler is stopped with engine::Cancelled; once the blocking call has returned (GIL held
// again), raise_stopped() raises that exception, or gpucrypt.stream.Cancelled when the stop was
// a plain cancellation.
#pragma once

#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <optional>

#include "gpucrypt/device.hpp"
#include "gpucrypt/scheduler.hpp"

namespace gpucrypt::python {

class SchedulerCallbacks {
 public:
  // The scheduler's `cancelled`: true when `cancelled()` says so or raises, or, with
  // check_signals, when a signal handler raised (Ctrl-C: KeyboardInterrupt).
  bool poll_cancelled(nanobind::handle cancelled, bool check_signals) {
    nanobind::gil_scoped_acquire gil;
    if (check_signals && PyErr_CheckSignals() != 0) {
      raised_.emplace();  // fetches the exception the signal handler raised
      return true;
    }
    if (cancelled.is_none()) return false;
    try {
      return nanobind::cast<bool>(cancelled());
    } catch (nanobind::python_error& error) {
      raised_.emplace(std::move(error));
      return true;
    }
  }

  // Calls `callback(args...)` with the GIL; its exception is kept and the scheduler stopped.
  template <typename... Args>
  void call(nanobind::handle callback, Args&&... args) {
    nanobind::gil_scoped_acquire gil;
    try {
      callback(std::forward<Args>(args)...);
    } catch (nanobind::python_error& error) {
      raised_.emplace(std::move(error));
      throw engine::Cancelled();
    }
  }

  // With the GIL held, after the blocking call returned without engine::Cancelled: raises what a
  // callback raised or a signal brought (Ctrl-C) if one came as the work ended, too late to stop
  // it (the scheduler asked `cancelled` after the last job was handed out). Kept, not raised, it
  // was lost: a Ctrl-C then did nothing.
  void raise_if_stopped() {
    if (raised_) raise_stopped();
  }

  // With the GIL held, after engine::Cancelled left the blocking call: raises the kept Python
  // exception, or gpucrypt.stream.Cancelled.
  [[noreturn]] void raise_stopped() {
    if (raised_) {
      nanobind::python_error error = std::move(*raised_);
      raised_.reset();
      error.restore();
      throw nanobind::python_error();
    }
    PyErr_SetString(nanobind::module_::import_("gpucrypt.stream").attr("Cancelled").ptr(), "stream cancelled");
    throw nanobind::python_error();
  }

 private:
  std::optional<nanobind::python_error> raised_;  // touched with the GIL held only
};

// The scheduler's cpu_share from a share as Python's stream layer holds it (what select_devices
// answers, or the caller's own): None or "auto" for measured shares (negative), a number 0..1, or
// its text. Every form goes through the library's one parser (gpucrypt/device.hpp
// parse_cpu_share), so a share out of range is its std::invalid_argument (ValueError) here too.
inline double cpu_share_of(nanobind::handle share) {
  if (share.is_none()) return -1;
  return parse_cpu_share(nanobind::str(share).c_str()).value_or(-1);
}

// A scheduler's stats() as Python's stream.add_native_stats reads them: {"devices": {name: {jobs,
// bytes, busy_s, rate[, variant]}}, "wait_s", "wall_s", "device_choice"}.
inline nanobind::dict scheduler_stats_dict(const engine::SchedulerStats& stats) {
  nanobind::dict devices;
  for (const engine::DeviceStats& d : stats.devices) {
    nanobind::dict e;
    e["jobs"] = d.jobs;
    e["bytes"] = d.bytes;
    e["busy_s"] = d.busy_s;
    e["rate"] = d.rate;
    if (!d.variant.empty()) e["variant"] = d.variant;  // what record_run said the jobs ran on
    devices[d.name.c_str()] = e;
  }
  nanobind::dict out;
  out["devices"] = devices;
  out["wait_s"] = stats.wait_s;
  out["wall_s"] = stats.wall_s;
  out["device_choice"] = stats.device_choice;
  return out;
}

}  // namespace gpucrypt::python
