// batch_run.cpp: run_batch, which hands a plan to the named Device (each backend's Device chooses
// its executor), the generic executor, and the per-message AEADs (run_batch_aeads_apart). All are
// the device layer's: the engine below builds plans and runs them on one backend, and never calls
// up to find a Device.
//
// The generic executor runs each request through the named Device's own objects
// (Device::create_cipher_stream, create_aead; hashes through hash::create_hash): correct everywhere,
// but it pays one engine construction per message, so it is only the fallback for devices that
// have no batch executor of their own and a second opinion in tests. AEAD objects are made once per
// suite and distinct key. Constant-time exactly when the variants it runs are.
//
// The backends' batch executors (CPU, CUDA) plan ciphers, GCM and hashes. An AEAD of another
// construction (AES-GCM-SIV) reaches them through run_batch_aeads_apart, which their Devices' run_batch
// call: the executor runs the rest of the plan, and each such request goes through the device's
// Aead (Device::create_aead), over the thread pool on the CPU and one message after another on a GPU.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>

#include "device/registry.hpp"
#include "gpucrypt/batch.hpp"
#include "gpucrypt/device.hpp"
#include "gpucrypt/parallel.hpp"
#include "modes/padding.hpp"
#include "plan/batch_plan.hpp"

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

// One AEAD request through `aead`: false when an open does not authenticate (its output untouched).
bool seal_or_open(Aead& aead, const BatchPlan& plan, const BatchRequest& r) {
  const Suite& suite = plan.suites[r.suite];
  const ByteSpan nonce(plan.iv_of(r), r.iv_len), aad(plan.aad_of(r), r.aad_len), in(plan.input_of(r), r.input_len);
  if (suite.operation == Operation::seal) {
    aead.seal(nonce, aad, in, suite.tag_len, plan.output_of(r));
    return true;
  }
  return r.input_len >= suite.tag_len && aead.open(nonce, aad, in, suite.tag_len, plan.output_of(r));
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
  std::map<std::pair<uint32_t, uint32_t>, std::unique_ptr<Aead>> aead_by_suite_and_key;
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
        auto& aead = aead_by_suite_and_key[{r.suite, r.key}];
        if (!aead) {
          const KeySlot& key = plan.keys[r.key];
          aead = target.create_aead(suite.aead, ByteSpan(plan.key_of(key), key.key_len), suite.variant);
        }
        if (!seal_or_open(*aead, plan, r)) result.status[index] = RequestStatus::authentication_failed;
        variant = aead->variant().name;
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

namespace gpucrypt::registry {

namespace {

using engine::BatchPlan;
using engine::BatchRequest;
using engine::BatchResult;
using engine::Operation;
using engine::RequestGroup;
using engine::RequestStatus;
using engine::Suite;
using engine::is_per_message_aead;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kMinBytesPerTask = 64 * 1024;  // below this a thread-pool task costs more than it saves

bool has_per_message_aeads(const BatchPlan& plan) {
  for (const RequestGroup& group : plan.groups)
    if (is_per_message_aead(plan.suites[group.suite])) return true;
  return false;
}

// The plan less its per-message AEAD groups, for the backend's executor: the same buffers,
// requests, keys and suites, with `order` and `groups` of the rest only (the CPU executor walks
// `order`, the CUDA one `groups`). The copies of keys and parameters are wiped with it.
BatchPlan without_per_message_aeads(const BatchPlan& plan) {
  BatchPlan rest;
  rest.suites = plan.suites;
  rest.keys = plan.keys;
  rest.key_bytes = plan.key_bytes;
  rest.requests = plan.requests;
  rest.params = plan.params;
  rest.input = plan.input;
  rest.output = plan.output;
  for (const RequestGroup& group : plan.groups) {
    if (is_per_message_aead(plan.suites[group.suite])) continue;
    RequestGroup kept = group;
    kept.first = static_cast<uint32_t>(rest.order.size());
    rest.order.insert(rest.order.end(), plan.order.begin() + group.first, plan.order.begin() + group.first + group.count);
    rest.groups.push_back(kept);
  }
  return rest;
}

// The plan's per-message AEAD requests (in plan order), each with the Aead of its suite and key,
// made here once per pair.
struct AeadRequests {
  std::vector<uint32_t> requests;
  std::vector<Aead*> aead_of;  // per entry of `requests`
  std::map<std::pair<uint32_t, uint32_t>, std::unique_ptr<Aead>> aeads;
  uint64_t total_len = 0;
};

AeadRequests per_message_aeads(const BatchPlan& plan, const Device& target, std::vector<std::string>& variants) {
  AeadRequests work;
  for (const RequestGroup& group : plan.groups) {
    const Suite& suite = plan.suites[group.suite];
    if (!is_per_message_aead(suite)) continue;
    for (uint32_t k = 0; k < group.count; ++k) {
      const uint32_t index = plan.order[group.first + k];
      const BatchRequest& r = plan.requests[index];
      std::unique_ptr<Aead>& aead = work.aeads[{r.suite, r.key}];
      if (!aead) {
        const engine::KeySlot& key = plan.keys[r.key];
        aead = target.create_aead(suite.aead, ByteSpan(plan.key_of(key), key.key_len), suite.variant);
        variants[r.suite] = aead->variant().name;
      }
      work.requests.push_back(index);
      work.aead_of.push_back(aead.get());
      work.total_len += r.input_len;
    }
  }
  return work;
}

// The output ranges of the opens among `requests` when the output is the caller's: a failed open
// leaves them as they were, and an executor may write the whole output in one copy (CUDA's,
// straight into page-locked memory), so they are kept aside while it runs.
class KeptOutputs {
 public:
  KeptOutputs(const BatchPlan& plan, const std::vector<uint32_t>& requests) : plan_(plan) {
    uint64_t len = 0;
    for (uint32_t index : requests)
      if (plan.suites[plan.requests[index].suite].operation == Operation::open) {
        requests_.push_back(index);
        len += plan.requests[index].output_len;
      }
    bytes_.resize(len);
    uint8_t* to = bytes_.data();
    for (uint32_t index : requests_) {
      const BatchRequest& r = plan.requests[index];
      if (r.output_len > 0) std::memcpy(to, plan.output_of(r), r.output_len);
      to += r.output_len;
    }
  }
  void restore() const {
    const uint8_t* from = bytes_.data();
    for (uint32_t index : requests_) {
      const BatchRequest& r = plan_.requests[index];
      if (r.output_len > 0) std::memcpy(plan_.output_of(r), from, r.output_len);
      from += r.output_len;
    }
  }

 private:
  const BatchPlan& plan_;
  std::vector<uint32_t> requests_;
  engine::SecureBuffer bytes_;
};

}  // namespace

BatchResult run_batch_aeads_apart(const BatchPlan& plan, const Device& target,
                                  const std::function<BatchResult(const BatchPlan&)>& executor) {
  if (!has_per_message_aeads(plan)) return executor(plan);
  const auto start = Clock::now();
  // The Aeads first: a variant the device lacks is refused before anything runs.
  std::vector<std::string> aead_variants(plan.suites.size());
  const AeadRequests work = per_message_aeads(plan, target, aead_variants);
  BatchResult result;
  if (work.requests.size() == plan.requests.size()) {  // nothing for the executor
    result.reset(plan);
    result.device = target.name().canonical;
    result.executor = target.traits().is_gpu ? "generic" : "cpu";
  } else if (plan.owns_output()) {
    result = executor(without_per_message_aeads(plan));
  } else {
    const KeptOutputs kept(plan, work.requests);
    result = executor(without_per_message_aeads(plan));
    kept.restore();  // before the opens below: one that fails then leaves its range as it was
  }
  for (size_t s = 0; s < aead_variants.size(); ++s)
    if (!aead_variants[s].empty()) result.suite_variants[s] = aead_variants[s];
  const auto aead_start = Clock::now();
  auto run = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const uint32_t index = work.requests[i];
      if (!engine::seal_or_open(*work.aead_of[i], plan, plan.requests[index]))
        result.status[index] = RequestStatus::authentication_failed;
    }
  };
  const size_t num_requests = work.requests.size();
  if (target.traits().is_gpu) {
    run(0, num_requests);  // each message launches its own kernels
  } else {
    const size_t grain = std::max<size_t>(1, kMinBytesPerTask * num_requests / std::max<uint64_t>(work.total_len, 1));
    cpu::parallel_for(num_requests, grain, run);
  }
  engine::wipe_failed_outputs(plan, result);
  result.timings.compute_s += std::chrono::duration<double>(Clock::now() - aead_start).count();
  result.timings.total_s = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace gpucrypt::registry
