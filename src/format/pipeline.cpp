// pipeline.cpp: the file format memory to memory, on several devices at once (format.hpp:
// seal_body / open_body / seal_buffer / open_buffer), and the same fed job by job from a stream
// (ChunkStream).
//
// A file's chunks are cut into jobs of whole chunks; each job is one seal_chunks / open_chunks
// call on the device the scheduler (include/gpucrypt/scheduler.hpp) chooses, reading and writing its
// own subspans of the caller's buffers. Nothing is copied here: the CUDA batch executor copies
// straight between page-locked caller memory and the GPU, and the three workers of a GPU overlap
// one job's copy in, another's kernels and a third's copy out.
//
// Constant-time: as format.cpp (the chunks' variant is the device's constant-time choice unless
// the caller names one); branches depend on lengths and chunk indices only.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "base/names.hpp"
#include "gpucrypt/device.hpp"
#include "gpucrypt/format.hpp"
#include "gpucrypt/scheduler.hpp"
#include "format/pipeline_internal.hpp"

namespace gpucrypt::format {

using detail::WipeOnExit;

namespace {

// The shape of the format's GPU pipeline, measured on an H200 sealing 1 GiB from page-locked into
// page-locked memory (bench/results/h200-2026-11-25-format-pipeline-shapes.json): 6 workers with
// 16 MiB jobs 42.5 GB/s, against 33.1 for the stream engine's 3 workers with 32 MiB. A job is
// one batch call that copies in, runs its kernels and copies out in turn, so several jobs in
// flight are what keep both copy engines busy. Larger jobs (64-128 MiB) lost: the first copy in
// and the last copy out, which nothing overlaps, grow with them. Since the batch's GCM runs in
// tiles (a 16 MiB job's kernels take 0.25 ms), a sweep gave 6 x 8 MiB 39.7 GB/s against 35.1 for
// 6 x 16 MiB and 25 with 12 workers (h200-2026-11-26-s3-format-shapes.json, one run): the jobs
// contend with each other, not for the SMs (docs/performance.md, 2026-11-26 third session). With
// one host wait per job instead of four (2026-11-27) 6 x 16 MiB and 6 x 8 MiB both ran at 40-42
// GB/s, 0.90x the raw CTR stream, under a link that moves 101 GB/s both ways at once. 16 MiB is
// a GPU's own job length (DeviceTraits::job_len, default_job_len below); the workers are the
// format's own.
constexpr unsigned kGpuWorkers = 6;

bool overlap(ByteSpan a, ByteSpan b) { return ranges_overlap(a.data(), a.size(), b.data(), b.size()); }

std::string bytes_text(uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

// The checks every pipeline (seal_body, open_body, ChunkStream) makes of its key and chunk length.
void check_key_and_chunk_len(const char* function, ByteSpan payload_key, uint32_t chunk_len) {
  if (payload_key.size() != kKeyLen)
    throw std::invalid_argument(std::string(function) + ": the payload key is " + std::to_string(kKeyLen) +
                                " bytes, got " + std::to_string(payload_key.size()));
  check_chunk_len(chunk_len);
}

// The checks seal_body and open_body share; `input` and `output` are the spans the jobs use.
void check_pipeline_arguments(const char* function, ByteSpan payload_key, const Layout& layout, ByteSpan input,
                              ByteSpan output) {
  check_key_and_chunk_len(function, payload_key, layout.chunk_len);
  if (overlap(input, output))
    throw std::invalid_argument(std::string(function) +
                                ": the input and output buffers overlap (in place is not supported: each chunk's "
                                "tag shifts the chunks after it)");
}

// Workers per GPU: kGpuWorkers unless GPUCRYPT_GPU_WORKERS (1..16) says otherwise, a
// knob for measuring the pipeline's shape on a new machine (bench/format_bench.py --sweep).
unsigned gpu_workers(unsigned fallback) {
  const char* text = std::getenv("GPUCRYPT_GPU_WORKERS");
  if (text == nullptr || *text == 0) return fallback;
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  if (*end != 0 || n < 1 || n > 16)
    throw std::invalid_argument(std::string("GPUCRYPT_GPU_WORKERS must be 1..16, got '") + text + "'");
  return static_cast<unsigned>(n);
}

using ChunkJob = std::function<ChunkRun(uint64_t first, uint64_t count, const std::string& device)>;


// The pipeline's devices for the scheduler: their traits, kGpuWorkers (or GPUCRYPT_GPU_WORKERS)
// per GPU.
std::vector<engine::SchedulerDevice> scheduled_devices(const PipelineOptions& options) {
  return scheduler_devices(options.devices, 0, detail::pipeline_gpu_workers());
}

// Whole chunks per job: about options.job_len input bytes (unit_len input bytes per chunk).
uint64_t chunks_per_job_of(const PipelineOptions& options, uint64_t unit_len) {
  const uint64_t job_len = options.job_len ? options.job_len : default_job_len(options.devices);
  return std::clamp<uint64_t>(job_len / unit_len, 1, kMaxChunksPerJob);
}

// Runs every chunk of `layout` as jobs of whole chunks of about options.job_len input bytes
// (unit_len input bytes per chunk: plaintext when sealing, sealed when opening). done_chunks
// counts the chunks retired, in order; `work` names the kind of work (detail::scheduling_of). When
// this returns or throws, no job runs any more (the scheduler's destructor lets running jobs
// finish and drops queued ones).
PipelineStats run_pipeline(const Layout& layout, bool sealed_input, const PipelineOptions& options,
                           const ChunkJob& run_job, uint64_t& done_chunks, const std::string& work) {
  engine::Scheduler scheduler(scheduled_devices(options), detail::scheduling_of(options, work));
  const uint64_t unit_len = layout.chunk_len + (sealed_input ? kTagLen : 0);
  const uint64_t chunks_per_job = chunks_per_job_of(options, unit_len);
  const uint64_t num_chunks = layout.num_chunks();
  for (uint64_t first = 0; first < num_chunks; first += chunks_per_job) {
    const uint64_t count = std::min(chunks_per_job, num_chunks - first);
    const uint64_t input_len = (sealed_input ? layout.sealed_range(first, count) : layout.plaintext_range(first, count)).second;
    scheduler.submit(
        input_len,
        [&, first, count](const std::string& device) {
          const ChunkRun run = run_job(first, count, device);
          scheduler.record_run(device, run.variant, run.h2d_s, run.compute_s, run.d2h_s);
        },
        [&, first, count] {
          done_chunks = first + count;
          if (options.progress) options.progress(layout.plaintext_range(0, done_chunks).second);
        });
  }
  scheduler.drain();
  return detail::stats_of(scheduler.stats());
}

}  // namespace

unsigned detail::pipeline_gpu_workers() { return gpu_workers(kGpuWorkers); }

namespace {
// The kind of work a pipeline's measured device set is kept for: the operation, the AES variant and
// the job length decide how fast each device runs a job (the devices themselves are in the
// scheduler's key too).
std::string remember_as_of(const PipelineOptions& options, const std::string& work) {
  return work + " " + (options.variant.empty() ? "default" : options.variant) + " job " + std::to_string(options.job_len);
}
}  // namespace

engine::SchedulerOptions detail::scheduling_of(const PipelineOptions& options, const std::string& work) {
  engine::SchedulerOptions scheduling;
  scheduling.cpu_share = options.cpu_share;
  scheduling.cancelled = options.cancelled;
  scheduling.remember_as = remember_as_of(options, work);
  if (options.automatic) scheduling.machine = machine_description();
  return scheduling;
}

std::optional<std::vector<std::string>> detail::kept_without_gpus(const PipelineOptions& options, const std::string& work) {
  const auto kept = engine::machine_decision(remember_as_of(options, work), machine_description());
  if (!kept) return std::nullopt;
  try {
    for (size_t i = 0; i < kept->devices.size(); ++i)
      if (kept->in_use[i] && device_traits(kept->devices[i]).is_gpu) return std::nullopt;
  } catch (const std::exception&) {  // a device kind this build does not have: not this build's store
    return std::nullopt;
  }
  return kept->devices;
}

PipelineOptions detail::resolved(PipelineOptions options, const std::string& work) {
  if (!options.automatic) return options;
  // Where this machine's kept set for the work leaves every GPU out, the devices it was measured
  // with are named (the scheduler then starts on that set, as that run's key needs) and no GPU is
  // listed or started: CUDA's driver alone costs ~0.4 s of a command on a 2-H200 host.
  if (auto devices = kept_without_gpus(options, work)) {
    options.devices = std::move(*devices);
    options.cpu_share = -1;
    return options;
  }
  const DeviceSelection selection = select_devices("auto");
  options.devices = selection.devices;
  options.cpu_share = selection.cpu_share;
  return options;
}

PipelineStats detail::stats_of(const engine::SchedulerStats& scheduled) {
  PipelineStats stats;
  for (const auto& d : scheduled.devices)
    stats.devices.push_back({d.name, d.jobs, d.bytes, d.busy_s, d.variant, d.h2d_s, d.compute_s, d.d2h_s});
  stats.wall_s = scheduled.wall_s;
  stats.wait_s = scheduled.wait_s;
  stats.device_choice = scheduled.device_choice;
  return stats;
}


uint64_t default_job_len(const std::vector<std::string>& devices) {
  // Each device's own (DeviceTraits::job_len): the smallest, so that a CPU among GPUs gets jobs it
  // runs well; with no device, the CPU's.
  uint64_t job_len = devices.empty() ? device_traits("cpu").job_len : UINT64_MAX;
  for (const std::string& name : devices) job_len = std::min(job_len, device_traits(name).job_len);
  return job_len;
}

DeviceSelection buffer_devices(ByteSpan in, ByteSpan out) {
  const std::vector<std::string> gpus = auto_gpus();
  if (!gpus.empty() && directly_copied(gpus, in.data(), in.size()) && directly_copied(gpus, out.data(), out.size()))
    return {gpus, 0.0};
  return {{"cpu"}, 1.0};
}

namespace {
// The kind of work a body's device set is kept for: whether a GPU copies each buffer directly
// (page-locked) or through staging copies on the host's cores, which is what most changes the answer.
// Asked of CUDA only where the set is measured.
std::string body_work(const char* operation, const PipelineOptions& options, ByteSpan in, ByteSpan out) {
  if (!engine::measures_device_set(options.devices.size(), options.cpu_share)) return operation;
  const auto kind = [&](ByteSpan memory) {
    return directly_copied(options.devices, memory.data(), memory.size()) ? " page-locked" : " pageable";
  };
  return std::string(operation) + kind(in) + kind(out);
}
}  // namespace

PipelineStats seal_body(ByteSpan payload_key, const Layout& layout, ByteSpan plaintext, MutableByteSpan body,
                        const PipelineOptions& options) {
  const uint64_t body_len = layout.file_len() - kHeaderLen;
  if (plaintext.size() != layout.plaintext_len)
    throw std::invalid_argument("seal_body: the plaintext is " + bytes_text(plaintext.size()) + ", the layout says " +
                                bytes_text(layout.plaintext_len));
  if (body.size() < body_len)
    throw std::invalid_argument("seal_body: the output holds " + bytes_text(body.size()) + ", the sealed chunks need " +
                                bytes_text(body_len));
  body = body.first(body_len);
  check_pipeline_arguments("seal_body", payload_key, layout, plaintext, body);
  uint64_t done_chunks = 0;
  return run_pipeline(
      layout, false, options,
      [&](uint64_t first, uint64_t count, const std::string& device) {
        const auto [in_at, in_len] = layout.plaintext_range(first, count);
        const auto [out_at, out_len] = layout.sealed_range(first, count);
        return seal_chunks(payload_key, layout, first, count, plaintext.subspan(in_at, in_len),
                           body.subspan(out_at - kHeaderLen, out_len), device, options.variant);
      },
      done_chunks, body_work("format body seal", options, plaintext, body));
}

PipelineStats open_body(ByteSpan payload_key, const Layout& layout, ByteSpan body, MutableByteSpan plaintext,
                        const PipelineOptions& options) {
  const uint64_t body_len = layout.file_len() - kHeaderLen;
  if (body.size() != body_len)
    throw std::invalid_argument("open_body: the sealed body is " + bytes_text(body.size()) + ", the layout says " +
                                bytes_text(body_len));
  if (plaintext.size() < layout.plaintext_len)
    throw std::invalid_argument("open_body: the output holds " + bytes_text(plaintext.size()) +
                                ", the plaintext needs " + bytes_text(layout.plaintext_len));
  plaintext = plaintext.first(layout.plaintext_len);
  check_pipeline_arguments("open_body", payload_key, layout, body, plaintext);
  uint64_t done_chunks = 0;
  // Whatever goes wrong, the output keeps only plaintext that authenticated, in order: every
  // byte after it is zeroed (no plaintext of a chunk after a failed one survives).
  const auto keep_prefix = [&](uint64_t num_chunks) {
    const uint64_t kept = layout.plaintext_range(0, std::min(num_chunks, layout.num_chunks())).second;
    secure_zero(plaintext.data() + kept, plaintext.size() - kept);
    return kept;
  };
  try {
    return run_pipeline(
        layout, true, options,
        [&](uint64_t first, uint64_t count, const std::string& device) {
          const auto [in_at, in_len] = layout.sealed_range(first, count);
          const auto [out_at, out_len] = layout.plaintext_range(first, count);
          return open_chunks(payload_key, layout, first, count, body.subspan(in_at - kHeaderLen, in_len),
                             plaintext.subspan(out_at, out_len), device, options.variant);
        },
        done_chunks, body_work("format body open", options, body, plaintext));
  } catch (DecryptionError& failure) {
    // The first failure in file order: the jobs before it retired, the chunks before it in its
    // own job authenticated.
    failure.released_len = keep_prefix(failure.chunk_index);
    throw;
  } catch (...) {
    keep_prefix(done_chunks);
    throw;
  }
}

uint64_t seal_buffer(ByteSpan key, ByteSpan plaintext, MutableByteSpan out, uint32_t chunk_len,
                     const PipelineOptions& options, PipelineStats* stats) {
  check_chunk_len(chunk_len);
  const Layout layout{chunk_len, plaintext.size()};
  if (out.size() < layout.file_len())
    throw std::invalid_argument("seal_buffer: the output holds " + bytes_text(out.size()) + ", the file needs " +
                                bytes_text(layout.file_len()));
  out = out.first(layout.file_len());
  if (overlap(plaintext, out))
    throw std::invalid_argument("seal_buffer: the input and output buffers overlap (in place is not supported)");
  uint8_t payload_key[kKeyLen];
  WipeOnExit wipe{payload_key};
  const std::vector<uint8_t> header = build_header_with_key(key, chunk_len, payload_key);
  PipelineStats run = seal_body(ByteSpan(payload_key, kKeyLen), layout, plaintext, out.subspan(kHeaderLen), options);
  std::memcpy(out.data(), header.data(), kHeaderLen);  // last: a failed seal leaves no valid-looking header
  if (stats) *stats = std::move(run);
  return layout.file_len();
}

std::vector<uint8_t> seal_buffer(ByteSpan key, ByteSpan plaintext, uint32_t chunk_len, const PipelineOptions& options,
                                 PipelineStats* stats) {
  check_chunk_len(chunk_len);
  std::vector<uint8_t> file(Layout{chunk_len, plaintext.size()}.file_len());
  seal_buffer(key, plaintext, file, chunk_len, options, stats);
  return file;
}

uint64_t open_buffer(ByteSpan key, ByteSpan file, MutableByteSpan out, const PipelineOptions& options,
                     PipelineStats* stats) {
  uint8_t payload_key[kKeyLen];
  WipeOnExit wipe{payload_key};
  const uint32_t chunk_len = open_header_with_key(file, key, payload_key);
  const Layout layout = layout_for_file(file.size(), chunk_len);
  if (out.size() < layout.plaintext_len)
    throw std::invalid_argument("open_buffer: the output holds " + bytes_text(out.size()) + ", the plaintext needs " +
                                bytes_text(layout.plaintext_len));
  if (overlap(file, out.first(layout.plaintext_len)))
    throw std::invalid_argument("open_buffer: the input and output buffers overlap (in place is not supported)");
  PipelineStats run = open_body(ByteSpan(payload_key, kKeyLen), layout, file.subspan(kHeaderLen),
                                out.first(layout.plaintext_len), options);
  if (stats) *stats = std::move(run);
  return layout.plaintext_len;
}


// ---- ChunkStream ----------------------------------------------------------------------------------

namespace {

// The end of an input being opened, as its last job finds it: the final chunk, or why there is none.
enum class StreamEnd { more, final_chunk, missing, short_tag };

}  // namespace

struct ChunkStream::Impl {
  Operation operation;
  uint8_t payload_key[kKeyLen];
  uint32_t chunk_len;
  PipelineOptions options;
  Retire retire;
  uint64_t unit_len, chunks_per_job;
  uint64_t next_index = 0;    // the first chunk of the next job
  uint64_t released_len = 0;  // output bytes retired (opening: authenticated plaintext)
  bool ended = false;         // a job with at_end was submitted
  engine::Scheduler scheduler;

  static std::string work_of(Operation operation) {
    return operation == Operation::seal ? "format stream seal" : "format stream open";
  }
  Impl(Operation operation, ByteSpan key, uint32_t chunk_len, PipelineOptions options_in, Retire retire_in)
      : operation(operation),
        chunk_len(chunk_len),
        options(detail::resolved(std::move(options_in), work_of(operation))),
        retire(std::move(retire_in)),
        unit_len(uint64_t(chunk_len) + (operation == Operation::open ? kTagLen : 0)),
        chunks_per_job(chunks_per_job_of(options, unit_len)),
        scheduler(scheduled_devices(options), detail::scheduling_of(options, work_of(operation))) {
    std::memcpy(payload_key, key.data(), kKeyLen);
  }
  ~Impl() {
    scheduler.stop();  // no worker reads the key any more
    secure_zero(payload_key, kKeyLen);
  }
};

ChunkStream::ChunkStream(Operation operation, ByteSpan payload_key, uint32_t chunk_len, PipelineOptions options,
                         Retire retire) {
  const char* function = operation == Operation::seal ? "ChunkStream (seal)" : "ChunkStream (open)";
  check_key_and_chunk_len(function, payload_key, chunk_len);
  if (!retire) throw std::invalid_argument(std::string(function) + ": no retire callback");
  impl_ = std::make_unique<Impl>(operation, payload_key, chunk_len, std::move(options), std::move(retire));
}

ChunkStream::~ChunkStream() = default;

uint64_t ChunkStream::input_unit_len() const { return impl_->unit_len; }
uint64_t ChunkStream::chunks_per_job() const { return impl_->chunks_per_job; }

uint64_t ChunkStream::output_capacity(uint64_t input_len) const {
  if (impl_->operation == Operation::open) return input_len;  // tags removed
  return input_len + kTagLen * (input_len / impl_->chunk_len + 1);
}

void ChunkStream::submit(uint64_t job_id, ByteSpan input, MutableByteSpan output, bool at_end, bool trailing_data) {
  Impl& s = *impl_;
  const bool opening = s.operation == Operation::open;
  const char* function = opening ? "ChunkStream::submit (open)" : "ChunkStream::submit (seal)";
  if (s.ended) throw std::logic_error(std::string(function) + ": a job after the one that ended the input");
  if (overlap(input, output))
    throw std::invalid_argument(std::string(function) + ": the input and output buffers overlap");
  const uint64_t num_full = input.size() / s.unit_len, rest = input.size() % s.unit_len;
  if (!at_end && rest != 0)
    throw std::invalid_argument(std::string(function) + ": a job before the end holds whole chunks of " +
                                bytes_text(s.unit_len) + ", got " + bytes_text(input.size()));
  if (output.size() < output_capacity(input.size()))
    throw std::invalid_argument(std::string(function) + ": the output holds " + bytes_text(output.size()) + ", the job needs " +
                                bytes_text(output_capacity(input.size())));
  // What this job's chunks are, and a layout in which exactly they are the file's chunks
  // [first, first + count), the last one final only when the input ends with it.
  StreamEnd end = StreamEnd::more;
  if (at_end) end = !opening ? StreamEnd::final_chunk
                    : rest == 0 ? StreamEnd::missing
                    : rest < kTagLen ? StreamEnd::short_tag
                    : StreamEnd::final_chunk;
  const uint64_t first = s.next_index;
  const uint64_t count = num_full + (end == StreamEnd::final_chunk ? 1 : 0);
  const uint64_t final_plain_len = opening ? rest - kTagLen : rest;  // used only with a final chunk
  const Layout layout{s.chunk_len, (first + num_full) * uint64_t(s.chunk_len) +
                                       (end == StreamEnd::final_chunk ? final_plain_len : s.chunk_len)};
  const uint64_t input_len = opening ? layout.sealed_range(first, count).second : layout.plaintext_range(first, count).second;
  const uint64_t output_len = opening ? layout.plaintext_range(first, count).second : layout.sealed_range(first, count).second;
  s.next_index += count;
  s.ended = at_end;

  // Opening: the first failed chunk of this job (the job retires the chunks before it).
  auto failure = std::make_shared<std::optional<DecryptionError>>();
  auto work = [&s, opening, layout, first, count, input = input.first(input_len), output = output.first(output_len),
               failure](const std::string& device) {
    if (count == 0) return;
    const ByteSpan key(s.payload_key, kKeyLen);
    ChunkRun run;
    if (!opening) {
      run = seal_chunks(key, layout, first, count, input, output, device, s.options.variant);
    } else {
      try {
        run = open_chunks(key, layout, first, count, input, output, device, s.options.variant);
      } catch (const DecryptionError& error) {
        failure->emplace(error);
      }
    }
    s.scheduler.record_run(device, run.variant, run.h2d_s, run.compute_s, run.d2h_s);
  };
  auto retire = [&s, job_id, first, count, output_len, end, rest, trailing_data, failure, chunk_len = s.chunk_len] {
    // Opening: only what authenticated, in order; and not a final chunk that the input goes on
    // after (it verified, but the file is not what its writer wrote).
    const bool extended = end == StreamEnd::final_chunk && trailing_data && !failure->has_value();
    const uint64_t good_chunks = failure->has_value() ? (**failure).chunk_index - first : count - (extended ? 1 : 0);
    const uint64_t good_len = good_chunks == count ? output_len : good_chunks * chunk_len;
    s.retire(job_id, good_chunks, good_len);
    s.released_len += good_len;
    if (failure->has_value()) {
      DecryptionError error = **failure;
      error.released_len = s.released_len;
      throw error;
    }
    const uint64_t next = first + count;
    if (end == StreamEnd::missing)
      throw DecryptionError("file truncated: the final chunk is missing (" +
                                (next ? "after chunk " + std::to_string(next - 1) : std::string("after the header")) + ")",
                            next, s.released_len);
    if (end == StreamEnd::short_tag)
      throw DecryptionError("file truncated: chunk " + std::to_string(next) + " has " + bytes_text(rest) +
                                ", fewer than its " + std::to_string(kTagLen) + "-byte tag",
                            next, s.released_len);
    if (extended)
      throw DecryptionError("trailing data after final chunk " + std::to_string(next - 1), next - 1, s.released_len);
  };
  s.scheduler.submit(input_len, std::move(work), std::move(retire));
}

void ChunkStream::drain() { impl_->scheduler.drain(); }
void ChunkStream::stop() noexcept { impl_->scheduler.stop(); }
PipelineStats ChunkStream::stats() const { return detail::stats_of(impl_->scheduler.stats()); }

std::vector<std::string> ChunkStream::devices_in_use() const { return impl_->scheduler.devices_in_use(); }

// ---- seal_stream / open_stream ------------------------------------------------------------------

namespace {

// Fills `buffer` from `read` until it is full or the input ends; returns the bytes read and
// whether the input ended.
std::pair<size_t, bool> fill(const StreamReader& read, MutableByteSpan buffer) {
  size_t filled = 0;
  while (filled < buffer.size()) {
    const size_t n = read(buffer.subspan(filled));
    if (n == 0) return {filled, true};
    if (n > buffer.size() - filled) throw std::length_error("a StreamReader returned more bytes than it was given room for");
    filled += n;
  }
  return {filled, false};
}

}  // namespace

StreamWriter writing_all(PartialWriter write_some) {
  return [write_some = std::move(write_some)](ByteSpan bytes) {
    while (!bytes.empty()) {
      const size_t taken = write_some(bytes);
      if (taken == 0)
        throw FileError(EAGAIN, true,
                        "writing the output (it accepted no bytes, a non-blocking destination; " +
                            std::to_string(bytes.size()) + " bytes unwritten)");
      if (taken > bytes.size())
        throw std::invalid_argument("the output said it took " + std::to_string(taken) + " bytes of the " +
                                    std::to_string(bytes.size()) + " it was given");
      bytes = bytes.subspan(taken);
    }
  };
}

namespace {

// The job buffers of one seal_stream / open_stream call, reused once their job retired (at most
// the scheduler's depth + 1 exist at a time) and zeroed when the call ends, however it ends.
struct StreamBuffers {
  std::vector<std::pair<std::vector<uint8_t>, std::vector<uint8_t>>> buffers;  // (input, output)
  std::vector<size_t> free;  // indices into buffers; a job's id is the index of its buffers
  ~StreamBuffers() {
    for (auto& [in, out] : buffers) {
      secure_zero(in.data(), in.size());
      secure_zero(out.data(), out.size());
    }
  }
};

// Submits every job of `read`'s input to `stream`, then drains it; returns the input length.
uint64_t run_stream(ChunkStream& stream, const StreamReader& read, StreamBuffers& b) {
  const size_t job_len = stream.chunks_per_job() * stream.input_unit_len();
  uint64_t input_len = 0;
  for (;;) {
    if (b.free.empty()) {
      b.buffers.emplace_back(std::vector<uint8_t>(job_len), std::vector<uint8_t>(stream.output_capacity(job_len)));
      b.free.push_back(b.buffers.size() - 1);
    }
    const size_t slot = b.free.back();
    b.free.pop_back();
    auto& [in, out] = b.buffers[slot];
    const auto [len, at_end] = fill(read, in);
    input_len += len;
    stream.submit(slot, ByteSpan(in).first(len), out, at_end);
    if (at_end) break;
  }
  stream.drain();
  return input_len;
}

uint64_t stream_through(ChunkStream::Operation operation, ByteSpan payload_key, uint32_t chunk_len,
                        const StreamReader& read, const StreamWriter& write, const PipelineOptions& options) {
  StreamBuffers b;  // declared first: it outlives the stream, whose workers use its buffers
  uint64_t output_len = 0;
  ChunkStream stream(operation, payload_key, chunk_len, options,
                     [&](uint64_t slot, uint64_t, uint64_t len) {
                       write(ByteSpan(b.buffers[slot].second).first(len));
                       output_len += len;
                       b.free.push_back(slot);
                     });
  const uint64_t input_len = run_stream(stream, read, b);
  return operation == ChunkStream::Operation::seal ? input_len : output_len;
}

}  // namespace

namespace detail {

MakeHeader header_with_key(ByteSpan key, uint32_t chunk_len) {
  return [key, chunk_len](uint8_t* payload_key) { return build_header_with_key(key, chunk_len, payload_key); };
}

MakeHeader header_for_recipients(const std::vector<std::string>& recipients, uint32_t chunk_len) {
  return [&recipients, chunk_len](uint8_t* payload_key) {
    return build_header_for_recipients(recipients, chunk_len, payload_key);
  };
}

CheckHeader header_key_check(ByteSpan key) {
  return [key](ByteSpan header, uint8_t* payload_key) {
    return OpenedHeader{open_header_with_key(header, key, payload_key), kHeaderLen};
  };
}

CheckHeader header_identities_check(const std::vector<std::string>& identities) {
  return [&identities](ByteSpan header, uint8_t* payload_key) {
    return open_header_with_identities(header, identities, payload_key);
  };
}

std::vector<uint8_t> read_header(const StreamReader& read) {
  std::vector<uint8_t> header;
  for (;;) {
    const size_t want = header_len_known(header).first;  // more than we have until the header is whole
    if (header.size() >= want) return header;
    const size_t at = header.size();
    header.resize(want);
    const size_t got = fill(read, MutableByteSpan(header).subspan(at)).first;
    header.resize(at + got);
    if (got < want - at) return header;  // the input ended inside the header
  }
}

uint64_t seal_stream_with(const MakeHeader& make_header, uint32_t chunk_len, const StreamReader& read,
                          const StreamWriter& write, const PipelineOptions& options) {
  uint8_t payload_key[kKeyLen];
  WipeOnExit wipe{payload_key};
  const std::vector<uint8_t> header = make_header(payload_key);
  write(header);
  return stream_through(ChunkStream::Operation::seal, ByteSpan(payload_key, kKeyLen), chunk_len, read, write, options);
}

uint64_t open_stream_with(const CheckHeader& check_header, const StreamReader& read, const StreamWriter& write,
                          const PipelineOptions& options) {
  // A short header is check_header's to refuse; a whole one followed by nothing is ChunkStream's
  // (the final chunk is missing).
  const std::vector<uint8_t> header = read_header(read);
  uint8_t payload_key[kKeyLen];
  WipeOnExit wipe{payload_key};
  const OpenedHeader opened = check_header(header, payload_key);
  return stream_through(ChunkStream::Operation::open, ByteSpan(payload_key, kKeyLen), opened.chunk_len, read, write,
                        options);
}

}  // namespace detail

std::vector<uint8_t> read_header(const StreamReader& read) { return detail::read_header(read); }

uint64_t seal_stream(ByteSpan key, const StreamReader& read, const StreamWriter& write, uint32_t chunk_len,
                     const PipelineOptions& options) {
  return detail::seal_stream_with(detail::header_with_key(key, chunk_len), chunk_len, read, write, options);
}

uint64_t open_stream(ByteSpan key, const StreamReader& read, const StreamWriter& write, const PipelineOptions& options) {
  return detail::open_stream_with(detail::header_key_check(key), read, write, options);
}

}  // namespace gpucrypt::format
