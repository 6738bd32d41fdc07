// file_pipeline.cpp: the file format between two regular files with positional I/O (format.hpp:
// seal_file_chunks / open_file_chunks / seal_file / open_file).
//
// Every chunk of a file has a computed offset in the plaintext and in the encrypted file
// (Layout), so nothing forces reading, sealing and writing to take turns: each job of whole
// chunks is read with pread at its own offset, sealed or opened on the device the scheduler
// chose, and written with pwrite at its own offset, all on that device's worker thread, while the
// other workers do the same with other jobs. (One writer thread for all jobs was measured on an
// H200 host, 2026-11-29: no faster than the workers' own writes into one tmpfs file, whose lock
// takes them one at a time either way; docs/performance.md.) The calling thread only submits jobs and retires
// them in order (progress, cancellation, the first error in file order). This replaced a single
// Python loop that read a job, handed it to the devices and wrote what came back: reading,
// sealing and writing took turns on one thread (1.2 GB/s on a host whose engine does 40+).
//
// Buffers: one input and one output buffer per job in flight, reused from job to job and zeroed
// when the call ends. Where a device offers host memory it reads and writes fastest (CUDA's
// page-locked memory: Device::alloc_host), the buffers are that memory, so a GPU copies straight
// from the buffer pread filled.
//
// Constant-time: as format.cpp; branches and offsets depend on lengths and chunk indices only.
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "base/names.hpp"
#include "gpucrypt/scheduler.hpp"
#include "gpucrypt/device.hpp"
#include "gpucrypt/format.hpp"
#include "format/pipeline_internal.hpp"

namespace gpucrypt::format {

namespace {

std::string bytes_text(uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Reads exactly `len` bytes at `offset`; a file that ends sooner changed since its length was
// taken (truncated while being read), which is an error, never silently short output.
void pread_exactly(int fd, uint8_t* data, uint64_t len, uint64_t offset) {
  while (len > 0) {
    const ssize_t n = ::pread(fd, data, std::min<uint64_t>(len, 1u << 30), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw FileError(errno, false, "reading the input");
    }
    if (n == 0)
      throw FileError(EIO, false,
                      "the input ended " + bytes_text(len) + " early: it changed (shrank) while it was being read");
    data += n, len -= static_cast<uint64_t>(n), offset += static_cast<uint64_t>(n);
  }
}

// Direct I/O (PipelineOptions::direct_input): the input reopened with O_DIRECT, so that the
// caller's descriptor keeps its flags; -1 when not asked for. Closed when it goes.
class DirectInput {
 public:
  DirectInput(int fd, bool wanted) {
    if (!wanted) return;
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd_ < 0) throw FileError(errno, false, "opening the input for direct I/O (O_DIRECT)");
  }
  ~DirectInput() {
    if (fd_ >= 0) ::close(fd_);
  }
  DirectInput(const DirectInput&) = delete;
  DirectInput& operator=(const DirectInput&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// Reads `len` bytes at `offset` with O_DIRECT: the kDirectIoAlign-aligned blocks around them go
// to `buffer` (aligned, len + 2 * kDirectIoAlign bytes); returns where the bytes start in it.
// A file that ends before offset + len shrank while being read, as pread_exactly says.
uint8_t* pread_direct(int fd, uint8_t* buffer, uint64_t len, uint64_t offset) {
  const uint64_t start = offset / kDirectIoAlign * kDirectIoAlign;
  const uint64_t needed = offset + len - start;
  const uint64_t aligned_len = (needed + kDirectIoAlign - 1) / kDirectIoAlign * kDirectIoAlign;
  uint64_t got = 0;
  while (got < needed) {
    // Whole aligned blocks; at the end of the file the read returns what is there.
    const ssize_t n = ::pread(fd, buffer + got, std::min<uint64_t>(aligned_len - got, 1u << 30),
                              static_cast<off_t>(start + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw FileError(errno, false, "reading the input (direct I/O)");
    }
    if (n == 0)
      throw FileError(EIO, false,
                      "the input ended " + bytes_text(needed - got) + " early: it changed (shrank) while it was being read");
    got += static_cast<uint64_t>(n);
    if (got % kDirectIoAlign != 0) break;  // a short read ends the file
  }
  if (got < needed)
    throw FileError(EIO, false,
                    "the input ended " + bytes_text(needed - got) + " early: it changed (shrank) while it was being read");
  return buffer + (offset - start);
}

void pwrite_exactly(int fd, const uint8_t* data, uint64_t len, uint64_t offset) {
  while (len > 0) {
    const ssize_t n = ::pwrite(fd, data, std::min<uint64_t>(len, 1u << 30), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw FileError(errno, true, "writing the output");
    }
    if (n == 0) throw FileError(ENOSPC, true, "writing the output");
    data += n, len -= static_cast<uint64_t>(n), offset += static_cast<uint64_t>(n);
  }
}

// The length of a regular file open at fd, or FileError naming what the descriptor is instead.
// Why `fd` cannot be read (or, as an output, written) by offset, or "" when it can: the one rule
// seal_file / open_file check, seal_fd / open_fd choose by, and Python asks (positional_problem).
std::string offset_problem(int fd, bool output, const struct stat& status) {
  if (!S_ISREG(status.st_mode))
    return std::string(output ? "the output" : "the input") +
           " is not a regular file (positional I/O needs one; pipes and devices stream)";
  if (output && (::fcntl(fd, F_GETFL) & O_APPEND))
    return "the output is open for appending, where every write goes to its end";
  return "";
}

uint64_t regular_file_len(int fd, bool output) {
  struct stat status {};
  if (::fstat(fd, &status) != 0) throw FileError(errno, output, output ? "writing the output" : "reading the input");
  if (const std::string problem = offset_problem(fd, output, status); !problem.empty())
    throw std::invalid_argument(problem);
  return static_cast<uint64_t>(status.st_size);
}

// One host buffer of `len` bytes: where `device` offers host memory of its own (CUDA's
// page-locked memory: Device::alloc_host), that memory, so that a GPU copies straight from what
// pread filled; else (no such device, or the memory refused: page-locked memory is a limited
// resource) page-aligned ordinary memory, so that a file system may move whole pages. Slower
// copies, same results.
struct HostBuffer {
  uint8_t* data = nullptr;
  bool device_memory = false;  // from Device::alloc_host
};

HostBuffer allocate_host(uint64_t len, const Device* device) {
  if (device != nullptr) {
    try {
      return {static_cast<uint8_t*>(device->alloc_host(len)), true};
    } catch (const DeviceError&) {
    }
  }
  void* p = nullptr;
  if (::posix_memalign(&p, 4096, len) != 0) throw std::bad_alloc();
  return {static_cast<uint8_t*>(p), false};
}

// Zeroes the buffer and gives it back.
void release_host(HostBuffer buffer, uint64_t len, const Device* device) {
  if (buffer.data == nullptr) return;
  if (buffer.device_memory) return device->free_host(buffer.data, len);  // zeroes it
  secure_zero(buffer.data, len);
  std::free(buffer.data);
}

// The job buffers of one call: at most one pair per job in flight, handed out to workers and
// taken back; zeroed (page-locked ones also unlocked) when the call ends, however it ends.
class BufferPool {
 public:
  struct Pair {
    HostBuffer input, output;
  };

  // host_memory_device: the Device whose host memory the buffers are (allocate_host), or nullptr.
  BufferPool(uint64_t input_len, uint64_t output_len, const Device* host_memory_device)
      : input_len_(std::max<uint64_t>(input_len, 1)),
        output_len_(std::max<uint64_t>(output_len, 1)),
        device_(host_memory_device) {}
  // Zeroing and unlocking the buffers of a GPU run (a GiB or more of page-locked memory) took
  // 0.16-0.18 s on one thread after the last job of a 4 GiB file on a 2-H200 host: several
  // threads share it (inline where no thread can be started).
  ~BufferPool() {
    const size_t helpers = std::min<size_t>(all_.size() / kPairsPerReleaser, kMaxReleasers);
    const auto release_every = [this, stride = helpers + 1](size_t first) {
      for (size_t i = first; i < all_.size(); i += stride) {
        release_host(all_[i].input, input_len_, device_);
        release_host(all_[i].output, output_len_, device_);
      }
    };
    std::vector<std::thread> threads;
    size_t started = 0;
    try {
      for (; started < helpers; ++started) threads.emplace_back(release_every, started + 1);
    } catch (const std::system_error&) {
    }
    release_every(0);
    for (size_t missing = started; missing < helpers; ++missing) release_every(missing + 1);
    for (std::thread& thread : threads) thread.join();
  }

  Pair acquire() {
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        const Pair pair = free_.back();
        free_.pop_back();
        return pair;
      }
    }
    Pair pair{allocate_host(input_len_, device_), {}};
    try {
      pair.output = allocate_host(output_len_, device_);
    } catch (...) {
      release_host(pair.input, input_len_, device_);
      throw;
    }
    std::lock_guard lock(mutex_);
    all_.push_back(pair);
    return pair;
  }
  void release(Pair pair) {
    std::lock_guard lock(mutex_);
    free_.push_back(pair);
  }

 private:
  static constexpr size_t kPairsPerReleaser = 4;  // fewer pairs are released by the calling thread alone
  static constexpr size_t kMaxReleasers = 7;
  uint64_t input_len_, output_len_;
  const Device* device_;
  std::mutex mutex_;
  std::vector<Pair> all_, free_;
};

// The device whose host memory the job buffers are: host_memory_device's (a GPU's page-locked
// memory, which it copies without staging), unless GPUCRYPT_FILE_PAGE_LOCKED=0 asks for ordinary
// memory, a knob for measuring what the page-locked buffers cost and save on a new machine
// (bench/gpu_file_probe.py), as GPUCRYPT_GPU_WORKERS is for the worker count.
const Device* job_buffer_device(const std::vector<std::string>& devices) {
  const char* text = std::getenv("GPUCRYPT_FILE_PAGE_LOCKED");
  if (text != nullptr && std::string(text) == "0") return nullptr;
  return host_memory_device(devices);
}

// Whether fd's file lives on tmpfs (/dev/shm, /tmp on many systems): there fallocate zero-fills
// every page at once, under the file's lock, where a disk file system only records the blocks.
bool on_tmpfs(int fd) {
  struct statfs file_system {};
  constexpr decltype(file_system.f_type) kTmpfsMagic = 0x01021994;  // linux/magic.h TMPFS_MAGIC
  return ::fstatfs(fd, &file_system) == 0 && file_system.f_type == kTmpfsMagic;
}

// Allocates bytes [begin, begin + len) of the output's file (fallocate, retried on EINTR). False
// where the file system or kernel has no fallocate for it (the caller falls back); any other
// failure (ENOSPC, EFBIG, EIO) is the output's error.
bool allocate_output_range(int fd, uint64_t begin, uint64_t len) {
  for (;;) {
    if (::fallocate(fd, 0, static_cast<off_t>(begin), static_cast<off_t>(len)) == 0) return true;
    if (errno == EINTR) continue;
    if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL) return false;
    throw FileError(errno, true, "writing the output (reserving " + bytes_text(len) + ")");
  }
}

// Where a run's output goes: pwrite at each job's offset, or a copy into a shared mapping of the
// job's range (mapped_output_wanted says when). Linux takes the inode's lock for each buffered
// write, so one file takes about 2.7 GB/s of pwrites whatever the number of writers (a 2-H200
// host, tmpfs, 1 to 16 threads), while 16 threads copying into a mapping of it reached 3.7-5.1
// GB/s (bench/one_file_write_probe.c; docs/performance.md, 2026-11-29 twelfth session).
// Each job maps its own range and unmaps it after the copy: a mapping of the whole output would
// hold page tables for all of it (2 MB per GiB) and count the whole file in the process's memory
// until one long munmap at the end (4 GiB: the run's RSS 4.7 GB).
// No page fault may find the file system full: that would be a SIGBUS, not an error. On a disk
// file system the output's range is allocated first (fallocate: it records the blocks without
// writing them). On tmpfs that would zero-fill every page in one call under the file's lock
// (4 GiB: most of a second outside the engine on a 2-H200 host, thirteenth session), so each
// job's pages are allocated by its own worker just before the copy, with MADV_POPULATE_WRITE,
// which returns an error where a fault would raise SIGBUS (Linux 5.14; before it, fallocate of
// the job's range). Where fallocate is refused, or the output cannot be mapped (a descriptor open
// for writing only: a shared writable mapping needs it open for reading too), the writes stay
// pwrites.
class OutputWriter {
 public:
  // GPUCRYPT_FILE_MAPPED_OUTPUT: 1 a mapping, 0 pwrites; unset or "auto", a mapping where it was
  // measured faster: a run with GPUs on a host of 8 or more hardware threads writing to tmpfs.
  // There the file's lock bounds pwrites (4 GiB on a 2-H200 host of 32 threads, /dev/shm: encrypt
  // 0.58-0.64x a parallel copy with pwrites, 0.76-0.78x through the mapping, thirteenth session). On 2
  // cores the mapping's extra pass (each page zeroed, then copied into) costs more than the lock
  // (1 GiB encrypt from /dev/shm on the CPU: 0.60 s against 0.44 s), and runs on the CPU alone
  // have two writers; on a disk file system it is not measured. Under auto, the CPU's own jobs in
  // a run with GPUs pwrite all the same (write's from_gpu): two writers do not meet the lock, and
  // through the mapping the CPU alone, in the measured set's probe, delivered 1.2-1.4 GB/s where a
  // run of the CPU alone (pwrites) delivers 2.4 on that host (2026-11-30, eighteenth session).
  static bool mapped_output_wanted(int fd, bool gpus) {
    const char* text = std::getenv("GPUCRYPT_FILE_MAPPED_OUTPUT");
    const std::string value = text == nullptr ? "auto" : text;
    if (value == "1") return true;
    if (value == "0") return false;
    if (value != "auto" && !value.empty())
      throw std::invalid_argument("GPUCRYPT_FILE_MAPPED_OUTPUT is 0, 1 or auto, got '" + value + "'");
    constexpr unsigned kMappedOutputMinThreads = 8;
    return gpus && std::thread::hardware_concurrency() >= kMappedOutputMinThreads && on_tmpfs(fd);
  }

  OutputWriter(int fd, uint64_t begin, uint64_t len, bool gpus) : fd_(fd) {
    if (fd < 0 || len == 0 || !mapped_output_wanted(fd, gpus)) return;
    const char* text = std::getenv("GPUCRYPT_FILE_MAPPED_OUTPUT");
    every_job_mapped_ = text != nullptr && std::string(text) == "1";
    populate_per_job_ = on_tmpfs(fd);
    if (!populate_per_job_ && !allocate_output_range(fd, begin, len)) return;  // pwrite
    page_ = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    // One page mapped and let go: whether this descriptor can be mapped at all.
    void* trial = ::mmap(nullptr, page_, PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(begin / page_ * page_));
    if (trial == MAP_FAILED) return;  // pwrite
    ::munmap(trial, page_);
    mapped_ = true;
  }
  OutputWriter(const OutputWriter&) = delete;
  OutputWriter& operator=(const OutputWriter&) = delete;

  // `len` bytes at file offset `at`, inside the range given to the constructor, from a job a GPU
  // (from_gpu) or the CPU ran: the CPU's pwrite unless GPUCRYPT_FILE_MAPPED_OUTPUT=1 (above).
  void write(const uint8_t* data, uint64_t len, uint64_t at, bool from_gpu) const {
    if (!mapped_ || len == 0 || !(from_gpu || every_job_mapped_)) return pwrite_exactly(fd_, data, len, at);
    const uint64_t map_begin = at / page_ * page_, map_len = at + len - map_begin;
    void* map = ::mmap(nullptr, map_len, PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(map_begin));
    if (map == MAP_FAILED) throw FileError(errno, true, "writing the output (mapping " + bytes_text(len) + ")");
    struct Unmap {
      void* map;
      uint64_t len;
      ~Unmap() { ::munmap(map, len); }
    } unmap{map, map_len};
    uint8_t* const bytes = static_cast<uint8_t*>(map);
    if (populate_per_job_) populate(bytes, map_len, at, len);
    std::memcpy(bytes + (at - map_begin), data, len);
  }

 private:
  // Allocates the pages of a job's mapping (map_len bytes at map, file bytes [at, at + len)), or
  // throws the output's error (a full tmpfs: ENOSPC).
  void populate(uint8_t* map, uint64_t map_len, uint64_t at, uint64_t len) const {
#ifndef MADV_POPULATE_WRITE
    constexpr int MADV_POPULATE_WRITE = 23;  // linux/mman.h, Linux 5.14; older C library headers lack it
#endif
    for (;;) {
      if (::madvise(map, map_len, MADV_POPULATE_WRITE) == 0) return;
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == EINVAL) {  // a kernel without it
        if (allocate_output_range(fd_, at, len)) return;
        errno = EOPNOTSUPP;
      }
      // EFAULT: a fault here would have been a SIGBUS, which on tmpfs is a full file system.
      throw FileError(errno == EFAULT ? ENOSPC : errno, true, "writing the output (allocating " + bytes_text(len) + ")");
    }
  }

  const int fd_;
  bool mapped_ = false, populate_per_job_ = false, every_job_mapped_ = false;
  uint64_t page_ = 0;
};

// Workers per GPU as the in-memory pipeline (pipeline.cpp), but the CPU gets two: with one, a CPU
// job's read, seal and write would take turns; with two, one job's I/O overlaps the other's
// sealing (on 2 cores, 1 GiB from /dev/shm: see docs/performance.md, 2026-11-28).
std::vector<engine::SchedulerDevice> file_devices(const PipelineOptions& options) {
  return scheduler_devices(options.devices, 2, detail::pipeline_gpu_workers());
}

enum class Direction { seal, open };

// The kind of work a file's seal or open is (detail::scheduling_of's `work`).
std::string file_work(bool opening, const PipelineOptions& options) {
  return std::string(opening ? "format file open" : "format file seal") + (options.direct_input ? " direct" : "");
}

struct IoTimes {
  std::atomic<uint64_t> read_ns{0}, write_ns{0};
  static void add(std::atomic<uint64_t>& total, std::chrono::steady_clock::time_point start) {
    total += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  }
};

// GPUCRYPT_FILE_TRACE=PATH: each call appends one JSON line to PATH with, per job, the seconds
// from the call's start at which its worker began, had its buffers, had read, had sealed or
// opened, and had written (or handed over) its output, and the device. A measurement knob for
// bench/gpu_file_probe.py (where a run's first seconds go), off unless set.
class JobTrace {
 public:
  enum Mark { begun, buffers, read, sealed, written, kMarks };
  explicit JobTrace(uint64_t jobs) {
    const char* path = std::getenv("GPUCRYPT_FILE_TRACE");
    if (path == nullptr || *path == '\0') return;
    path_ = path;
    marks_.assign(jobs, {});
    devices_.assign(jobs, {});
  }
  bool on() const { return !path_.empty(); }
  void mark(uint64_t job, Mark mark) {
    if (on() && job < marks_.size()) marks_[job][mark] = seconds_since(start_);
  }
  void device(uint64_t job, const std::string& name) {
    if (on() && job < devices_.size()) devices_[job] = name;
  }
  void write() const {
    if (!on()) return;
    std::string line = "{\"wall_s\": " + std::to_string(seconds_since(start_)) + ", \"jobs\": [";
    for (size_t job = 0; job < marks_.size(); ++job) {
      line += job ? ", [\"" : "[\"";
      line += devices_[job] + "\"";
      for (double at : marks_[job]) line += ", " + std::to_string(at);
      line += "]";
    }
    line += "]}\n";
    if (FILE* file = std::fopen(path_.c_str(), "a")) {
      std::fputs(line.c_str(), file);
      std::fclose(file);
    }
  }

 private:
  std::string path_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::vector<std::array<double, kMarks>> marks_;  // each job's marks, written by its worker alone
  std::vector<std::string> devices_;
};

// Runs chunks [first, first + count) of `layout` from in_fd to out_fd (offsets as
// seal_file_chunks / open_file_chunks give them). Opening: on an authentication failure, the
// failing job's chunks before the failed one are written too, and DecryptionError's
// released_len is the plaintext offset of the failed chunk, relative to the range's start.
PipelineStats run_file_chunks(Direction direction, int in_fd, uint64_t in_offset, int out_fd, uint64_t out_offset,
                              ByteSpan payload_key, const Layout& layout, uint64_t first, uint64_t count,
                              const PipelineOptions& given) {
  const bool opening = direction == Direction::open;
  const std::string work = file_work(opening, given);
  const PipelineOptions options = detail::resolved(given, work);
  if (payload_key.size() != kKeyLen)
    throw std::invalid_argument("the payload key is " + std::to_string(kKeyLen) + " bytes, got " +
                                std::to_string(payload_key.size()));
  check_chunk_len(layout.chunk_len);
  if (first > layout.num_chunks() || count > layout.num_chunks() - first)
    throw std::invalid_argument("chunks " + std::to_string(first) + " + " + std::to_string(count) +
                                " are outside the file's " + std::to_string(layout.num_chunks()));
  const auto plain_at = [&](uint64_t f, uint64_t c) { return layout.plaintext_range(f, c); };
  const auto sealed_at = [&](uint64_t f, uint64_t c) {
    const auto [at, len] = layout.sealed_range(f, c);
    return std::pair<uint64_t, uint64_t>(at - kHeaderLen, len);  // relative to the first chunk
  };
  const auto input_at = [&](uint64_t f, uint64_t c) { return opening ? sealed_at(f, c) : plain_at(f, c); };
  const auto output_at = [&](uint64_t f, uint64_t c) { return opening ? plain_at(f, c) : sealed_at(f, c); };

  const uint64_t unit_len = layout.chunk_len + (opening ? kTagLen : 0);
  const uint64_t job_len = options.job_len ? options.job_len : default_job_len(options.devices);
  const uint64_t chunks_per_job = std::clamp<uint64_t>(job_len / unit_len, 1, kMaxChunksPerJob);
  const uint64_t max_job_chunks = std::min(chunks_per_job, std::max<uint64_t>(count, 1));
  const DirectInput direct(in_fd, options.direct_input);
  // Direct reads take the aligned blocks around a job's range: room for one more at each end.
  const uint64_t buffer_in = uint64_t(layout.chunk_len) * max_job_chunks + (opening ? kTagLen * max_job_chunks : 0) +
                             (options.direct_input ? 2 * kDirectIoAlign : 0);
  const uint64_t buffer_out = uint64_t(layout.chunk_len) * max_job_chunks + (opening ? 0 : kTagLen * max_job_chunks);

  JobTrace trace((count + chunks_per_job - 1) / chunks_per_job);
  // The buffers are made after the scheduler (declared before it, so that they outlive its
  // workers) for the devices it will use: a set kept without the GPUs starts none of them.
  std::optional<BufferPool> buffers;
  std::optional<OutputWriter> out;
  const auto [range_out_start, range_out_len] = output_at(first, count);
  IoTimes io;
  engine::Scheduler scheduler(file_devices(options), detail::scheduling_of(options, work));
  const std::vector<std::string> in_use = scheduler.devices_in_use();
  buffers.emplace(buffer_in, buffer_out, job_buffer_device(in_use));
  const bool gpus =
      std::any_of(in_use.begin(), in_use.end(), [](const std::string& name) { return device_traits(name).is_gpu; });
  out.emplace(out_fd, out_offset + range_out_start, range_out_len, gpus);
  const uint64_t range_in_start = input_at(first, 0).first;
  uint64_t done_input = 0;
  try {
    for (uint64_t job_first = first; job_first < first + count; job_first += chunks_per_job) {
      const uint64_t job_count = std::min(chunks_per_job, first + count - job_first);
      const auto [in_at, in_len] = input_at(job_first, job_count);
      const auto [out_at, out_len] = output_at(job_first, job_count);
      scheduler.submit(
          in_len,
          [&, job_first, job_count, in_at, in_len, out_at, out_len](const std::string& device) {
            const uint64_t job = (job_first - first) / chunks_per_job;
            const bool gpu_job = device_traits(device).is_gpu;
            trace.mark(job, JobTrace::begun);
            trace.device(job, device);
            const BufferPool::Pair pair = buffers->acquire();
            trace.mark(job, JobTrace::buffers);
            struct Release {
              BufferPool& pool;
              BufferPool::Pair pair;
              ~Release() { pool.release(pair); }
            } release{*buffers, pair};
            auto started = std::chrono::steady_clock::now();
            const uint8_t* in_data = pair.input.data;
            if (direct.fd() >= 0)
              in_data = pread_direct(direct.fd(), pair.input.data, in_len, in_offset + in_at);
            else
              pread_exactly(in_fd, pair.input.data, in_len, in_offset + in_at);
            IoTimes::add(io.read_ns, started);
            trace.mark(job, JobTrace::read);
            const ByteSpan input(in_data, in_len);
            const MutableByteSpan output(pair.output.data, out_len);
            ChunkRun run;
            if (!opening) {
              run = seal_chunks(payload_key, layout, job_first, job_count, input, output, device, options.variant);
            } else {
              try {
                run = open_chunks(payload_key, layout, job_first, job_count, input, output, device, options.variant);
              } catch (const DecryptionError& failure) {
                // The chunks before the failed one authenticated: they are written, so that the
                // output holds the whole authenticated prefix (the caller truncates after it).
                const uint64_t good_len = plain_at(job_first, failure.chunk_index - job_first).second;
                if (out_fd >= 0) out->write(pair.output.data, good_len, out_offset + out_at, gpu_job);
                throw;
              }
            }
            scheduler.record_run(device, run.variant, run.h2d_s, run.compute_s, run.d2h_s);
            trace.mark(job, JobTrace::sealed);
            if (out_fd < 0) return;  // authenticate only
            started = std::chrono::steady_clock::now();
            out->write(pair.output.data, out_len, out_offset + out_at, gpu_job);
            IoTimes::add(io.write_ns, started);
            trace.mark(job, JobTrace::written);
          },
          [&, in_at, in_len] {
            done_input = in_at + in_len - range_in_start;
            if (options.progress) options.progress(done_input);
          });
    }
    scheduler.drain();
  } catch (DecryptionError& failure) {
    scheduler.stop();
    failure.released_len = plain_at(failure.chunk_index, 0).first - plain_at(first, 0).first;
    throw;
  }
  trace.write();
  PipelineStats stats = detail::stats_of(scheduler.stats());
  stats.read_s = static_cast<double>(io.read_ns.load()) * 1e-9;
  stats.write_s = static_cast<double>(io.write_ns.load()) * 1e-9;
  return stats;
}

// Refuses an output that is the input file itself (another descriptor of it, or a hard link):
// its offsets would overwrite bytes not read yet.
void check_distinct_files(int in_fd, int out_fd) {
  struct stat in_status {}, out_status {};
  if (::fstat(in_fd, &in_status) == 0 && ::fstat(out_fd, &out_status) == 0 && in_status.st_dev == out_status.st_dev &&
      in_status.st_ino == out_status.st_ino)
    throw std::invalid_argument("the output is the input file itself (it would be overwritten while being read)");
}

// Makes room for the output's final length before any work, so that a full disk is found at
// once (ENOSPC, nothing sealed in vain) instead of after minutes. First the free space
// (fstatvfs) against the bytes the output still needs; then, where the file system allocates
// blocks for it without writing them (ext4, xfs, btrfs: fallocate), the blocks themselves, so
// that no other writer takes them meanwhile. Not on tmpfs: there fallocate zero-fills every page
// up front, which our writes then fill again (1 GiB in /dev/shm: 0.25 s of a 0.6 s encrypt on 2
// cores, 2026-11-28); the free-space check stands in for it, and a disk filled by someone else
// during the run is still found by the write that hits it. Where there is no fallocate, ftruncate
// gives the length.
void reserve_output(int out_fd, uint64_t end) {
  struct stat status {};
  if (::fstat(out_fd, &status) != 0) throw FileError(errno, true, "writing the output");
  const uint64_t have = static_cast<uint64_t>(status.st_size);
  if (have >= end) return;
  struct statfs file_system {};
  const bool known = ::fstatfs(out_fd, &file_system) == 0;
  if (known) {
    const uint64_t free_bytes = uint64_t(file_system.f_bavail) * uint64_t(file_system.f_bsize);
    if (free_bytes < end - have)
      throw FileError(ENOSPC, true, "writing the output (" + bytes_text(end - have) + " needed, " +
                                        bytes_text(free_bytes) + " free)");
  }
  if (!on_tmpfs(out_fd)) {
    if (allocate_output_range(out_fd, 0, end)) return;
  }
  if (::ftruncate(out_fd, static_cast<off_t>(end)) != 0)
    throw FileError(errno, true, "writing the output (setting its length)");
}

}  // namespace

void reserve_file(int out_fd, uint64_t length) { reserve_output(out_fd, length); }

std::string positional_problem(int fd, bool output) {
  struct stat status {};
  if (::fstat(fd, &status) != 0) return std::string("fstat failed: ") + std::strerror(errno);
  return offset_problem(fd, output, status);
}

// Messages start with "reading the input" or "writing the output" (the C API's callers tell the
// two sides apart by that, examples/encrypt_file.c).
FileError::FileError(int error_number, bool on_output, const std::string& what)
    : std::system_error(error_number, std::generic_category(), what), on_output(on_output) {}

PipelineStats seal_file_chunks(int in_fd, uint64_t in_offset, int out_fd, uint64_t out_offset, ByteSpan payload_key,
                               const Layout& layout, uint64_t first, uint64_t count, const PipelineOptions& options) {
  return run_file_chunks(Direction::seal, in_fd, in_offset, out_fd, out_offset, payload_key, layout, first, count,
                         options);
}

PipelineStats open_file_chunks(int in_fd, uint64_t in_offset, int out_fd, uint64_t out_offset, ByteSpan payload_key,
                               const Layout& layout, uint64_t first, uint64_t count, const PipelineOptions& options) {
  return run_file_chunks(Direction::open, in_fd, in_offset, out_fd, out_offset, payload_key, layout, first, count,
                         options);
}

FileRun seal_file(int in_fd, uint64_t in_offset, int out_fd, uint64_t out_offset, ByteSpan header,
                  ByteSpan payload_key, uint32_t chunk_len, const PipelineOptions& options) {
  check_chunk_len(chunk_len);
  const uint64_t in_len = regular_file_len(in_fd, false);
  regular_file_len(out_fd, true);
  check_distinct_files(in_fd, out_fd);
  if (in_offset > in_len)
    throw std::invalid_argument("the input starts at " + bytes_text(in_offset) + ", past its end");
  const Layout layout{chunk_len, in_len - in_offset};
  const uint64_t body_at = out_offset + header.size();
  const uint64_t end = body_at + layout.file_len() - kHeaderLen;
  reserve_output(out_fd, end);
  FileRun run;
  try {
    run.stats = seal_file_chunks(in_fd, in_offset, out_fd, body_at, payload_key, layout, 0, layout.num_chunks(), options);
    // The header last: an output cut short by a failure never starts like a valid file.
    pwrite_exactly(out_fd, header.data(), header.size(), out_offset);
  } catch (...) {
    (void)::ftruncate(out_fd, static_cast<off_t>(out_offset));  // nothing of this call's output stays
    throw;
  }
  run.input_len = layout.plaintext_len;
  run.output_len = end - out_offset;
  return run;
}

FileRun open_file(int in_fd, uint64_t body_offset, int out_fd, uint64_t out_offset, ByteSpan payload_key,
                  uint32_t chunk_len, const PipelineOptions& options) {
  check_chunk_len(chunk_len);
  const uint64_t file_len = regular_file_len(in_fd, false);
  const bool discard = out_fd < 0;  // authenticate only (decrypt --check)
  if (!discard) {
    regular_file_len(out_fd, true);
    check_distinct_files(in_fd, out_fd);
  }
  if (body_offset > file_len)
    throw DecryptionError("file truncated: it ends inside its header", 0);
  const Layout layout = layout_for_file(file_len, chunk_len, body_offset);
  if (!discard) reserve_output(out_fd, out_offset + layout.plaintext_len);
  FileRun run;
  try {
    run.stats = open_file_chunks(in_fd, body_offset, out_fd, out_offset, payload_key, layout, 0, layout.num_chunks(),
                                 options);
  } catch (const DecryptionError& failure) {
    if (discard) throw;
    // Only the authenticated prefix stays; chunks after the failed one (written by jobs that ran
    // beside it) and the reserved space go.
    if (::ftruncate(out_fd, static_cast<off_t>(out_offset + failure.released_len)) != 0)
      throw FileError(errno, true, "writing the output (cutting it back to its authenticated prefix)");
    throw;
  } catch (...) {
    // Any other failure (I/O, cancellation, a device): nothing of this call's output is kept.
    if (!discard) (void)::ftruncate(out_fd, static_cast<off_t>(out_offset));
    throw;
  }
  run.input_len = file_len - body_offset;
  run.output_len = layout.plaintext_len;
  return run;
}

// ---- whole descriptors (the C API's gc_file_seal_fd / gc_file_open_fd) ------------------------------

namespace {

// The descriptor's offset when it is a regular file the file pipeline can read or write by
// offset, else nothing (a pipe, FIFO, socket, terminal or device; an output open for appending).
std::optional<uint64_t> positional_offset(int fd, bool output) {
  if (!positional_problem(fd, output).empty()) return std::nullopt;
  const off_t offset = ::lseek(fd, 0, SEEK_CUR);
  if (offset < 0) return std::nullopt;
  return static_cast<uint64_t>(offset);
}

void seek_to(int fd, uint64_t offset, bool output) {
  if (::lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0)
    throw FileError(errno, output, output ? "writing the output (seeking)" : "reading the input (seeking)");
}

// A whole header read with read(2), retried on EINTR and short reads (the stream path's header).
std::vector<uint8_t> read_header_from(int fd) {
  return detail::read_header([fd](MutableByteSpan buffer) -> size_t {
    for (;;) {
      const ssize_t n = ::read(fd, buffer.data(), buffer.size());
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) throw FileError(errno, false, "reading the input (its header)");
    }
  });
}

void write_header(int fd, ByteSpan bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw FileError(n < 0 ? errno : ENOSPC, true, "writing the output's header");
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
}

// seal_fd / open_fd with any header (pipeline_internal.hpp): by offset between regular files, else
// streamed (seal_stream_fd / open_stream_fd).
uint64_t seal_fd_with(int in_fd, int out_fd, const detail::MakeHeader& make_header, uint32_t chunk_len,
                      const PipelineOptions& options) {
  const auto in_at = positional_offset(in_fd, false), out_at = positional_offset(out_fd, true);
  uint8_t payload_key[kKeyLen];
  detail::WipeOnExit wipe{payload_key};
  const std::vector<uint8_t> header = make_header(payload_key);
  const ByteSpan key(payload_key, kKeyLen);
  if (!in_at || !out_at) {
    write_header(out_fd, header);
    return seal_stream_fd(in_fd, {}, false, out_fd, key, chunk_len, options).input_len;
  }
  const FileRun run = seal_file(in_fd, *in_at, out_fd, *out_at, header, key, chunk_len, options);
  seek_to(in_fd, *in_at + run.input_len, false);
  seek_to(out_fd, *out_at + run.output_len, true);
  return run.input_len;
}

uint64_t open_fd_with(int in_fd, int out_fd, const detail::CheckHeader& check_header, const PipelineOptions& options) {
  const auto in_at = positional_offset(in_fd, false), out_at = positional_offset(out_fd, true);
  uint8_t payload_key[kKeyLen];
  detail::WipeOnExit wipe{payload_key};
  const ByteSpan key(payload_key, kKeyLen);
  if (!in_at || !out_at) {
    // A short header is check_header's to refuse; a whole one followed by nothing is the stream's
    // (the final chunk is missing).
    const OpenedHeader opened = check_header(read_header_from(in_fd), payload_key);
    return open_stream_fd(in_fd, {}, false, out_fd, key, opened.chunk_len, options).output_len;
  }
  uint64_t read_at = *in_at;
  const std::vector<uint8_t> header = detail::read_header([in_fd, &read_at](MutableByteSpan buffer) -> size_t {
    for (;;) {
      const ssize_t n = ::pread(in_fd, buffer.data(), buffer.size(), static_cast<off_t>(read_at));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw FileError(errno, false, "reading the input (its header)");
      read_at += static_cast<uint64_t>(n);
      return static_cast<size_t>(n);
    }
  });
  const OpenedHeader opened = check_header(header, payload_key);
  const uint64_t body_at = *in_at + opened.header_len;
  const FileRun run = open_file(in_fd, body_at, out_fd, *out_at, key, opened.chunk_len, options);
  seek_to(in_fd, body_at + run.input_len, false);
  seek_to(out_fd, *out_at + run.output_len, true);
  return run.output_len;
}

FileRun stream_in_order(ChunkStream::Operation operation, const InputEnd& in, const StreamWriter& write,
                        ByteSpan payload_key, uint32_t chunk_len, const PipelineOptions& options);
StreamWriter descriptor_writer(int out_fd, const PipelineOptions& options);

// seal_ends / open_ends: by the file pipeline when both ends allow it (ends_by_offset), else streamed.
FileRun run_ends(bool sealing, const InputEnd& in, const OutputEnd& out, ByteSpan header, ByteSpan payload_key,
                 uint32_t chunk_len, const PipelineOptions& options) {
  const int out_fd = out.discard ? -1 : out.fd;
  if (ends_by_offset(in, out)) {
    FileRun run;
    const uint64_t in_at = static_cast<uint64_t>(in.offset), out_at = out.discard ? 0 : static_cast<uint64_t>(out.offset);
    try {
      run = sealing ? seal_file(in.fd, in_at, out_fd, out_at, header, payload_key, chunk_len, options)
                    : open_file(in.fd, in_at, out_fd, out_at, payload_key, chunk_len, options);
    } catch (const DecryptionError& error) {
      if (out_fd >= 0) seek_to(out_fd, out_at + error.released_len, true);
      throw;
    }
    seek_to(in.fd, in_at + run.input_len, false);
    if (out_fd >= 0) seek_to(out_fd, out_at + run.output_len, true);
    return run;
  }
  if (options.direct_input)
    throw std::invalid_argument("direct I/O reads a regular file by offset; the input or the output here is a stream "
                                "(a pipe, a device or stdin/stdout)");
  const StreamWriter write = out.discard ? nullptr : out_fd >= 0 ? descriptor_writer(out_fd, options) : out.write;
  if (sealing && out_fd >= 0) write_header(out_fd, header);
  else if (sealing && write) write(header);
  return stream_in_order(sealing ? ChunkStream::Operation::seal : ChunkStream::Operation::open, in, write,
                         payload_key, chunk_len, options);
}

}  // namespace

uint64_t seal_fd(int in_fd, int out_fd, ByteSpan key, uint32_t chunk_len, const PipelineOptions& options) {
  return seal_fd_with(in_fd, out_fd, detail::header_with_key(key, chunk_len), chunk_len, options);
}

uint64_t seal_fd(int in_fd, int out_fd, const std::vector<std::string>& recipients, uint32_t chunk_len,
                 const PipelineOptions& options) {
  return seal_fd_with(in_fd, out_fd, detail::header_for_recipients(recipients, chunk_len), chunk_len, options);
}

uint64_t open_fd(int in_fd, int out_fd, ByteSpan key, const PipelineOptions& options) {
  return open_fd_with(in_fd, out_fd, detail::header_key_check(key), options);
}

bool automatic_leaves_gpus_out(bool opening, const PipelineOptions& options) {
  return options.automatic && detail::kept_without_gpus(options, file_work(opening, options)).has_value();
}

bool ends_by_offset(const InputEnd& in, const OutputEnd& out) {
  const bool output_by_offset = out.discard || (out.fd >= 0 && out.offset >= 0 && positional_problem(out.fd, true).empty());
  return in.fd >= 0 && in.offset >= 0 && positional_problem(in.fd, false).empty() && output_by_offset;
}

FileRun seal_ends(const InputEnd& in, const OutputEnd& out, ByteSpan header, ByteSpan payload_key, uint32_t chunk_len,
                  const PipelineOptions& options) {
  return run_ends(true, in, out, header, payload_key, chunk_len, options);
}

FileRun open_ends(const InputEnd& in, const OutputEnd& out, ByteSpan payload_key, uint32_t chunk_len,
                  const PipelineOptions& options) {
  return run_ends(false, in, out, {}, payload_key, chunk_len, options);
}

uint64_t open_fd(int in_fd, int out_fd, const std::vector<std::string>& identities, const PipelineOptions& options) {
  return open_fd_with(in_fd, out_fd, detail::header_identities_check(identities), options);
}

// ---- between descriptors read and written in order --------------------------------------------

namespace {

// Waits up to timeout_ms (-1: without end) for `events` on fd; false when the time ran out or a
// signal came (the caller polls its cancellation and asks again).
bool poll_for(int fd, short events, int timeout_ms) {
  pollfd request{fd, events, 0};
  const int ready = ::poll(&request, 1, timeout_ms);
  if (ready < 0 && errno != EINTR) throw FileError(errno, events == POLLOUT, "waiting on a descriptor (poll)");
  return ready > 0;
}

// How long a blocked read or write waits between looks at the cancellation.
constexpr int kCancelPollMs = 100;

// An input read in order: the bytes the caller read before (already_read) first, then read(2)
// from fd, retrying EINTR and waiting for a non-blocking descriptor with poll, or the caller's
// `reader` where there is no descriptor; `stop` is polled while it waits (true: engine::Cancelled).
// A read returning nothing ends it: fd is never read after that (a terminal's Ctrl-D).
class StreamInput {
 public:
  StreamInput(int fd, ByteSpan already_read, bool input_ended, std::function<bool()> stop, StreamReader reader = {})
      : fd_(fd), pending_(already_read), ended_(input_ended), stop_(std::move(stop)), reader_(std::move(reader)) {
    struct stat status {};
    if (!ended_ && !reader_ && ::fstat(fd, &status) == 0) {
      streaming_ = !S_ISREG(status.st_mode) && !S_ISBLK(status.st_mode);
      // A 1 MiB pipe (64 KiB by default), so that a fast producer runs ahead of our reads by
      // whole jobs; refused past /proc/sys/fs/pipe-max-size: the pipe keeps its size.
      if (S_ISFIFO(status.st_mode)) (void)::fcntl(fd, F_SETPIPE_SZ, 1 << 20);
    }
  }

  bool ended() const { return ended_ && pending_.empty(); }
  // Not a regular file or block device: a producer that may be slow.
  bool streaming() const { return streaming_ && pending_.empty() && !ended_; }
  double read_s() const { return read_s_; }

  // Whether input (or its end) is waiting within timeout_ms.
  bool waiting(int timeout_ms) {
    if (!streaming()) return true;
    return poll_for(fd_, POLLIN, timeout_ms);
  }

  // Up to buffer.size() bytes, at least one unless the input ended.
  size_t read_some(MutableByteSpan buffer) {
    if (!pending_.empty()) {
      const size_t n = std::min(buffer.size(), pending_.size());
      std::memcpy(buffer.data(), pending_.data(), n);
      pending_ = pending_.subspan(n);
      return n;
    }
    if (ended_ || buffer.empty()) return 0;
    const auto began = std::chrono::steady_clock::now();
    if (reader_) {
      const size_t n = reader_(buffer);
      ended_ = n == 0;
      read_s_ += seconds_since(began);
      return n;
    }
    for (;;) {
      const ssize_t n = ::read(fd_, buffer.data(), std::min<size_t>(buffer.size(), 1u << 30));
      if (n > 0) {
        read_s_ += seconds_since(began);
        return static_cast<size_t>(n);
      }
      if (n == 0) {
        ended_ = true;
        read_s_ += seconds_since(began);
        return 0;
      }
      if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) throw FileError(errno, false, "reading the input");
      if (stop_ && stop_()) throw engine::Cancelled();
      if (errno != EINTR) poll_for(fd_, POLLIN, kCancelPollMs);
    }
  }

  // Whether the caller's reader gives more after it reported its end (a file appended to while it
  // was read): never asked of a descriptor, which may be a terminal waiting for more.
  bool more_after_end() {
    uint8_t probe = 0;
    return reader_ && ended() && reader_(MutableByteSpan(&probe, 1)) > 0;
  }

  // Waits (polling `stop`) until input or its end is waiting.
  void wait() {
    while (!waiting(kCancelPollMs))
      if (stop_ && stop_()) throw engine::Cancelled();
  }

 private:
  int fd_;
  ByteSpan pending_;
  bool ended_;
  bool streaming_ = false;
  std::function<bool()> stop_;
  StreamReader reader_;
  double read_s_ = 0;
};

// write(2) of every byte, retrying EINTR and short counts, waiting for a non-blocking descriptor.
void write_all(int fd, ByteSpan bytes, const std::function<bool()>& stop) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), std::min<size_t>(bytes.size(), 1u << 30));
    if (n > 0) {
      bytes = bytes.subspan(static_cast<size_t>(n));
      continue;
    }
    if (n == 0) throw FileError(ENOSPC, true, "writing the output");
    if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) throw FileError(errno, true, "writing the output");
    if (stop && stop()) throw engine::Cancelled();
    if (errno != EINTR) poll_for(fd, POLLOUT, kCancelPollMs);
  }
}

// seal_stream_fd / open_stream_fd, and seal_ends / open_ends streaming from a descriptor or a reader.
FileRun stream_in_order(ChunkStream::Operation operation, const InputEnd& in, const StreamWriter& write,
                        ByteSpan payload_key, uint32_t chunk_len, const PipelineOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  StreamInput input(in.fd, in.already_read, in.ended, options.cancelled, in.read);
  FileRun run;
  double write_s = 0;
  uint64_t input_done = 0;
  std::optional<BufferPool> buffers;  // before the stream: its workers use the buffers until it stops
  std::map<uint64_t, std::pair<BufferPool::Pair, uint64_t>> in_flight;  // job id -> (buffers, input length)
  PipelineOptions stream_options = options;
  stream_options.progress = nullptr;  // ours counts input bytes, as seal_file's
  ChunkStream stream(operation, payload_key, chunk_len, stream_options,
                     [&](uint64_t job_id, uint64_t, uint64_t output_len) {
                       auto job = in_flight.extract(job_id);
                       const auto [pair, input_len] = job.mapped();
                       if (write) {
                         const auto began = std::chrono::steady_clock::now();
                         write(ByteSpan(pair.output.data, output_len));
                         write_s += seconds_since(began);
                       }
                       run.output_len += output_len;
                       buffers->release(pair);
                       input_done += input_len;
                       if (options.progress) options.progress(input_done);
                     });
  const uint64_t unit = stream.input_unit_len();
  const uint64_t job_len = stream.chunks_per_job() * unit;
  // Page-locked buffers only where a GPU may take the jobs: a stream that starts on a kept set of
  // the CPU alone reads and writes ordinary memory (on a 2-H200 host a memory-to-memory stream
  // kept on the CPU alone among two GPUs read and wrote at half the speed of one given the CPU alone).
  buffers.emplace(job_len, stream.output_capacity(job_len), job_buffer_device(stream.devices_in_use()));
  // A slow producer's part of a chunk read after its whole ones: the start of the next job.
  std::vector<uint8_t> carried;
  carried.reserve(unit);
  struct WipeCarried {
    std::vector<uint8_t>& bytes;
    ~WipeCarried() { secure_zero(bytes.data(), bytes.capacity()); }
  } wipe_carried{carried};
  for (uint64_t job_id = 0;; ++job_id) {
    const BufferPool::Pair pair = buffers->acquire();
    std::memcpy(pair.input.data, carried.data(), carried.size());
    uint64_t filled = carried.size();
    carried.clear();
    while (filled < job_len && !input.ended()) {
      if (!input.waiting(kStreamIdleMs)) {  // a slow producer
        if (filled >= unit) break;          // the whole chunks so far go on now
        stream.drain();                     // and what is done reaches the consumer
        input.wait();
      }
      filled += input.read_some(MutableByteSpan(pair.input.data + filled, job_len - filled));
    }
    const bool at_end = input.ended();
    const uint64_t job_input = at_end ? filled : filled / unit * unit;  // (a full job is whole units)
    carried.assign(pair.input.data + job_input, pair.input.data + filled);
    in_flight.emplace(job_id, std::pair{pair, job_input});
    run.input_len += job_input;
    const bool trailing_data = at_end && operation == ChunkStream::Operation::open && input.more_after_end();
    stream.submit(job_id, ByteSpan(pair.input.data, job_input),
                  MutableByteSpan(pair.output.data, stream.output_capacity(job_input)), at_end, trailing_data);
    if (at_end) break;
  }
  stream.drain();
  run.stats = stream.stats();
  run.stats.read_s = input.read_s();
  run.stats.write_s = write_s;
  run.stats.wall_s = seconds_since(start);
  return run;
}

// The hashing of hash_stream_fd: a reader thread fills blocks ahead of the hashing thread.
class StreamBlockReader {
 public:
  // The first block is first_len bytes when that is not 0 (a tree hash's head), the others block_len.
  // `in`: a descriptor read in order, or in.read (on the reader thread).
  StreamBlockReader(const InputEnd& in, uint64_t first_len, uint64_t block_len)
      : input_(in.fd, in.already_read, in.ended, [this] { return stopping(); }, in.read), first_len_(first_len),
        block_len_(block_len) {
    for (auto& block : blocks_) block.data.resize(std::max(first_len_, block_len_));
    thread_ = std::thread([this] { read_blocks(); });
  }
  ~StreamBlockReader() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
    for (auto& block : blocks_) secure_zero(block.data.data(), block.data.size());
  }

  // The next block in order (len 0: the input ended), waiting with `cancelled` polled.
  ByteSpan next(const std::function<bool()>& cancelled) {
    std::unique_lock lock(mutex_);
    for (;;) {
      Block& block = blocks_[taken_ % kBlocks];
      if (taken_ < filled_) return ByteSpan(block.data.data(), block.len);
      if (error_) std::rethrow_exception(error_);
      if (ended_) return {};
      changed_.wait_for(lock, std::chrono::milliseconds(kCancelPollMs));
      if (cancelled) {
        lock.unlock();
        if (cancelled()) throw engine::Cancelled();
        lock.lock();
      }
    }
  }
  // The block next() gave is hashed: its buffer may be filled again.
  void done() {
    {
      std::lock_guard lock(mutex_);
      ++taken_;
    }
    changed_.notify_all();
  }
  double read_s() const { return input_.read_s(); }

 private:
  static constexpr unsigned kBlocks = 3;
  struct Block {
    std::vector<uint8_t> data;
    uint64_t len = 0;
  };

  bool stopping() {
    std::lock_guard lock(mutex_);
    return stopping_;
  }

  void read_blocks() {
    try {
      for (;;) {
        {
          std::unique_lock lock(mutex_);
          changed_.wait(lock, [this] { return stopping_ || filled_ - taken_ < kBlocks; });
          if (stopping_) return;
        }
        Block& block = blocks_[filled_ % kBlocks];
        const uint64_t wanted = filled_ == 0 && first_len_ > 0 ? first_len_ : block_len_;
        uint64_t len = 0;
        while (len < wanted && !input_.ended()) {
          input_.wait();  // so that a stop is seen while a slow producer has nothing for us
          len += input_.read_some(MutableByteSpan(block.data.data() + len, wanted - len));
        }
        {
          std::lock_guard lock(mutex_);
          block.len = len;
          if (len > 0) ++filled_;
          ended_ = input_.ended();
        }
        changed_.notify_all();
        if (ended_) break;
      }
    } catch (...) {
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
    changed_.notify_all();
  }

  StreamInput input_;
  uint64_t first_len_, block_len_;
  Block blocks_[kBlocks];
  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t filled_ = 0, taken_ = 0;
  bool ended_ = false, stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: it starts once the rest exists
};

}  // namespace

namespace {
StreamWriter descriptor_writer(int out_fd, const PipelineOptions& options) {
  if (out_fd < 0) return nullptr;
  return [out_fd, &options](ByteSpan bytes) { write_all(out_fd, bytes, options.cancelled); };
}
}  // namespace

FileRun seal_stream_fd(int in_fd, ByteSpan already_read, bool input_ended, int out_fd, ByteSpan payload_key,
                       uint32_t chunk_len, const PipelineOptions& options) {
  return seal_stream_fd(in_fd, already_read, input_ended, descriptor_writer(out_fd, options), payload_key, chunk_len,
                        options);
}

FileRun open_stream_fd(int in_fd, ByteSpan already_read, bool input_ended, int out_fd, ByteSpan payload_key,
                       uint32_t chunk_len, const PipelineOptions& options) {
  return open_stream_fd(in_fd, already_read, input_ended, descriptor_writer(out_fd, options), payload_key, chunk_len,
                        options);
}

FileRun seal_stream_fd(int in_fd, ByteSpan already_read, bool input_ended, const StreamWriter& write,
                       ByteSpan payload_key, uint32_t chunk_len, const PipelineOptions& options) {
  return stream_in_order(ChunkStream::Operation::seal, InputEnd{in_fd, -1, already_read, input_ended, {}}, write,
                         payload_key, chunk_len, options);
}

FileRun open_stream_fd(int in_fd, ByteSpan already_read, bool input_ended, const StreamWriter& write,
                       ByteSpan payload_key, uint32_t chunk_len, const PipelineOptions& options) {
  return stream_in_order(ChunkStream::Operation::open, InputEnd{in_fd, -1, already_read, input_ended, {}}, write,
                         payload_key, chunk_len, options);
}

// ---- hashing a regular file -----------------------------------------------------------------------

namespace {

// Blocks of the file read ahead of the hashing, each read in pieces (kReadPieceLen) by whichever
// readers are free, in file order, into slot (block % slots) once the hashing thread has finished
// with the block that slot held; the hashing thread takes the blocks in order, several at a time
// where they are read and adjacent in the ring (one allocation, slot after slot). Pieces, not whole
// blocks per reader: one reader's pread of a 16 MiB block from page cache takes about 7 ms, longer
// than a GPU takes to hash the 17 blocks ahead of it (0.33 ms each at the host link's rate), so
// with a block per reader the hashing thread waited half the time for the one reader behind
// (KT128 of 16 GiB on an H200 host: readers busy 0.45 s of a 1.42 s run, docs/performance.md,
// 2026-11-28); with every reader on the blocks at the head of the queue, the next block is ready
// after about a piece's time. The ring is allocated before the readers start (allocate_host: the
// leaf device's page-locked memory where it has some, so that a GPU reads the blocks in place;
// ordinary memory where it is refused): page-locked allocations serialise on the driver, so readers
// allocating as they started only queued behind each other and held back the first blocks. The
// first error (a reader's, or the hashing thread stopping) stops every reader; the destructor
// joins them and zeroes the ring.
class BlockReader {
 public:
  // A piece takes a reader about 0.5 ms from page cache: short beside a GPU block's hashing, long
  // beside a pread's own cost.
  static constexpr uint64_t kReadPieceLen = 2 << 20;

  // A run of consecutive blocks read and next to each other in memory (hash them in one call).
  struct Run {
    const uint8_t* data;
    uint64_t len, blocks;
  };

  BlockReader(int fd, uint64_t first_offset, uint64_t body_len, uint64_t block_len, unsigned readers,
              const Device* host_memory)
      : fd_(fd), first_offset_(first_offset), body_len_(body_len), block_len_(block_len),
        num_blocks_((body_len + block_len - 1) / block_len),
        // As many blocks ahead as when each reader read a whole block (one per reader, two ready
        // for the hashing thread). With pieces fewer would do; that count is for a GPU run to set.
        slots_(std::min<uint64_t>(num_blocks_, uint64_t{readers} + 2)), host_memory_(host_memory),
        filled_(slots_, kNone), pieces_of_(slots_, kNone), pieces_read_(slots_, 0) {
    try {
      ring_ = allocate_host(slots_ * block_len_, host_memory_);
      const uint64_t pieces = (body_len_ + kReadPieceLen - 1) / kReadPieceLen;
      const unsigned threads = static_cast<unsigned>(std::min<uint64_t>(readers, pieces));
      for (unsigned r = 0; r < threads; ++r) threads_.emplace_back([this] { read_pieces(); });
    } catch (...) {
      release();
      throw;
    }
  }
  ~BlockReader() { release(); }
  BlockReader(const BlockReader&) = delete;
  BlockReader& operator=(const BlockReader&) = delete;

  uint64_t num_blocks() const { return num_blocks_; }
  uint64_t num_slots() const { return slots_; }
  uint64_t block_len(uint64_t block) const { return std::min(block_len_, body_len_ - block * block_len_); }
  double read_s() const { return read_ns_.load() / 1e9; }

  // Block `block` (the next in order) once it is read, with the blocks after it that are read too
  // and follow it in the ring (not past its end), up to max_blocks; rethrows a reader's error.
  Run wait(uint64_t block, uint64_t max_blocks) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return error_ || filled_[block % slots_] == block; });
    if (error_) std::rethrow_exception(error_);
    uint64_t blocks = 1, len = block_len(block);
    for (uint64_t next = block + 1; blocks < max_blocks && next < num_blocks_ && next % slots_ != 0 &&
                                    filled_[next % slots_] == next;
         ++next, ++blocks)
      len += block_len(next);
    return {ring_.data + (block % slots_) * block_len_, len, blocks};
  }
  // The hashing thread is done with the blocks before `end`: their slots may take the blocks
  // `slots` later.
  void done_before(uint64_t end) {
    {
      std::lock_guard lock(mutex_);
      hashed_ = end;
    }
    changed_.notify_all();
  }

 private:
  static constexpr uint64_t kNone = UINT64_MAX;

  uint64_t pieces_in(uint64_t block) const { return (block_len(block) + kReadPieceLen - 1) / kReadPieceLen; }

  void read_pieces() {
    while (true) {
      uint64_t block = 0, piece = 0;
      {
        std::unique_lock lock(mutex_);
        if (stopping_ || next_block_ >= num_blocks_) return;
        block = next_block_;  // the next piece in file order is this reader's
        piece = next_piece_;
        if (++next_piece_ == pieces_in(block)) {
          ++next_block_;
          next_piece_ = 0;
        }
        changed_.wait(lock, [&] { return stopping_ || block < hashed_ + slots_; });
        if (stopping_) return;
      }
      const uint64_t slot = block % slots_;
      try {
        // The slot's bytes of this piece are this reader's alone: the hashing thread and the
        // readers of the slot's previous block are done with it, and no other reader has the piece.
        const uint64_t at = piece * kReadPieceLen;
        const uint64_t len = std::min(kReadPieceLen, block_len(block) - at);
        const auto start = std::chrono::steady_clock::now();
        pread_exactly(fd_, ring_.data + slot * block_len_ + at, len, first_offset_ + block * block_len_ + at);
        read_ns_ += static_cast<uint64_t>(seconds_since(start) * 1e9);
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
        stopping_ = true;
        changed_.notify_all();
        return;
      }
      bool block_filled = false;
      {
        std::lock_guard lock(mutex_);
        if (pieces_of_[slot] != block) {  // the block's first piece read: the slot's count starts again
          pieces_of_[slot] = block;
          pieces_read_[slot] = 0;
        }
        if (++pieces_read_[slot] == pieces_in(block)) {
          filled_[slot] = block;
          block_filled = true;
        }
      }
      if (block_filled) changed_.notify_all();
    }
  }
  void release() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    for (std::thread& thread : threads_) thread.join();
    release_host(ring_, slots_ * block_len_, host_memory_);
    ring_ = {};
  }

  const int fd_;
  const uint64_t first_offset_, body_len_, block_len_, num_blocks_, slots_;
  const Device* const host_memory_;
  HostBuffer ring_;                    // slot i: block_len_ bytes at i * block_len_
  std::vector<uint64_t> filled_;       // the block each slot holds whole, kNone before its first
  std::vector<uint64_t> pieces_of_;    // the block whose pieces pieces_read_ counts, per slot
  std::vector<uint64_t> pieces_read_;  // pieces of that block read so far
  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t next_block_ = 0, next_piece_ = 0;  // the next piece a free reader takes
  uint64_t hashed_ = 0;                       // blocks the hashing thread finished
  bool stopping_ = false;
  std::exception_ptr error_;
  std::atomic<uint64_t> read_ns_{0};
  std::vector<std::thread> threads_;
};

// The device that hashes a tree's leaves: options.devices' one device, or the CPU.
const Device& leaf_device(const PipelineOptions& options) {
  if (options.devices.size() > 1)
    throw std::invalid_argument("hashing a file takes one device for a tree's leaves, got " +
                                std::to_string(options.devices.size()));
  return device(options.devices.empty() ? "cpu" : options.devices.front());
}

// Absorbs chaining values into a tree's final node on a thread of its own, one block's at a time
// and in order, so that the serial absorb overlaps the next block's leaves (on a GPU: about 1%
// of the leaves' bytes, but about 5 ms per GiB of KT128 on one core: docs/performance.md). One
// thread for the whole file, handed each block's values in turn: a thread per block would be
// 1024 thread starts for 16 GiB. At most one block is handed over at a time (absorb waits for the
// previous one), so the two buffers alternate and the one being absorbed is never written.
class ChainingValueAbsorber {
 public:
  explicit ChainingValueAbsorber(hash::HashContext& node) : node_(node), thread_([this] { run(); }) {}
  // Stops the thread (dropping a block not yet started: the caller is throwing) and joins it,
  // so that nothing reads the buffers or the node after the caller's frame is gone.
  ~ChainingValueAbsorber() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  ChainingValueAbsorber(const ChainingValueAbsorber&) = delete;
  ChainingValueAbsorber& operator=(const ChainingValueAbsorber&) = delete;

  // The buffer that the next block's values may be written into (not the one being absorbed).
  std::vector<uint8_t>& next_buffer(size_t len) {
    std::vector<uint8_t>& buffer = buffers_[next_];
    if (buffer.size() < len) buffer.resize(len);
    return buffer;
  }
  // Starts absorbing `num_leaves` values from next_buffer(), after the previous block's.
  void absorb(uint64_t num_leaves) {
    finish();
    {
      std::lock_guard lock(mutex_);
      block_ = Block{buffers_[next_].data(), num_leaves};
    }
    changed_.notify_all();
    next_ ^= 1;
  }
  // Waits for the block handed over last; rethrows an absorb's error (every time: the node is
  // unusable after it, so nothing more may be absorbed).
  void finish() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !block_; });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  struct Block {
    const uint8_t* values;
    uint64_t num_leaves;
  };

  void run() {
    std::unique_lock lock(mutex_);
    while (true) {
      changed_.wait(lock, [&] { return stopping_ || block_; });
      if (stopping_) return;
      const Block block = *block_;
      lock.unlock();
      std::exception_ptr error;
      try {
        hash::absorb_chaining_values(node_, block.values, block.num_leaves);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (error && !error_) error_ = error;
      block_.reset();  // cleared only now: finish() waits for the absorb, not for the hand-off
      changed_.notify_all();
    }
  }

  hash::HashContext& node_;
  std::vector<uint8_t> buffers_[2];
  unsigned next_ = 0;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<Block> block_;  // handed over and not yet absorbed (or being absorbed)
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: started once everything it reads exists
};

// A digest fed in order: a sponge block by block on the CPU (it is serial, so no device helps
// it); a tree hash (ParallelHash, KangarooTwelve) its head to its final node, then blocks of whole
// leaves (but the last) on one device (leaf_device), each block's chaining values absorbed on a
// thread of their own while the next block's leaves hash, the last block's tail after them. The
// digest is create_hash's for the same bytes. A named CPU variant (options.variant) hashes
// everything in that variant's one context, a tree's leaves too: the caller asked for that code,
// and the leaf kernels are the devices' own. What hash_file and hash_stream_fd share.
class BlockHasher {
 public:
  BlockHasher(std::string_view name, const hash::HashParams& params, const PipelineOptions& options)
      : name_(name), params_(params),
        context_(hash::create_hash(name, params, options.variant)) {  // checks name, parameters and variant
    try {
      if (options.variant.empty()) tree_ = hash::tree_shape(name, params);  // only the tree hashes have one
    } catch (const std::invalid_argument&) {
    }
    if (tree_) {
      context_ = hash::create_tree_hash(name, params);
      absorber_.emplace(*context_);
    }
    leaves_on_ = tree_ ? &leaf_device(options) : &device("cpu");
  }

  const Device& leaves_on() const { return *leaves_on_; }
  uint64_t head_len() const { return tree_ ? tree_->head_len : 0; }
  uint64_t unit() const { return tree_ ? tree_->leaf_len : 1; }  // blocks but the last are whole units
  double hash_s() const { return hash_s_; }

  // The head (head_len() bytes, or the whole input when it is shorter).
  void head(const uint8_t* data, uint64_t len) {
    timed([&] { context_->update(data, len); });
  }
  void block(const uint8_t* data, uint64_t len) {
    timed([&] {
      if (!tree_) return context_->update(data, len);
      const uint64_t leaves = len / tree_->leaf_len;
      std::vector<uint8_t>& values = absorber_->next_buffer(leaves * tree_->chaining_value_len);
      leaves_on_->tree_leaves(name_, params_, data, leaves, values.data());
      absorber_->absorb(leaves);
      if (len > leaves * tree_->leaf_len) {  // the tail: the last block's, after every leaf's value
        absorber_->finish();
        context_->update(data + leaves * tree_->leaf_len, len - leaves * tree_->leaf_len);
      }
    });
  }
  std::vector<uint8_t> finish(size_t out_len) {
    if (absorber_) timed([&] { absorber_->finish(); });
    std::vector<uint8_t> digest(out_len);
    context_->finalize(digest.data(), out_len);
    return digest;
  }

 private:
  template <typename Work>
  void timed(Work&& work) {
    const auto began = std::chrono::steady_clock::now();
    work();
    hash_s_ += seconds_since(began);
  }

  std::string name_;
  hash::HashParams params_;
  std::unique_ptr<hash::HashContext> context_;
  std::optional<hash::TreeShape> tree_;
  const Device* leaves_on_ = nullptr;
  double hash_s_ = 0;
  std::optional<ChainingValueAbsorber> absorber_;  // last: it finishes before the node goes
};

// Readers for a GPU's leaves: up to this many, one per core. Sixteen threads read 53-68 GB/s from
// an H200 host's page cache (docs/performance.md, 2026-11-28/29), more than the host link carries;
// each reader holds a page-locked block, so a host of many cores would pin more memory for nothing.
constexpr unsigned kMaxGpuHashReaders = 16;

// The most bytes of adjacent blocks that hash_file hands the hasher in one call: two of the CUDA
// backend's 64 MiB tree segments (keccak_kernels.cu kStagingBytes), which it pipelines.
constexpr uint64_t kHashRunLen = 128 << 20;

unsigned hash_file_readers(const DeviceTraits& leaf_device, bool tree) {
  // A sponge hashes on one core: two readers keep it fed from page cache. A tree's leaves hash
  // on the CPU's pool, eight at a time where it has AVX-512 (hash/keccak_avx512_x8.h: 3-5 GB/s a
  // core, about what a core copies from page cache), so two readers held KT128 of 16 GiB at 9.8
  // GB/s on a 16-thread H200 host (2026-11-30): half the cores read, and a reader waiting for a
  // free slot costs no core. A GPU hashes leaves faster than one core reads, so every core reads.
  // Up to kMaxGpuHashReaders either way.
  const unsigned cores = std::max(std::thread::hardware_concurrency(), 2u);
  if (leaf_device.is_gpu) return std::min(cores, kMaxGpuHashReaders);
  return tree ? std::clamp(cores / 2, 2u, kMaxGpuHashReaders) : 2;
}

}  // namespace

std::vector<uint8_t> hash_file(int fd, uint64_t offset, std::string_view name, const hash::HashParams& params,
                               size_t out_len, const PipelineOptions& options, unsigned readers,
                               FileHashStats* stats) {
  check_digest_memory(out_len);
  const auto start = std::chrono::steady_clock::now();
  BlockHasher hasher(name, params, options);
  const Device& leaves_on = hasher.leaves_on();
  if (readers == 0) readers = hash_file_readers(leaves_on.traits(), hasher.unit() > 1);
  const uint64_t file_len = regular_file_len(fd, false);
  const uint64_t total = file_len > offset ? file_len - offset : 0;
  // A tree hash's head goes to its final node first; the blocks after it are whole leaves (but
  // the last), so that each block's leaves hash in parallel and only the tail is left over.
  // Blocks of options.job_len bytes, else kHashFileBlockLen or a GPU's job length (a transfer that
  // size runs near PCIe speed), whichever is larger.
  const uint64_t head_len = std::min<uint64_t>(hasher.head_len(), total);
  const uint64_t unit = hasher.unit();
  const uint64_t wanted_block_len =
      options.job_len ? options.job_len : std::max<uint64_t>(kHashFileBlockLen, leaves_on.traits().job_len);
  const uint64_t block_len = std::max<uint64_t>(wanted_block_len / unit, 1) * unit;
  if (head_len > 0) {
    std::vector<uint8_t> head(head_len);
    pread_exactly(fd, head.data(), head_len, offset);
    hasher.head(head.data(), head_len);
    secure_zero(head.data(), head_len);
  }
  const Device* host_memory = leaves_on.offers_host_memory() ? &leaves_on : nullptr;
  BlockReader reader(fd, offset + head_len, total - head_len, block_len, std::max(readers, 1u), host_memory);
  // Several blocks per call where they are read and adjacent: a GPU's call of one 16 MiB block
  // took 0.79-0.84 ms on an H200 (20 GB/s: the copy, then a leaves kernel of 2047 leaves, too few
  // to fill the GPU, waiting its whole latency) with or without readers beside it, one call of 1 GiB
  // 20.6 ms (52 GB/s; docs/performance.md, 2026-11-29 twelfth session). A call of kHashRunLen hashes
  // in two of the backend's 64 MiB segments, the second's copy overlapping the first's kernel. At
  // most half the slots, so that the readers fill the rest meanwhile.
  const uint64_t max_run_blocks =
      std::max<uint64_t>(1, std::min<uint64_t>(kHashRunLen / block_len, reader.num_slots() / 2));
  uint64_t done = head_len;
  for (uint64_t block = 0; block < reader.num_blocks();) {
    if (options.cancelled && options.cancelled()) throw engine::Cancelled();
    const BlockReader::Run run = reader.wait(block, max_run_blocks);
    hasher.block(run.data, run.len);
    block += run.blocks;
    reader.done_before(block);
    done += run.len;
    if (options.progress) options.progress(done);
  }
  std::vector<uint8_t> digest = hasher.finish(out_len);
  if (stats != nullptr)
    *stats = {total, seconds_since(start), reader.read_s(), hasher.hash_s(), leaves_on.name().canonical};
  return digest;
}

namespace {

std::vector<uint8_t> hash_in_order(const InputEnd& in, std::string_view name, const hash::HashParams& params,
                                   size_t out_len, const PipelineOptions& options, FileHashStats* stats) {
  check_digest_memory(out_len);
  const auto start = std::chrono::steady_clock::now();
  BlockHasher hasher(name, params, options);
  const uint64_t wanted_block_len = options.job_len ? options.job_len : kHashStreamBlockLen;
  const uint64_t block_len = std::max<uint64_t>(wanted_block_len / hasher.unit(), 1) * hasher.unit();
  StreamBlockReader reader(in, hasher.head_len(), block_len);
  uint64_t done = 0;
  for (bool first = true;; first = false) {
    const ByteSpan block = reader.next(options.cancelled);
    if (block.empty()) break;
    if (first && hasher.head_len() > 0)
      hasher.head(block.data(), block.size());
    else
      hasher.block(block.data(), block.size());
    reader.done();
    done += block.size();
    if (options.progress) options.progress(done);
  }
  std::vector<uint8_t> digest = hasher.finish(out_len);
  if (stats != nullptr)
    *stats = {done, seconds_since(start), reader.read_s(), hasher.hash_s(), hasher.leaves_on().name().canonical};
  return digest;
}


}  // namespace

std::vector<uint8_t> hash_stream_fd(int fd, ByteSpan already_read, bool input_ended, std::string_view name,
                                    const hash::HashParams& params, size_t out_len, const PipelineOptions& options,
                                    FileHashStats* stats) {
  return hash_in_order(InputEnd{fd, -1, already_read, input_ended, {}}, name, params, out_len, options, stats);
}

std::vector<uint8_t> hash_ends(const InputEnd& in, std::string_view name, const hash::HashParams& params,
                               size_t out_len, const PipelineOptions& options, FileHashStats* stats) {
  OutputEnd nowhere;
  nowhere.discard = true;
  if (!ends_by_offset(in, nowhere)) {
    PipelineOptions on_the_cpu = options;  // a stream's blocks come one by one: its leaves stay on the CPU
    on_the_cpu.devices = {"cpu"};
    return hash_in_order(in, name, params, out_len, on_the_cpu, stats);
  }
  FileHashStats run;
  std::vector<uint8_t> digest = hash_file(in.fd, static_cast<uint64_t>(in.offset), name, params, out_len, options, 0, &run);
  seek_to(in.fd, static_cast<uint64_t>(in.offset) + run.bytes, false);
  if (stats != nullptr) *stats = run;
  return digest;
}

}  // namespace gpucrypt::format
