// batch_run.cpp: run_batch, which hands a plan to the named Device (each backend's Device chooses
// its executor), and the generic executor. Both are the device layer's: the engine below builds
// plans and runs them on one backend, and never calls up to find a Device.
//
// The generic executor runs each request through the named Device's own streams
// (Device::create_cipher_stream, create_gcm; hashes through hash::create_hash): correct everywhere,
// but it pays one engine construction per message, so it is only the fallback for devices that
// have no batch executor of their own and a second opinion in tests. GCM objects are made once per
// distinct key. Constant-time exactly when the variants it runs are.
#include <chrono>
#include <map>

#include "gpucrypt/batch.hpp"
#include "gpucrypt/device.hpp"
#include "modes/padding.hpp"

namespace gpucrypt::engine {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// PKCS#7: checks the last block of a padded decryption and shortens the output, or reports it.
void strip_padding(const BatchPlan& plan, size_t index, BatchResult& result) {
  const BatchRequest& r = plan.requests[index];
  size_t tail_len = 0;
  const bool ok = modes::pkcs7_unpadded_len(plan.output_of(r) + r.input_len - 16, &tail_len);
  result.output_len[index] = r.input_len - 16 + tail_len;
  if (!ok) result.status[index] = RequestStatus::invalid_padding;
}

}  // namespace

BatchResult run_batch_generic(const BatchPlan& plan, std::string_view device) {
  const auto start = Clock::now();
  BatchResult result;
  result.reset(plan);
  result.device = std::string(device);
  result.executor = "generic";
  // The plan's builder checked every key and IV (check_cipher_key / check_cipher_iv), so the
  // Device is asked directly.
  const Device& target = gpucrypt::device(device);
  std::map<std::pair<uint32_t, uint32_t>, std::unique_ptr<GcmCipher>> gcm_by_suite_and_key;
  for (uint32_t index : plan.order) {
    const BatchRequest& r = plan.requests[index];
    const Suite& suite = plan.suites[r.suite];
    const uint8_t* in = plan.input_of(r);
    uint8_t* out = plan.output_of(r);
    std::string variant;
    switch (suite.operation) {
      case Operation::encrypt:
      case Operation::decrypt: {
        const KeySlot& key = plan.keys[r.key];
        auto stream = target.create_cipher_stream(
            suite.cipher, suite.operation == Operation::encrypt ? Direction::encrypt : Direction::decrypt,
            ByteSpan(plan.key_of(key), key.key_len), ByteSpan(plan.iv_of(r), r.iv_len), suite.variant);
        if (suite.xts_unit_len != 0)
          stream->update_units(in, out, r.input_len, suite.xts_unit_len, Suite::first_unit_of(plan.iv_of(r)));
        else
          stream->update(in, out, r.input_len);
        variant = stream->variant().name;
        if (suite.pkcs7 && suite.operation == Operation::decrypt) strip_padding(plan, index, result);
        break;
      }
      case Operation::seal:
      case Operation::open: {
        auto& gcm = gcm_by_suite_and_key[{r.suite, r.key}];
        if (!gcm) {
          const KeySlot& key = plan.keys[r.key];
          gcm = target.create_gcm(suite.cipher, ByteSpan(plan.key_of(key), key.key_len), suite.variant);
        }
        const ByteSpan nonce(plan.iv_of(r), r.iv_len), aad(plan.aad_of(r), r.aad_len);
        if (suite.operation == Operation::seal) {
          gcm->seal(nonce, aad, ByteSpan(in, r.input_len), suite.tag_len, out);
        } else if (r.input_len < suite.tag_len ||
                   !gcm->open(nonce, aad, ByteSpan(in, r.input_len), suite.tag_len, out)) {
          result.status[index] = RequestStatus::authentication_failed;
        }
        variant = gcm->variant().name;
        break;
      }
      case Operation::hash: {
        // Hashes run on the CPU here whatever the device; the variant says so.
        auto context = hash::create_hash(suite.hash_name, suite.hash_params, suite.variant);
        context->update(in, r.input_len);
        context->finalize(out, suite.hash_out_len);
        variant = context->variant();
        break;
      }
    }
    result.suite_variants[r.suite] = variant;
  }
  wipe_failed_outputs(plan, result);
  result.timings.compute_s = result.timings.total_s = seconds_since(start);
  return result;
}

BatchResult run_batch(const BatchPlan& plan, std::string_view device, std::string_view executor) {
  if (executor == "generic") return run_batch_generic(plan, device);
  if (!executor.empty())
    throw std::invalid_argument("unknown batch executor '" + std::string(executor) + "' (known: generic)");
  return gpucrypt::device(device).run_batch(plan);
}

}  // namespace gpucrypt::engine
