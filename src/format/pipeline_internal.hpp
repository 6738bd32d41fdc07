// pipeline_internal.hpp: what the format's pipelines share inside src/format (pipeline.cpp, the
// in-memory pipeline and ChunkStream; file_pipeline.cpp, the file pipeline), not for callers.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpucrypt/scheduler.hpp"
#include "gpucrypt/format.hpp"

namespace gpucrypt::format::detail {

// Worker threads per GPU for the pipelines: GPUCRYPT_GPU_WORKERS (1..16), or the measured default.
unsigned pipeline_gpu_workers();

// The scheduler's options of a pipeline (its CPU share and cancellation), for both pipelines;
// `work` names the kind of work its measured device set is kept for (SchedulerOptions::remember_as).
engine::SchedulerOptions scheduling_of(const PipelineOptions& options, const std::string& work);

// The options with "auto"'s devices filled in where options.automatic (PipelineOptions says what
// they are); for `work`, as scheduling_of names it. Otherwise the options as they are.
PipelineOptions resolved(PipelineOptions options, const std::string& work);
// The devices of this machine's kept set for `work` (automatic options) where it leaves every GPU
// out, read without listing any GPU; else nullopt (no such set: auto lists and starts the GPUs).
std::optional<std::vector<std::string>> kept_without_gpus(const PipelineOptions& options, const std::string& work);

// A scheduler's statistics as the pipelines report them (read_s / write_s are the file
// pipeline's own to add).
PipelineStats stats_of(const engine::SchedulerStats& scheduled);

// Zeroes a payload key on every way out of a scope.
struct WipeOnExit {
  uint8_t* key;
  ~WipeOnExit() { secure_zero(key, kKeyLen); }
};

// How a whole-stream call (seal_stream / seal_fd, open_stream / open_fd) makes its file's header,
// writing the payload key, or checks one it read: with a raw key (format version 1) or to
// recipients / with identities (version 2). One reading and writing path serves both.
using MakeHeader = std::function<std::vector<uint8_t>(uint8_t* payload_key)>;
using CheckHeader = std::function<OpenedHeader(ByteSpan header, uint8_t* payload_key)>;
MakeHeader header_with_key(ByteSpan key, uint32_t chunk_len);
MakeHeader header_for_recipients(const std::vector<std::string>& recipients, uint32_t chunk_len);
CheckHeader header_key_check(ByteSpan key);
CheckHeader header_identities_check(const std::vector<std::string>& identities);

// Reads a file's header from `read` and not a byte past it (header_len_known says how far to
// read as the stanzas arrive); shorter when the input ends inside it (the CheckHeader names that).
std::vector<uint8_t> read_header(const StreamReader& read);

// seal_stream / open_stream with any header (above).
uint64_t seal_stream_with(const MakeHeader& make_header, uint32_t chunk_len, const StreamReader& read,
                          const StreamWriter& write, const PipelineOptions& options);
uint64_t open_stream_with(const CheckHeader& check_header, const StreamReader& read, const StreamWriter& write,
                          const PipelineOptions& options);

}  // namespace gpucrypt::format::detail
