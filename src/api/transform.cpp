// transform.cpp: transform_range and TransformStream (transform.hpp), the jobs of Python's
// stream.transform_into and stream.StreamCipher.
#include "gpucrypt/transform.hpp"

#include <algorithm>
#include <cctype>
#include <array>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "base/names.hpp"
#include "gpucrypt/device.hpp"
#include "modes/mode_rules.hpp"

namespace gpucrypt {

namespace {

// What both entry points run on: parallel directions on every device as asked; the serial ones
// on one device (the CPU when it is among them) with one worker, so that their jobs run in order.
struct JobPlan {
  bool parallel = false;
  std::vector<std::string> devices;
  double cpu_share = -1;
  unsigned cpu_workers = 0, gpu_workers = 0;  // 0: the device's traits'
};

// The first device that is not a GPU (the CPU), or `devices.end()`.
std::vector<std::string>::const_iterator first_host(const std::vector<std::string>& devices) {
  return std::find_if(devices.begin(), devices.end(), [](const std::string& d) { return !device_traits(d).is_gpu; });
}

// A job length the caller asked for, in whole blocks, at least one.
uint64_t whole_blocks(uint64_t job_len) { return std::max<uint64_t>(16, job_len - job_len % 16); }

// A named variant that `device_name` (not the CPU) cannot run for `name`: refused by that device's
// own list of variants, before any job (a GPU's or OpenCL device's variants are not the CPU's:
// aes_bitsliced8, aes_ttable_local).
void check_variant_on(const std::string& device_name, const CipherName& name, const std::string& variant) {
  const std::string algorithm(algorithm_name(name.algorithm)), mode(mode_name(name.mode));
  std::string known;
  for (const VariantInfo& v : device(device_name).variants()) {
    if (v.algorithm != algorithm) continue;
    if (v.name == variant && (v.only_mode.empty() || v.only_mode == mode)) return;
    known += (known.empty() ? "" : ", ") + v.name;
  }
  throw std::invalid_argument("variant '" + variant + "' does not run " + name.canonical + " on " + device_name +
                              " (its " + algorithm + " variants: " + (known.empty() ? "none" : known) + ")");
}

// The refusals both share (before any job runs) and the plan.
JobPlan plan_jobs(const CipherName& name, Direction direction, ByteSpan key, ByteSpan iv,
                  const TransformOptions& options) {
  if (!modes::is_stream(name.mode)) {
    std::string stream_modes;  // "ECB/CBC/CFB/OFB/CTR", as the modes' names are written in prose
    for (Mode mode : list_modes())
      if (modes::is_stream(mode))
        for (char c : (stream_modes.empty() ? "" : "/") + std::string(mode_name(mode)))
          stream_modes += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    throw std::invalid_argument(name.canonical + ": streams are for " + stream_modes +
                                "; use AEAD or the file format for GCM and Cipher for an XTS data unit");
  }
  // Key, IV and variant errors, here: the CPU's stream checks all three (with the variant, when
  // the CPU is among the devices); every other device checks the variant against its own list.
  const bool cpu_chosen = std::find(options.devices.begin(), options.devices.end(), "cpu") != options.devices.end();
  create_cipher_stream(name, direction, key, iv, cpu_chosen ? options.variant : "", "cpu");
  if (!options.variant.empty())
    for (const std::string& d : options.devices)
      if (d != "cpu") check_variant_on(d, name, options.variant);
  JobPlan plan{modes::is_parallel(name.mode, direction), options.devices, options.cpu_share, 0, options.device_workers};
  if (!plan.parallel) {
    const auto host = first_host(plan.devices);
    plan.devices = {host != plan.devices.end() ? *host : plan.devices.at(0)};
    plan.cpu_share = -1;
    plan.cpu_workers = plan.gpu_workers = 1;
  }
  return plan;
}

// The kind of work a transform's measured device set is kept for (SchedulerOptions::remember_as):
// what each device's job costs depends on the cipher, direction, variant, job length and buffers.
std::string work_of(const char* what, const CipherName& name, Direction direction, const TransformOptions& options,
                    uint64_t job_len, const std::string& buffers) {
  return std::string(what) + " " + name.canonical + (direction == Direction::encrypt ? " encrypt " : " decrypt ") +
         (options.variant.empty() ? "default" : options.variant) + " job " + std::to_string(job_len) + buffers;
}

// `work`: the kind of work the measured device set is kept for (work_of).
std::unique_ptr<engine::Scheduler> new_scheduler(const JobPlan& plan, const TransformOptions& options,
                                                 const std::string& work) {
  engine::SchedulerOptions scheduling;
  scheduling.cpu_share = plan.cpu_share;
  scheduling.depth = options.depth;
  scheduling.cancelled = options.cancelled;
  scheduling.remember_as = work;
  return std::make_unique<engine::Scheduler>(scheduler_devices(plan.devices, plan.cpu_workers, plan.gpu_workers),
                                             scheduling);
}

// The IV of the job that starts at byte `offset` of a parallel direction (not ECB): the stream's
// own counter moved on, or (CBC/CFB decryption) the input block before the job, which the caller
// takes before any job can overwrite it in place. False where the job runs from `iv` as given.
bool job_iv(const CipherName& name, bool parallel, ByteSpan iv, uint64_t offset, const uint8_t* previous_block,
            std::array<uint8_t, 16>& out) {
  if (!parallel || name.mode == Mode::ecb || iv.size() != 16) return false;
  modes::range_iv(name.mode, iv.data(), offset / 16, offset ? previous_block : nullptr, out.data());
  return true;
}

// One job on the device the scheduler chose, recorded under it.
void run_job(engine::Scheduler& scheduler, const std::string& device, CipherStream& stream, const uint8_t* in,
             uint8_t* out, uint64_t count) {
  stream.update(in, out, count);
  scheduler.record_run(device, stream.variant().name, 0, 0, 0);
}

}  // namespace

engine::SchedulerStats transform_range(const CipherName& name, Direction direction, ByteSpan key, ByteSpan iv,
                                       ByteSpan in, MutableByteSpan out, const TransformOptions& options) {
  if (out.size() != in.size())
    throw std::invalid_argument("out has " + std::to_string(out.size()) + " bytes for " + std::to_string(in.size()) +
                                " bytes of input");
  modes::check_whole_blocks(name, in.size());
  const JobPlan plan = plan_jobs(name, direction, key, iv, options);
  const bool with_cpu = first_host(plan.devices) != plan.devices.end();
  const uint64_t bulk_job_len = options.job_len ? options.job_len : with_cpu ? device_traits("cpu").job_len : 32u << 20;
  // An `out` that overlaps `in` without being it (a shifted view of one buffer): a job's output
  // would overwrite input that a later job, or another device, has yet to read. The jobs read a
  // copy instead, wiped after.
  std::optional<WipedCopy> copy;
  if (partially_overlapping(in.data(), out.data(), in.size())) {
    copy.emplace(in.data(), in.size());
    in = ByteSpan(copy->data(), in.size());
  }
  const uint64_t size = in.size();
  // The serial directions: one job, one stream.
  const uint64_t job_len = plan.parallel ? whole_blocks(bulk_job_len) : std::max<uint64_t>(size, 16);
  const uint64_t num_jobs = (size + job_len - 1) / job_len;
  // Each job's IV, taken now: CBC/CFB decryption's is the ciphertext block before the job, which in
  // place an earlier job may overwrite before a later one starts.
  std::vector<std::array<uint8_t, 16>> job_ivs(num_jobs);
  std::vector<bool> own_iv(num_jobs);
  for (uint64_t j = 0; j < num_jobs; ++j) {
    const uint64_t offset = j * job_len;
    own_iv[j] = job_iv(name, plan.parallel, iv, offset, offset ? in.data() + offset - 16 : nullptr, job_ivs[j]);
  }
  // The kind of work (work_of): whether a GPU copies each buffer directly (page-locked) or through
  // staging copies on the host's cores is what most changes which devices are worth running. Only a
  // run that measures its device set needs it: asking CUDA about each buffer costs a small call on
  // one device for nothing. The scheduler comes after `copy`: its workers stop before `copy` goes.
  const auto kind = [&](const void* memory) {
    return std::string(directly_copied(plan.devices, memory, size) ? " page-locked" : " pageable");
  };
  auto scheduler = new_scheduler(plan, options,
                                 engine::measures_device_set(plan.devices.size(), plan.cpu_share)
                                     ? work_of("transform", name, direction, options, job_len,
                                               kind(in.data()) + kind(out.data()))
                                     : std::string());
  for (uint64_t j = 0; j < num_jobs; ++j) {
    const uint64_t offset = j * job_len, count = std::min(job_len, size - offset);
    const ByteSpan start_iv = own_iv[j] ? ByteSpan(job_ivs[j].data(), 16) : iv;
    scheduler->submit(
        count,
        [&, offset, count, start_iv](const std::string& device) {
          auto stream = create_cipher_stream(name, direction, key, start_iv, options.variant, device);
          run_job(*scheduler, device, *stream, in.data() + offset, out.data() + offset, count);
        },
        [&options, count] {
          if (options.progress) options.progress(count);
        });
  }
  scheduler->drain();
  return scheduler->stats();
}

// ----------------------------------------------------------------------------- TransformStream

struct TransformStream::Job {
  Buffer buffer;  // the output, and the input when it was staged
  const uint8_t* input = nullptr;
  uint64_t count = 0;
  std::array<uint8_t, 16> iv{};
  bool own_iv = false;
  std::shared_ptr<const void> keep;
  ~Job() {  // a job dropped by close(): its staged input or output goes with it
    if (buffer) secure_zero(buffer.get(), count);
  }
};

TransformStream::TransformStream(const CipherName& name, Direction direction, ByteSpan key, ByteSpan iv,
                                 TransformOptions options)
    : name_(name), direction_(direction), key_(key.begin(), key.end()), iv_(iv.begin(), iv.end()),
      options_(std::move(options)) {
  const JobPlan plan = plan_jobs(name_, direction_, key, iv, options_);
  parallel_ = plan.parallel;
  devices_ = plan.devices;
  const bool with_cpu = first_host(devices_) != devices_.end();
  // 4 MiB keeps the output's lag behind the input short; GPU-only streams take GPU-sized jobs.
  job_len_ = options_.job_len ? whole_blocks(options_.job_len) : (with_cpu ? 4u << 20 : 32u << 20);
  host_memory_ = host_memory_device(devices_);
  scheduler_ = new_scheduler(plan, options_,
                             work_of("transform stream", name_, direction_, options_, job_len_,
                                     host_memory_ ? " page-locked" : " pageable"));
}

void StagingFree::operator()(uint8_t* memory) const {
  if (host)
    host->free_host(memory, len);  // zeroes first
  else
    delete[] memory;
}

TransformStream::~TransformStream() { close(); }

TransformStream::Buffer TransformStream::acquire() {
  if (pool_.empty()) {
    if (host_memory_)
      return Buffer(static_cast<uint8_t*>(host_memory_->alloc_host(job_len_)), {host_memory_, job_len_});
    return Buffer(new uint8_t[job_len_], {nullptr, job_len_});
  }
  Buffer buffer = std::move(pool_.back());
  pool_.pop_back();
  return buffer;
}

void TransformStream::submit(ByteSpan input, Buffer staged, std::shared_ptr<const void> keep) {
  auto job = std::make_shared<Job>();
  job->count = input.size();
  job->buffer = staged ? std::move(staged) : acquire();
  job->input = input.data();
  job->keep = std::move(keep);
  job->own_iv = job_iv(name_, parallel_, iv_, offset_, previous_block_.data(), job->iv);
  if (input.size() >= 16) std::memcpy(previous_block_.data(), input.data() + input.size() - 16, 16);
  offset_ += input.size();
  scheduler_->submit(
      job->count,
      [this, job](const std::string& device) {
        if (!parallel_) {
          if (!serial_) serial_ = create_cipher_stream(name_, direction_, key_, iv_, options_.variant, device);
          run_job(*scheduler_, device, *serial_, job->input, job->buffer.get(), job->count);
          return;
        }
        const ByteSpan start_iv = job->own_iv ? ByteSpan(job->iv.data(), 16) : ByteSpan(iv_);
        auto stream = create_cipher_stream(name_, direction_, key_, start_iv, options_.variant, device);
        run_job(*scheduler_, device, *stream, job->input, job->buffer.get(), job->count);
      },
      [this, job] {
        job->keep.reset();
        ready_.emplace_back(std::move(job->buffer), job->count);
        if (options_.progress) options_.progress(job->count);
      });
}

void TransformStream::take_ready(const Sink& sink) {
  uint64_t total = 0;
  for (const auto& [buffer, count] : ready_) total += count;
  const MutableByteSpan out = sink(total);
  uint64_t position = 0;
  for (auto& [buffer, count] : ready_) {
    std::memcpy(out.data() + position, buffer.get(), count);
    position += count;
    pool_.push_back(std::move(buffer));
  }
  ready_.clear();
}

void TransformStream::update(ByteSpan data, const Sink& sink, std::shared_ptr<const void> keep) {
  std::lock_guard lock(mutex_);
  if (closed_) throw std::invalid_argument("stream already finalized");
  try {
    size_t position = 0;
    if (pending_len_) {
      const size_t take = std::min<uint64_t>(data.size(), job_len_ - pending_len_);
      std::memcpy(pending_.get() + pending_len_, data.data(), take);
      pending_len_ += take;
      position = take;
      if (pending_len_ == job_len_) {
        pending_len_ = 0;
        Buffer full = std::move(pending_);
        const uint8_t* staged = full.get();
        submit(ByteSpan(staged, job_len_), std::move(full), {});
      }
    }
    for (; data.size() - position >= job_len_; position += job_len_) {
      if (keep) {
        submit(data.subspan(position, job_len_), Buffer(nullptr, {}), keep);
      } else {
        Buffer staged = acquire();
        std::memcpy(staged.get(), data.data() + position, job_len_);
        const uint8_t* input = staged.get();
        submit(ByteSpan(input, job_len_), std::move(staged), {});
      }
    }
    if (position < data.size()) {
      if (!pending_) pending_ = acquire();
      std::memcpy(pending_.get() + pending_len_, data.data() + position, data.size() - position);
      pending_len_ += data.size() - position;
    }
  } catch (...) {
    close_locked();
    throw;
  }
  take_ready(sink);
}

void TransformStream::finalize(const Sink& sink) {
  std::lock_guard lock(mutex_);
  if (closed_) throw std::invalid_argument("stream already finalized");
  try {
    modes::check_whole_blocks(name_, offset_ + pending_len_, " in all");
    if (pending_len_) {
      Buffer last = std::move(pending_);
      const uint8_t* staged = last.get();
      submit(ByteSpan(staged, pending_len_), std::move(last), {});
      pending_len_ = 0;
    }
    scheduler_->drain();
    take_ready(sink);
  } catch (...) {
    close_locked();
    throw;
  }
  close_locked();
}

std::vector<uint8_t> TransformStream::update(ByteSpan data) {
  std::vector<uint8_t> out;
  update(data, [&out](uint64_t ready) {
    out.resize(ready);
    return MutableByteSpan(out.data(), out.size());
  });
  return out;
}

std::vector<uint8_t> TransformStream::finalize() {
  std::vector<uint8_t> out;
  finalize([&out](uint64_t ready) {
    out.resize(ready);
    return MutableByteSpan(out.data(), out.size());
  });
  return out;
}

void TransformStream::close() noexcept {
  std::lock_guard lock(mutex_);
  close_locked();
}

void TransformStream::close_locked() noexcept {
  if (closed_) return;
  closed_ = true;
  scheduler_->stop();
  final_stats_ = scheduler_->stats();
  scheduler_.reset();  // drops the queued jobs and what they keep
  serial_.reset();
  secure_zero(key_.data(), key_.size());
  if (pending_) secure_zero(pending_.get(), job_len_);
  for (Buffer& buffer : pool_) secure_zero(buffer.get(), job_len_);
  pool_.clear();
  for (auto& [buffer, count] : ready_) secure_zero(buffer.get(), count);  // output never handed back (an error)
  ready_.clear();
  pending_.reset();
}

bool TransformStream::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

engine::SchedulerStats TransformStream::stats() const {
  std::lock_guard lock(mutex_);
  return closed_ ? final_stats_ : scheduler_->stats();
}

}  // namespace gpucrypt
