// batch_builder.cpp: BatchBuilder (validation, key interning, packing, grouping). The plan's own
// helpers, which the executors share too, are src/plan/batch_plan.cpp. No cryptography happens here.
//
// Constant-time position: NOT constant-time in one respect, by design: key interning looks a key
// up by a hash of its bytes, so the time to add a request depends on whether an equal key is
// already in the plan (all keys in a plan are the caller's). Key bytes are compared with
// modes::constant_time_equal, so that time does not also depend on where two keys first differ.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "backends/block_engine.hpp"
#include "backends/cpu/thread_pool.hpp"
#include "base/names.hpp"
#include "plan/batch_plan.hpp"
#include "modes/gcm.hpp"
#include "modes/mode_rules.hpp"
#include "modes/xts.hpp"

namespace gpucrypt::engine {

namespace {

constexpr uint64_t kArenaAlign = 16;  // gather form: messages start 16-byte aligned (GPU vector loads)

uint64_t align_up(uint64_t x) { return (x + kArenaAlign - 1) & ~(kArenaAlign - 1); }

}  // namespace

// ----------------------------------------------------------------------------- builder

BatchBuilder::BatchBuilder() = default;

BatchBuilder::~BatchBuilder() = default;

void BatchBuilder::reserve(size_t num_requests) {
  plan_.requests.reserve(num_requests);
  data_lens_.reserve(num_requests);
  gather_sources_.reserve(num_requests);
}

size_t BatchBuilder::size() const { return plan_.requests.size(); }

uint64_t BatchBuilder::packed_output_len() const { return output_cursor_; }

uint32_t BatchBuilder::add_suite(const Suite& requested) {
  Suite suite = requested;
  if (is_aead_operation(suite.operation)) {
    // The AEAD by its name, or GCM by its cipher name alone; the other field follows from it.
    if (suite.aead.canonical.empty()) {
      if (suite.cipher.mode != Mode::gcm) throw std::invalid_argument(suite.cipher.canonical + " is not an AEAD");
      suite.aead = parse_aead_name(suite.cipher.canonical);
    } else {
      suite.aead = parse_aead_name(suite.aead.canonical);
    }
    suite.cipher = suite.aead.cipher();
  }
  for (size_t i = 0; i < plan_.suites.size(); ++i)
    if (plan_.suites[i].same_as(suite)) return static_cast<uint32_t>(i);
  if (suite.operation == Operation::hash) {
    const hash::HashInfo& info = hash::hash_info(suite.hash_name);
    suite.hash_name = info.name;
    if (info.digest_size != 0) {
      if (suite.hash_out_len == 0) suite.hash_out_len = info.digest_size;
      if (suite.hash_out_len != info.digest_size)
        throw std::invalid_argument(info.name + " has a fixed digest size of " +
                                    std::to_string(info.digest_size) + " bytes");
    } else if (suite.hash_out_len == 0) {
      throw std::invalid_argument(info.name + " needs an output length (length=...)");
    }
    // Parameters and the variant are checked by building one context now, not per message.
    hash::create_hash(suite.hash_name, suite.hash_params, suite.variant);
  } else {
    const bool aead = is_aead_operation(suite.operation);
    if (!aead && suite.cipher.mode == Mode::gcm)
      throw std::invalid_argument(suite.cipher.canonical + " is an AEAD: add it with seal/open (aad, tag)");
    if (suite.pkcs7 && (aead || (suite.cipher.mode != Mode::ecb && suite.cipher.mode != Mode::cbc)))
      throw std::invalid_argument((aead ? suite.aead.canonical : suite.cipher.canonical) +
                                  ": padding applies to ECB and CBC only");
    // The AEAD's tag rule, with its error (its shortest nonce stands in for the requests' own).
    if (aead) check_aead_arguments(suite.aead, suite.aead.nonce_min, 0, 0, suite.tag_len);
    if (suite.xts_unit_len != 0) {
      if (suite.cipher.mode != Mode::xts)
        throw std::invalid_argument(suite.cipher.canonical + ": data units are an XTS operation");
      modes::xts_check_data_unit(suite.cipher.canonical, suite.xts_unit_len);
    }
  }
  plan_.suites.push_back(std::move(suite));
  return static_cast<uint32_t>(plan_.suites.size() - 1);
}

uint32_t BatchBuilder::intern_key(const Suite& suite, ByteSpan key) {
  const CipherName& name = suite.cipher;
  const bool xts = name.mode == Mode::xts;
  // The schedule depends on the algorithm, the key bytes and whether they are two XTS halves (the
  // key length is implied by the bytes). The table holds hashes of keys, never copies; equal
  // hashes are confirmed against key_bytes. Runs of one key (encrypt_many, file chunks) hit the
  // last-key check first.
  auto same = [&](uint32_t slot_index) {
    const KeySlot& slot = plan_.keys[slot_index];
    return slot.algorithm == name.algorithm && slot.xts == xts && slot.key_len == key.size() &&
           modes::constant_time_equal(plan_.key_of(slot), key.data(), key.size());
  };
  if (!plan_.keys.empty() && same(static_cast<uint32_t>(plan_.keys.size() - 1)))
    return static_cast<uint32_t>(plan_.keys.size() - 1);
  size_t fingerprint = std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(key.data()), key.size()));
  fingerprint ^= (static_cast<size_t>(name.algorithm) << 1 | static_cast<size_t>(xts)) * 0x9E3779B97F4A7C15ull;
  auto [first, last] = key_index_.equal_range(fingerprint);
  for (auto it = first; it != last; ++it)
    if (same(it->second)) return it->second;
  KeySlot slot;
  slot.algorithm = name.algorithm;
  slot.key_len = static_cast<uint16_t>(key.size());
  slot.xts = xts;
  slot.offset = plan_.key_bytes.size();
  plan_.key_bytes.insert(plan_.key_bytes.end(), key.begin(), key.end());
  plan_.keys.push_back(slot);
  const uint32_t index = static_cast<uint32_t>(plan_.keys.size() - 1);
  key_index_.emplace(fingerprint, index);
  return index;
}

uint32_t BatchBuilder::add_common(uint32_t suite_index, ByteSpan key, ByteSpan iv, ByteSpan aad,
                                  uint64_t data_len) {
  if (suite_index >= plan_.suites.size()) throw std::invalid_argument("unknown suite index");
  const Suite& suite = plan_.suites[suite_index];
  const size_t index = plan_.requests.size();
  if (index >= UINT32_MAX) throw std::invalid_argument("too many requests in one batch");
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("request " + std::to_string(index) + " (" + suite.describe() + "): " + why);
  };
  BatchRequest r;
  r.suite = suite_index;
  uint64_t input_len = data_len;
  if (suite.operation == Operation::hash) {
    if (!key.empty() || !iv.empty() || !aad.empty()) fail("a hash takes no key, IV or AAD");
  } else if (is_per_message_aead(suite)) {
    try {  // the AEAD's own rules (gpucrypt/aead.hpp); an open shorter than its tag fails when run
      check_aead_key(suite.aead, key.size());
      const uint64_t message_len =
          suite.operation == Operation::seal ? data_len : data_len - std::min<uint64_t>(data_len, suite.tag_len);
      check_aead_arguments(suite.aead, iv.size(), aad.size(), message_len, suite.tag_len);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
    r.key = intern_key(suite, key);
  } else {
    const CipherName& name = suite.cipher;
    try {  // the rules every entry point checks (block_engine.hpp), with this request's name
      check_cipher_key(name, key);
      check_cipher_iv(name, iv);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
    if (!aad.empty() && !is_aead_operation(suite.operation)) fail("AAD is for AEAD requests only");
    const bool block_mode = modes::needs_whole_blocks(name.mode);
    if (block_mode && suite.pkcs7 && suite.operation == Operation::encrypt) {
      input_len = data_len + (16 - data_len % 16);
    } else if (block_mode && data_len % 16 != 0) {
      fail(suite.pkcs7 ? "ciphertext length is not a positive multiple of 16 bytes"
                       : "without padding needs a multiple of 16 bytes, got " + std::to_string(data_len));
    } else if (block_mode && suite.pkcs7 && data_len == 0) {
      fail("ciphertext length is not a positive multiple of 16 bytes");
    }
    if (name.mode == Mode::xts) {
      try {
        if (suite.xts_unit_len == 0) modes::xts_check_data_unit(name.canonical, data_len);
        else modes::xts_check_units(name.canonical, suite.xts_unit_len, data_len);
      } catch (const std::invalid_argument& e) {
        fail(e.what());
      }
      if (suite.xts_unit_len != 0 && std::any_of(iv.begin() + 8, iv.end(), [](uint8_t b) { return b != 0; }))
        fail("the first data unit's number (the IV, little-endian) must be below 2^64");
    }
    if (suite.operation == Operation::seal && data_len > modes::kGcmMaxDataLen)
      fail("GCM can encrypt at most 2^32-2 blocks per nonce");
    r.key = intern_key(suite, key);
  }
  r.input_len = input_len;
  r.output_len = output_len_for(suite, input_len);
  r.iv_offset = plan_.params.size();
  r.iv_len = static_cast<uint32_t>(iv.size());
  plan_.params.insert(plan_.params.end(), iv.begin(), iv.end());
  r.aad_offset = plan_.params.size();
  r.aad_len = aad.size();
  plan_.params.insert(plan_.params.end(), aad.begin(), aad.end());
  plan_.requests.push_back(r);
  data_lens_.push_back(data_len);
  return static_cast<uint32_t>(index);
}

uint32_t BatchBuilder::add(uint32_t suite, ByteSpan key, ByteSpan iv, ByteSpan aad, ByteSpan input) {
  if (form_ == 2) throw std::logic_error("BatchBuilder: add() after add_packed()");
  form_ = 1;
  const uint32_t index = add_common(suite, key, iv, aad, input.size());
  BatchRequest& r = plan_.requests.back();
  r.input_offset = input_cursor_;
  input_cursor_ = align_up(input_cursor_ + r.input_len);
  r.output_offset = output_cursor_;
  output_cursor_ = align_up(output_cursor_ + r.output_len);
  gather_sources_.push_back(input.data());
  return index;
}

uint32_t BatchBuilder::add_packed(uint32_t suite, ByteSpan key, ByteSpan iv, ByteSpan aad,
                                  uint64_t input_offset, uint64_t input_len) {
  if (form_ == 1) throw std::logic_error("BatchBuilder: add_packed() after add()");
  form_ = 2;
  const Suite& s = plan_.suites.at(suite);
  if (s.pkcs7 && s.operation == Operation::encrypt)
    throw std::invalid_argument("packed requests cannot be padded: pad the messages in place");
  const uint32_t index = add_common(suite, key, iv, aad, input_len);
  BatchRequest& r = plan_.requests.back();
  r.input_offset = input_offset;
  r.output_offset = output_cursor_;
  output_cursor_ += r.output_len;
  return index;
}

BatchPlan BatchBuilder::build() {
  if (form_ == 2) throw std::logic_error("BatchBuilder: build() on a packed batch; use build_packed");
  plan_.owned_input.resize(input_cursor_);
  plan_.owned_output.resize(output_cursor_);
  uint8_t* arena = plan_.owned_input.data();
  const size_t num_requests = plan_.requests.size();
  // One copy per message; the gaps left by alignment are zeroed so that no stale heap bytes
  // travel with the data (to a device, for instance). Ranges of messages of about kCopyTask bytes
  // each go over the pool; a message of kOwnCopy and more is copied afterwards in parallel_copy's
  // 1 MiB pieces (64 messages of 4 MiB were one range, one thread: 145 ms for 256 MiB).
  constexpr uint64_t kCopyTask = 256 << 10, kOwnCopy = 2 << 20;
  const size_t grain = std::max<size_t>(1, static_cast<size_t>(kCopyTask * num_requests / std::max<uint64_t>(input_cursor_, 1)));
  cpu::ThreadPool::global().parallel_for(num_requests, grain, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const BatchRequest& r = plan_.requests[i];
      const uint64_t data_len = data_lens_[i];
      uint8_t* dst = arena + r.input_offset;
      if (data_len > 0 && data_len < kOwnCopy) std::memcpy(dst, gather_sources_[i], data_len);
      if (r.input_len > data_len)  // PKCS#7: every padding byte holds the padding length
        std::memset(dst + data_len, static_cast<int>(r.input_len - data_len), r.input_len - data_len);
      const uint64_t slot_end = i + 1 < num_requests ? plan_.requests[i + 1].input_offset : input_cursor_;
      if (slot_end > r.input_offset + r.input_len)
        std::memset(dst + r.input_len, 0, slot_end - r.input_offset - r.input_len);
    }
  });
  for (size_t i = 0; i < num_requests; ++i)
    if (data_lens_[i] >= kOwnCopy) cpu::parallel_copy(arena + plan_.requests[i].input_offset, gather_sources_[i], data_lens_[i]);
  plan_.input = ByteSpan(plan_.owned_input.data(), plan_.owned_input.size());
  plan_.output = MutableByteSpan(plan_.owned_output.data(), plan_.owned_output.size());
  gather_sources_.clear();
  finish(plan_);
  return std::move(plan_);
}

BatchPlan BatchBuilder::build_packed(ByteSpan input, MutableByteSpan output) {
  if (form_ == 1) throw std::logic_error("BatchBuilder: build_packed() on a gather batch; use build");
  for (size_t i = 0; i < plan_.requests.size(); ++i) {
    const BatchRequest& r = plan_.requests[i];
    if (r.input_offset > input.size() || r.input_len > input.size() - r.input_offset)
      throw std::invalid_argument("request " + std::to_string(i) + ": input range outside the buffer");
  }
  if (output.empty() && output_cursor_ > 0) {
    plan_.owned_output.resize(output_cursor_);
    output = MutableByteSpan(plan_.owned_output.data(), plan_.owned_output.size());
  }
  if (output.size() < output_cursor_)
    throw std::invalid_argument("output buffer too small: " + std::to_string(output.size()) + " bytes for " +
                                std::to_string(output_cursor_));
  if (ranges_overlap(input.data(), input.size(), output.data(), output.size()))
    throw std::invalid_argument("packed input and output buffers must not overlap");
  plan_.input = input;
  plan_.output = output;
  finish(plan_);
  return std::move(plan_);
}

void BatchBuilder::finish(BatchPlan& plan) {
  const size_t num_requests = plan.requests.size();
  const size_t num_suites = plan.suites.size();
  key_index_.clear();
  data_lens_.clear();
  form_ = 0;
  input_cursor_ = output_cursor_ = 0;
  if (keep_order_) {  // the caller's order; a group per run of one suite
    plan.order.resize(num_requests);
    std::iota(plan.order.begin(), plan.order.end(), 0u);
    plan.groups.clear();
    for (uint32_t i = 0; i < num_requests; ++i) {
      const BatchRequest& r = plan.requests[i];
      if (plan.groups.empty() || plan.groups.back().suite != r.suite) {
        RequestGroup group;
        group.suite = r.suite;
        group.first = i;
        plan.groups.push_back(group);
      }
      RequestGroup& group = plan.groups.back();
      ++group.count;
      group.total_input_len += r.input_len;
      group.max_input_len = std::max(group.max_input_len, r.input_len);
    }
    return;
  }
  // Counting sort by suite keeps the caller's order within a suite; then longest first, then by
  // key, only where lengths differ (a batch of equal lengths, the common case, skips the sort).
  std::vector<uint32_t> suite_start(num_suites + 1, 0);
  for (const auto& r : plan.requests) ++suite_start[r.suite + 1];
  std::partial_sum(suite_start.begin(), suite_start.end(), suite_start.begin());
  plan.order.assign(num_requests, 0);
  std::vector<uint32_t> cursor(suite_start.begin(), suite_start.end() - 1);
  for (size_t i = 0; i < num_requests; ++i) plan.order[cursor[plan.requests[i].suite]++] = static_cast<uint32_t>(i);
  plan.groups.clear();
  for (size_t s = 0; s < num_suites; ++s) {
    const uint32_t first = suite_start[s], last = suite_start[s + 1];
    if (first == last) continue;
    RequestGroup group;
    group.suite = static_cast<uint32_t>(s);
    group.first = first;
    group.count = last - first;
    bool equal_lengths = true;
    const uint64_t first_len = plan.requests[plan.order[first]].input_len;
    for (uint32_t i = first; i < last; ++i) {
      const uint64_t len = plan.requests[plan.order[i]].input_len;
      group.total_input_len += len;
      group.max_input_len = std::max(group.max_input_len, len);
      equal_lengths &= len == first_len;
    }
    if (!equal_lengths) {
      std::stable_sort(plan.order.begin() + first, plan.order.begin() + last, [&](uint32_t a, uint32_t b) {
        const BatchRequest& ra = plan.requests[a];
        const BatchRequest& rb = plan.requests[b];
        if (ra.input_len != rb.input_len) return ra.input_len > rb.input_len;
        return ra.key < rb.key;
      });
    }
    plan.groups.push_back(group);
  }
}

}  // namespace gpucrypt::engine
