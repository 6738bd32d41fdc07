// test_batch_aeads.cpp: a batch plan that mixes an AEAD the backends' batch executors do not plan
// (AES-GCM-SIV, run per message through the device's Aead: src/device/batch_run.cpp) with GCM,
// a cipher and a hash, in both forms of the plan, on every device here (each one's own executor
// and the generic one).
// Every output equals the one-shot call's; a failed open is reported for that request only and,
// in the packed form with the caller's output, leaves that range byte for byte as it was (also
// while the executor writes the other requests' ranges into the same buffer).
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpucrypt/aead.hpp"
#include "gpucrypt/batch.hpp"
#include "gpucrypt/cipher.hpp"
#include "gpucrypt/device.hpp"
#include "test_support.hpp"

using namespace gpucrypt;
using namespace gpucrypt::engine;
using test_support::check;

namespace {

std::mt19937_64 rng(20261129);

std::vector<uint8_t> random_bytes(size_t n) { return test_support::random_bytes(rng, n); }

std::vector<uint8_t> seal_once(const std::string& name, const std::vector<uint8_t>& key,
                               const std::vector<uint8_t>& nonce, const std::vector<uint8_t>& aad,
                               const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out(data.size() + 16);
  create_aead(name, key)->seal(nonce, aad, data, 16, out.data());
  return out;
}

Suite aead_suite(const std::string& name, Operation operation) {
  Suite suite;
  suite.operation = operation;
  suite.aead = parse_aead_name(name);
  return suite;
}

struct Request {
  uint32_t suite;
  std::vector<uint8_t> key, iv, aad, input, expected;
  bool fails = false;  // an open that must fail authentication
};

// The requests: GCM-SIV seals and opens (one with a flipped tag bit, one shorter than its tag),
// GCM seals, CTR encryption and a SHA3-256, in an interleaved order.
std::vector<Request> make_requests(BatchBuilder& builder) {
  const uint32_t siv_seal = builder.add_suite(aead_suite("aes-256-gcm-siv", Operation::seal));
  const uint32_t siv_open = builder.add_suite(aead_suite("AES-128-GCM-SIV", Operation::open));
  Suite gcm;
  gcm.operation = Operation::seal;
  gcm.cipher = parse_cipher_name("aes-256-gcm");  // GCM by its cipher name alone, as before
  const uint32_t gcm_seal = builder.add_suite(gcm);
  Suite ctr;
  ctr.cipher = parse_cipher_name("aes-128-ctr");
  const uint32_t ctr_encrypt = builder.add_suite(ctr);
  Suite sha3;
  sha3.operation = Operation::hash;
  sha3.hash_name = "sha3-256";
  const uint32_t hash = builder.add_suite(sha3);
  check(builder.add_suite(aead_suite("aes-256-gcm", Operation::seal)) == gcm_seal,
        "GCM by its AEAD name is the same suite as by its cipher name");

  std::vector<Request> requests;
  const std::vector<uint8_t> shared_key = random_bytes(32);
  for (size_t len : {0, 1, 16, 33, 1000, 70000}) {
    Request seal{siv_seal, len % 2 ? random_bytes(32) : shared_key, random_bytes(12), random_bytes(len % 19),
                 random_bytes(len), {}};
    seal.expected = seal_once("aes-256-gcm-siv", seal.key, seal.iv, seal.aad, seal.input);
    requests.push_back(seal);

    Request open{siv_open, random_bytes(16), random_bytes(12), random_bytes(len % 7), {}, random_bytes(len)};
    open.input = seal_once("aes-128-gcm-siv", open.key, open.iv, open.aad, open.expected);
    requests.push_back(open);
    if (len == 33) {  // the same message with one tag bit flipped: fails alone
      Request bad = open;
      bad.input.back() ^= 0x10;
      bad.fails = true;
      requests.push_back(bad);
    }

    Request g{gcm_seal, shared_key, random_bytes(12), random_bytes(5), random_bytes(len), {}};
    g.expected = seal_once("aes-256-gcm", g.key, g.iv, g.aad, g.input);
    requests.push_back(g);

    Request c{ctr_encrypt, random_bytes(16), random_bytes(16), {}, random_bytes(len), {}};
    c.expected.resize(len);
    create_cipher_stream(parse_cipher_name("aes-128-ctr"), Direction::encrypt, c.key, c.iv)
        ->update(c.input.data(), c.expected.data(), len);
    requests.push_back(c);
  }
  Request short_open{siv_open, random_bytes(16), random_bytes(12), {}, random_bytes(15), {}, true};
  requests.push_back(short_open);
  Request h{hash, {}, {}, {}, random_bytes(300), std::vector<uint8_t>(32)};
  {
    auto context = hash::create_hash("sha3-256", {}, "");
    context->update(h.input.data(), h.input.size());
    context->finalize(h.expected.data(), 32);
  }
  requests.push_back(h);
  return requests;
}

void check_result(const std::string& where, const BatchPlan& plan, const BatchResult& result,
                  const std::vector<Request>& requests, const uint8_t* untouched_pattern) {
  for (size_t i = 0; i < requests.size(); ++i) {
    const Request& q = requests[i];
    const BatchRequest& r = plan.requests[i];
    const std::string what = where + " request " + std::to_string(i) + " (" + plan.suites[q.suite].describe() + ")";
    if (q.fails) {
      check(result.status[i] == RequestStatus::authentication_failed, what + ": fails authentication");
      check(result.output_len[i] == 0, what + ": no output length");
      if (untouched_pattern != nullptr)
        check(std::memcmp(plan.output_of(r), untouched_pattern + r.output_offset, r.output_len) == 0,
              what + ": the caller's output range is as it was");
      continue;
    }
    check(result.status[i] == RequestStatus::ok, what + ": ok");
    check(result.output_len[i] == q.expected.size() &&
              std::memcmp(plan.output_of(r), q.expected.data(), q.expected.size()) == 0,
          what + ": the one-shot call's bytes");
  }
  check(result.suite_variants[requests[0].suite] != "", where + ": GCM-SIV's variant is reported");
}

void run_gather(const std::string& device, const std::string& executor) {
  BatchBuilder builder;
  const std::vector<Request> requests = make_requests(builder);
  for (const Request& q : requests) builder.add(q.suite, q.key, q.iv, q.aad, q.input);
  const BatchPlan plan = builder.build();
  const BatchResult result = run_batch(plan, device, executor);
  check_result("gather " + device + " " + executor, plan, result, requests, nullptr);
}

void run_packed(const std::string& device, const std::string& executor) {
  BatchBuilder builder;
  const std::vector<Request> requests = make_requests(builder);
  std::vector<uint8_t> input;
  for (const Request& q : requests) {
    builder.add_packed(q.suite, q.key, q.iv, q.aad, input.size(), q.input.size());
    input.insert(input.end(), q.input.begin(), q.input.end());
  }
  const std::vector<uint8_t> pattern = random_bytes(builder.packed_output_len());
  std::vector<uint8_t> output = pattern;
  const BatchPlan plan = builder.build_packed(input, output);
  const BatchResult result = run_batch(plan, device, executor);
  check_result("packed " + device + " " + executor, plan, result, requests, pattern.data());
}

void check_refusals() {
  BatchBuilder builder;
  const uint32_t siv = builder.add_suite(aead_suite("aes-256-gcm-siv", Operation::seal));
  auto refused = [&](const std::vector<uint8_t>& key, const std::vector<uint8_t>& nonce, const std::string& needle) {
    try {
      builder.add(siv, key, nonce, {}, std::vector<uint8_t>(10));
    } catch (const std::invalid_argument& e) {
      return check(std::string(e.what()).find(needle) != std::string::npos,
                   std::string("refusal names the rule: ") + e.what());
    }
    return check(false, "refused: " + needle);
  };
  refused(random_bytes(16), random_bytes(12), "aes-256-gcm-siv needs a 32-byte key, got 16 bytes");
  refused(random_bytes(32), random_bytes(16), "aes-256-gcm-siv nonce must be 12 bytes, got 16");
  Suite short_tag = aead_suite("aes-128-gcm-siv", Operation::open);
  short_tag.tag_len = 12;
  try {
    builder.add_suite(short_tag);
    check(false, "a 12-byte GCM-SIV tag is refused");
  } catch (const std::invalid_argument& e) {
    check(std::string(e.what()).find("tag length must be 16 bytes, got 12") != std::string::npos, e.what());
  }
}

}  // namespace

int main() {
  std::vector<std::string> devices = {"cpu"};
  for (const DeviceInfo& d : list_devices())  // every device here: PoCL's opencl:0, a GPU's CUDA
    if (d.name != "cpu") devices.push_back(d.name);
  for (const std::string& device : devices)
    for (const std::string executor : {"", "generic"}) {
      run_gather(device, executor);
      run_packed(device, executor);
    }
  check_refusals();
  return test_support::report();
}
