// test_thread_pool.cpp: ThreadPool::parallel_for (src/backends/cpu/thread_pool.hpp). Every item is
// covered exactly once by grain-aligned ranges, whatever the item count, grain and pool size; a
// body's exception reaches the caller after every claimed range finished; a nested call runs
// inline; a worker held up (a loaded machine descheduling it) does not keep its share of the
// ranges; and a worker's task that runs after its call returned finds nothing left to touch.
// Also Batch.run's wipe: parallel_copy's zero fill through SecureBuffer::clear_with.
#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/thread_pool.hpp"
#include "gpucrypt/batch.hpp"
#include "gpucrypt/parallel.hpp"
#include "test_support.hpp"

using namespace gpucrypt;
using test_support::check;

namespace {

void check_every_item_once(cpu::ThreadPool& pool, size_t num_items, size_t grain) {
  std::vector<std::atomic<int>> seen(num_items);
  std::atomic<bool> aligned{true};
  pool.parallel_for(num_items, grain, [&](size_t begin, size_t end) {
    if (begin % (grain == 0 ? 1 : grain) != 0 || begin >= end || end > num_items) aligned = false;
    for (size_t i = begin; i < end; ++i) seen[i].fetch_add(1);
  });
  bool once = true;
  for (auto& s : seen) once = once && s.load() == 1;
  const std::string what = std::to_string(pool.num_threads()) + " threads, " + std::to_string(num_items) +
                           " items, grain " + std::to_string(grain);
  check(once, what + ": every item exactly once");
  check(aligned, what + ": ranges grain-aligned and in bounds");
}

void check_exception_reaches_the_caller(cpu::ThreadPool& pool) {
  std::atomic<size_t> done{0};
  bool thrown = false;
  try {
    pool.parallel_for(1000, 1, [&](size_t begin, size_t end) {
      if (begin <= 500 && 500 < end) throw std::runtime_error("item 500");
      done += end - begin;
    });
  } catch (const std::runtime_error& e) {
    thrown = std::string(e.what()) == "item 500";
  }
  check(thrown, "a body's exception is rethrown in the caller");
  check(done < 1000, "the failed range did not count as done");
}

void check_nested_call_runs_inline(cpu::ThreadPool& pool) {
  std::atomic<size_t> total{0};
  pool.parallel_for(8, 1, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      pool.parallel_for(100, 1, [&](size_t b, size_t e) { total += e - b; });
  });
  check(total == 800, "nested parallel_for covers its items (inline, no deadlock)");
}

// A worker that stalls in its first range (a loaded machine descheduling it) does not keep the
// ranges it would have been given: the calling thread takes them. With one fixed range per thread
// the caller did exactly half of the items and then waited.
void check_a_stalled_worker_does_not_keep_its_share(cpu::ThreadPool& pool) {
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<size_t> by_caller{0}, covered{0};
  std::atomic<bool> stalled{false};
  pool.parallel_for(64, 1, [&](size_t begin, size_t end) {
    if (std::this_thread::get_id() != caller && !stalled.exchange(true))
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (std::this_thread::get_id() == caller) by_caller += end - begin;
    covered += end - begin;
  });
  check(covered == 64, "a stalled worker: every item covered");
  check(by_caller > 32, "a stalled worker: the caller took its ranges (did " + std::to_string(by_caller.load()) +
                            " of 64)");
}

// A buffer of 1 MiB and more goes back to the plan's parking when cleared, and the next buffer of
// its size is that one: after clear_with over parallel_copy's zero fill it must be all zero.
void check_wiped_buffers_come_back_zero() {
  const size_t len = (3 << 20) + 5;
  const uint8_t* first = nullptr;
  {
    engine::SecureBuffer buffer(len);
    std::memset(buffer.data(), 0xA5, len);
    first = buffer.data();
    buffer.clear_with([](uint8_t* bytes, size_t n) { cpu::parallel_copy(bytes, nullptr, n); });
    check(buffer.size() == 0 && buffer.data() == nullptr, "clear_with leaves the buffer empty");
  }
  engine::SecureBuffer again(len);
  check(again.data() == first, "the parked buffer is handed out again");
  size_t nonzero = 0;
  for (size_t i = 0; i < len; ++i) nonzero += again.data()[i] != 0;
  check(nonzero == 0, "a buffer wiped by clear_with comes back zeroed (" + std::to_string(nonzero) + " bytes not)");
}

}  // namespace

int main() {
  check_wiped_buffers_come_back_zero();
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    cpu::ThreadPool pool(threads);
    for (size_t num_items : {size_t{1}, size_t{2}, size_t{7}, size_t{64}, size_t{1000}, size_t{100003}})
      for (size_t grain : {size_t{0}, size_t{1}, size_t{3}, size_t{1024}}) check_every_item_once(pool, num_items, grain);
    check_exception_reaches_the_caller(pool);
    check_nested_call_runs_inline(pool);
    if (threads == 2) check_a_stalled_worker_does_not_keep_its_share(pool);
    // Many calls back to back: a worker's late task from one call must not disturb the next.
    for (int round = 0; round < 2000; ++round) check_every_item_once(pool, 37, 1);
  }
  return test_support::report();
}
