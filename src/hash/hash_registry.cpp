// hash_registry.cpp: names, parameter checks and variant dispatch for the Keccak family, and
// hash_many over the CPU thread pool. The one place that decides which variant runs.
#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>
#include <string>

#include "../backends/cpu/thread_pool.hpp"
#include "../core/keccak.h"
#include "hash_internal.hpp"
#include "keccak_host_loops.h"

namespace gpucrypt::hash::detail {

const std::string& variant_openssl() {
  static const std::string name = "keccak_openssl";
  return name;
}

const std::string& variant_portable() {
  static const std::string name = "keccak_portable";
  return name;
}

namespace {

using C = Construction;

// The table lives in a function so that it is ready even for callers in other files' static
// initializers. Columns: name, digest_size, rate, is_xof, takes_customization,
// takes_block_size; construction, domain, chaining value bytes, OpenSSL name.
const std::array<HashSpec, 18>& all_specs() {
  static const std::array<HashSpec, 18> specs = {{
      {{"sha3-224", 28, GC_KECCAK_RATE_224, false, false, false}, C::plain_sponge, GC_KECCAK_DOMAIN_SHA3, 0, "SHA3-224"},
      {{"sha3-256", 32, GC_KECCAK_RATE_256, false, false, false}, C::plain_sponge, GC_KECCAK_DOMAIN_SHA3, 0, "SHA3-256"},
      {{"sha3-384", 48, GC_KECCAK_RATE_384, false, false, false}, C::plain_sponge, GC_KECCAK_DOMAIN_SHA3, 0, "SHA3-384"},
      {{"sha3-512", 64, GC_KECCAK_RATE_512, false, false, false}, C::plain_sponge, GC_KECCAK_DOMAIN_SHA3, 0, "SHA3-512"},
      {{"shake128", 0, GC_KECCAK_RATE_128, true, false, false}, C::plain_sponge, GC_KECCAK_DOMAIN_SHAKE, 0, "SHAKE128"},
      {{"shake256", 0, GC_KECCAK_RATE_256, true, false, false}, C::plain_sponge, GC_KECCAK_DOMAIN_SHAKE, 0, "SHAKE256"},
      {{"keccak-224", 28, GC_KECCAK_RATE_224, false, false, false}, C::plain_sponge, GC_KECCAK_DOMAIN_KECCAK, 0, nullptr},
      {{"keccak-256", 32, GC_KECCAK_RATE_256, false, false, false}, C::plain_sponge, GC_KECCAK_DOMAIN_KECCAK, 0, nullptr},
      {{"keccak-384", 48, GC_KECCAK_RATE_384, false, false, false}, C::plain_sponge, GC_KECCAK_DOMAIN_KECCAK, 0, nullptr},
      {{"keccak-512", 64, GC_KECCAK_RATE_512, false, false, false}, C::plain_sponge, GC_KECCAK_DOMAIN_KECCAK, 0, nullptr},
      {{"cshake128", 0, GC_KECCAK_RATE_128, true, true, false}, C::cshake, 0, 0, nullptr},
      {{"cshake256", 0, GC_KECCAK_RATE_256, true, true, false}, C::cshake, 0, 0, nullptr},
      {{"parallelhash128", 0, GC_KECCAK_RATE_128, false, true, true}, C::parallel_hash, 0, 32, nullptr},
      {{"parallelhash256", 0, GC_KECCAK_RATE_256, false, true, true}, C::parallel_hash, 0, 64, nullptr},
      {{"parallelhash128-xof", 0, GC_KECCAK_RATE_128, true, true, true}, C::parallel_hash, 0, 32, nullptr},
      {{"parallelhash256-xof", 0, GC_KECCAK_RATE_256, true, true, true}, C::parallel_hash, 0, 64, nullptr},
      {{"kt128", 0, GC_KECCAK_RATE_128, true, true, false}, C::kangaroo_twelve, 0, 32, nullptr},
      {{"kt256", 0, GC_KECCAK_RATE_256, true, true, false}, C::kangaroo_twelve, 0, 64, nullptr},
  }};
  return specs;
}

// Lower case without '-' and '_': "SHA3_256", "sha3-256" and "sha3256" all become "sha3256".
std::string squash_name(std::string_view name) {
  std::string squashed;
  for (char ch : name) {
    if (ch == '-' || ch == '_') continue;
    squashed += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  return squashed;
}

std::string known_names() {
  std::string names;
  for (const HashSpec& spec : all_specs()) names += (names.empty() ? "" : ", ") + spec.info.name;
  return names;
}

std::string join(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ", ") + item;
  return joined;
}

std::vector<std::string> variants_of(const HashSpec& spec) {
  std::vector<std::string> variants;
  if (openssl_available(spec)) variants.push_back(variant_openssl());
  variants.push_back(variant_portable());
  return variants;
}

void check_params(const HashSpec& spec, const HashParams& params) {
  const std::string& name = spec.info.name;
  if (!params.function_name.empty() && spec.construction != C::cshake)
    throw std::invalid_argument(name + " takes no function_name (only cshake128 and cshake256 do)");
  if (!params.customization.empty() && !spec.info.takes_customization)
    throw std::invalid_argument(name + " takes no customization string");
  if (spec.info.takes_block_size && params.block_size == 0) throw std::invalid_argument("block_size must be > 0");
}

std::unique_ptr<KeccakContext> create_checked(const HashSpec& spec, const HashParams& params,
                                              std::string_view variant) {
  check_params(spec, params);
  if (variant.empty())  // the fastest, without building the list of alternatives
    return openssl_available(spec) ? create_openssl(spec) : create_portable(spec, params);
  const std::vector<std::string> available = variants_of(spec);
  const std::string chosen = variant.empty() ? available.front() : std::string(variant);
  if (std::find(available.begin(), available.end(), chosen) == available.end()) {
    const bool known = chosen == variant_openssl() || chosen == variant_portable();
    throw std::invalid_argument((known ? "variant '" + chosen + "' cannot compute " + spec.info.name
                                       : "unknown variant '" + chosen + "' for " + spec.info.name) +
                                "; available: " + join(available));
  }
  if (chosen == variant_openssl()) return create_openssl(spec);
  return create_portable(spec, params);
}

}  // namespace

const HashSpec& find_spec(std::string_view name) {
  // Every one-shot hash looks its name up: squash the table's names once, not per call.
  static const std::array<std::string, 18> squashed_names = [] {
    std::array<std::string, 18> names;
    for (size_t i = 0; i < names.size(); ++i) names[i] = squash_name(all_specs()[i].info.name);
    return names;
  }();
  for (const HashSpec& spec : all_specs())  // the canonical spelling, as the Python layer passes it
    if (spec.info.name == name) return spec;
  const std::string squashed = squash_name(name);
  for (size_t i = 0; i < squashed_names.size(); ++i)
    if (squashed_names[i] == squashed) return all_specs()[i];
  throw std::invalid_argument("unknown hash '" + std::string(name) + "'; known: " + known_names());
}

void check_output_length(const HashSpec& spec, size_t out_len) {
  const HashInfo& info = spec.info;
  if (info.digest_size != 0) {
    if (out_len != info.digest_size)
      throw std::invalid_argument(info.name + " has a fixed digest size of " + std::to_string(info.digest_size) +
                                  " bytes (asked for " + std::to_string(out_len) + ")");
    return;
  }
  if (out_len == 0) {
    throw std::invalid_argument(info.is_xof ? info.name + " is an XOF: give an output length"
                                            : info.name + " needs an output length (it is part of the hash input)");
  }
  // ParallelHash encodes the length in bits into a 64-bit right_encode.
  if (out_len > (UINT64_MAX >> 3)) throw std::invalid_argument(info.name + ": output length too large");
}

void KeccakContext::update(const uint8_t* data, size_t len) {
  if (finalized_) throw std::logic_error(spec_->info.name + ": update() after finalize()");
  absorb(data, len);
}

void KeccakContext::finalize(uint8_t* out, size_t out_len) {
  if (finalized_) throw std::logic_error(spec_->info.name + ": finalize() called twice");
  check_output_length(*spec_, out_len);
  finalized_ = true;
  produce_output(out, out_len);
}

}  // namespace gpucrypt::hash::detail

namespace gpucrypt::hash {

using detail::HashSpec;

const HashInfo& hash_info(std::string_view name) { return detail::find_spec(name).info; }

std::vector<HashInfo> list_hashes() {
  std::vector<HashInfo> infos;
  for (const HashSpec& spec : detail::all_specs()) infos.push_back(spec.info);
  return infos;
}

std::vector<std::string> hash_variants(std::string_view name) {
  return detail::variants_of(detail::find_spec(name));
}

std::unique_ptr<HashContext> create_hash(std::string_view name, const HashParams& params,
                                         std::string_view variant) {
  return detail::create_checked(detail::find_spec(name), params, variant);
}

namespace {
// Below this, a one-shot hash's per-call cost shows beside the permutations (1 KiB: 8 of them).
constexpr size_t kSmallOneShotBytes = 2048;
constexpr int kSha3Rounds = 24;

// Whether hash_small_on_stack computes this request: a short SHA-3/SHAKE/Keccak message on the
// default variant. Its output is the default variant's (both compute the standard function;
// tests/test_small_calls.py compares them at every rate edge).
bool small_plain_sponge(const HashSpec& spec, std::string_view variant, size_t len) {
  return variant.empty() && spec.construction == detail::Construction::plain_sponge && len <= kSmallOneShotBytes;
}

// The host loop on a bare state on the stack. Through the cached OpenSSL context, EVP's update,
// final and re-initialisation cost ~45 of the ~390 ns of a 64-byte SHA3-256 (the permutation is
// ~232 ns in either); a KeccakSponge would clear its 200-byte buffer on set-up and again to wipe
// it, where the message's tail can be read in place.
void hash_small_on_stack(const HashSpec& spec, const uint8_t* data, size_t len, uint8_t* out, size_t out_len) {
  const detail::KeccakHostLoops& loops = detail::host_keccak_loops();
  const int rate = static_cast<int>(spec.info.rate);
  const size_t num_blocks = len / spec.info.rate;
  uint64_t state[GC_KECCAK_NUM_LANES];
  gc_keccak_init(state);
  loops.absorb_blocks(state, data, num_blocks, rate, kSha3Rounds);
  loops.finish(state, data + num_blocks * spec.info.rate, static_cast<int>(len - num_blocks * spec.info.rate), rate,
               spec.domain, out, out_len, kSha3Rounds);
  // As the cached contexts are reset after use: nothing derived from the message stays behind.
  volatile uint64_t* wipe = state;
  for (size_t i = 0; i < GC_KECCAK_NUM_LANES; ++i) wipe[i] = 0;
}
}  // namespace

void hash_once(std::string_view name, std::string_view variant, const uint8_t* data, size_t len, uint8_t* out,
               size_t out_len) {
  const HashSpec& spec = detail::find_spec(name);
  detail::check_output_length(spec, out_len);
  if (small_plain_sponge(spec, variant, len)) return hash_small_on_stack(spec, data, len, out, out_len);
  // One context per thread, hash and variant: a one-shot hash of a small message then costs its
  // permutations, not a context's allocation and set-up. The context is reset right after use,
  // so no state derived from the message (Keccak-f is invertible) stays behind in it.
  thread_local std::vector<std::pair<std::pair<const HashSpec*, std::string>, std::unique_ptr<detail::KeccakContext>>>
      contexts;
  detail::KeccakContext* context = nullptr;
  for (auto& [key, cached] : contexts)
    if (key.first == &spec && key.second == variant) context = cached.get();
  if (context == nullptr) {
    contexts.emplace_back(std::make_pair(&spec, std::string(variant)),
                          detail::create_checked(spec, HashParams{}, variant));
    context = contexts.back().second.get();
  }
  struct ResetAfterUse {
    detail::KeccakContext* context;
    ~ResetAfterUse() {
      try {
        context->reset();
      } catch (...) {  // cannot happen for a context that worked; never throw from here
      }
    }
  } reset_after_use{context};
  context->update(data, len);
  context->finalize(out, out_len);
}

void hash_many(std::string_view name, const HashParams& params, const uint8_t* const* messages,
               const size_t* lens, size_t num_messages, uint8_t* out, size_t out_len_each,
               std::string_view variant) {
  const HashSpec& spec = detail::find_spec(name);
  const std::unique_ptr<detail::KeccakContext> prototype = detail::create_checked(spec, params, variant);
  detail::check_output_length(spec, out_len_each);
  if (num_messages == 0) return;

  // Below about 64 KiB in all, waking the pool costs more than it saves.
  constexpr size_t kMinParallelBytes = size_t{64} << 10;
  size_t total_len = 0;
  for (size_t i = 0; i < num_messages; ++i) total_len += lens[i];
  const size_t grain = total_len < kMinParallelBytes ? num_messages : 1;

  cpu::ThreadPool::global().parallel_for(num_messages, grain, [&](size_t begin, size_t end) {
    // One context per range, reset between messages: no allocation per message.
    std::unique_ptr<HashContext> copy = prototype->clone();
    auto& context = static_cast<detail::KeccakContext&>(*copy);
    for (size_t i = begin; i < end; ++i) {
      if (small_plain_sponge(spec, variant, lens[i])) {
        hash_small_on_stack(spec, messages[i], lens[i], out + i * out_len_each, out_len_each);
        continue;
      }
      context.reset();
      context.update(messages[i], lens[i]);
      context.finalize(out + i * out_len_each, out_len_each);
    }
  });
}

}  // namespace gpucrypt::hash
