// thread_pool.hpp: the CPU backend's worker threads.
//
// One process-wide pool sized to the machine (hardware_concurrency, overridable with the
// GPUCRYPT_CPU_THREADS environment variable) so that nested library calls never oversubscribe
// the cores. parallel_for splits [0, num_items) into contiguous ranges (a few per thread, claimed
// as threads come free, so a descheduled thread does not hold up the call) and blocks until all
// are done; the calling thread works too, so a pool of N threads uses N cores.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "gpucrypt/parallel.hpp"  // parallel_copy and the pool's public door

namespace gpucrypt::cpu {

class ThreadPool {
 public:
  static ThreadPool& global();

  explicit ThreadPool(unsigned num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned num_threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Calls body(begin, end) over contiguous ranges covering [0, num_items). Ranges are multiples
  // of `grain` items (except the last), so callers can keep chunks block- or chunk-aligned.
  // Runs inline when the work is a single grain. Exceptions from body are rethrown here.
  void parallel_for(size_t num_items, size_t grain,
                    const std::function<void(size_t begin, size_t end)>& body);

 private:
  void worker_loop();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::vector<std::function<void()>> queue_;
  bool stopping_ = false;
  std::mutex submit_mutex_;  // one parallel_for at a time keeps the bookkeeping simple
};

}  // namespace gpucrypt::cpu
