// scheduler.hpp: ordered, bounded work on per-device worker threads: the stream engine's core, public so
// that a program (Python's stream.Pipeline among them) can spread its own jobs over devices.
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
// The measured device set (cpu_share < 0 with several devices): devices that share the host
// (a CPU device and a GPU whose pageable copies run on the same cores and memory bus; two
// devices on one CPU) can deliver less together than the fastest of them alone, and no rate per
// device shows it (under contention every device's own rate drops). So the scheduler measures
// it once per run: after each device's first job (start-up), probe_jobs jobs run on each
// candidate set in turn (every device; then, with the CPU among others, the CPU alone and the
// others without it; else each device alone; not a set whose devices together delivered under a
// quarter of the fastest device's rate, unless it is the CPU alone), twice round (the second round only for sets within half
// of the best so far), each phase waiting for the one
// before to finish so they do not overlap; the set that delivered the most bytes per second in
// its better phase (every device unless another set beat it by 5%) takes the rest of the run.
// What was measured and decided is in stats().device_choice. A phase runs at its set's own depth
// (as a run of those devices alone would), the set decided too. probe_jobs 0: twice the set's
// depth and as many again (at least twelve); a run with fewer jobs ends before deciding (and keeps
// every device, unless a kept set says otherwise: below).
// A phase's rate is what the whole pipeline delivers on that set: the least-squares slope of the
// bytes retired (in order, on the calling thread, after the caller's own reading and writing)
// against the time each was retired, counting only the jobs submitted once the pipeline was full
// and retired while the phase still submits: each of those submissions waited for a retirement,
// so they follow the pipeline's steady pace (the first depth jobs, queued at once, come back as
// fast as the caller writes them; the last depth are retired at the phase's barrier). Two earlier rules timed the
// jobs' completions (from the first to the last): the phase's last depth jobs were retired only
// at its barrier, so the caller's writing was left out of every phase, and on a 2-H200 host a
// format stream on the GPUs measured 13.1 GB/s and then ran at 6.7, a pageable transform on every
// device 16.3 and then 9.0 (2026-11-30).
// Calibrated once per process (SchedulerOptions::remember_as): a run that names its kind of work
// (cipher, direction, buffer kind, ...) keeps the set its probe decided, and a later run of the
// same kind on the same devices starts on that set with no probe; a run that ended before deciding
// leaves the phases it measured, and the next run of that kind goes on from them. Short runs are
// where the probe costs most (a 4 GiB transform at 30 GB/s is 0.13 s, of which the probe phases
// took a third; a 1 GiB one at 70 GB/s ended before its probe did), and a program's repeated calls
// are where one measurement serves many. A run on the decided set also measures what it delivers
// (a run that probed first: the same slope over the rest of the run; one that started on a kept
// set: its bytes over its whole time, start-up included; either only where the run ended with its
// one drain, not one that waited on a slow producer): where that falls more than 10% short of
// the set's figure, the figure drops to it and the next run takes the best set by the figures now
// (a format stream on two GPUs was rated 14.4 GB/s by its phase and whole runs on it delivered 8.4
// on a 2-H200 host, 2026-11-30: a cost of each run that no phase sees, cause not yet found); a
// figure never rises, so within a few runs this settles on the set whose whole runs deliver most.
// Since figures only fall, a decision is kept for a while only (SchedulerOptions::kept_runs runs
// or kept_seconds since it was made): after that the next run of the kind probes afresh, so that
// a set lowered by a passing load (another process on the GPU or the cores, a page-cache flush)
// gets its figure back in a long-lived program. forget_device_sets() clears them all.
// Kept on this machine (SchedulerOptions::machine, which names it: the host, its CPUs and GPUs):
// the kept sets are also written to a small file (machine_store_path()) and read back by later
// processes, so that a command line, which is one run per process, starts on the set earlier
// commands settled on instead of probing every time. There a decision serves kept_runs runs or
// kept_machine_seconds. A program that is one command says when it began
// (charge_first_run_from): its first run on a kept set is charged from then, so the start-up of
// the set's devices (CUDA's driver and contexts: ~0.7 s on a 2-H200 host, docs/performance.md)
// counts against the set, and a set that leaves the GPUs out, whose runs start none, can win on a
// host where the CPU alone keeps up with the files. A probe's figure is only a first guess there:
// each set in contention (its probe figure within half of the best, and the CPU alone whatever its
// figure: its commands start no GPU, which no phase of a run that started them sees) runs one whole run, best
// figure first, whose figure replaces the probe's (up or down: inside a run with the GPUs the CPU
// alone was rated 2.28 GB/s, and whole commands on it delivered ~2.5); then the figures decide,
// as above, except that within noise the CPU alone is favoured over sets with GPUs (best_set
// says why). (A caller that finds the kept set leaves every
// GPU out need not start them: machine_decision, and format's "auto".)
//
// The scheduler does not know what a device is: a name is a key, and a SchedulerDevice says the
// rest (whether it is the host's CPU, for cpu_share and the measured set; its worker count).
// gpucrypt::scheduler_devices (gpucrypt/device.hpp) fills them from each Device's traits.
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
#include <optional>
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

// One device as the scheduler sees it.
struct SchedulerDevice {
  std::string name;        // the key work and stats are given under ("cpu", "cuda:0")
  bool is_cpu = false;     // the host's CPU: cpu_share's device (at most one)
  unsigned workers = 1;    // jobs in flight on it at once
};

struct SchedulerOptions {
  double cpu_share = -1;       // < 0: "auto" (expected finish time); else the CPU's fraction of the bytes, 0..1
  size_t depth = 0;            // jobs in flight; 0: 2 * all workers + 1
  bool measure_device_set = true;  // auto with several devices: see "The measured device set"
  size_t probe_jobs = 0;           // jobs per probe phase; 0: 2 * the set's depth + max(its depth, 12)
  // Non-empty: the measured device set is kept for this process under this kind of work and these
  // devices (see "Calibrated once per process"); "" measures every run afresh.
  std::string remember_as;
  // How long a kept decision serves (see "Calibrated once per process"): this many runs of its
  // kind, or this long after it was made, whichever comes first; then a run probes afresh.
  size_t kept_runs = 64;
  double kept_seconds = 600;
  // Non-empty (with remember_as): the kept set is kept on this machine too, across processes,
  // under remember_as and this text, which names the machine (see "Kept on this machine").
  std::string machine;
  double kept_machine_seconds = 86400;  // kept_seconds for a set kept on the machine
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
  // The measured device set: "" when not measured (one device, a numeric cpu_share, or a run
  // too short to decide), else e.g. "together 3.1 GB/s, cpu alone 4.2 GB/s: cpu alone".
  std::string device_choice;
};

// Forgets every device set kept by SchedulerOptions::remember_as in this process (the next run of
// each kind probes, or starts on what the machine's store keeps).
void forget_device_sets();

// The file that keeps device sets on this machine (SchedulerOptions::machine): GPUCRYPT_CACHE_DIR,
// else $XDG_CACHE_HOME/gpucrypt, else $HOME/.cache/gpucrypt, then "device-sets.tsv"; "" where
// GPUCRYPT_CACHE_DIR is "off" or no directory is known (nothing is kept on the machine). A cache:
// a file that cannot be read or written is as good as none (nothing fails because of it).
std::string machine_store_path();

// What the machine's store keeps for runs of kind remember_as on the machine named `machine`, when
// a decision was made and still serves (not past kept_runs runs or kept_machine_seconds): the
// devices it was measured with, in order, and which of them the decided set uses.
struct MachineDecision {
  std::vector<std::string> devices;
  std::vector<bool> in_use;
  std::string choice;
};
std::optional<MachineDecision> machine_decision(const std::string& remember_as, const std::string& machine,
                                                size_t kept_runs = 64, double kept_machine_seconds = 86400);

// For a program that is one command (the CLI): when it began. The process's next run that keeps
// its device set (SchedulerOptions::remember_as, several devices, cpu_share auto) takes it: where
// that run starts on a kept set, its whole-run figure is charged from then instead of from its own
// start (see "Kept on this machine"); a run that probes uses no whole-run figure. Later runs are
// charged from their own start.
void charge_first_run_from(std::chrono::steady_clock::time_point began);

// Whether a scheduler over num_devices devices with this cpu_share measures its device set (see
// "The measured device set"; unless SchedulerOptions::measure_device_set turns it off): several
// devices and cpu_share auto. A caller whose remember_as costs something to build (a CUDA pointer
// query per buffer) asks this first, since only such a run reads it.
inline bool measures_device_set(size_t num_devices, double cpu_share) { return cpu_share < 0 && num_devices > 1; }

class Scheduler {
 public:
  using Work = std::function<void(const std::string& device)>;
  using Retire = std::function<void()>;
  static constexpr std::chrono::milliseconds kWaitSlice{100};

  // devices: no name twice, at most one is_cpu (std::invalid_argument otherwise, or when empty).
  explicit Scheduler(std::vector<SchedulerDevice> devices, SchedulerOptions options = {});
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
  // The devices jobs can go to now (every device, less those the measured device set left out).
  std::vector<std::string> devices_in_use() const;
  size_t depth() const { return depth_; }
  size_t num_in_flight() const { return pending_.size(); }

 private:
  struct Job;
  struct Device;
  size_t choose(uint64_t num_bytes);
  void advance_probe();       // calling thread, before choose: phase changes of the measured device set
  void decide_device_set();   // under mutex_, once every candidate set was measured
  void learn_from_run();      // calling thread, in stop(): what the decided set delivered, for the next run
  size_t best_set(const std::vector<double>& rates) const;
  size_t favoured_set() const;  // within noise (best_set): every device, or on the machine the CPU alone
  std::string choice_text(const std::vector<double>& rates, const std::vector<bool>& skipped, size_t best) const;
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
  bool has_cpu_ = false;                      // one of the devices is_cpu (at cpu_index_)
  uint64_t cpu_bytes_ = 0, all_bytes_ = 0;
  mutable std::mutex mutex_;                  // guards jobs' done/error, device queues, stats
  std::condition_variable job_done_;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point start_, last_drain_;
  bool drained_ = false;
  double wait_s_ = 0;
  // The measured device set (calling thread only, but device_choice_ and excluded_ under mutex_).
  enum class Probe { off, warm_up, measuring, decided };
  Probe probe_ = Probe::off;
  size_t probe_jobs_left_ = 0, probe_submitted_ = 0, warm_up_next_ = 0;
  // The jobs in flight on the devices in use (a probe phase's set, or the set decided): depth_ for
  // every device, less for fewer (2 * their workers + 1, as a run of those devices alone has). A
  // CPU alone inside a scheduler of three devices ran 27 jobs ahead, not 3, which lost the cache's
  // locality (pageable 4 GiB transform on a 2-H200 host: 22.7 GB/s against 24.7 alone).
  size_t set_depth_ = 0;
  size_t depth_of_set() const;  // calling thread (excluded_ changes only there)
  std::vector<std::vector<bool>> probe_sets_;  // candidate device sets, every device first
  std::vector<double> probe_rates_;            // bytes/s each set delivered (the better of two phases)
  size_t probe_phase_ = 0;                     // measuring phases done
  std::vector<bool> probe_skipped_;            // sets not worth measuring alone (advance_probe)
  // The phase being measured (or the run after its decision): jobs submitted in it carry
  // probe_epoch_ and their place in it; their retirements (calling thread) give its rate.
  uint64_t probe_epoch_ = 1;
  std::vector<std::pair<double, double>> probe_done_;  // (seconds since start_, bytes retired in the phase so far)
  bool probe_draining_ = false;                        // advance_probe or drain retiring the last jobs
  std::string remember_key_;                           // "" when the set is not kept
  std::string devices_key_;                            // the devices, as remember_key_ ends with them
  std::string machine_key_;                            // "" when not kept on the machine
  std::chrono::steady_clock::time_point charged_from_;  // a run on a kept set: from here (learn_from_run)
  void keep(const std::string& key);                   // the kept set of remember_key_, to the machine's store too
  size_t decided_set_ = 0;                             // the index in probe_sets_ of the set decided
  bool started_decided_ = false;                       // on a kept set, no probe
  size_t num_drains_ = 0;                              // calling thread
  uint64_t retired_bytes_ = 0, retired_jobs_ = 0;      // calling thread
  std::vector<bool> excluded_;
  std::string device_choice_;
  std::vector<std::thread> threads_;
};

}  // namespace gpucrypt::engine
