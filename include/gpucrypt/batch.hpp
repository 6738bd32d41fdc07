// batch.hpp: the batch engine: many independent messages, any mix of ciphers, modes, directions,
// key sizes, lengths and keys (any AEAD and Keccak hashes too), described once and run in one call.
//
// A BatchPlan is plain data: three packed byte buffers (input, output, small parameters) and
// arrays of fixed-size records that index them. Nothing in it points at a caller's object, so the
// CPU executor (src/backends/cpu/cpu_batch.cpp) and the CUDA one (src/backends/cuda/cuda_batch.cu)
// take the same plan: the CUDA side copies `input`, `params` and `key_bytes` to the device once,
// runs one launch per RequestGroup (or fewer) and copies `output` back. BatchBuilder makes plans;
// its cost is one record per message, plus one memcpy of each message into the packed input in the
// gather form (none in the packed form, where the caller already holds the messages back to back).
//
// Grouping. `order` lists the requests suite by suite (a suite fixes algorithm, key size, mode,
// direction, padding, tag length or hash: everything but key, IV and data), and within a suite
// longest first, then by key. A RequestGroup is one suite's run of `order`, so a warp (or a CPU
// thread) given consecutive requests of a group does alike work, and long messages start first.
//
// Keys are stored once per distinct (algorithm, key size, XTS or not, key bytes): an executor
// expands each distinct key once (the CPU executor on the host, a CUDA executor on the device
// when there are many), and requests refer to them by index.
//
// Ownership and wiping: a plan owns copies of keys, IVs, AAD and (gather form) the packed input
// and the output; all of them are zeroed when the plan is destroyed. In the packed form the input
// and output belong to the caller, who wipes them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpucrypt/aead.hpp"
#include "gpucrypt/cipher.hpp"
#include "gpucrypt/hash.hpp"

namespace gpucrypt::engine {

// What one request does. seal/open are AEAD (any name gpucrypt/aead.hpp lists): seal writes
// ciphertext || tag, open reads ciphertext || tag and writes the plaintext only if the tag verifies
// (the tag is checked over the ciphertext first; a failed open writes no byte of its output on any
// executor).
enum class Operation : uint8_t { encrypt, decrypt, seal, open, hash };

// Suite: everything that requests of one group share apart from key, IV, AAD and data.
struct Suite {
  Operation operation = Operation::encrypt;
  CipherName cipher{};           // every operation but hash (seal/open: aead.cipher(), see below)
  // seal/open: the AEAD. Set either this (parse_aead_name: "aes-256-gcm-siv") or, for GCM, only
  // `cipher` ("aes-256-gcm"); BatchBuilder::add_suite fills in the other. The backends' batch
  // executors plan ciphers, GCM and hashes; a request of another construction runs through the
  // device's Aead (Device::create_aead), one message at a time: over the thread pool on the CPU,
  // each with its own kernels on a GPU (Device::run_batch's CPU and CUDA overrides, and the
  // generic executor, take those requests apart; src/device/batch_run.cpp).
  AeadName aead{};
  bool pkcs7 = false;            // ECB/CBC with PKCS#7 padding (encrypt/decrypt only)
  uint8_t tag_len = 16;          // seal/open: the AEAD's tag lengths (GCM 4..16, GCM-SIV 16)
  std::string hash_name;         // hash: canonical name (hash::hash_info)
  hash::HashParams hash_params;  // hash: cSHAKE N/S, ParallelHash B, KangarooTwelve C
  uint64_t hash_out_len = 0;     // hash: digest bytes
  std::string variant;           // requested implementation; "" = the device's default
  // XTS only: each request is len / xts_unit_len data units back to back (dm-crypt's sectors),
  // unit u under the tweak first + u, where the request's 16-byte IV is the first unit's number
  // (little-endian, below 2^64) instead of a tweak (CipherStream::update_units); 0: the whole
  // message is one data unit under the IV as its tweak.
  uint64_t xts_unit_len = 0;

  bool same_as(const Suite& other) const;
  // The first unit's number of a data-unit request (its IV, little-endian).
  static uint64_t first_unit_of(const uint8_t iv[16]);
  std::string describe() const;  // "aes-256-gcm-siv open", "sha3-256", for messages
};

inline constexpr uint32_t kNoKey = UINT32_MAX;

// BatchRequest: one message. Offsets are bytes into the plan's buffers.
struct BatchRequest {
  uint32_t suite = 0;          // plan.suites index
  uint32_t key = kNoKey;       // plan.keys index (kNoKey for hashes)
  uint64_t input_offset = 0;   // plan.input
  uint64_t input_len = 0;      // includes PKCS#7 padding for padded encryption
  uint64_t output_offset = 0;  // plan.output
  uint64_t output_len = 0;     // bytes reserved; BatchResult::output_len says how many are valid
  uint64_t iv_offset = 0;      // plan.params: IV, initial counter block, XTS tweak or AEAD nonce
  uint64_t aad_offset = 0;     // plan.params
  uint64_t aad_len = 0;
  uint32_t iv_len = 0;
};

// KeySlot: one distinct key; XTS slots hold both halves (data key, then tweak key).
struct KeySlot {
  Algorithm algorithm = Algorithm::aes;
  uint16_t key_len = 0;  // bytes in key_bytes (twice the cipher key for XTS)
  bool xts = false;
  uint64_t offset = 0;   // in plan.key_bytes
};

// RequestGroup: order[first, first + count) all belong to `suite`, longest first.
struct RequestGroup {
  uint32_t suite = 0;
  uint32_t first = 0;
  uint32_t count = 0;
  uint64_t total_input_len = 0;
  uint64_t max_input_len = 0;
};

// A byte buffer that zeroes itself when destroyed or cleared (plaintext). Buffers of 1 MiB and
// more are recycled (zeroed) through a small process-wide cache, so repeated batches do not pay
// first-touch page faults (see batch_plan.cpp).
class SecureBuffer {
 public:
  SecureBuffer() = default;
  explicit SecureBuffer(size_t len) { resize(len); }
  SecureBuffer(SecureBuffer&& other) noexcept;
  SecureBuffer& operator=(SecureBuffer&& other) noexcept;
  ~SecureBuffer() { clear(); }
  void resize(size_t len);  // contents are not preserved; new bytes are not initialised
  void clear();
  // clear() with the bytes zeroed by wipe(data, len) instead of by clear()'s one thread:
  // Batch.run wipes its packed buffers over the pool this way (cpu::parallel_copy's zero fill).
  template <typename Wipe>
  void clear_with(Wipe&& wipe) {
    if (data_) wipe(data_.get(), len_);
    len_ = 0;  // zeroed: clear() parks the buffer without a second pass
    clear();
  }
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return len_; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t len_ = 0;
  size_t capacity_ = 0;
};

struct BatchPlan {
  std::vector<Suite> suites;
  std::vector<KeySlot> keys;
  std::vector<uint8_t> key_bytes;      // wiped by the destructor
  std::vector<BatchRequest> requests;  // in the caller's order
  std::vector<uint32_t> order;         // execution order (see the file comment)
  std::vector<RequestGroup> groups;
  std::vector<uint8_t> params;         // IVs, nonces and AAD; wiped by the destructor
  ByteSpan input;                      // packed messages (owned_input or the caller's)
  MutableByteSpan output;              // packed results (owned_output or the caller's)
  SecureBuffer owned_input, owned_output;

  BatchPlan() = default;
  BatchPlan(BatchPlan&&) = default;
  BatchPlan& operator=(BatchPlan&&) = default;
  ~BatchPlan();

  const uint8_t* input_of(const BatchRequest& r) const { return input.data() + r.input_offset; }
  uint8_t* output_of(const BatchRequest& r) const { return output.data() + r.output_offset; }
  const uint8_t* iv_of(const BatchRequest& r) const { return params.data() + r.iv_offset; }
  const uint8_t* aad_of(const BatchRequest& r) const { return params.data() + r.aad_offset; }
  const uint8_t* key_of(const KeySlot& k) const { return key_bytes.data() + k.offset; }
  uint64_t total_input_len() const;
  // Whether `output` is the plan's own (the gather form, or build_packed without an output).
  bool owns_output() const { return owned_output.size() > 0 && output.data() == owned_output.data(); }
};

enum class RequestStatus : uint8_t {
  ok = 0,
  authentication_failed = 1,  // open: tag mismatch (or input shorter than the tag); nothing written
  invalid_padding = 2,        // PKCS#7 decryption: bad padding; output zeroed
};

// Seconds spent per stage; stages an executor does not have stay 0.
// On CUDA the three stages are timed on the device's stream with events (from the call's start to
// the copies in done, to the kernels done, to the copies out done, plus the host's work after
// them), so the host never waits between stages to time them.
struct BatchTimings {
  double key_setup_s = 0;  // expanding key schedules
  double h2d_s = 0;        // host -> device copies (CUDA), staging included
  double compute_s = 0;    // the cipher/hash work (CPU wall time, or kernel time)
  double d2h_s = 0;        // device -> host copies (CUDA), and the host's copy-out and unpadding
  double total_s = 0;
};

struct BatchResult {
  std::vector<RequestStatus> status;        // per request
  std::vector<uint64_t> output_len;         // per request: valid bytes at output_offset
  // per suite: the variant that ran it; "A+B" when its messages ran under two (the CUDA batch
  // kernels run aes_bitsliced for aes_bitsliced8, whose bulk kernels run its big GCM/XTS messages)
  std::vector<std::string> suite_variants;
  std::string device;                       // "cpu", "cuda:0"
  std::string executor;                     // "cpu", "cuda", "generic"
  BatchTimings timings;

  void reset(const BatchPlan& plan);  // sizes the vectors, status ok, output_len as reserved
};

// BatchBuilder: validates requests and lays out a plan. Two forms, not to be mixed:
//  gather  add(...input) references the caller's message until build(), which copies every
//          message into one packed input (16-byte aligned offsets, PKCS#7 padding appended) and
//          allocates the output;
//  packed  add_packed(...offset, len) names a range of a buffer the caller already holds;
//          build_packed(input, output) lays the outputs back to back in request order (for the
//          file format: sealed chunks are exactly the file's bytes) into the caller's output, or
//          into an owned one when `output` is empty.
// Errors (std::invalid_argument) name the request: "request 3 (aes-256-cbc encrypt): ...".
class BatchBuilder {
 public:
  BatchBuilder();
  ~BatchBuilder();
  BatchBuilder(const BatchBuilder&) = delete;
  BatchBuilder& operator=(const BatchBuilder&) = delete;

  // Interns a suite (checks its parameters) and returns its index.
  uint32_t add_suite(const Suite& suite);
  // key: empty for hashes. iv: empty for ECB and hashes. aad: seal/open only.
  uint32_t add(uint32_t suite, ByteSpan key, ByteSpan iv, ByteSpan aad, ByteSpan input);
  uint32_t add_packed(uint32_t suite, ByteSpan key, ByteSpan iv, ByteSpan aad, uint64_t input_offset,
                      uint64_t input_len);
  void reserve(size_t num_requests);
  size_t size() const;
  // Keeps the caller's order in the plan: no sorting by suite, length or key; a group is a run of
  // consecutive requests of one suite (so interleaved suites make many small groups, each its own
  // launch). For measuring what the planner's sorting buys (the lab's Harrison orderings).
  void keep_submission_order(bool keep) { keep_order_ = keep; }

  BatchPlan build();
  BatchPlan build_packed(ByteSpan input, MutableByteSpan output = {});
  // Output bytes build_packed needs (the sum of every request's output length).
  uint64_t packed_output_len() const;

 private:
  uint32_t add_common(uint32_t suite, ByteSpan key, ByteSpan iv, ByteSpan aad, uint64_t data_len);
  uint32_t intern_key(const Suite& suite, ByteSpan key);
  void finish(BatchPlan& plan);

  BatchPlan plan_;
  std::vector<const uint8_t*> gather_sources_;  // gather form: the caller's message pointers
  std::vector<uint64_t> data_lens_;             // message bytes before PKCS#7 padding
  std::unordered_multimap<size_t, uint32_t> key_index_;  // hash of a key -> its slot
  int form_ = 0;                                // 0 unset, 1 gather, 2 packed
  bool keep_order_ = false;
  uint64_t input_cursor_ = 0, output_cursor_ = 0;
};

// run_batch: executes a plan on "cpu", "cuda[:N]" or "opencl[:N]". executor "" picks the device's
// own (Device::run_batch: the CPU thread pool; the CUDA batch kernels where built; the generic
// executor on OpenCL), "generic" the per-message path over
// the public API (any backend; slow, for devices without a batch executor - OpenCL today - and
// for tests).
// Argument errors throw std::invalid_argument, device failures DeviceError. Results never throw
// for authentication or padding failures: see BatchResult::status.
BatchResult run_batch(const BatchPlan& plan, std::string_view device, std::string_view executor = "");

// The generic executor (src/device/batch_run.cpp): each request through the Device's own streams.
// A backend's own executor is private to it (src/backends/NAME/), reached through its Device.
BatchResult run_batch_generic(const BatchPlan& plan, std::string_view device);

// Output length of a request of `suite` with `input_len` bytes of input (PKCS#7 included).
uint64_t output_len_for(const Suite& suite, uint64_t input_len);
// After the executor finished: zeroes the outputs of requests whose padding was bad (their
// plaintext was written), and of failed opens when the output belongs to the plan; a failed open
// leaves a caller's output exactly as it was (executors never write unauthenticated plaintext).
// Sets output_len 0 for every failed request.
void wipe_failed_outputs(const BatchPlan& plan, BatchResult& result);
// Zeroes the output of every failed request: for a caller that handed in fresh, uninitialised
// memory as the packed output.
void zero_failed_outputs(const BatchPlan& plan, const BatchResult& result);

}  // namespace gpucrypt::engine
