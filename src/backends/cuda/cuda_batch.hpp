// cuda_batch.hpp: the CUDA backend's batch executor (cuda_batch.cu), which the CUDA Device's
// run_batch (src/device/cuda_device.cpp) reaches. Private to the library: the public batch.hpp
// declares the plan and the front door (engine::run_batch), no executor.
#pragma once

#include <optional>

#include "gpucrypt/batch.hpp"

namespace gpucrypt::cuda {

// Runs `plan` on GPU `device_index`: one thread per message for serial modes, a message's blocks
// spread over threads for parallel modes, one launch per group. Nothing when a suite names a
// variant its kernels do not run: the CUDA Device then hands the plan to the generic executor,
// which reports the error (the backend never calls up into the device layer).
std::optional<engine::BatchResult> run_batch(const engine::BatchPlan& plan, int device_index);

}  // namespace gpucrypt::cuda
