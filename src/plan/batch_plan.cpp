// batch_plan.cpp: the plan's own helpers, which every executor (the backends' cpu/cpu_batch.cpp
// and cuda/cuda_batch.cu, the generic one in src/device/batch_run.cpp) and the builder
// (src/engine/batch_builder.cpp) share: suites' identity and names, output lengths, the
// self-wiping buffers, result set-up and the wiping of failed outputs. Below the backends (the
// gpucrypt_plan layer), so that a backend's executor reaches them without calling up. No
// cryptography happens here.
#include <cstring>
#include <mutex>

#include "base/names.hpp"
#include "gpucrypt/parallel.hpp"
#include "plan/batch_plan.hpp"

namespace gpucrypt::engine {

namespace {

std::string_view operation_name(Operation op) {
  switch (op) {
    case Operation::encrypt: return "encrypt";
    case Operation::decrypt: return "decrypt";
    case Operation::seal: return "seal";
    case Operation::open: return "open";
    case Operation::hash: return "hash";
  }
  return "?";
}

}  // namespace

// ----------------------------------------------------------------------------- Suite

bool Suite::same_as(const Suite& o) const {
  if (operation != o.operation || variant != o.variant) return false;
  if (operation == Operation::hash)
    return hash_name == o.hash_name && hash_out_len == o.hash_out_len &&
           hash_params.function_name == o.hash_params.function_name &&
           hash_params.customization == o.hash_params.customization &&
           hash_params.block_size == o.hash_params.block_size;
  if (is_aead_operation(operation)) return aead.canonical == o.aead.canonical && tag_len == o.tag_len;
  return cipher.canonical == o.cipher.canonical && pkcs7 == o.pkcs7 && xts_unit_len == o.xts_unit_len;
}

uint64_t Suite::first_unit_of(const uint8_t iv[16]) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | iv[i];
  return n;
}

std::string Suite::describe() const {
  if (operation == Operation::hash) return hash_name;
  if (is_aead_operation(operation) && !aead.canonical.empty()) return aead.canonical + " " + std::string(operation_name(operation));
  return cipher.canonical + " " + std::string(operation_name(operation));
}

uint64_t output_len_for(const Suite& suite, uint64_t input_len) {
  switch (suite.operation) {
    case Operation::encrypt:
    case Operation::decrypt: return input_len;
    case Operation::seal: return input_len + suite.tag_len;
    case Operation::open: return input_len >= suite.tag_len ? input_len - suite.tag_len : 0;
    case Operation::hash: return suite.hash_out_len;
  }
  return 0;
}

// ----------------------------------------------------------------------------- buffers, plan

SecureBuffer::SecureBuffer(SecureBuffer&& other) noexcept
    : data_(std::move(other.data_)), len_(other.len_), capacity_(other.capacity_) {
  other.len_ = other.capacity_ = 0;
}

SecureBuffer& SecureBuffer::operator=(SecureBuffer&& other) noexcept {
  if (this != &other) {
    clear();
    data_ = std::move(other.data_);
    len_ = other.len_;
    capacity_ = other.capacity_;
    other.len_ = other.capacity_ = 0;
  }
  return *this;
}

// Large buffers are parked here after use (zeroed) and handed out again: a fresh allocation of
// tens of MiB costs a page fault per 4 KiB on first touch, which measured slower than the AES
// itself (about 2.5 us per page, against 0.3 us to encrypt it). At most kParkedBudget bytes stay
// parked; buffers under kParkMinLen are left to malloc.
namespace {
constexpr size_t kParkMinLen = size_t{1} << 20;
constexpr size_t kParkedBudget = size_t{128} << 20;

struct ParkedBuffer {
  std::unique_ptr<uint8_t[]> data;
  size_t capacity;
};

class BufferParking {
 public:
  std::unique_ptr<uint8_t[]> take(size_t len, size_t* capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < parked_.size(); ++i) {
      if (parked_[i].capacity >= len && parked_[i].capacity <= 2 * len) {
        *capacity = parked_[i].capacity;
        auto data = std::move(parked_[i].data);
        parked_bytes_ -= parked_[i].capacity;
        parked_.erase(parked_.begin() + static_cast<std::ptrdiff_t>(i));
        return data;
      }
    }
    return nullptr;
  }
  void give(std::unique_ptr<uint8_t[]> data, size_t capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    while (!parked_.empty() && parked_bytes_ + capacity > kParkedBudget) {
      parked_bytes_ -= parked_.front().capacity;
      parked_.erase(parked_.begin());
    }
    if (capacity > kParkedBudget) return;
    parked_bytes_ += capacity;
    parked_.push_back({std::move(data), capacity});
  }

 private:
  std::mutex mutex_;
  std::vector<ParkedBuffer> parked_;
  size_t parked_bytes_ = 0;
};

BufferParking& parking() {
  static BufferParking* instance = new BufferParking;  // never destroyed: usable at exit
  return *instance;
}
}  // namespace

void SecureBuffer::resize(size_t len) {
  clear();
  if (len >= kParkMinLen) data_ = parking().take(len, &capacity_);
  if (!data_ && len > 0) {
    data_.reset(new uint8_t[len]);
    capacity_ = len;
    // New memory, written once through: huge pages spare most of its first-touch faults.
    if (len >= kParkMinLen) cpu::advise_huge_pages(data_.get(), len);
  }
  len_ = len;
}

void SecureBuffer::clear() {
  if (data_) {
    secure_zero(data_.get(), len_);  // bytes beyond len_ were zeroed when last released
    if (capacity_ >= kParkMinLen) parking().give(std::move(data_), capacity_);
  }
  data_.reset();
  len_ = capacity_ = 0;
}

BatchPlan::~BatchPlan() {
  if (!key_bytes.empty()) secure_zero(key_bytes.data(), key_bytes.size());
  if (!params.empty()) secure_zero(params.data(), params.size());
}

uint64_t BatchPlan::total_input_len() const {
  uint64_t total = 0;
  for (const auto& g : groups) total += g.total_input_len;
  return total;
}

void BatchResult::reset(const BatchPlan& plan) {
  status.assign(plan.requests.size(), RequestStatus::ok);
  output_len.resize(plan.requests.size());
  for (size_t i = 0; i < plan.requests.size(); ++i) output_len[i] = plan.requests[i].output_len;
  suite_variants.assign(plan.suites.size(), "");
}

void wipe_failed_outputs(const BatchPlan& plan, BatchResult& result) {
  const bool owned_output = plan.owns_output();
  for (size_t i = 0; i < plan.requests.size(); ++i) {
    if (result.status[i] == RequestStatus::ok) continue;
    const BatchRequest& r = plan.requests[i];
    // Bad padding is found after decrypting: that plaintext goes. A failed open wrote nothing,
    // so a caller's output keeps its bytes; the plan's own output is zeroed (never initialised).
    if (result.status[i] == RequestStatus::invalid_padding || owned_output) secure_zero(plan.output_of(r), r.output_len);
    result.output_len[i] = 0;
  }
}

void zero_failed_outputs(const BatchPlan& plan, const BatchResult& result) {
  for (size_t i = 0; i < plan.requests.size(); ++i)
    if (result.status[i] != RequestStatus::ok) secure_zero(plan.output_of(plan.requests[i]), plan.requests[i].output_len);
}

}  // namespace gpucrypt::engine
