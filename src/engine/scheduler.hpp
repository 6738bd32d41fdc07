// scheduler.hpp: ordered, bounded work on per-device worker threads (internal).
//
// The C++ twin of gpucrypt/stream.py's Pipeline, so that a whole in-memory buffer runs through
// the file format on several devices without Python in the loop (src/format/pipeline.cpp).
// submit() hands a job's `work` to the worker threads of the device chosen for it and returns;
// each job's `retire` runs later on the calling thread, in submission order. At most `depth`
// jobs are in flight: submit() blocks (retiring finished jobs meanwhile) until one is retired.
//
// Device choice: with a numeric cpu_share the CPU takes that
// fraction of the bytes first; otherwise the job goes to the device expected to finish it first,
// (bytes queued or running on it + the job) / its measured rate. A device not measured yet takes
// one job per worker at a time. The rate is measured from a device's second job on (the first
// carries its start-up, e.g. a CUDA context). A sample is a job's bytes over the time since the
// device's previous completion (or since it went busy): what the device delivers with all its
// workers, including time they wait on each other. Bytes and seconds are each smoothed (0.7 old +
// 0.3 new) and the rate is their quotient, so jobs finishing together do not count as infinitely fast.
// (Elapsed time times the jobs overlapping, the rule before, overstated a GPU whose format jobs
// queue on the host's copy pool.) Python's stream.Pipeline runs on this class (_native.Scheduler).
//
// The scheduler does not know what a device is: a name is a key, and "cpu" only matters for
// cpu_share and the worker count.
//
// Threads: submit, drain, stop and stats belong to one calling thread; record_run is for `work`,
// on any worker. The `cancelled` callback is called on the calling thread only (Python's signal
// check must run there): on each submit, on each retire, and every kWaitSlice while waiting.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace gpucrypt::engine {

// The work was cancelled (the caller's `cancelled` callback returned true).
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("cancelled") {}
};

struct SchedulerOptions {
  double cpu_share = -1;       // < 0: "auto" (expected finish time); else the CPU's fraction of the bytes, 0..1
  unsigned cpu_workers = 1;    // the CPU's batches already use every core
  unsigned device_workers = 3; // per other device: one job copying in, one computing, one copying out
  size_t depth = 0;            // jobs in flight; 0: 2 * all workers + 1
  std::function<bool()> cancelled;
};

struct DeviceStats {
  std::string name;
  uint64_t jobs = 0, bytes = 0;
  double busy_s = 0;           // wall time inside `work`, summed over the device's workers
  double rate = 0;             // bytes/s, moving average (0 until measured)
  std::string variant;         // as recorded by `work` (record_run)
  double h2d_s = 0, compute_s = 0, d2h_s = 0;
};

struct SchedulerStats {
  std::vector<DeviceStats> devices;  // in the order given to the constructor
  double wall_s = 0;                 // construction to the end of the last drain (or now)
  double wait_s = 0;                 // calling thread blocked on a job not yet finished
};

class Scheduler {
 public:
  using Work = std::function<void(const std::string& device)>;
  using Retire = std::function<void()>;
  static constexpr std::chrono::milliseconds kWaitSlice{100};

  // devices: canonical names, no repeats (std::invalid_argument otherwise, or when empty).
  explicit Scheduler(std::vector<std::string> devices, SchedulerOptions options = {});
  ~Scheduler();  // stop()
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues a job of num_bytes on the chosen device. Rethrows the exception of the first failed
  // job (in submission order) when its turn to retire comes; throws Cancelled when cancelled;
  // a `retire` that throws ends the same way. After any of these the scheduler only stops.
  void submit(uint64_t num_bytes, Work work, Retire retire);
  // Retires every job in flight (same exceptions as submit).
  void drain();
  // Stops the workers: jobs already inside `work` finish, queued ones are dropped (never run,
  // never retired). Idempotent; never throws. Callers use it to be sure no worker still writes
  // into their buffers before they clean up after an exception.
  void stop() noexcept;

  // For `work`: what the job ran on, added to its device's stats.
  void record_run(const std::string& device, std::string_view variant, double h2d_s, double compute_s, double d2h_s);
  SchedulerStats stats() const;
  size_t depth() const { return depth_; }
  size_t num_in_flight() const { return pending_.size(); }

 private:
  struct Job;
  struct Device;
  size_t choose(uint64_t num_bytes);
  double expected_finish_s(const Device& device, uint64_t num_bytes) const;  // under mutex_
  void retire_oldest();
  void check_cancelled();
  void refuse_after_failure() const;  // Cancelled once a job failed, was cancelled or stopped
  void worker_loop(Device& device);

  std::vector<std::unique_ptr<Device>> devices_;
  SchedulerOptions options_;
  size_t depth_ = 0;
  std::deque<std::shared_ptr<Job>> pending_;  // submission order; calling thread only
  bool split_ = false;                        // a numeric cpu_share with GPUs and the CPU
  size_t cpu_index_ = 0;
  uint64_t cpu_bytes_ = 0, all_bytes_ = 0;
  mutable std::mutex mutex_;                  // guards jobs' done/error, device queues, stats
  std::condition_variable job_done_;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point start_, last_drain_;
  bool drained_ = false;
  double wait_s_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace gpucrypt::engine
