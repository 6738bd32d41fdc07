// test_scheduler.cpp: the engine's ordered, bounded per-device scheduler (include/gpucrypt/scheduler.hpp)
// with jobs that only sleep, on made-up device names: the scheduler must not care what a device
// is. Checks in-order retirement under out-of-order completion, the in-flight bound, errors
// re-raised in order, cancellation, dropping queued jobs on stop, and the device choice (by
// measured rate, and by a numeric cpu_share).
#include <stdlib.h>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpucrypt/scheduler.hpp"
#include "test_support.hpp"

using gpucrypt::engine::Cancelled;
using gpucrypt::engine::Scheduler;
using gpucrypt::engine::SchedulerDevice;
using gpucrypt::engine::SchedulerOptions;
using gpucrypt::engine::forget_device_sets;
using gpucrypt::engine::machine_decision;
using gpucrypt::engine::machine_store_path;
using gpucrypt::test_support::check;
using namespace std::chrono_literals;

namespace {

// Devices as the library's callers describe them (gpucrypt::scheduler_devices): "cpu" is the
// host's CPU with one worker, any other name a GPU-like device with `workers` (3, a GPU's own).
std::vector<SchedulerDevice> devices(std::initializer_list<std::string> names, unsigned workers = 3) {
  std::vector<SchedulerDevice> described;
  for (const std::string& name : names)
    described.push_back({name, name == "cpu", name == "cpu" ? 1u : workers});
  return described;
}

// A store of kept device sets of its own (GPUCRYPT_CACHE_DIR, a fresh directory) for a test's
// life, this process's own kept sets forgotten at both ends.
struct TemporaryStore {
  char directory[32] = "/tmp/gpucrypt-store-XXXXXX";
  TemporaryStore() {
    check(::mkdtemp(directory) != nullptr, "a directory for the store");
    ::setenv("GPUCRYPT_CACHE_DIR", directory, 1);
    forget_device_sets();
  }
  ~TemporaryStore() {
    ::unsetenv("GPUCRYPT_CACHE_DIR");
    std::filesystem::remove_all(directory);
    forget_device_sets();
  }
};

const gpucrypt::engine::DeviceStats& stats_of(const gpucrypt::engine::SchedulerStats& stats, const std::string& name) {
  for (const auto& device : stats.devices)
    if (device.name == name) return device;
  throw std::logic_error("no device " + name);
}

void retires_in_submission_order() {
  Scheduler scheduler(devices({"fake:0"}));  // 3 workers: later jobs, sleeping less, finish first
  const auto caller = std::this_thread::get_id();
  std::vector<int> retired;
  bool on_caller = true;
  std::atomic<int> max_running{0}, running{0};
  for (int i = 0; i < 12; ++i) {
    scheduler.submit(
        100,
        [&, i](const std::string& device) {
          const int now = ++running;
          for (int seen = max_running; now > seen && !max_running.compare_exchange_weak(seen, now);) {
          }
          check(device == "fake:0", "work receives its device's name");
          std::this_thread::sleep_for(std::chrono::milliseconds(2 * (12 - i)));
          --running;
        },
        [&, i] {
          retired.push_back(i);
          on_caller = on_caller && std::this_thread::get_id() == caller;
        });
    check(scheduler.num_in_flight() <= scheduler.depth(), "in flight stays within depth (" +
                                                              std::to_string(scheduler.num_in_flight()) + ")");
  }
  scheduler.drain();
  std::vector<int> expected(12);
  for (int i = 0; i < 12; ++i) expected[i] = i;
  check(retired == expected, "retire runs in submission order");
  check(on_caller, "retire runs on the calling thread");
  check(max_running == 3, "three workers ran at once on a non-CPU device, got " + std::to_string(max_running));
  check(scheduler.depth() == 7, "default depth is 2 * workers + 1");
  const auto stats = scheduler.stats();
  check(stats_of(stats, "fake:0").jobs == 12 && stats_of(stats, "fake:0").bytes == 1200, "stats count jobs and bytes");
}

void bounded_in_flight() {
  SchedulerOptions options;
  options.depth = 3;
  Scheduler scheduler(devices({"a", "b"}), options);
  std::atomic<int> started{0};
  int retired = 0;
  for (int i = 0; i < 20; ++i) {
    scheduler.submit(10, [&](const std::string&) { ++started, std::this_thread::sleep_for(1ms); }, [&] { ++retired; });
    check(int(scheduler.num_in_flight()) <= 3, "submit blocks at depth 3");
    check(started - retired <= 3, "no more than depth jobs started and not retired");
  }
  scheduler.drain();
  check(retired == 20 && scheduler.num_in_flight() == 0, "drain retires everything");
}

void errors_are_raised_in_order() {
  Scheduler scheduler(devices({"fake:0"}));
  std::vector<int> retired;
  std::string caught;
  try {
    for (int i = 0; i < 8; ++i)
      scheduler.submit(
          1,
          [i](const std::string&) {
            if (i == 2) std::this_thread::sleep_for(20ms), throw std::runtime_error("job 2");
            if (i == 3) throw std::runtime_error("job 3");  // fails first, retires later
          },
          [&, i] { retired.push_back(i); });
    scheduler.drain();
  } catch (const std::runtime_error& error) {
    caught = error.what();
  }
  check(caught == "job 2", "the first failed job in submission order is raised, got '" + caught + "'");
  check(retired == std::vector<int>{0, 1}, "jobs before the failure retired, none after");
  bool refused = false;
  try {
    scheduler.submit(1, [](const std::string&) {}, {});
  } catch (const Cancelled&) {
    refused = true;
  }
  check(refused, "a scheduler that failed takes no more work");
  refused = false;
  try {
    scheduler.drain();  // jobs 4.. may be done: they must not retire after the failure
  } catch (const Cancelled&) {
    refused = true;
  }
  check(refused && retired == std::vector<int>{0, 1}, "a scheduler that failed retires nothing more");
}

void cancellation() {
  std::atomic<bool> cancel{false};
  SchedulerOptions options;
  options.cancelled = [&] { return cancel.load(); };
  Scheduler scheduler(devices({"cpu"}), options);
  int retired = 0;
  bool raised = false;
  try {
    for (int i = 0; i < 10; ++i)
      scheduler.submit(1, [](const std::string&) {}, [&, i] { ++retired, cancel = i == 3; });
    scheduler.drain();
  } catch (const Cancelled&) {
    raised = true;
  }
  check(raised, "cancellation raises Cancelled");
  check(retired == 4, "nothing retires after cancellation, got " + std::to_string(retired));

  // Cancelled while the caller waits on a long job: noticed within a wait slice.
  std::atomic<bool> cancel_soon{false};
  options.cancelled = [&] { return cancel_soon.load(); };
  Scheduler waiting(devices({"cpu"}), options);
  const auto began = std::chrono::steady_clock::now();
  std::thread canceller([&] { std::this_thread::sleep_for(50ms), cancel_soon = true; });
  raised = false;
  try {
    waiting.submit(1, [](const std::string&) { std::this_thread::sleep_for(1s); }, {});
    waiting.drain();
  } catch (const Cancelled&) {
    raised = true;
  }
  canceller.join();
  check(raised && std::chrono::steady_clock::now() - began < 600ms, "a waiting caller sees cancellation");
}

void stop_drops_queued_jobs() {
  std::atomic<int> started{0}, ran{0};
  {
    SchedulerOptions options;
    options.depth = 50;
    Scheduler scheduler(devices({"cpu"}), options);  // one worker
    for (int i = 0; i < 20; ++i)
      scheduler.submit(1, [&](const std::string&) { ++started, std::this_thread::sleep_for(5ms), ++ran; }, {});
    while (started == 0) std::this_thread::yield();
  }  // destructor: the running job finishes, the rest are dropped
  check(ran >= 1 && ran < 20, "stop lets the running job finish and drops the queue, ran " + std::to_string(ran));
}

void choice_follows_measured_rate() {
  SchedulerOptions options;
  Scheduler scheduler(devices({"slow", "fast"}, 1), options);
  for (int i = 0; i < 60; ++i)
    // 20x apart: on a loaded machine (CI's two cores, with a build beside) a 1 ms sleep can take
    // several, and at 5x apart the measured rates came within 2x of each other.
    scheduler.submit(1 << 20, [](const std::string& device) { std::this_thread::sleep_for(device == "fast" ? 1ms : 20ms); },
                     {});
  scheduler.drain();
  const auto stats = scheduler.stats();
  const auto &fast = stats_of(stats, "fast"), &slow = stats_of(stats, "slow");
  check(slow.jobs >= 2 && fast.jobs > 2 * slow.jobs, "the faster device gets most jobs: fast " +
                                                         std::to_string(fast.jobs) + ", slow " + std::to_string(slow.jobs));
  check(fast.rate > 2 * slow.rate && slow.rate > 0, "rates are measured");
  check(stats.wall_s > 0 && fast.busy_s > 0, "times are recorded");
}

// Two equal devices (3 ms a job) that slow each other down when both run (each job then takes
// three times as long: a CPU device and a GPU's pageable copies thrashing the host's caches and
// memory bus): together they deliver less than either alone, though both have a rate of their
// own. The measured device set must find that and keep one; two equal devices that share
// nothing deliver more together, and both stay.
void measured_device_set() {
  for (const bool contended : {true, false}) {
    std::atomic<int> running{0};
    SchedulerOptions options;
    Scheduler scheduler(devices({"a", "b"}, 1), options);
    // 300 jobs: the probe takes up to 118 (two start-up jobs; phases of 22 together at depth 5 and
    // 18 alone at depth 3, twice round).
    for (int i = 0; i < 300; ++i)
      scheduler.submit(1 << 20,
                       [&](const std::string&) {
                         const bool beside_another = ++running > 1;
                         std::this_thread::sleep_for(contended && beside_another ? 9ms : 3ms);
                         --running;
                       },
                       {});
    scheduler.drain();
    const auto stats = scheduler.stats();
    const std::string& choice = stats.device_choice;
    check(!choice.empty(), "the device set was measured: '" + choice + "'");
    const uint64_t fewer = std::min(stats_of(stats, "a").jobs, stats_of(stats, "b").jobs);
    // The one left out ran at most its probe jobs (48); both kept, each runs about half.
    if (contended)
      check(choice.find("every device") == std::string::npos && fewer < 100,
            "devices that slow each other down: one is kept: " + choice + "; the other ran " + std::to_string(fewer));
    else
      check(choice.find("every device") != std::string::npos && fewer > 100,
            "two independent equal devices both stay: " + choice);
  }
  SchedulerOptions numeric;
  numeric.cpu_share = 0.5;
  Scheduler split(devices({"gpu-like", "cpu"}), numeric);
  for (int i = 0; i < 40; ++i) split.submit(1000, [](const std::string&) {}, {});
  split.drain();
  check(split.stats().device_choice.empty(), "a numeric cpu_share is not second-guessed");
}

// The measured device set kept for later runs of the same kind of work (SchedulerOptions::
// remember_as), with measured_device_set's two devices that slow each other down: a second run
// starts on the first run's choice with no probe (a device it left out runs nothing), another kind
// of work probes afresh, forget_device_sets() clears them, and runs too short to finish the probe
// each go on from the phases the ones before measured until one decides; a decision serves
// kept_runs runs, or kept_seconds, and then a run probes afresh.
void kept_device_set() {
  forget_device_sets();
  const auto run = [](const std::string& work, int num_jobs, size_t kept_runs = 64, double kept_seconds = 600) {
    std::atomic<int> running{0};
    SchedulerOptions options;
    options.remember_as = work;
    options.kept_runs = kept_runs;
    options.kept_seconds = kept_seconds;
    Scheduler scheduler(devices({"a", "b"}, 1), options);
    for (int i = 0; i < num_jobs; ++i)
      scheduler.submit(1 << 20,
                       [&](const std::string&) {
                         const bool beside_another = ++running > 1;
                         std::this_thread::sleep_for(beside_another ? 9ms : 3ms);
                         --running;
                       },
                       {});
    scheduler.drain();
    return scheduler.stats();
  };
  // One worker each: phases of 22 jobs together (depth 5) and 18 alone (depth 3), twice round,
  // after two start-up jobs.
  const auto first = run("test work", 120);
  const std::string& decided = first.device_choice;
  check(!decided.empty() && decided.rfind("kept", 0) != 0, "the first run measures: " + decided);
  const auto second = run("test work", 120);
  const bool one_left_out = decided.find("every device") == std::string::npos;
  // The set chosen: what follows the rates ("...: b").
  const auto chosen = [](const std::string& choice) {
    const std::string rates = choice.substr(0, choice.find(';'));
    return rates.substr(rates.rfind(": ") + 2);
  };
  check(second.device_choice.rfind("kept from an earlier run: ", 0) == 0 && chosen(second.device_choice) == chosen(decided) &&
            (!one_left_out || std::min(stats_of(second, "a").jobs, stats_of(second, "b").jobs) == 0),
        "a second run of the same work keeps the set with no probe: " + second.device_choice);
  const auto other = run("other work", 120);
  check(other.device_choice.rfind("kept", 0) != 0, "another kind of work probes afresh: " + other.device_choice);
  forget_device_sets();
  const auto forgotten = run("test work", 120);
  check(forgotten.device_choice.rfind("kept", 0) != 0, "forget_device_sets clears them: " + forgotten.device_choice);
  const auto first_short = run("short work", 30);
  check(first_short.device_choice.empty(), "a run too short decides nothing: " + first_short.device_choice);
  int runs = 1;
  std::string choice;
  while (runs < 12 && choice.rfind("kept", 0) != 0) choice = run("short work", 30).device_choice, ++runs;
  check(choice.rfind("kept from an earlier run: ", 0) == 0 && runs <= 9,
        "short runs finish the probe together: " + choice + " after " + std::to_string(runs) + " runs");
  // A decision's time: two runs start on it, the third probes afresh (and decides again).
  const auto is_kept = [](const std::string& c) { return c.rfind("kept from an earlier run: ", 0) == 0; };
  std::vector<std::string> choices;
  for (int i = 0; i < 5; ++i) choices.push_back(run("aging work", 120, 2).device_choice);
  check(!is_kept(choices[0]) && !choices[0].empty() && is_kept(choices[1]) && is_kept(choices[2]) &&
            !is_kept(choices[3]) && !choices[3].empty() && is_kept(choices[4]),
        "a decision serves kept_runs runs, then one probes afresh: " + choices[2] + " / " + choices[3]);
  run("timed work", 120);
  check(is_kept(run("timed work", 120).device_choice), "a decision is kept within kept_seconds");
  std::this_thread::sleep_for(20ms);
  check(!is_kept(run("timed work", 120, 64, 0.01).device_choice), "and not after kept_seconds");
}

// A device that is fast only for a while (its first 130 jobs in this process take 1 ms, later ones
// 12; "a" takes 3 ms throughout): the first run's probe, within its first 118 jobs, rates it high
// and picks a set with it; what that set then delivers lowers its figure, and within a few runs the
// kept set is one that delivers what it was rated at, never the slowed device alone.
void kept_set_learns_from_runs() {
  forget_device_sets();
  std::atomic<int> bursty_jobs{0};
  const auto run = [&bursty_jobs] {
    SchedulerOptions options;
    options.remember_as = "bursty work";
    Scheduler scheduler(devices({"a", "bursty"}, 1), options);
    for (int i = 0; i < 200; ++i)
      scheduler.submit(1 << 20,
                       [&bursty_jobs](const std::string& device) {
                         std::this_thread::sleep_for(device == "a" ? 3ms : bursty_jobs++ < 130 ? 1ms : 12ms);
                       },
                       {});
    scheduler.drain();
    return scheduler.stats().device_choice;
  };
  const auto chosen = [](const std::string& choice) {
    const std::string rates = choice.substr(0, choice.find(';'));
    return rates.substr(rates.rfind(": ") + 2);
  };
  const std::string first = run();
  check(first.find("bursty 0.") != std::string::npos, "the probe rates the device while it is fast: " + first);
  std::string choice = first;
  for (int runs = 1; runs < 4; ++runs) choice = run();
  const std::string kept_prefix = "kept from an earlier run: ";
  check(choice.rfind(kept_prefix, 0) == 0 && chosen(choice) != "bursty" && choice.substr(kept_prefix.size()) != first,
        "after four runs the kept set is not the slowed device alone, and its figures are what runs delivered: " +
            choice + " (first run: " + first + ")");
}

// Kept on this machine (SchedulerOptions::machine): a "gpu" and the host's "cpu" that slow each
// other down (alone 6 and 3 ms a job, beside each other 12), so the CPU alone is the set. The
// decision goes to the store (GPUCRYPT_CACHE_DIR, a fresh directory) and a later run, after this
// process forgot its own (as a new process would), starts on it, its GPU running nothing; a caller
// can read it before starting any device (machine_decision); the other sets in contention each run
// once, and the CPU alone is kept again. Another machine's name, a damaged
// store and GPUCRYPT_CACHE_DIR=off find nothing. A run charged from a command's start five seconds
// earlier (charge_first_run_from) delivers far less than the CPU's figure, which falls: the next
// decision is another set.
void kept_on_machine() {
  const TemporaryStore temporary;
  const std::string store = machine_store_path();
  check(store == std::string(temporary.directory) + "/device-sets.tsv", "the store is under GPUCRYPT_CACHE_DIR: " + store);
  const auto run = [](const std::string& machine) {
    std::atomic<int> running{0};
    SchedulerOptions options;
    options.remember_as = "machine work";
    options.machine = machine;
    Scheduler scheduler(devices({"gpu", "cpu"}, 1), options);
    for (int i = 0; i < 200; ++i)
      scheduler.submit(1 << 20,
                       [&](const std::string& device) {
                         const bool beside_another = ++running > 1;
                         std::this_thread::sleep_for(beside_another ? 12ms : device == "cpu" ? 3ms : 6ms);
                         --running;
                       },
                       {});
    scheduler.drain();
    return scheduler.stats();
  };
  const auto first = run("test host");
  check(first.device_choice.find(": cpu") != std::string::npos, "the first run finds the CPU alone: " + first.device_choice);
  check(std::filesystem::exists(store), "the decision is written to the machine's store");
  forget_device_sets();
  const auto decision = machine_decision("machine work", "test host");
  check(decision && decision->devices == std::vector<std::string>{"gpu", "cpu"} &&
            decision->in_use == std::vector<bool>{false, true},
        "machine_decision reads the devices and the set kept on the machine");
  check(!machine_decision("machine work", "another host") && !machine_decision("other work", "test host"),
        "nothing is kept for another machine or another kind of work");
  const auto second = run("test host");
  check(second.device_choice.rfind("kept on this machine: ", 0) == 0 && stats_of(second, "gpu").jobs == 0,
        "a later process starts on the machine's set, its GPU idle: " + second.device_choice);
  // Each other set in contention runs one whole run (its probe figure replaced), then the figures
  // decide: the CPU alone again.
  for (int runs = 0; runs < 3; ++runs) forget_device_sets(), run("test host");
  const auto settled = machine_decision("machine work", "test host");
  check(settled && settled->in_use == std::vector<bool>{false, true},
        "after the sets in contention ran whole runs, the CPU alone is kept: " + (settled ? settled->choice : std::string("none")));
  forget_device_sets();
  gpucrypt::engine::charge_first_run_from(std::chrono::steady_clock::now() - 5s);
  const auto charged = run("test host");
  check(charged.device_choice.rfind("kept on this machine: ", 0) == 0, "the charged run starts on the kept set");
  const auto after = machine_decision("machine work", "test host");
  check(after && after->in_use != std::vector<bool>{false, true},
        "a run charged from its command's start lowers the set's figure: another set is next: " +
            (after ? after->choice : std::string("none")));
  { std::ofstream(store, std::ios::trunc) << "damaged\tline\n\t\t\t\n"; }
  forget_device_sets();
  check(!machine_decision("machine work", "test host"), "a damaged store is no store");
  check(run("test host").device_choice.rfind("kept", 0) != 0, "and a run on it probes");
  ::setenv("GPUCRYPT_CACHE_DIR", "off", 1);
  check(machine_store_path().empty() && !machine_decision("machine work", "test host"), "GPUCRYPT_CACHE_DIR=off: no store");
}

// Within noise (5%), a set kept on the machine is the CPU alone, not every device as in a process
// (its commands start no GPU, whose teardown no figure includes). Figures a probe would hardly
// give exactly are written to the store as earlier commands would have left them: every device
// 104 MB/s, the CPU alone 100, the GPU 50 and kept; a run on the GPU (1 MiB per 5 ms: ~200 MB/s)
// does not lower it, and the figures then decide: the CPU alone.
void machine_favours_cpu_alone_within_noise() {
  const TemporaryStore temporary;
  const long now = long(std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count());
  std::ofstream(machine_store_path()) << "tied work | tied host\tgpu*1 cpu*1\t1\t2\t0\t" << now
                                      << "\t0\t1.04e+08,1e+08,5e+07\t000\t10\tgpu\t\n";
  SchedulerOptions options;
  options.remember_as = "tied work";
  options.machine = "tied host";
  {
    Scheduler scheduler(devices({"gpu", "cpu"}, 1), options);
    for (int i = 0; i < 40; ++i) scheduler.submit(1 << 20, [](const std::string&) { std::this_thread::sleep_for(5ms); }, {});
    scheduler.drain();
    check(scheduler.stats().device_choice == "kept on this machine: gpu", "the run starts on the kept set");
  }
  const auto decision = machine_decision("tied work", "tied host");
  check(decision && decision->in_use == std::vector<bool>{false, true},
        "kept on the machine, figures within 5% keep the CPU alone: " + (decision ? decision->choice : std::string("none")));
}

// The CPU alone is measured even where it ran far slower than a GPU beside it (a set under a
// quarter of the fastest device is skipped otherwise): bound outside the devices, the CPU alone
// keeps up, and it is the one set that needs no GPU started.
// Kept on the machine, it also runs one whole run however low its probe figure (after the sets
// in contention, best figure first), and then the figures keep the fast device.
void cpu_alone_always_measured() {
  const TemporaryStore temporary;
  const auto run = [](const std::string& machine) {
    SchedulerOptions options;
    options.remember_as = "slow cpu work";
    options.machine = machine;
    Scheduler scheduler(devices({"fast", "cpu"}, 1), options);
    for (int i = 0; i < 200; ++i)
      scheduler.submit(1 << 20, [](const std::string& device) { std::this_thread::sleep_for(device == "cpu" ? 10ms : 1ms); }, {});
    scheduler.drain();
    return scheduler.stats();
  };
  const std::string choice = run("").device_choice;
  check(choice.find("cpu not measured") == std::string::npos && choice.find("cpu ") != std::string::npos,
        "the CPU alone is measured: " + choice);
  run("slow cpu host");
  bool cpu_alone_ran = false;
  for (int runs = 0; runs < 3; ++runs) {
    forget_device_sets();
    const auto stats = run("slow cpu host");
    cpu_alone_ran |= stats_of(stats, "fast").jobs == 0 && stats_of(stats, "cpu").jobs == 200;
  }
  const auto decision = machine_decision("slow cpu work", "slow cpu host");
  check(cpu_alone_ran && decision && decision->in_use[0],
        "kept on the machine the CPU alone runs once, then the fast device is kept: " +
            (decision ? decision->choice : std::string("none")));
}

void numeric_cpu_share() {
  SchedulerOptions options;
  options.cpu_share = 0.25;
  Scheduler scheduler(devices({"gpu-like", "cpu"}), options);
  for (int i = 0; i < 40; ++i) scheduler.submit(1000, [](const std::string&) {}, {});
  scheduler.drain();
  const auto stats = scheduler.stats();
  check(stats_of(stats, "cpu").bytes == 10000 && stats_of(stats, "gpu-like").bytes == 30000,
        "cpu_share 0.25 sends a quarter of the bytes to the CPU");
}

void record_run_and_bad_arguments() {
  Scheduler scheduler(devices({"cpu"}));
  scheduler.submit(1, [&](const std::string& device) { scheduler.record_run(device, "v1", 0.5, 1, 0.25); }, {});
  scheduler.drain();
  const auto stats = scheduler.stats();
  check(stats.devices[0].variant == "v1" && stats.devices[0].h2d_s == 0.5 && stats.devices[0].compute_s == 1,
        "record_run adds to its device's stats");
  bool refused = false;
  try {
    Scheduler twice(devices({"cpu", "cpu"}));
  } catch (const std::invalid_argument&) {
    refused = true;
  }
  check(refused, "a device named twice is refused");
}

}  // namespace

int main() {
  retires_in_submission_order();
  bounded_in_flight();
  errors_are_raised_in_order();
  cancellation();
  stop_drops_queued_jobs();
  choice_follows_measured_rate();
  measured_device_set();
  kept_device_set();
  kept_set_learns_from_runs();
  kept_on_machine();
  machine_favours_cpu_alone_within_noise();
  cpu_alone_always_measured();
  numeric_cpu_share();
  record_run_and_bad_arguments();
  return gpucrypt::test_support::report();
}
