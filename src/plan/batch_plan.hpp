// batch_plan.hpp: the batch plan (gpucrypt/batch.hpp) and the rules about it that more than one
// layer reads (the builder, the executors); batch_plan.cpp implements the plan's helpers.
#pragma once

#include "gpucrypt/batch.hpp"

namespace gpucrypt::engine {

inline bool is_cipher_operation(Operation op) { return op == Operation::encrypt || op == Operation::decrypt; }
inline bool is_aead_operation(Operation op) { return op == Operation::seal || op == Operation::open; }

}  // namespace gpucrypt::engine
