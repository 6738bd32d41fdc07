// keccak_portable.cpp: variant "keccak_portable", every hash name, on src/core/keccak.h (the
// same permutation the GPU kernels run): plain sponges (SHA-3, SHAKE, Keccak), cSHAKE,
// ParallelHash (SP 800-185 section 6) and KangarooTwelve (RFC 9861 section 3).
//
// Constant-time: no secret-dependent branches or indices; branches depend only on lengths, the
// chosen hash and its public parameters (see keccak.h and keccak_sponge.cpp).
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include "../core/keccak.h"
#include "hash_internal.hpp"

namespace gpucrypt::hash::detail {

namespace {

constexpr int kSha3Rounds = 24;
constexpr int kTurboShakeRounds = 12;
constexpr size_t kKangarooChunkLen = 8192;

void absorb_string(KeccakSponge& sponge, const std::string& bytes) {
  sponge.absorb(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

// SHA-3, SHAKE, original Keccak and cSHAKE: one sponge, possibly started with a prefix.
class SpongeContext final : public KeccakContext {
 public:
  SpongeContext(const HashSpec& spec, uint8_t domain, const KeccakSponge& initial)
      : KeccakContext(spec, variant_portable()), domain_(domain), initial_(initial), sponge_(initial) {}
  std::unique_ptr<HashContext> clone() const override { return std::make_unique<SpongeContext>(*this); }

 protected:
  void absorb(const uint8_t* data, size_t len) override { sponge_.absorb(data, len); }
  void produce_output(uint8_t* out, size_t out_len) override { sponge_.finish(domain_, out, out_len); }
  void restart() override { sponge_ = initial_; }

 private:
  uint8_t domain_;
  KeccakSponge initial_;  // after the cSHAKE prefix, if any: restart() copies it back
  KeccakSponge sponge_;
};

// ParallelHash: the input is cut into blocks of B bytes, each hashed with SHAKE to a chaining
// value; the outer cSHAKE(N = "ParallelHash", S) absorbs left_encode(B), the chaining values,
// right_encode(number of blocks) and right_encode(L in bits, or 0 for the XOF form).
class ParallelHashContext final : public KeccakContext, public TreeNode {
 public:
  ParallelHashContext(const HashSpec& spec, const HashParams& params)
      : KeccakContext(spec, variant_portable()),
        initial_(static_cast<int>(spec.info.rate), kSha3Rounds),
        outer_(initial_),
        leaves_(make_leaf_hasher(spec, params)) {
    absorb_bytepad_prefix(initial_, "ParallelHash", params.customization);
    absorb_string(initial_, left_encode(params.block_size));
    outer_ = initial_;
  }
  std::unique_ptr<HashContext> clone() const override { return std::make_unique<ParallelHashContext>(*this); }
  void absorb_chaining_values(const uint8_t* chaining_values, uint64_t num_leaves) override {
    leaves_.absorb_chaining_values(chaining_values, num_leaves, outer_);
  }

 protected:
  void absorb(const uint8_t* data, size_t len) override { leaves_.update(data, len, outer_); }
  void produce_output(uint8_t* out, size_t out_len) override {
    leaves_.finish(outer_);
    absorb_string(outer_, right_encode(leaves_.num_leaves()));
    absorb_string(outer_, right_encode(spec().info.is_xof ? 0 : static_cast<uint64_t>(out_len) * 8));
    outer_.finish(GC_KECCAK_DOMAIN_CSHAKE, out, out_len);
  }
  void restart() override {
    outer_ = initial_;
    leaves_.restart();
  }

 private:
  KeccakSponge initial_;  // prefix and left_encode(B) absorbed
  KeccakSponge outer_;
  LeafHasher leaves_;
};

// KangarooTwelve over S = M || C || length_encode(|C|). The first 8192 bytes of S always start
// the final node, so they go straight into it; only at finalize is it known whether S fit in
// one chunk (domain 07) or a tree follows (marker 03 00.., leaf chaining values, domain 06).
constexpr uint8_t kTreeMarker[8] = {0x03, 0, 0, 0, 0, 0, 0, 0};

class KangarooTwelveContext final : public KeccakContext, public TreeNode {
 public:
  KangarooTwelveContext(const HashSpec& spec, const HashParams& params)
      : KeccakContext(spec, variant_portable()),
        customization_(params.customization),
        final_node_(static_cast<int>(spec.info.rate), kTurboShakeRounds),
        leaves_(make_leaf_hasher(spec, params)) {}
  std::unique_ptr<HashContext> clone() const override { return std::make_unique<KangarooTwelveContext>(*this); }
  // Leaves hashed elsewhere follow the first 8192 bytes of S (which open the final node) and
  // end at a leaf boundary; the tree marker goes in before the first of them.
  void absorb_chaining_values(const uint8_t* chaining_values, uint64_t num_leaves) override {
    if (num_leaves == 0) return;
    if (total_len_ < kKangarooChunkLen)
      throw std::logic_error("KT: chaining values before the first 8192 bytes of the input");
    if (total_len_ == kKangarooChunkLen) final_node_.absorb(kTreeMarker, sizeof kTreeMarker);
    leaves_.absorb_chaining_values(chaining_values, num_leaves, final_node_);
    total_len_ += static_cast<size_t>(num_leaves) * kKangarooChunkLen;
  }

 protected:
  void absorb(const uint8_t* data, size_t len) override {
    if (total_len_ < kKangarooChunkLen) {
      const size_t take = std::min(len, kKangarooChunkLen - total_len_);
      final_node_.absorb(data, take);
      total_len_ += take;
      data += take;
      len -= take;
    }
    if (len == 0) return;
    if (total_len_ == kKangarooChunkLen) final_node_.absorb(kTreeMarker, sizeof kTreeMarker);
    leaves_.update(data, len, final_node_);
    total_len_ += len;
  }

  void produce_output(uint8_t* out, size_t out_len) override {
    absorb(reinterpret_cast<const uint8_t*>(customization_.data()), customization_.size());
    const std::string customization_len = kt_length_encode(customization_.size());
    absorb(reinterpret_cast<const uint8_t*>(customization_len.data()), customization_len.size());
    if (total_len_ <= kKangarooChunkLen) {
      final_node_.finish(GC_KECCAK_DOMAIN_KT_SINGLE, out, out_len);
      return;
    }
    leaves_.finish(final_node_);
    absorb_string(final_node_, kt_length_encode(leaves_.num_leaves()));
    static const uint8_t kFinalNodeSuffix[2] = {0xFF, 0xFF};
    final_node_.absorb(kFinalNodeSuffix, sizeof kFinalNodeSuffix);
    final_node_.finish(GC_KECCAK_DOMAIN_KT_FINAL, out, out_len);
  }

  void restart() override {
    final_node_.restart();
    leaves_.restart();
    total_len_ = 0;
  }

 private:
  std::string customization_;
  KeccakSponge final_node_;
  LeafHasher leaves_;
  size_t total_len_ = 0;  // bytes of S absorbed so far (uint64 is enough: size_t on 64-bit hosts)
};

}  // namespace

LeafHasher make_leaf_hasher(const HashSpec& spec, const HashParams& params) {
  const int rate = static_cast<int>(spec.info.rate);
  switch (spec.construction) {
    case Construction::parallel_hash:  // SP 800-185 6.3: leaves are cSHAKE with empty N, S = SHAKE
      return LeafHasher(params.block_size, rate, GC_KECCAK_DOMAIN_SHAKE, kSha3Rounds, spec.chaining_value_len);
    case Construction::kangaroo_twelve:  // RFC 9861 3.2: TurboSHAKE leaves, domain 0B
      return LeafHasher(kKangarooChunkLen, rate, GC_KECCAK_DOMAIN_KT_LEAF, kTurboShakeRounds, spec.chaining_value_len);
    default:
      throw std::invalid_argument(spec.info.name + " is a sequential hash, not a tree hash");
  }
}

size_t tree_head_len(const HashSpec& spec) {
  return spec.construction == Construction::kangaroo_twelve ? kKangarooChunkLen : 0;
}

std::unique_ptr<KeccakContext> create_portable(const HashSpec& spec, const HashParams& params) {
  const int rate = static_cast<int>(spec.info.rate);
  switch (spec.construction) {
    case Construction::plain_sponge:
      return std::make_unique<SpongeContext>(spec, spec.domain, KeccakSponge(rate, kSha3Rounds));
    case Construction::cshake: {
      KeccakSponge initial(rate, kSha3Rounds);
      if (params.function_name.empty() && params.customization.empty()) {
        return std::make_unique<SpongeContext>(spec, GC_KECCAK_DOMAIN_SHAKE, initial);  // SP 800-185 3.3
      }
      absorb_bytepad_prefix(initial, params.function_name, params.customization);
      return std::make_unique<SpongeContext>(spec, GC_KECCAK_DOMAIN_CSHAKE, initial);
    }
    case Construction::parallel_hash:
      return std::make_unique<ParallelHashContext>(spec, params);
    case Construction::kangaroo_twelve:
      return std::make_unique<KangarooTwelveContext>(spec, params);
  }
  return nullptr;
}

}  // namespace gpucrypt::hash::detail
