// cpu_batch.hpp: the CPU backend's batch executor (cpu_batch.cpp, on the thread pool), which the
// CPU Device's run_batch (src/device/cpu_device.cpp) reaches. Private to the library: the public
// batch.hpp declares the plan and the front door (engine::run_batch), no executor.
#pragma once

#include "gpucrypt/batch.hpp"

namespace gpucrypt::cpu {

// Runs every request of `plan` on the thread pool, each with the variant the CPU backend's
// selection gives its suite (variants.cpp), and reports what ran.
engine::BatchResult run_batch(const engine::BatchPlan& plan);

}  // namespace gpucrypt::cpu
