// scheduler.cpp: see gpucrypt/scheduler.hpp.
#include "gpucrypt/scheduler.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <utility>

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
  bool from_machine = false;   // read from the machine's store (SchedulerOptions::machine)
  // Kept on the machine: the sets whose figure is still the probe's, each to be tried by one
  // whole run (learn_from_run says why); empty in a process's own kept sets.
  std::vector<bool> untried;
};
std::mutex kept_sets_mutex;  // guards kept_sets(), first_run_charge() and the machine's store
std::map<std::string, KeptSet>& kept_sets() {
  static std::map<std::string, KeptSet> sets;
  return sets;
}
std::optional<std::chrono::steady_clock::time_point>& first_run_charge() {
  static std::optional<std::chrono::steady_clock::time_point> began;
  return began;
}

// ---- the machine's store (SchedulerOptions::machine) ----
// One line per kind of work on a machine, tab-separated: the key (remember_as | machine), the
// devices as the scheduler's key spells them, decided (0/1), the set's index, the next phase,
// when it was decided (Unix seconds), the runs since, each set's rate, which sets were skipped,
// which devices the decided set uses (a 0/1 per device), the choice as stats show it, and which
// sets are still to be tried by a whole run (a 0/1 per set). Lines of other machines (a home
// directory shared over the network) are kept as they are.
struct StoredSet {
  std::string devices;
  KeptSet kept;
  double decided_unix = 0;
  std::string in_use;  // "101": which devices the decided set uses
};

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string without_tabs(std::string text) {
  for (char& c : text)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return text;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.emplace_back();
  return parts;
}

std::optional<std::pair<std::string, StoredSet>> parse_stored(const std::string& line) {
  const std::vector<std::string> field = split(line, '\t');
  if (field.size() != 12) return std::nullopt;
  try {
    StoredSet stored;
    stored.devices = field[1];
    stored.kept.decided = field[2] == "1";
    stored.kept.set = std::stoul(field[3]);
    stored.kept.next_phase = std::stoul(field[4]);
    stored.decided_unix = std::stod(field[5]);
    stored.kept.runs = std::stoul(field[6]);
    for (const std::string& rate : split(field[7], ',')) stored.kept.rates.push_back(std::stod(rate));
    for (char skipped : field[8]) stored.kept.skipped.push_back(skipped == '1');
    stored.in_use = field[9];
    stored.kept.choice = field[10];
    for (char untried : field[11]) stored.kept.untried.push_back(untried == '1');
    if (stored.kept.rates.empty() || stored.kept.rates.size() != stored.kept.skipped.size() ||
        stored.kept.set >= stored.kept.rates.size() ||
        (!stored.kept.untried.empty() && stored.kept.untried.size() != stored.kept.rates.size()))
      return std::nullopt;
    return std::pair{field[0], stored};
  } catch (const std::exception&) {  // a damaged line is no line
    return std::nullopt;
  }
}

std::string stored_line(const std::string& key, const StoredSet& stored) {
  std::string line = without_tabs(key) + "\t" + stored.devices + "\t" + (stored.kept.decided ? "1" : "0") + "\t" +
                     std::to_string(stored.kept.set) + "\t" + std::to_string(stored.kept.next_phase) + "\t" +
                     std::to_string(stored.decided_unix) + "\t" + std::to_string(stored.kept.runs) + "\t";
  for (size_t k = 0; k < stored.kept.rates.size(); ++k) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.6g", stored.kept.rates[k]);
    line += (k ? "," : "") + std::string(rate);
  }
  line += "\t";
  for (bool skipped : stored.kept.skipped) line += skipped ? '1' : '0';
  line += "\t" + stored.in_use + "\t" + without_tabs(stored.kept.choice) + "\t";
  for (bool untried : stored.kept.untried) line += untried ? '1' : '0';
  return line + "\n";
}

std::map<std::string, StoredSet> read_store(const std::string& path) {
  std::map<std::string, StoredSet> store;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line))
    if (auto entry = parse_stored(line)) store[entry->first] = entry->second;
  return store;
}

// Under kept_sets_mutex. Another process may write at once: the lock file serialises the
// read-modify-write, and the new store replaces the old by rename, so a reader sees one or the
// other. Any failure leaves the store as it was (a cache).
void write_stored(const std::string& key, const StoredSet& stored) {
  const std::string path = machine_store_path();
  if (path.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), error);
  const int lock = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0) return;
  if (::flock(lock, LOCK_EX) == 0) {
    std::map<std::string, StoredSet> store = read_store(path);
    store[without_tabs(key)] = stored;
    const std::string temporary = path + ".tmp." + std::to_string(::getpid());
    bool written = false;
    {
      std::ofstream out(temporary, std::ios::trunc);
      for (const auto& [line_key, line_set] : store) out << stored_line(line_key, line_set);
      out.flush();
      written = bool(out);
    }
    if (!written || std::rename(temporary.c_str(), path.c_str()) != 0) std::remove(temporary.c_str());
  }
  ::close(lock);  // releases the lock
}

// A kind of work's line in the machine's store: the kind, then the machine it was measured on.
std::string machine_store_key(const std::string& remember_as, const std::string& machine) {
  return remember_as + " | " + machine;
}

std::optional<StoredSet> read_stored(const std::string& key) {
  const std::string path = machine_store_path();
  if (path.empty()) return std::nullopt;
  std::map<std::string, StoredSet> store = read_store(path);
  const auto found = store.find(without_tabs(key));
  if (found == store.end()) return std::nullopt;
  return found->second;
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

std::string machine_store_path() {
  const auto set = [](const char* name) -> const char* {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
  };
  std::string directory;
  if (const char* chosen = std::getenv("GPUCRYPT_CACHE_DIR"); chosen != nullptr) {
    if (*chosen == '\0' || std::string(chosen) == "off") return "";
    directory = chosen;
  } else if (const char* cache = set("XDG_CACHE_HOME")) {
    directory = std::string(cache) + "/gpucrypt";
  } else if (const char* home = set("HOME")) {
    directory = std::string(home) + "/.cache/gpucrypt";
  } else {
    return "";
  }
  return directory + "/device-sets.tsv";
}

std::optional<MachineDecision> machine_decision(const std::string& remember_as, const std::string& machine,
                                                size_t kept_runs, double kept_machine_seconds) {
  std::lock_guard lock(kept_sets_mutex);
  const std::optional<StoredSet> stored = read_stored(machine_store_key(remember_as, machine));
  if (!stored || !stored->kept.decided || stored->kept.runs >= kept_runs ||
      unix_now() - stored->decided_unix > kept_machine_seconds)
    return std::nullopt;
  MachineDecision decision;
  for (const std::string& device : split(stored->devices, ' ')) {
    if (device.empty()) continue;
    decision.devices.push_back(device.substr(0, device.rfind('*')));
  }
  if (stored->in_use.size() != decision.devices.size()) return std::nullopt;
  for (char used : stored->in_use) decision.in_use.push_back(used == '1');
  decision.choice = stored->kept.choice;
  return decision;
}

void charge_first_run_from(std::chrono::steady_clock::time_point began) {
  std::lock_guard lock(kept_sets_mutex);
  first_run_charge() = began;
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
    : options_(std::move(options)), start_(std::chrono::steady_clock::now()), charged_from_(start_) {
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
    has_cpu_ = has_cpu_ || is_cpu;
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
      for (const auto& device : devices_)
        devices_key_ += (devices_key_.empty() ? "" : " ") + device->stats.name + "*" + std::to_string(device->num_workers);
      remember_key_ = options_.remember_as + " " + devices_key_;
      if (!options_.machine.empty()) {
        machine_key_ = machine_store_key(options_.remember_as, options_.machine);
        remember_key_ += " (on the machine)";  // decided by other rules (best_set, untried) than the process's own
      }
      const double kept_seconds = machine_key_.empty() ? options_.kept_seconds : options_.kept_machine_seconds;
      std::lock_guard lock(kept_sets_mutex);
      if (first_run_charge()) charged_from_ = *std::exchange(first_run_charge(), std::nullopt);
      auto kept = kept_sets().find(remember_key_);
      if (kept == kept_sets().end() && !machine_key_.empty()) {
        // Not kept in this process: what earlier processes kept on this machine, for these devices.
        std::optional<StoredSet> stored = read_stored(machine_key_);
        if (stored && stored->devices == devices_key_ && stored->kept.rates.size() == probe_sets_.size()) {
          stored->kept.from_machine = true;
          stored->kept.decided_at = std::chrono::steady_clock::now() -
                                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        std::chrono::duration<double>(unix_now() - stored->decided_unix));
          kept = kept_sets().emplace(remember_key_, stored->kept).first;
        }
      }
      if (kept != kept_sets().end() && kept->second.decided &&
          (kept->second.runs >= options_.kept_runs || seconds_since(kept->second.decided_at) > kept_seconds)) {
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
        device_choice_ = (kept->second.from_machine ? "kept on this machine: " : "kept from an earlier run: ") +
                         kept->second.choice;
        probe_ = Probe::decided;
        probe_jobs_left_ = 0;
        keep(remember_key_);  // its runs counted on the machine too
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
  // over the time from the start, or from when the command began (charge_first_run_from), to the
  // last retirement: the caller's reading and writing and what a set costs to start included); a run that probed first, over the part after its
  // decision (the steady slope).
  const double run_s = std::chrono::duration<double>(last_drain_ - charged_from_).count();
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
    if (started_decided_ && kept.untried.size() == kept.rates.size() && kept.untried[decided_set_]) {
      // Kept on the machine, the first whole run on a set replaces the probe's figure, up or down:
      // a probe's phase sees neither what starting the set's devices costs a command nor, it
      // turned out, all a set does alone (the CPU alone inside a 2-H200 run: 2.28 GB/s; whole
      // commands on it: ~2.5, start included, 2026-11-30). So each set that was in contention
      // (its probe figure within half of the best) runs one whole command before the figures
      // decide, best figure first; a command line pays that once per decision.
      kept.rates[decided_set_] = delivered;
      kept.untried[decided_set_] = false;
    } else if (delivered < 0.9 * kept.rates[decided_set_]) {
      // A shortfall within noise (10%) changes nothing: two equal sets would otherwise take turns,
      // each run lowering the other's figure.
      kept.rates[decided_set_] = delivered;
    }
    kept.set = best_set(kept.rates);
    size_t next_untried = kept.rates.size();
    for (size_t k = 0; k < kept.untried.size(); ++k)
      if (kept.untried[k] && (next_untried == kept.rates.size() || kept.rates[k] > kept.rates[next_untried])) next_untried = k;
    if (next_untried < kept.rates.size()) kept.set = next_untried;
    kept.choice = choice_text(kept.rates, kept.skipped, kept.set);
    keep(remember_key_);
  }
}

void Scheduler::keep(const std::string& key) {  // under kept_sets_mutex
  if (machine_key_.empty()) return;
  StoredSet stored;
  stored.devices = devices_key_;
  stored.kept = kept_sets()[key];
  stored.decided_unix = unix_now() - seconds_since(stored.kept.decided_at);
  if (stored.kept.decided && stored.kept.set < probe_sets_.size())
    for (bool used : probe_sets_[stored.kept.set]) stored.in_use += used ? '1' : '0';
  else
    stored.in_use.assign(devices_.size(), '1');
  write_stored(machine_key_, stored);
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
      // device alone, say) is the most expensive part of the measurement. Except the host's CPU
      // alone: where the pipeline is bound outside the devices (one file's writes), each device's
      // rate beside the others is its share of that bound, not what it does alone, and the CPU
      // alone is the set that needs no GPU started (a 2-H200 host's file rows: the CPU's jobs
      // there were rated under a quarter of a GPU's, and alone it kept up with the files, 2026-11-30).
      double fastest = 0;
      for (const auto& device : devices_) fastest = std::max(fastest, device->stats.rate);
      for (size_t set = 1; set < num_sets; ++set) {
        double sum = 0;
        size_t members = 0;
        for (size_t i = 0; i < devices_.size(); ++i)
          if (probe_sets_[set][i]) sum += devices_[i]->stats.rate, ++members;
        const bool host_cpu_alone = members == 1 && has_cpu_ && probe_sets_[set][cpu_index_];
        probe_skipped_[set] = !host_cpu_alone && sum < 0.25 * fastest;
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
      keep(remember_key_);
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

size_t Scheduler::favoured_set() const {
  const bool cpu_alone_set = has_cpu_ && devices_.size() > 1 && probe_sets_.size() == 3;  // (every, cpu alone, others)
  return !machine_key_.empty() && cpu_alone_set ? 1 : 0;
}

size_t Scheduler::best_set(const std::vector<double>& rates) const {
  // Within noise (5%) the set a run favours: in a process every device, the safer bet for the
  // rest of a long run (and what a numeric share would have done); kept on the machine, the CPU
  // alone, the one set whose commands start no GPU, for what no figure includes: the GPUs'
  // teardown when the command's process ends (~0.2 s on a 2-H200 host, bench/start_probe.py),
  // which left whole commands on every device 0.2 s slower than on the CPU alone at equal
  // figures (2026-11-30). Another set takes over only where it was clearly faster.
  constexpr double kMargin = 1.05;
  const size_t favoured = favoured_set();
  size_t best = favoured;
  for (size_t k = 0; k < rates.size(); ++k)
    if (k != favoured && rates[k] > kMargin * rates[favoured] && rates[k] > rates[best]) best = k;
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
    KeptSet& kept = kept_sets()[remember_key_] = {true, decided_set_, device_choice_, probe_rates_, probe_skipped_, 0,
                                                  std::chrono::steady_clock::now(), 0};
    if (!machine_key_.empty()) {
      // Each set in contention is to run one whole command (learn_from_run), and the CPU alone
      // always is: its commands start no GPU, which no phase of a run that started them can see
      // (a 2-H200 host's file rows: every device rated 5.7 GB/s mid-run, the CPU alone 2.4, and
      // whole commands on the CPU alone were the faster, 2026-11-30).
      const double best = *std::max_element(probe_rates_.begin(), probe_rates_.end());
      kept.untried.assign(probe_rates_.size(), false);
      for (size_t k = 0; k < probe_rates_.size(); ++k)
        kept.untried[k] = !probe_skipped_[k] && (probe_rates_[k] >= 0.5 * best || k == favoured_set());
    }
    keep(remember_key_);
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
