// transform.hpp: a whole buffer through a raw cipher mode that takes input in pieces
// (mode_is_stream: every mode but GCM and XTS) on several devices (public beside
// gpucrypt/scheduler.hpp). Python's stream.transform_into is this call, and stream.StreamCipher a
// TransformStream; the file format runs its own jobs on the same scheduler.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpucrypt/scheduler.hpp"
#include "gpucrypt/cipher.hpp"
#include "gpucrypt/device.hpp"

namespace gpucrypt {

struct TransformOptions {
  std::vector<std::string> devices{"cpu"};  // canonical names, checked by the caller (select_devices)
  double cpu_share = -1;                    // < 0: measured shares (gpucrypt/scheduler.hpp)
  uint64_t job_len = 0;                     // bytes per job, rounded down to whole blocks; 0: the default below
  std::string variant;                      // "": each device's default
  size_t depth = 0;                         // jobs in flight; 0: the scheduler's
  unsigned device_workers = 0;              // worker threads per GPU; 0: its traits' (DeviceTraits::workers)
  std::function<bool()> cancelled;          // the scheduler's (engine::Cancelled)
  std::function<void(uint64_t job_bytes)> progress;  // on the calling thread, in order, per job
};

// Encrypts or decrypts `in` into `out` (the same length; out == in works in place, an `out` that
// partially overlaps `in` as if `in` were copied first): jobs of job_len bytes, each reading its
// slice of `in` and writing its slice of `out` on the device the scheduler chose. Parallel
// directions (ECB, CTR, CBC and CFB decryption: modes::is_parallel) spread over every device, each
// job starting at its own IV (modes::range_iv, every job's taken before any runs, so that in place
// no job reads a block an earlier one overwrote); the others run as one job on one device (the
// CPU when it is among them). Output equals one CipherStream over the whole buffer.
// std::invalid_argument for GCM / XTS, unequal lengths, ECB / CBC not a multiple of 16 bytes, and
// whatever create_cipher_stream refuses (key, IV, variant), before any job runs. job_len 0: the
// CPU's own job length (DeviceTraits::job_len) with the CPU among the devices (a 32 MiB job ran at a
// third of an 8 MiB one on a 16-core CPU), else 32 MiB (a GPU's transfer this large runs near PCIe
// speed).
engine::SchedulerStats transform_range(const CipherName& name, Direction direction, ByteSpan key, ByteSpan iv,
                                       ByteSpan in, MutableByteSpan out, const TransformOptions& options);

// Frees a TransformStream's staging buffer: `len` bytes from `host`'s alloc_host, or new[] when none.
struct StagingFree {
  const Device* host = nullptr;
  uint64_t len = 0;
  void operator()(uint8_t* memory) const;
};

// The same jobs over data that arrives in pieces (Python's stream.StreamCipher): update() cuts the
// input into jobs of options.job_len bytes (whole blocks; 0: 4 MiB with the CPU among the devices,
// else 32 MiB), runs them on the scheduler with transform_range's rules (the same per-job IVs, the
// serial directions on one device, one stream for all their jobs) and hands back the output
// ready so far, in order, lagging the input by up to `depth` jobs; finalize() the rest. Output
// equals one CipherStream over everything fed. The input is copied into the stream's staging
// buffers (output is written over them; page-locked, Device::alloc_host, when a GPU among the
// devices offers such memory, so that its copies need no staging of their own), or, when update
// gets `keep`, whole jobs are read in place and `keep` is held until they are done.
// update/finalize/close from several threads run one at a time. Errors as transform_range's, at
// construction; ECB / CBC not a multiple of 16 bytes in all at finalize; any error or
// cancellation ends the stream (close).
class TransformStream {
 public:
  // Where update / finalize put the output: called once per call with the byte count ready (also
  // 0), on the calling thread; returns where to write them.
  using Sink = std::function<MutableByteSpan(uint64_t ready)>;

  TransformStream(const CipherName& name, Direction direction, ByteSpan key, ByteSpan iv, TransformOptions options);
  ~TransformStream();  // close()
  TransformStream(const TransformStream&) = delete;
  TransformStream& operator=(const TransformStream&) = delete;

  void update(ByteSpan data, const Sink& sink, std::shared_ptr<const void> keep = {});
  void finalize(const Sink& sink);
  std::vector<uint8_t> update(ByteSpan data);  // the output ready, as a vector
  std::vector<uint8_t> finalize();
  // Stops the workers (queued jobs dropped), wipes the key and the staging buffers. Idempotent.
  void close() noexcept;
  bool closed() const;
  const std::vector<std::string>& devices() const { return devices_; }  // serial: the one it runs on
  uint64_t job_len() const { return job_len_; }
  engine::SchedulerStats stats() const;  // the scheduler's, final once closed

 private:
  struct Job;
  using Buffer = std::unique_ptr<uint8_t[], StagingFree>;
  Buffer acquire();
  void submit(ByteSpan input, Buffer staged, std::shared_ptr<const void> keep);
  void take_ready(const Sink& sink);
  void close_locked() noexcept;

  CipherName name_;
  Direction direction_;
  std::vector<uint8_t> key_, iv_;
  TransformOptions options_;
  std::vector<std::string> devices_;
  unsigned workers_ = 0;
  bool parallel_ = false;
  const Device* host_memory_ = nullptr;  // the GPU whose page-locked memory the buffers are
  uint64_t job_len_ = 0, offset_ = 0;
  std::array<uint8_t, 16> previous_block_{};  // the last input block submitted (CBC/CFB decryption's next IV)
  std::unique_ptr<CipherStream> serial_;       // the serial directions' one stream, on their one device
  Buffer pending_;                             // input not yet a whole job
  uint64_t pending_len_ = 0;
  std::vector<Buffer> pool_;                   // staging buffers not in use
  std::vector<std::pair<Buffer, uint64_t>> ready_;  // output retired, not yet handed back
  std::unique_ptr<engine::Scheduler> scheduler_;
  engine::SchedulerStats final_stats_;
  bool closed_ = false;
  mutable std::mutex mutex_;
};

}  // namespace gpucrypt
