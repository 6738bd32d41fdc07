// cpu_batch.cpp: the CPU backend's batch executor, on the thread pool (cpu_batch.hpp).
//
// Work: the plan's requests in `order` become tasks (a whole message, or a 256 KiB piece of a
// large message in a parallel mode: ECB, CTR, CBC/CFB decryption); consecutive tasks are packed
// into units of about 64 KiB, and every pool thread claims units from one atomic counter until
// none are left. Groups are longest first, so the big messages start early and the small ones
// fill the gaps at the end.
//
// Keys: each thread keeps, per suite, the schedule (an OpenSSL context or a portable cipher
// struct) of the key it used last; `order` sorts a suite's requests by length and then by key,
// so a key shared by many messages is expanded once per thread that meets it, and a batch of
// distinct keys expands each once, in cache, right before use. (Expanding every key up front
// would cost a pass over memory and up to 2 KiB per key for nothing on a CPU; a GPU executor
// expands them up front on the device.)
//
// Implementations: the variant each suite runs is chosen by the CPU backend's one selection
// function (backends/cpu/variants.cpp), so a batch reports the same variants as Cipher/AEAD.
// OpenSSL variants go through EVP directly (one context per thread and suite, re-keyed only when
// the key changes); portable variants through the generic modes in src/modes/. Constant-time
// exactly when the variant is (see VariantInfo::constant_time). Contexts and schedules are wiped
// when a run ends.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

#include "backends/cpu/cpu_batch.hpp"
#include "backends/cpu/openssl_gcm.hpp"
#include "backends/cpu/vaes_gcm.hpp"
#include "backends/cpu/thread_pool.hpp"
#include "backends/cpu/variants.hpp"
#include "plan/batch_plan.hpp"
#include "core/counter.h"
#include "modes/modes.hpp"
#include "modes/ciphers.hpp"
#include "modes/mode_rules.hpp"

#if defined(GPUCRYPT_WITH_OPENSSL)
#include <openssl/evp.h>
#endif

namespace gpucrypt::cpu {

namespace {

using engine::BatchPlan;
using engine::BatchRequest;
using engine::BatchResult;
using engine::KeySlot;
using engine::kNoKey;
using engine::Operation;
using engine::RequestStatus;
using engine::Suite;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kSplitMinLen = 512 * 1024;  // messages at least this long are split...
constexpr uint64_t kPieceLen = 256 * 1024;     // ...into pieces of this many bytes
constexpr uint64_t kUnitLen = 64 * 1024;       // a thread claims about this much work at a time
constexpr uint64_t kTaskOverheadLen = 256;     // what a task costs beyond its bytes, in bytes
constexpr size_t kMaxTasksPerUnit = 256;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A piece [begin, end) of one request's input (byte offsets, begin block-aligned).
struct Task {
  uint32_t request;
  uint64_t begin, end;
};

// Per-thread, per-suite scratch (contexts, key schedules); wiped by its destructor.
struct Scratch {
  virtual ~Scratch() = default;
};

struct ThreadState {
  explicit ThreadState(size_t num_suites) : by_suite(num_suites) {}
  std::vector<std::unique_ptr<Scratch>> by_suite;

  template <class T, class... Args>
  T& scratch(uint32_t suite, Args&&... args) {
    auto& slot = by_suite[suite];
    if (!slot) slot = std::make_unique<T>(std::forward<Args>(args)...);
    return static_cast<T&>(*slot);
  }
};

// Everything a runner needs to execute one task.
struct TaskContext {
  const BatchPlan& plan;
  const BatchRequest& request;
  uint32_t request_index;
  uint64_t begin, end;
  ThreadState& thread;
  BatchResult& result;

  const Suite& suite() const { return plan.suites[request.suite]; }
  const KeySlot& key() const { return plan.keys[request.key]; }
  const uint8_t* key_bytes() const { return plan.key_of(key()); }
  const uint8_t* in() const { return plan.input_of(request); }
  uint8_t* out() const { return plan.output_of(request); }
  const uint8_t* iv() const { return plan.iv_of(request); }
  bool is_last_piece() const { return end == request.input_len; }
};

bool decrypting(const Suite& s) { return s.operation == Operation::decrypt; }

// The ciphertext block before a piece starting at `begin` (the IV at 0): what a CBC/CFB
// decryption piece starts from (modes::range_iv).
const uint8_t* chain_before(const TaskContext& t) {
  return t.begin == 0 ? t.iv() : t.in() + t.begin - 16;
}

// PKCS#7 check of a padded decryption, by the task that produced its last block.
void finish_padding(const TaskContext& t) {
  if (!(t.suite().pkcs7 && decrypting(t.suite()) && t.is_last_piece())) return;
  size_t tail_len = 0;
  const bool ok = modes::pkcs7_unpadded_len(t.out() + t.request.input_len - 16, &tail_len);
  t.result.output_len[t.request_index] = t.request.input_len - 16 + tail_len;
  if (!ok) t.result.status[t.request_index] = RequestStatus::invalid_padding;
}

// An XTS request's data units and their tweaks: the IV as the one tweak of the whole message, or,
// for a suite of data units (Suite::xts_unit_len), unit u of the request under first + u.
template <class Body>
void for_each_xts_unit(const TaskContext& t, Body&& body) {
  const uint64_t unit_len = t.suite().xts_unit_len;
  if (unit_len == 0) return body(t.iv(), 0, t.request.input_len);
  const modes::XtsUnitNumber first{Suite::first_unit_of(t.iv()), 0};
  uint8_t tweak[16];
  for (uint64_t u = 0; u < t.request.input_len / unit_len; ++u) {
    first.plus(u).tweak(tweak);
    body(tweak, u * unit_len, unit_len);
  }
}

class SuiteRunner {
 public:
  explicit SuiteRunner(const VariantInfo& variant) : variant_name_(variant.name) {}
  explicit SuiteRunner(std::string variant_name) : variant_name_(std::move(variant_name)) {}
  virtual ~SuiteRunner() = default;
  const std::string& variant_name() const { return variant_name_; }
  virtual bool can_split() const { return false; }
  virtual void run(const TaskContext& task) = 0;

 private:
  std::string variant_name_;
};

// Cipher requests whose pieces are independent given the input (modes::is_parallel).
bool splittable(const Suite& s) {
  if (s.operation != Operation::encrypt && s.operation != Operation::decrypt) return false;
  return modes::is_parallel(s.cipher.mode,
                            s.operation == Operation::encrypt ? Direction::encrypt : Direction::decrypt);
}

// ----------------------------------------------------------------------------- portable

template <class Cipher>
struct PortableScratch final : Scratch {
  Cipher data{}, tweak{};
  uint32_t loaded_key = kNoKey;
  ~PortableScratch() override {
    gpucrypt::secure_zero(&data, sizeof data);
    gpucrypt::secure_zero(&tweak, sizeof tweak);
  }
};

template <class Cipher>
class PortableRunner final : public SuiteRunner {
 public:
  PortableRunner(const Suite& suite, const VariantInfo& variant)
      : SuiteRunner(variant), can_split_(splittable(suite)) {}
  bool can_split() const override { return can_split_; }

  void run(const TaskContext& t) override {
    using namespace gpucrypt::modes;
    auto& s = t.thread.scratch<PortableScratch<Cipher>>(t.request.suite);
    const Suite& suite = t.suite();
    if (s.loaded_key != t.request.key) {
      const int half_len = t.key().xts ? t.key().key_len / 2 : t.key().key_len;
      s.data = Cipher::make_host(t.key_bytes(), half_len);
      if (t.key().xts) s.tweak = Cipher::make_host(t.key_bytes() + half_len, half_len);
      s.loaded_key = t.request.key;
    }
    const Cipher& c = s.data;
    const uint8_t* in = t.in() + t.begin;
    uint8_t* out = t.out() + t.begin;
    const uint64_t len = t.end - t.begin;
    const bool encrypt = suite.operation == Operation::encrypt;
    const Direction direction = encrypt ? Direction::encrypt : Direction::decrypt;
    const Mode mode = suite.cipher.mode;
    // Every mode through its kind's traits (modes.hpp): a bulk piece from its start value, a
    // serial message (never split: can_split) along its chain and then its ragged tail.
    switch (kind(mode, direction)) {
      case ModeKind::bulk:
        visit_op<ModeKind::bulk>(mode, direction, [&](auto op) {
          uint8_t start[16] = {};
          if (t.request.iv_len == 16) range_iv(mode, t.iv(), t.begin / 16, chain_before(t), start);
          decltype(op)::ModeTraits::bulk_range(c, direction, gc_block_load(start), in, out, len);
        });
        break;
      case ModeKind::serial:
        visit_op<ModeKind::serial>(mode, direction, [&](auto op) {
          using Traits = typename decltype(op)::ModeTraits;
          const gc_block chain = Traits::serial_blocks(c, direction, gc_block_load(t.iv()), in, out, len / 16);
          if constexpr (!Traits::kWholeBlocks) {
            const uint64_t whole = len - len % 16;
            if (whole != len) Traits::serial_tail(c, direction, chain, in + whole, out + whole, len - whole);
          }
        });
        break;
      case ModeKind::xts:
        for_each_xts_unit(t, [&](const uint8_t tweak[16], uint64_t offset, uint64_t unit_len) {
          if (encrypt) xts_encrypt(c, s.tweak, gc_block_load(tweak), in + offset, out + offset, unit_len);
          else xts_decrypt(c, s.tweak, gc_block_load(tweak), in + offset, out + offset, unit_len);
        });
        break;
      case ModeKind::aead: run_gcm(t, c); return;
    }
    finish_padding(t);
  }

 private:
  static void run_gcm(const TaskContext& t, const Cipher& c) {
    using namespace gpucrypt::modes;
    const Suite& suite = t.suite();
    const BatchRequest& r = t.request;
    const uint8_t* aad = t.plan.aad_of(r);
    if (suite.operation == Operation::seal) {
      gcm_encrypt(c, t.iv(), r.iv_len, aad, r.aad_len, t.in(), t.out(), r.input_len, t.out() + r.input_len,
                  suite.tag_len);
      return;
    }
    const bool ok = r.input_len >= suite.tag_len &&
                    gcm_decrypt(c, t.iv(), r.iv_len, aad, r.aad_len, t.in(), t.out(), r.input_len - suite.tag_len,
                                t.in() + r.input_len - suite.tag_len, suite.tag_len) == ModeStatus::ok;
    if (!ok) t.result.status[t.request_index] = RequestStatus::authentication_failed;
  }

  bool can_split_;
};

// ----------------------------------------------------------------------------- OpenSSL

#if defined(GPUCRYPT_WITH_OPENSSL)

[[noreturn]] void openssl_failed(const char* what) {
  throw std::runtime_error(std::string("OpenSSL failed in ") + what);
}

struct EvpScratch final : Scratch {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  uint32_t loaded_key = kNoKey;
  size_t iv_len = 0;
  EvpScratch() {
    if (!ctx) openssl_failed("EVP_CIPHER_CTX_new");
  }
  ~EvpScratch() override { EVP_CIPHER_CTX_free(ctx); }  // OpenSSL cleanses the key schedule
};

// EVP lengths are int: feed at most 1 GiB per call.
void evp_update(EVP_CIPHER_CTX* ctx, const uint8_t* in, uint8_t* out, uint64_t len) {
  constexpr uint64_t kMaxPerCall = uint64_t{1} << 30;
  while (len > 0) {
    const uint64_t step = std::min(len, kMaxPerCall);
    int written = 0;
    if (!EVP_CipherUpdate(ctx, out, &written, in, static_cast<int>(step))) openssl_failed("EVP_CipherUpdate");
    if (in) in += step;
    if (out) out += step;
    len -= step;
  }
}

struct EvpCipherDeleter {
  void operator()(EVP_CIPHER* c) const { EVP_CIPHER_free(c); }
};

// EVP_CIPHER objects are immutable and shareable; fetching one takes a lock and a lookup, so
// each is fetched once per process (a stream makes one batch call per few MiB).
const EVP_CIPHER* fetch_cipher(const CipherName& name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<EVP_CIPHER, EvpCipherDeleter>> fetched;
  const std::string id = std::string(algorithm_name(name.algorithm)) + "-" + std::to_string(name.key_bits) + "-" +
                         std::string(mode_name(name.mode));
  std::lock_guard<std::mutex> lock(mutex);
  auto& cipher = fetched[id];
  if (!cipher) cipher.reset(EVP_CIPHER_fetch(nullptr, id.c_str(), nullptr));
  if (!cipher) throw std::runtime_error("OpenSSL has no " + id);
  return cipher.get();
}

class OpenSslCipherRunner final : public SuiteRunner {
 public:
  OpenSslCipherRunner(const Suite& suite, const VariantInfo& variant)
      : SuiteRunner(variant), cipher_(fetch_cipher(suite.cipher)), can_split_(splittable(suite)) {}
  bool can_split() const override { return can_split_; }

  void run(const TaskContext& t) override {
    const Suite& suite = t.suite();
    auto& s = t.thread.scratch<EvpScratch>(t.request.suite);
    const int encrypt = suite.operation == Operation::encrypt;
    // The IV of this piece (modes::range_iv): CTR's counter + block offset, CBC/CFB the
    // preceding ciphertext block; ECB has none.
    uint8_t piece_iv[16];
    const uint8_t* iv = nullptr;
    if (t.request.iv_len == 16 && suite.cipher.mode != Mode::xts) {
      modes::range_iv(suite.cipher.mode, t.iv(), t.begin / 16, chain_before(t), piece_iv);
      iv = piece_iv;
    } else if (t.request.iv_len != 0) {
      iv = t.iv();  // XTS: the tweak of the request's first data unit
    }
    // Re-keying only when the key changes keeps OpenSSL's schedule across a run of one key;
    // an IV-only init resets the mode state (CTR/CFB/OFB position, chaining value).
    const bool rekey = s.loaded_key != t.request.key;
    if (!EVP_CipherInit_ex2(s.ctx, rekey ? cipher_ : nullptr, rekey ? t.key_bytes() : nullptr, iv, encrypt,
                            nullptr))
      openssl_failed("EVP_CipherInit_ex2");
    if (rekey) {
      EVP_CIPHER_CTX_set_padding(s.ctx, 0);
      s.loaded_key = t.request.key;
    }
    if (suite.cipher.mode == Mode::xts && suite.xts_unit_len != 0) {  // a new tweak per unit
      for_each_xts_unit(t, [&](const uint8_t tweak[16], uint64_t offset, uint64_t unit_len) {
        if (!EVP_CipherInit_ex2(s.ctx, nullptr, nullptr, tweak, encrypt, nullptr)) openssl_failed("EVP_CipherInit_ex2");
        evp_update(s.ctx, t.in() + offset, t.out() + offset, unit_len);
      });
      return;
    }
    evp_update(s.ctx, t.in() + t.begin, t.out() + t.begin, t.end - t.begin);
    finish_padding(t);
  }

 private:
  const EVP_CIPHER* cipher_;
  bool can_split_;
};

#endif  // GPUCRYPT_WITH_OPENSSL

template <class Context>
struct GcmScratch final : Scratch {
  Context context;  // wipes its key schedule when freed
  uint32_t loaded_key = kNoKey;
};

// AES-GCM through a keyed context (openssl_gcm.hpp or vaes_gcm.hpp): keyed once per key and
// thread; open verifies the tag before it writes. Nonces longer than kMaxIvLen (OpenSSL refuses
// over 128 bytes) go through the constant-time bitsliced AES, so the variant keeps its
// constant-time property and the full IV range.
template <class Context, size_t kMaxIvLen>
class GcmRunner final : public SuiteRunner {
 public:
  GcmRunner(const Suite&, const VariantInfo& variant) : SuiteRunner(variant) {}

  void run(const TaskContext& t) override {
    const Suite& suite = t.suite();
    const BatchRequest& r = t.request;
    if (r.iv_len > kMaxIvLen) return long_nonce(t);
    const bool seal = suite.operation == Operation::seal;
    if (!seal && r.input_len < suite.tag_len) {
      t.result.status[t.request_index] = RequestStatus::authentication_failed;
      return;
    }
    auto& s = t.thread.scratch<GcmScratch<Context>>(r.suite);
    if (s.loaded_key != r.key) {
      s.context.set_key(suite.cipher.key_bits, t.key_bytes());
      s.loaded_key = r.key;
    }
    const ByteSpan nonce(t.iv(), r.iv_len), aad(t.plan.aad_of(r), r.aad_len);
    if (seal) {
      s.context.seal(nonce, aad, t.in(), t.out(), r.input_len, t.out() + r.input_len, suite.tag_len);
      return;
    }
    const uint64_t data_len = r.input_len - suite.tag_len;
    if (!s.context.open(nonce, aad, t.in(), t.out(), data_len, t.in() + data_len, suite.tag_len))
      t.result.status[t.request_index] = RequestStatus::authentication_failed;
  }

 private:
  static void long_nonce(const TaskContext& t) {
    using namespace gpucrypt::modes;
    const Suite& suite = t.suite();
    const BatchRequest& r = t.request;
    auto cipher = AesBitsliced<>::make_host(t.key_bytes(), t.key().key_len);
    const uint8_t* aad = t.plan.aad_of(r);
    if (suite.operation == Operation::seal) {
      gcm_encrypt(cipher, t.iv(), r.iv_len, aad, r.aad_len, t.in(), t.out(), r.input_len, t.out() + r.input_len,
                  suite.tag_len);
    } else if (r.input_len < suite.tag_len ||
               gcm_decrypt(cipher, t.iv(), r.iv_len, aad, r.aad_len, t.in(), t.out(), r.input_len - suite.tag_len,
                           t.in() + r.input_len - suite.tag_len, suite.tag_len) != ModeStatus::ok) {
      t.result.status[t.request_index] = RequestStatus::authentication_failed;
    }
    gpucrypt::secure_zero(&cipher, sizeof cipher);
  }
};


// ----------------------------------------------------------------------------- hashes

class HashRunner final : public SuiteRunner {
 public:
  explicit HashRunner(const Suite& suite)
      : SuiteRunner(hash::create_hash(suite.hash_name, suite.hash_params, suite.variant)->variant()),
        default_params_(suite.hash_params.function_name.empty() && suite.hash_params.customization.empty() &&
                        suite.hash_params.block_size == hash::HashParams{}.block_size) {}

  void run(const TaskContext& t) override {
    const Suite& suite = t.suite();
    if (default_params_) {
      // hash_once: no context made per request (a context with OpenSSL's EVP set-up cost more
      // than the permutations of a 64-byte SHA3-256); small plain sponges run on the stack.
      hash::hash_once(suite.hash_name, suite.variant, t.in(), t.request.input_len, t.out(), suite.hash_out_len);
      return;
    }
    auto context = hash::create_hash(suite.hash_name, suite.hash_params, suite.variant);
    context->update(t.in(), t.request.input_len);
    context->finalize(t.out(), suite.hash_out_len);
  }

 private:
  bool default_params_;  // what hash_once computes (it takes no cSHAKE N/S, ParallelHash B)
};

// ----------------------------------------------------------------------------- selection

template <class Cipher>
std::unique_ptr<SuiteRunner> portable(const Suite& suite, const VariantInfo& v) {
  return std::make_unique<PortableRunner<Cipher>>(suite, v);
}

std::unique_ptr<SuiteRunner> make_runner(const Suite& suite) {
  using namespace gpucrypt::modes;
  if (suite.operation == Operation::hash) return std::make_unique<HashRunner>(suite);
  if (engine::is_per_message_aead(suite))  // the CPU Device's run_batch runs these (device/batch_run.cpp)
    throw std::logic_error(suite.describe() + " is not planned by the CPU batch executor");
  const VariantInfo& v = cpu::select_variant_for(suite.cipher, suite.variant);
#if defined(GPUCRYPT_WITH_OPENSSL)
  if (v.name.ends_with("_openssl")) {
    if (suite.cipher.mode == Mode::gcm)
      return std::make_unique<GcmRunner<cpu::OpenSslGcmContext, cpu::kOpenSslGcmMaxIvLen>>(suite, v);
    return std::make_unique<OpenSslCipherRunner>(suite, v);
  }
#endif
  if (v.name == "aes_vaes_gcm")
    return std::make_unique<GcmRunner<cpu::vaes_gcm::Context, SIZE_MAX>>(suite, v);
  if (v.name == "aes_ttable") return portable<AesTTable<>>(suite, v);
  if (v.name == "aes_bitsliced") return portable<AesBitsliced<>>(suite, v);
  if (v.name == "camellia_ttable") return portable<CamelliaTTable>(suite, v);
  if (v.name == "sc2000_table") return portable<Sc2000Table>(suite, v);
  throw std::invalid_argument("variant '" + v.name + "' cannot run in a CPU batch");
}

// Tasks in execution order, and units: [unit_start[u], unit_start[u + 1]) of the task list.
void make_work(const BatchPlan& plan, const std::vector<std::unique_ptr<SuiteRunner>>& runners,
               bool split, std::vector<Task>& tasks, std::vector<size_t>& unit_start) {
  tasks.reserve(plan.requests.size());
  for (uint32_t index : plan.order) {
    const BatchRequest& r = plan.requests[index];
    if (split && r.input_len >= kSplitMinLen && runners[r.suite]->can_split()) {
      for (uint64_t begin = 0; begin < r.input_len; begin += kPieceLen)
        tasks.push_back({index, begin, std::min(r.input_len, begin + kPieceLen)});
    } else {
      tasks.push_back({index, 0, r.input_len});
    }
  }
  uint64_t unit_cost = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (i == 0 || unit_cost >= kUnitLen || i - unit_start.back() >= kMaxTasksPerUnit) {
      unit_start.push_back(i);
      unit_cost = 0;
    }
    unit_cost += tasks[i].end - tasks[i].begin + kTaskOverheadLen;
  }
  unit_start.push_back(tasks.size());
}

}  // namespace

BatchResult run_batch(const BatchPlan& plan) {
  const auto start = Clock::now();
  BatchResult result;
  result.reset(plan);
  result.device = "cpu";
  result.executor = "cpu";
  std::vector<std::unique_ptr<SuiteRunner>> runners(plan.suites.size());
  for (const auto& group : plan.groups) {
    runners[group.suite] = make_runner(plan.suites[group.suite]);
    result.suite_variants[group.suite] = runners[group.suite]->variant_name();
  }
  ThreadPool& pool = ThreadPool::global();
  std::vector<Task> tasks;
  std::vector<size_t> unit_start;
  make_work(plan, runners, pool.num_threads() > 1, tasks, unit_start);
  const size_t num_units = unit_start.size() - 1;
  result.timings.key_setup_s = seconds_since(start);  // runner setup; key schedules are lazy

  const auto compute_start = Clock::now();
  std::atomic<size_t> next_unit{0};
  std::atomic<bool> failed{false};
  auto worker = [&] {
    ThreadState thread(plan.suites.size());
    try {
      for (size_t u; !failed.load(std::memory_order_relaxed) && (u = next_unit.fetch_add(1)) < num_units;) {
        for (size_t i = unit_start[u]; i < unit_start[u + 1]; ++i) {
          const Task& task = tasks[i];
          const BatchRequest& r = plan.requests[task.request];
          runners[r.suite]->run(TaskContext{plan, r, task.request, task.begin, task.end, thread, result});
        }
      }
    } catch (...) {
      failed = true;
      throw;
    }
  };
  const size_t num_workers = std::min<size_t>(pool.num_threads(), num_units);
  if (num_workers <= 1) {
    worker();
  } else {
    pool.parallel_for(num_workers, 1, [&](size_t begin, size_t end) {
      for (size_t w = begin; w < end; ++w) worker();
    });
  }
  engine::wipe_failed_outputs(plan, result);
  result.timings.compute_s = seconds_since(compute_start);
  result.timings.total_s = seconds_since(start);
  return result;
}

}  // namespace gpucrypt::cpu
