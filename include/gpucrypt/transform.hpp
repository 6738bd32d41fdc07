// transform.hpp: a whole buffer through a raw cipher mode (ECB, CBC, CFB, OFB, CTR) on several
// devices (public beside gpucrypt/scheduler.hpp). Python's stream.transform_into is
// this call; StreamCipher and the file format run their own jobs on the same scheduler.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpucrypt/scheduler.hpp"
#include "gpucrypt/cipher.hpp"

namespace gpucrypt {

struct TransformOptions {
  std::vector<std::string> devices{"cpu"};  // canonical names, checked by the caller (select_devices)
  double cpu_share = -1;                    // < 0: measured shares (gpucrypt/scheduler.hpp)
  uint64_t job_len = 0;                     // bytes per job, rounded down to whole blocks; > 0
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
// whatever create_cipher_stream refuses (key, IV, variant), before any job runs.
engine::SchedulerStats transform_range(const CipherName& name, Direction direction, ByteSpan key, ByteSpan iv,
                                       ByteSpan in, MutableByteSpan out, const TransformOptions& options);

}  // namespace gpucrypt
