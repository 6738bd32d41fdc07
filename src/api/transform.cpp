// transform.cpp: transform_range (transform.hpp), the jobs of Python's stream.transform_into.
#include "gpucrypt/transform.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "base/names.hpp"
#include "gpucrypt/device.hpp"
#include "modes/mode_rules.hpp"

namespace gpucrypt {

engine::SchedulerStats transform_range(const CipherName& name, Direction direction, ByteSpan key, ByteSpan iv,
                                       ByteSpan in, MutableByteSpan out, const TransformOptions& options) {
  if (name.mode == Mode::gcm || name.mode == Mode::xts)
    throw std::invalid_argument(name.canonical + ": transform_into is for ECB/CBC/CFB/OFB/CTR");
  if (out.size() != in.size())
    throw std::invalid_argument("out has " + std::to_string(out.size()) + " bytes for " + std::to_string(in.size()) +
                                " bytes of input");
  if ((name.mode == Mode::ecb || name.mode == Mode::cbc) && in.size() % 16)
    throw std::invalid_argument(name.canonical + " without padding needs a multiple of 16 bytes");
  if (options.job_len == 0) throw std::invalid_argument("transform_range: job_len must be positive");
  create_cipher_stream(name, direction, key, iv, options.variant, "cpu");  // key, IV and variant errors, here
  // An `out` that overlaps `in` without being it (a shifted view of one buffer): a job's output
  // would overwrite input that a later job, or another device, has yet to read. The jobs read a
  // copy instead, wiped after.
  std::vector<uint8_t> copy;
  struct Wipe {
    std::vector<uint8_t>& bytes;
    ~Wipe() { secure_zero(bytes.data(), bytes.size()); }
  } wipe{copy};
  if (partially_overlapping(in.data(), out.data(), in.size())) {
    copy.assign(in.begin(), in.end());
    in = ByteSpan(copy.data(), copy.size());
  }
  const bool parallel = modes::is_parallel(name.mode, direction);
  std::vector<std::string> devices = options.devices;
  double cpu_share = options.cpu_share;
  uint64_t job_len = std::max<uint64_t>(16, options.job_len - options.job_len % 16);
  if (!parallel) {  // one stream on one device: the CPU when it is among them
    const auto host = std::find_if(devices.begin(), devices.end(),
                                   [](const std::string& d) { return !device_traits(d).is_gpu; });
    devices = {host != devices.end() ? *host : devices.at(0)};
    cpu_share = -1;
    job_len = std::max<uint64_t>(in.size(), 16);
  }
  const uint64_t size = in.size();
  const uint64_t num_jobs = (size + job_len - 1) / job_len;
  // Each job's IV, taken now: CBC/CFB decryption's is the ciphertext block before the job, which in
  // place an earlier job may overwrite before a later one starts.
  std::vector<std::array<uint8_t, 16>> job_ivs;
  const bool own_ivs = parallel && name.mode != Mode::ecb && iv.size() == 16;
  for (uint64_t j = 0; own_ivs && j < num_jobs; ++j) {
    const uint64_t offset = j * job_len;
    job_ivs.emplace_back();
    modes::range_iv(name.mode, iv.data(), offset / 16, offset ? in.data() + offset - 16 : nullptr,
                    job_ivs.back().data());
  }
  engine::SchedulerOptions scheduling;
  scheduling.cpu_share = cpu_share;
  scheduling.depth = options.depth;
  scheduling.cancelled = options.cancelled;
  engine::Scheduler scheduler(scheduler_devices(devices, 0, options.device_workers), scheduling);  // after `wipe`: its workers stop before `copy` goes
  for (uint64_t j = 0; j < num_jobs; ++j) {
    const uint64_t offset = j * job_len, count = std::min(job_len, size - offset);
    const ByteSpan job_iv = own_ivs ? ByteSpan(job_ivs[j].data(), 16) : iv;
    scheduler.submit(
        count,
        [&, offset, count, job_iv](const std::string& device) {
          auto stream = create_cipher_stream(name, direction, key, job_iv, options.variant, device);
          stream->update(in.data() + offset, out.data() + offset, count);
          scheduler.record_run(device, stream->variant().name, 0, 0, 0);
        },
        [&options, count] {
          if (options.progress) options.progress(count);
        });
  }
  scheduler.drain();
  return scheduler.stats();
}

}  // namespace gpucrypt
