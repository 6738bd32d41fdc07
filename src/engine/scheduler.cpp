// scheduler.cpp: see gpucrypt/scheduler.hpp.
#include "gpucrypt/scheduler.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>

namespace gpucrypt::engine {

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The device sets kept by SchedulerOptions::remember_as, for this process: key -> the set decided
// (in the devices' order, which the key spells out) and what was measured, or, for a kind of work
// whose runs so far ended before deciding, the phases measured so far (the next run goes on from them).
struct KeptSet {
  bool decided = false;
  size_t set = 0;              // decided: the index of the set in the candidate sets
  std::string choice;
  std::vector<double> rates;   // each set's rate: measured by the probe, or delivered by a run on it
  std::vector<bool> skipped;
  size_t next_phase = 0;       // undecided: the next phase to measure
  std::chrono::steady_clock::time_point decided_at;  // decided: when its probe decided
  size_t runs = 0;             // decided: the runs that started on it since
};
std::mutex kept_sets_mutex;
std::map<std::string, KeptSet>& kept_sets() {
  static std::map<std::string, KeptSet> sets;
  return sets;
}

// The least-squares slope of bytes done against time (bytes/s); 0 with fewer than three points
// or no spread in time (every job finished at once: nothing to fit).
double fitted_rate(const std::vector<std::pair<double, double>>& points) {
  if (points.size() < 3) return 0;
  double mean_t = 0, mean_b = 0;
  for (const auto& [t, b] : points) mean_t += t, mean_b += b;
  mean_t /= double(points.size()), mean_b /= double(points.size());
  double covariance = 0, variance = 0;
  for (const auto& [t, b] : points) covariance += (t - mean_t) * (b - mean_b), variance += (t - mean_t) * (t - mean_t);
  return variance > 0 ? std::max(0.0, covariance / variance) : 0;
}
}  // namespace

void forget_device_sets() {
  std::lock_guard lock(kept_sets_mutex);
  kept_sets().clear();
}

struct Scheduler::Job {
  uint64_t num_bytes = 0;
  uint64_t probe_epoch = 0;  // the measured device set's phase it was submitted in
  size_t probe_index = 0;    // its place in that phase
  size_t device_index = 0;
  Work work;
  Retire retire;
  bool done = false;  // under mutex_
  std::exception_ptr error;
};

struct Scheduler::Device {
  DeviceStats stats;
  unsigned num_workers = 1;
  std::deque<std::shared_ptr<Job>> queue;  // waiting for a worker
  std::condition_variable work_ready;
  unsigned num_running = 0;
  // For the rate: when the device last went from idle to busy, and when a job last finished.
  std::chrono::steady_clock::time_point busy_since, last_done;
  double smoothed_bytes = 0, smoothed_seconds = 0;  // the rate's moving averages
  uint64_t outstanding_bytes = 0;  // queued or running here, not yet done
  size_t num_outstanding = 0;
};

Scheduler::Scheduler(std::vector<SchedulerDevice> devices, SchedulerOptions options)
    : options_(std::move(options)), start_(std::chrono::steady_clock::now()) {
  if (devices.empty()) throw std::invalid_argument("a scheduler needs at least one device");
  if (options_.cpu_share > 1) throw std::invalid_argument("cpu_share must be negative (auto) or 0..1");
  unsigned num_workers = 0;
  bool has_cpu = false, has_other = false;
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string& name = devices[i].name;
    for (size_t j = 0; j < i; ++j)
      if (devices[j].name == name) throw std::invalid_argument("device " + name + " is named twice");
    const bool is_cpu = devices[i].is_cpu;
    if (is_cpu && has_cpu) throw std::invalid_argument("device " + name + ": a scheduler takes one CPU");
    auto device = std::make_unique<Device>();
    device->stats.name = name;
    device->num_workers = std::max(1u, devices[i].workers);
    num_workers += device->num_workers;
    if (is_cpu) cpu_index_ = i;
    (is_cpu ? has_cpu : has_other) = true;
    devices_.push_back(std::move(device));
  }
  split_ = options_.cpu_share >= 0 && has_cpu && has_other;
  depth_ = options_.depth ? options_.depth : 2 * size_t(num_workers) + 1;
  set_depth_ = depth_;
  excluded_.assign(devices_.size(), false);
  if (measures_device_set(devices_.size(), options_.cpu_share) && options_.measure_device_set) {
    // The candidate sets, every device first: with the CPU among others, the CPU alone and the
    // others without it (the CPU's work and a GPU's host-side copies share cores and memory);
    // otherwise each device alone (two or three of them: beyond, only together is measured).
    const size_t n = devices_.size();
    probe_sets_.push_back(std::vector<bool>(n, true));
    if (has_cpu && has_other) {
      std::vector<bool> cpu_only(n, false), others(n, true);
      cpu_only[cpu_index_] = true, others[cpu_index_] = false;
      probe_sets_.push_back(cpu_only);
      probe_sets_.push_back(others);
    } else if (n <= 3) {
      for (size_t i = 0; i < n; ++i) {
        std::vector<bool> alone(n, false);
        alone[i] = true;
        probe_sets_.push_back(alone);
      }
    }
    if (probe_sets_.size() > 1) {
      probe_ = Probe::warm_up;
      probe_rates_.assign(probe_sets_.size(), 0.0);
      probe_skipped_.assign(probe_sets_.size(), false);
      probe_jobs_left_ = n;  // one start-up job per device
    } else {
      probe_sets_.clear();
    }
    if (probe_ == Probe::warm_up && !options_.remember_as.empty()) {
      remember_key_ = options_.remember_as;
      for (const auto& device : devices_)
        remember_key_ += " " + device->stats.name + "*" + std::to_string(device->num_workers);
      std::lock_guard lock(kept_sets_mutex);
      auto kept = kept_sets().find(remember_key_);
      if (kept != kept_sets().end() && kept->second.decided &&
          (kept->second.runs >= options_.kept_runs || seconds_since(kept->second.decided_at) > options_.kept_seconds)) {
        kept_sets().erase(kept);  // served its time: this run probes afresh (scheduler.hpp says why)
        kept = kept_sets().end();
      }
      if (kept == kept_sets().end()) {
      } else if (kept->second.decided) {
        ++kept->second.runs;
        decided_set_ = kept->second.set;
        started_decided_ = true;
        for (size_t i = 0; i < n; ++i) excluded_[i] = !probe_sets_[decided_set_][i];
        set_depth_ = depth_of_set();
        device_choice_ = "kept from an earlier run: " + kept->second.choice;
        probe_ = Probe::decided;
        probe_jobs_left_ = 0;
      } else {  // after its own start-up jobs, this run measures the phases the earlier ones did not reach
        probe_rates_ = kept->second.rates;
        probe_skipped_ = kept->second.skipped;
        probe_phase_ = kept->second.next_phase;
      }
    }
  }
  for (auto& device : devices_)
    for (unsigned w = 0; w < device->num_workers; ++w) threads_.emplace_back([this, d = device.get()] { worker_loop(*d); });
}

Scheduler::~Scheduler() { stop(); }

void Scheduler::stop() noexcept {
  // A run that ended well (drained once, at its end: a stream drained before its end waited on a
  // slow producer, whose pace no device set changes) tells what its set delivered.
  bool ended_well;
  {
    std::lock_guard lock(mutex_);
    ended_well = !stopping_ && drained_ && pending_.empty() && num_drains_ == 1;
  }
  if (ended_well) {
    try {
      learn_from_run();
    } catch (...) {  // (memory for the kept set's text): the next run decides without this one
    }
  }
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& device : devices_) device->queue.clear();
  }
  for (auto& device : devices_) device->work_ready.notify_all();
  for (auto& thread : threads_)
    if (thread.joinable()) thread.join();
  threads_.clear();
  pending_.clear();
}

void Scheduler::check_cancelled() {
  if (options_.cancelled && options_.cancelled()) {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;  // workers drop what is queued
    }
    throw Cancelled();
  }
}

void Scheduler::submit(uint64_t num_bytes, Work work, Retire retire) {
  refuse_after_failure();
  check_cancelled();
  while (pending_.size() >= set_depth_) retire_oldest();
  advance_probe();
  auto job = std::make_shared<Job>();
  job->num_bytes = num_bytes;
  job->work = std::move(work);
  job->retire = std::move(retire);
  Device* device;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw Cancelled();
    job->device_index = choose(num_bytes);
    if (probe_jobs_left_ > 0) --probe_jobs_left_;
    job->probe_epoch = probe_epoch_;
    job->probe_index = probe_submitted_++;  // in the phase, or since the set was decided
    device = devices_[job->device_index].get();
    device->queue.push_back(job);
    device->outstanding_bytes += num_bytes;
    ++device->num_outstanding;
  }
  device->work_ready.notify_one();
  pending_.push_back(std::move(job));
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (pending_.empty() || !pending_.front()->done) break;
    }
    retire_oldest();
  }
}

void Scheduler::drain() {
  if (!pending_.empty()) refuse_after_failure();
  ++num_drains_;
  probe_draining_ = true;  // these leave faster than the pipeline's pace: not timed (retire_oldest)
  while (!pending_.empty()) retire_oldest();
  probe_draining_ = false;
  last_drain_ = std::chrono::steady_clock::now();
  drained_ = true;
}

void Scheduler::learn_from_run() {
  if (probe_ != Probe::decided || remember_key_.empty()) return;
  // What the decided set delivered: a run that started on a kept set, over the whole run (bytes
  // over the time from the start to the last retirement: the caller's reading and writing and
  // what a set costs to start included); a run that probed first, over the part after its
  // decision (the steady slope).
  const double run_s = std::chrono::duration<double>(last_drain_ - start_).count();
  const double delivered = started_decided_ ? (run_s > 0 && retired_jobs_ >= 12 ? double(retired_bytes_) / run_s : 0.0)
                                            : probe_done_.size() >= 12 ? fitted_rate(probe_done_) : 0.0;
  if (delivered <= 0) return;
  // The set decided is judged by what it delivered, the caller's reading and writing included:
  // where that is less than the figure it was kept with, another set rated higher is tried on the
  // next run, and so on. A figure only falls (to what a run delivered), so after a few runs every
  // set in contention carries what whole runs on it delivered, and the best of those stays.
  {
    std::lock_guard kept_lock(kept_sets_mutex);
    KeptSet& kept = kept_sets()[remember_key_];
    if (!kept.decided || kept.set != decided_set_ || kept.rates.size() != probe_sets_.size()) return;
    // A shortfall within noise (10%) changes nothing: two equal sets would otherwise take turns,
    // each run lowering the other's figure.
    if (delivered < 0.9 * kept.rates[decided_set_]) kept.rates[decided_set_] = delivered;
    kept.set = best_set(kept.rates);
    kept.choice = choice_text(kept.rates, kept.skipped, kept.set);
  }
}

void Scheduler::advance_probe() {
  if (probe_ == Probe::off || probe_ == Probe::decided || probe_jobs_left_ > 0) return;
  // Every job of the phase was submitted: wait for them all (the phases must not overlap, or
  // each would be timed with the other's load), then measure and move on.
  // The jobs retired here are not timed: with no submissions between them they leave faster than
  // the pipeline delivers.
  probe_draining_ = true;
  while (!pending_.empty()) retire_oldest();
  probe_draining_ = false;
  std::lock_guard lock(mutex_);
  // The phase's rate: the slope of its bytes retired against time (scheduler.hpp says why). Timing
  // from the phase's start would charge each phase its ramp (the first job's copy in, which
  // nothing overlaps after the barrier), a cost that weighs most on a GPU with several workers and
  // made "together" (where the CPU fills the ramp) look better than a GPU alone (H200,
  // 2026-11-28: 41 against 45 GB/s).
  const double rate = fitted_rate(probe_done_);
  if (probe_ == Probe::warm_up) {
    probe_ = Probe::measuring;
  } else {
    // Each set is measured twice, in two rounds (A B C A B C), and keeps its better rate: a
    // phase that met a hiccup of the host (another process, a page-cache flush) is not the
    // one that decides.
    const size_t num_sets = probe_sets_.size();
    const size_t k = probe_phase_ % num_sets;
    probe_rates_[k] = std::max(probe_rates_[k], rate);
    if (probe_phase_ == 0) {
      // After every device ran together: a set whose devices' rates there add up to under a
      // quarter of the fastest device's is not measured alone. Alone it would have to run
      // four times faster than beside the others to win, and its phase (a CPU-emulated OpenCL
      // device alone, say) is the most expensive part of the measurement.
      double fastest = 0;
      for (const auto& device : devices_) fastest = std::max(fastest, device->stats.rate);
      for (size_t set = 1; set < num_sets; ++set) {
        double sum = 0;
        for (size_t i = 0; i < devices_.size(); ++i)
          if (probe_sets_[set][i]) sum += devices_[i]->stats.rate;
        probe_skipped_[set] = sum < 0.25 * fastest;
      }
    }
    // The second round also skips sets that delivered under half the best in the first: noise
    // does not close that gap.
    const double best = *std::max_element(probe_rates_.begin(), probe_rates_.end());
    const auto skip = [&](size_t phase) {
      const size_t set = phase % num_sets;
      return probe_skipped_[set] || (phase >= num_sets && probe_rates_[set] < 0.5 * best);
    };
    for (++probe_phase_; probe_phase_ < 2 * num_sets && skip(probe_phase_);) ++probe_phase_;
    if (probe_phase_ >= 2 * num_sets) {
      decide_device_set();
    } else if (!remember_key_.empty()) {  // a run that ends before deciding leaves its phases to the next
      std::lock_guard kept_lock(kept_sets_mutex);
      kept_sets()[remember_key_] = {false, 0, "", probe_rates_, probe_skipped_, probe_phase_, {}, 0};
    }
  }
  if (probe_ == Probe::measuring) {
    // The next candidate set runs alone, at its own depth, for twice that many jobs (the first
    // depth fill the pipeline, the last depth are retired at the barrier) and as many again, or
    // twelve, retired at the pipeline's pace in between (scheduler.hpp).
    const std::vector<bool>& set = probe_sets_[probe_phase_ % probe_sets_.size()];
    for (size_t i = 0; i < devices_.size(); ++i) excluded_[i] = !set[i];
    set_depth_ = depth_of_set();
    probe_jobs_left_ = options_.probe_jobs ? options_.probe_jobs : 2 * set_depth_ + std::max<size_t>(set_depth_, 12);
  } else {
    set_depth_ = depth_of_set();  // decided
  }
  probe_done_.clear();
  probe_submitted_ = 0;
  ++probe_epoch_;
}

size_t Scheduler::depth_of_set() const {
  if (options_.depth) return depth_;
  size_t workers = 0;
  for (size_t i = 0; i < devices_.size(); ++i)
    if (!excluded_[i]) workers += devices_[i]->num_workers;
  return 2 * workers + 1;
}

size_t Scheduler::best_set(const std::vector<double>& rates) {
  // Every device unless a smaller set was clearly faster: within noise, more devices is the
  // safer bet for the rest of a long run (and what a numeric share would have done).
  constexpr double kSmallerSetMargin = 1.05;
  size_t best = 0;
  for (size_t k = 1; k < rates.size(); ++k)
    if (rates[k] > kSmallerSetMargin * rates[0] && rates[k] > rates[best]) best = k;
  return best;
}

std::string Scheduler::choice_text(const std::vector<double>& rates, const std::vector<bool>& skipped,
                                   size_t best) const {
  const auto describe = [&](const std::vector<bool>& set) {
    std::string names;
    for (size_t i = 0; i < devices_.size(); ++i)
      if (set[i]) names += (names.empty() ? "" : "+") + devices_[i]->stats.name;
    return names;
  };
  std::string text;
  for (size_t k = 0; k < probe_sets_.size(); ++k) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.2f GB/s", rates[k] / 1e9);
    text += (k ? ", " : "") + describe(probe_sets_[k]) + " " +
            (skipped[k] ? std::string("not measured (too slow together)") : std::string(rate));
  }
  return text + ": " + (best == 0 ? std::string("every device") : describe(probe_sets_[best]));
}

void Scheduler::decide_device_set() {  // under mutex_
  decided_set_ = best_set(probe_rates_);
  device_choice_ = choice_text(probe_rates_, probe_skipped_, decided_set_);
  for (size_t i = 0; i < devices_.size(); ++i) excluded_[i] = !probe_sets_[decided_set_][i];
  probe_ = Probe::decided;
  if (!remember_key_.empty()) {
    std::lock_guard lock(kept_sets_mutex);
    kept_sets()[remember_key_] = {true, decided_set_, device_choice_, probe_rates_, probe_skipped_, 0,
                                  std::chrono::steady_clock::now(), 0};
  }
}

size_t Scheduler::choose(uint64_t num_bytes) {
  if (devices_.size() == 1) return 0;
  if (probe_ == Probe::warm_up) return warm_up_next_++ % devices_.size();
  if (split_) {
    all_bytes_ += num_bytes;
    if (double(cpu_bytes_ + num_bytes) <= options_.cpu_share * double(all_bytes_) + 1e-9) {
      cpu_bytes_ += num_bytes;
      return cpu_index_;
    }
  }
  size_t best = devices_.size();
  double best_s = 0;
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (split_ && i == cpu_index_) continue;  // the CPU has had its share
    if (excluded_[i]) continue;               // the measured device set left it out
    const double finish_s = expected_finish_s(*devices_[i], num_bytes);
    if (best == devices_.size() || finish_s < best_s) best = i, best_s = finish_s;
  }
  return best;
}

double Scheduler::expected_finish_s(const Device& device, uint64_t num_bytes) const {
  if (device.stats.rate <= 0)  // not measured yet: one job per worker at a time until it is
    return device.num_outstanding < device.num_workers ? 0.0 : std::numeric_limits<double>::infinity();
  return double(device.outstanding_bytes + num_bytes) / device.stats.rate;
}

void Scheduler::retire_oldest() {
  std::shared_ptr<Job> job = pending_.front();
  {
    std::unique_lock lock(mutex_);
    if (!job->done) {
      const auto began = std::chrono::steady_clock::now();
      while (!job_done_.wait_for(lock, kWaitSlice, [&] { return job->done || stopping_; })) {
        lock.unlock();
        check_cancelled();
        lock.lock();
      }
      wait_s_ += seconds_since(began);
      if (!job->done) throw Cancelled();  // stopped after an earlier failure: it will never run
    }
  }
  pending_.pop_front();
  retired_bytes_ += job->num_bytes, ++retired_jobs_;
  if ((probe_ == Probe::measuring || (probe_ == Probe::decided && !remember_key_.empty() && !started_decided_)) &&
      !probe_draining_ &&
      job->probe_epoch == probe_epoch_ && job->probe_index >= set_depth_) {
    // A job of the phase being measured (or, once decided, of the rest of the run: learn_from_run),
    // submitted when the pipeline was full and retired while the run still submits
    // (advance_probe, drain): when, and the bytes retired so far.
    const double retired = (probe_done_.empty() ? 0.0 : probe_done_.back().second) + double(job->num_bytes);
    probe_done_.emplace_back(seconds_since(start_), retired);
  }
  try {
    if (job->error) std::rethrow_exception(job->error);
    check_cancelled();
    if (job->retire) job->retire();
  } catch (...) {
    std::lock_guard lock(mutex_);
    stopping_ = true;  // nothing after a failure is wanted: workers drop their queues
    throw;
  }
}

void Scheduler::refuse_after_failure() const {
  std::lock_guard lock(mutex_);
  if (stopping_) throw Cancelled();
}

void Scheduler::worker_loop(Device& device) {
  std::unique_lock lock(mutex_);
  for (;;) {
    device.work_ready.wait(lock, [&] { return stopping_ || !device.queue.empty(); });
    if (stopping_) return;
    std::shared_ptr<Job> job = std::move(device.queue.front());
    device.queue.pop_front();
    if (device.num_running++ == 0) device.busy_since = std::chrono::steady_clock::now();
    lock.unlock();
    const auto began = std::chrono::steady_clock::now();
    try {
      job->work(device.stats.name);
    } catch (...) {  // handed to the calling thread, in order
      job->error = std::current_exception();
    }
    const double elapsed_s = seconds_since(began);
    lock.lock();
    --device.num_running;
    // The device's rate is measured from its completions: a job's bytes over the time since the
    // one before it finished (or since the device went busy). With several workers per device
    // that is what the device delivers, whether its jobs truly overlap or wait on a shared
    // resource (the host's copy pool, the memory bus), where elapsed time times the jobs running
    // would overstate it. A device's first job carries its start-up and is not measured.
    const auto now = std::chrono::steady_clock::now();
    const double interval_s = std::chrono::duration<double>(now - std::max(device.busy_since, device.last_done)).count();
    device.last_done = now;
    device.outstanding_bytes -= job->num_bytes;
    --device.num_outstanding;
    DeviceStats& stats = device.stats;
    stats.busy_s += elapsed_s;
    ++stats.jobs;
    stats.bytes += job->num_bytes;
    // Bytes and seconds are smoothed apart and divided after: workers that finish together give
    // intervals near zero, whose bytes / interval would swamp an average of rates.
    if (job->num_bytes && stats.jobs > 1) {
      const bool first = device.smoothed_seconds == 0;
      device.smoothed_bytes = first ? double(job->num_bytes) : 0.7 * device.smoothed_bytes + 0.3 * double(job->num_bytes);
      device.smoothed_seconds = first ? interval_s : 0.7 * device.smoothed_seconds + 0.3 * interval_s;
      if (device.smoothed_seconds > 0) stats.rate = device.smoothed_bytes / device.smoothed_seconds;
    }
    job->done = true;
    job_done_.notify_all();
  }
}

void Scheduler::record_run(const std::string& device, std::string_view variant, double h2d_s, double compute_s,
                           double d2h_s) {
  std::lock_guard lock(mutex_);
  for (auto& d : devices_) {
    if (d->stats.name != device) continue;
    d->stats.variant = variant;
    d->stats.h2d_s += h2d_s;
    d->stats.compute_s += compute_s;
    d->stats.d2h_s += d2h_s;
  }
}

std::vector<std::string> Scheduler::devices_in_use() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (size_t i = 0; i < devices_.size(); ++i)
    if (!excluded_[i]) names.push_back(devices_[i]->stats.name);
  return names;
}

SchedulerStats Scheduler::stats() const {
  std::lock_guard lock(mutex_);
  SchedulerStats result;
  for (const auto& device : devices_) result.devices.push_back(device->stats);
  const auto end = pending_.empty() && drained_ ? last_drain_ : std::chrono::steady_clock::now();
  result.wall_s = std::chrono::duration<double>(end - start_).count();
  result.wait_s = wait_s_;
  result.device_choice = device_choice_;
  return result;
}

}  // namespace gpucrypt::engine
