// keccak_sponge.cpp: the streaming sponge, the SP 800-185 / RFC 9861 encodings and the leaf
// hasher shared by ParallelHash and KangarooTwelve.
//
// Constant-time: everything here branches only on lengths and counts (public), and the
// permutation comes from src/core/keccak.h, which is constant-time, through host_keccak_loops
// (portable, the same code built with BMI1/BMI2, or the AVX-512 permutation, constant-time too:
// keccak_host_loops.h), or, for whole leaves eight at a time, from keccak_avx512_x8.cpp
// (constant-time too).
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "../backends/cpu/thread_pool.hpp"
#include "../core/keccak.h"
#include "hash_internal.hpp"
#include "keccak_avx512_x8.h"
#include "keccak_host_loops.h"
#include "keccak_host_loops_body.h"

namespace gpucrypt::hash::detail {

const KeccakHostLoops kKeccakLoopsPortable = host_loops_named("portable");

const KeccakHostLoops* keccak_loops_bmi2() {
#if defined(GPUCRYPT_WITH_KECCAK_BMI2)
  if (__builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2")) return &kKeccakLoopsBmi2;
#endif
  return nullptr;
}

const KeccakHostLoops* keccak_loops_avx512() {
#if defined(GPUCRYPT_WITH_KECCAK_AVX512)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) return &kKeccakLoopsAvx512;
#endif
  return nullptr;
}

// The fastest build this CPU runs: AVX-512 (1.4x BMI2 on the Xeon development machine, 4 MiB
// absorbed at rate 168, 12 rounds), else BMI2 (1.2x portable), else portable.
const KeccakHostLoops& host_keccak_loops() {
  static const KeccakHostLoops* const fastest = [] {
    if (const KeccakHostLoops* avx512 = keccak_loops_avx512()) return avx512;
    if (const KeccakHostLoops* bmi2 = keccak_loops_bmi2()) return bmi2;
    return &kKeccakLoopsPortable;
  }();
  return *fastest;
}

}  // namespace gpucrypt::hash::detail

namespace gpucrypt::hash {

HostKeccak host_keccak() {
  return HostKeccak{detail::host_keccak_loops().name, detail::keccak_oneshot_x8_for_this_cpu() != nullptr ? 8 : 1};
}

}  // namespace gpucrypt::hash

namespace gpucrypt::hash::detail {

void KeccakSponge::restart() {
  gc_keccak_init(state_);
  // A restarted sponge keeps nothing of the last message (hash_once reuses contexts).
  std::memset(buffer_, 0, sizeof buffer_);
  num_buffered_ = 0;
}

void KeccakSponge::absorb(const uint8_t* data, size_t len) {
  if (len == 0) return;
  const size_t rate = static_cast<size_t>(rate_);
  if (num_buffered_ > 0) {
    const size_t take = std::min(len, rate - num_buffered_);
    std::memcpy(buffer_ + num_buffered_, data, take);
    num_buffered_ += take;
    data += take;
    len -= take;
    if (num_buffered_ < rate) return;
    loops_->absorb_blocks(state_, buffer_, 1, rate_, num_rounds_);
    num_buffered_ = 0;
  }
  const size_t num_blocks = len / rate;
  loops_->absorb_blocks(state_, data, num_blocks, rate_, num_rounds_);
  data += num_blocks * rate;
  len -= num_blocks * rate;
  if (len > 0) std::memcpy(buffer_, data, len);
  num_buffered_ = len;
}

void KeccakSponge::absorb_zeros(size_t len) {
  static const uint8_t zeros[200] = {};
  while (len > 0) {
    const size_t take = std::min(len, sizeof zeros);
    absorb(zeros, take);
    len -= take;
  }
}

void KeccakSponge::finish(uint8_t domain, uint8_t* out, size_t out_len) {
  loops_->finish(state_, buffer_, static_cast<int>(num_buffered_), rate_, domain, out, out_len, num_rounds_);
}

namespace {
// Big-endian bytes of value without leading zeros; one zero byte for 0 (SP 800-185 2.3.1).
std::string minimal_big_endian(uint64_t value) {
  std::string bytes;
  do {
    bytes.insert(bytes.begin(), static_cast<char>(value & 0xff));
    value >>= 8;
  } while (value != 0);
  return bytes;
}
}  // namespace

std::string left_encode(uint64_t value) {
  const std::string bytes = minimal_big_endian(value);
  return std::string(1, static_cast<char>(bytes.size())) + bytes;
}

std::string right_encode(uint64_t value) {
  const std::string bytes = minimal_big_endian(value);
  return bytes + std::string(1, static_cast<char>(bytes.size()));
}

std::string encode_string(std::string_view bytes) {
  return left_encode(static_cast<uint64_t>(bytes.size()) * 8) + std::string(bytes);
}

std::string kt_length_encode(uint64_t value) {
  // RFC 9861 3.3: like right_encode, but 0 has no bytes at all, only the count 00.
  std::string bytes = value == 0 ? std::string() : minimal_big_endian(value);
  return bytes + std::string(1, static_cast<char>(bytes.size()));
}

static void absorb_string(KeccakSponge& sponge, const std::string& bytes) {
  sponge.absorb(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

void absorb_bytepad_prefix(KeccakSponge& sponge, std::string_view function_name,
                           std::string_view customization) {
  absorb_string(sponge, left_encode(static_cast<uint64_t>(sponge.rate())));
  absorb_string(sponge, encode_string(function_name));
  absorb_string(sponge, encode_string(customization));
  const size_t used = sponge.num_absorbed_mod_rate();
  if (used != 0) sponge.absorb_zeros(static_cast<size_t>(sponge.rate()) - used);
}

LeafHasher::LeafHasher(size_t leaf_len, int rate, uint8_t domain, int num_rounds, size_t cv_len)
    : leaf_len_(leaf_len), domain_(domain), cv_len_(cv_len), leaf_(rate, num_rounds) {}

void LeafHasher::restart() {
  leaf_.restart();
  leaf_filled_ = 0;
  num_leaves_ = 0;
}

void LeafHasher::update(const uint8_t* data, size_t len, KeccakSponge& outer) {
  if (len == 0) return;
  if (leaf_filled_ > 0) {
    const size_t take = std::min(len, leaf_len_ - leaf_filled_);
    leaf_.absorb(data, take);
    leaf_filled_ += take;
    data += take;
    len -= take;
    if (leaf_filled_ < leaf_len_) return;
    finish(outer);
  }
  const size_t num_whole = len / leaf_len_;
  if (num_whole > 0) {
    hash_whole_leaves(data, num_whole, outer);
    data += num_whole * leaf_len_;
    len -= num_whole * leaf_len_;
  }
  if (len > 0) {
    leaf_.absorb(data, len);
    leaf_filled_ = len;
  }
}

void LeafHasher::finish(KeccakSponge& outer) {
  if (leaf_filled_ == 0) return;
  uint8_t chaining_value[64];
  leaf_.finish(domain_, chaining_value, cv_len_);
  leaf_.restart();
  outer.absorb(chaining_value, cv_len_);
  leaf_filled_ = 0;
  ++num_leaves_;
}

KeccakOneshotX8 keccak_oneshot_x8_for_this_cpu() {
#if defined(GPUCRYPT_WITH_KECCAK_AVX512_X8)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq"))
    return keccak_oneshot_x8;
#endif
  return nullptr;
}

void LeafHasher::chaining_values(const uint8_t* data, size_t num_leaves, uint8_t* out) const {
  // Waking the pool costs tens of microseconds, about what 32 KiB of Keccak costs: below
  // kMinParallelBytes one thread does it.
  constexpr size_t kMinParallelBytes = size_t{256} << 10;
  cpu::ThreadPool& pool = cpu::ThreadPool::global();
  const size_t num_threads = pool.num_threads();
  const int rate = leaf_.rate();
  const int num_rounds = leaf_.num_rounds();
  const auto oneshot = host_keccak_loops().oneshot;
  // Eight leaves at a time where the CPU has AVX-512 (keccak_avx512_x8.h), so ranges are whole
  // groups of eight but the last; the rest one at a time.
  static const KeccakOneshotX8 oneshot_x8 = keccak_oneshot_x8_for_this_cpu();
  const size_t group = oneshot_x8 != nullptr ? 8 : 1;
  auto hash_range = [&](size_t begin, size_t end) {
    size_t i = begin;
    for (; oneshot_x8 != nullptr && end - i >= 8; i += 8) {
      const uint8_t* leaves[8];
      uint8_t* values[8];
      for (size_t k = 0; k < 8; ++k) {
        leaves[k] = data + (i + k) * leaf_len_;
        values[k] = out + (i + k) * cv_len_;
      }
      oneshot_x8(rate, domain_, leaves, leaf_len_, values, cv_len_, num_rounds);
    }
    for (; i < end; ++i)
      oneshot(rate, domain_, data + i * leaf_len_, leaf_len_, out + i * cv_len_, cv_len_, num_rounds);
  };
  if (num_threads > 1 && num_leaves >= 2 * num_threads && num_leaves * leaf_len_ >= kMinParallelBytes) {
    pool.parallel_for(num_leaves, group, hash_range);
  } else {
    hash_range(0, num_leaves);
  }
}

void LeafHasher::absorb_chaining_values(const uint8_t* chaining_values, uint64_t num_leaves, KeccakSponge& outer) {
  if (leaf_filled_ != 0) throw std::logic_error("chaining values must be absorbed at a leaf boundary");
  outer.absorb(chaining_values, static_cast<size_t>(num_leaves) * cv_len_);
  num_leaves_ += num_leaves;
}

void LeafHasher::hash_whole_leaves(const uint8_t* data, size_t num_leaves, KeccakSponge& outer) {
  // A batch's chaining values are buffered, so batches are capped at kMaxBatchLeaves (4 MiB of
  // 64-byte chaining values) and about kBatchInputBytes of input, which keeps each parallel
  // pass long enough to be worth waking the pool.
  constexpr size_t kBatchInputBytes = size_t{64} << 20;
  constexpr size_t kMaxBatchLeaves = size_t{1} << 16;
  const size_t num_threads = cpu::ThreadPool::global().num_threads();
  std::vector<uint8_t> buffer;
  while (num_leaves > 0) {
    const size_t wanted = std::max(2 * num_threads, std::min(kMaxBatchLeaves, kBatchInputBytes / leaf_len_));
    const size_t batch = std::min(num_leaves, wanted);
    buffer.resize(batch * cv_len_);
    chaining_values(data, batch, buffer.data());
    absorb_chaining_values(buffer.data(), batch, outer);
    data += batch * leaf_len_;
    num_leaves -= batch;
  }
}

}  // namespace gpucrypt::hash::detail
