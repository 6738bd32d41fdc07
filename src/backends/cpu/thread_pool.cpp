#include "thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <exception>

namespace gpucrypt::cpu {

namespace {
unsigned default_thread_count() {
  if (const char* env = std::getenv("GPUCRYPT_CPU_THREADS")) {
    long n = std::strtol(env, nullptr, 10);
    if (n >= 1 && n <= 4096) return static_cast<unsigned>(n);
  }
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}
// Set while a thread is inside parallel_for; a nested call then runs inline instead of
// deadlocking on the pool it is already occupying.
thread_local bool inside_parallel_for = false;
}  // namespace

ThreadPool& ThreadPool::global() {
  static ThreadPool pool(default_thread_count());
  return pool;
}

ThreadPool::ThreadPool(unsigned num_threads) {
  for (unsigned i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_ && queue_.empty()) return;
      task = std::move(queue_.back());
      queue_.pop_back();
    }
    task();
  }
}

void ThreadPool::parallel_for(size_t num_items, size_t grain,
                              const std::function<void(size_t, size_t)>& body) {
  if (num_items == 0) return;
  if (grain == 0) grain = 1;
  const size_t num_grains = (num_items + grain - 1) / grain;
  const size_t num_tasks = std::min<size_t>(num_grains, num_threads());
  if (num_tasks <= 1 || inside_parallel_for) {
    body(0, num_items);
    return;
  }
  std::lock_guard<std::mutex> submit(submit_mutex_);
  const size_t grains_per_task = (num_grains + num_tasks - 1) / num_tasks;

  size_t remaining = num_tasks;  // guarded by done_mutex
  std::mutex done_mutex;
  std::condition_variable done;
  std::exception_ptr error;
  std::mutex error_mutex;

  auto run_range = [&](size_t task_index) {
    const size_t begin = task_index * grains_per_task * grain;
    const size_t end = std::min(num_items, begin + grains_per_task * grain);
    if (begin < end) {
      inside_parallel_for = true;
      try {
        body(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
      inside_parallel_for = false;
    }
    // Decrement and notify under the lock: the waiter returns (destroying done_mutex, done and
    // this lambda, all on its stack) only after seeing 0 under the same lock, so no worker can
    // still be touching them. (A fetch_sub outside the lock let the waiter leave between the
    // decrement and the notify_all, which then broadcast on a destroyed condition variable.)
    {
      std::lock_guard<std::mutex> lock(done_mutex);
      if (--remaining == 0) done.notify_all();
    }
  };

  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t t = 1; t < num_tasks; ++t) queue_.emplace_back([&run_range, t] { run_range(t); });
  }
  work_ready_.notify_all();
  run_range(0);
  {
    std::unique_lock<std::mutex> lock(done_mutex);
    done.wait(lock, [&] { return remaining == 0; });
  }
  if (error) std::rethrow_exception(error);
}

void parallel_copy(void* dst, const void* src, size_t n) {
  constexpr size_t kPiece = size_t{1} << 20;
  auto copy_range = [dst, src](size_t offset, size_t len) {
    if (src) std::memcpy(static_cast<uint8_t*>(dst) + offset, static_cast<const uint8_t*>(src) + offset, len);
    else std::memset(static_cast<uint8_t*>(dst) + offset, 0, len);
  };
  if (n < 2 * kPiece) {
    if (n > 0) copy_range(0, n);
    return;
  }
  ThreadPool::global().parallel_for((n + kPiece - 1) / kPiece, 1, [&](size_t begin, size_t end) {
    const size_t offset = begin * kPiece;
    copy_range(offset, std::min(n, end * kPiece) - offset);
  });
}

}  // namespace gpucrypt::cpu
