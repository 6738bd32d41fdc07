// pipeline_internal.hpp: what the format's pipelines share inside src/format (pipeline.cpp, the
// in-memory pipeline and ChunkStream; file_pipeline.cpp, the file pipeline), not for callers.
#pragma once

#include "engine/scheduler.hpp"
#include "gpucrypt/format.hpp"

namespace gpucrypt::format::detail {

// Worker threads per GPU for the pipelines: GPUCRYPT_GPU_WORKERS (1..16), or the measured default.
unsigned pipeline_gpu_workers();

// A scheduler's statistics as the pipelines report them (read_s / write_s are the file
// pipeline's own to add).
PipelineStats stats_of(const engine::SchedulerStats& scheduled);

}  // namespace gpucrypt::format::detail
