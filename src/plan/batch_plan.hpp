// batch_plan.hpp: the batch plan (gpucrypt/batch.hpp) and the rules about it that more than one
// layer reads (the builder, the executors); batch_plan.cpp implements the plan's helpers.
#pragma once

#include "gpucrypt/batch.hpp"

namespace gpucrypt::engine {

inline bool is_cipher_operation(Operation op) { return op == Operation::encrypt || op == Operation::decrypt; }
inline bool is_aead_operation(Operation op) { return op == Operation::seal || op == Operation::open; }
// An AEAD request of a construction the backends' batch executors do not plan (any but GCM): it
// runs through the device's Aead, one message at a time (src/device/batch_run.cpp).
inline bool is_per_message_aead(const Suite& suite) {
  return is_aead_operation(suite.operation) && suite.aead.construction != AeadConstruction::gcm;
}

}  // namespace gpucrypt::engine
