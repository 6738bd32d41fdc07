// hash_internal.hpp: what the files of src/hash/ share and nobody else needs: the table entry
// behind each hash name, the base class that enforces the HashContext contract, a streaming
// sponge over src/core/keccak.h, the SP 800-185 / RFC 9861 encodings, and the leaf hasher that
// ParallelHash and KangarooTwelve both build on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "gpucrypt/hash.hpp"

namespace gpucrypt::hash::detail {

enum class Construction {
  plain_sponge,     // sha3-*, shake*, keccak-*: one sponge with a fixed domain byte
  cshake,           // SP 800-185 cSHAKE (plain SHAKE when N and S are both empty)
  parallel_hash,    // SP 800-185 ParallelHash, both forms
  kangaroo_twelve,  // RFC 9861 KT128 / KT256
};

struct HashSpec {
  HashInfo info;
  Construction construction;
  uint8_t domain;             // plain_sponge only: the padding byte
  size_t chaining_value_len;  // parallel_hash, kangaroo_twelve: bytes per leaf digest
  const char* openssl_name;   // EVP name when libcrypto computes the same thing, else nullptr
};

const HashSpec& find_spec(std::string_view name);

const std::string& variant_openssl();   // "keccak_openssl"
const std::string& variant_portable();  // "keccak_portable"

// check_output_length enforces finalize()'s length rule for one hash (std::invalid_argument).
void check_output_length(const HashSpec& spec, size_t out_len);

// KeccakContext implements the parts of HashContext every variant shares: the output-length
// check and the once-only finalize. reset() returns to the just-created state with the same
// parameters, so hash_many can reuse one context per thread.
class KeccakContext : public HashContext {
 public:
  KeccakContext(const HashSpec& spec, const std::string& variant) : spec_(&spec), variant_(&variant) {}
  void update(const uint8_t* data, size_t len) final;
  void finalize(uint8_t* out, size_t out_len) final;
  const std::string& variant() const final { return *variant_; }
  void reset() {
    restart();
    finalized_ = false;
  }

 protected:
  virtual void absorb(const uint8_t* data, size_t len) = 0;
  virtual void produce_output(uint8_t* out, size_t out_len) = 0;  // length already checked
  virtual void restart() = 0;
  const HashSpec& spec() const { return *spec_; }

 private:
  const HashSpec* spec_;
  const std::string* variant_;
  bool finalized_ = false;
};

struct KeccakHostLoops;  // keccak_host_loops.h
// The host's Keccak loops for this CPU: the AVX-512F/VL build where CPUID has both, else the
// BMI1/BMI2 build where CPUID has both, else portable.
const KeccakHostLoops& host_keccak_loops();

// KeccakSponge: a byte-streaming sponge (any split of the input) around keccak.h.
class KeccakSponge {
 public:
  KeccakSponge(int rate, int num_rounds) : rate_(rate), num_rounds_(num_rounds), loops_(&host_keccak_loops()) {
    restart();
  }
  void restart();
  void absorb(const uint8_t* data, size_t len);
  void absorb_zeros(size_t len);
  size_t num_absorbed_mod_rate() const { return num_buffered_; }
  // finish pads with `domain` and writes out_len bytes; the sponge must be restarted after.
  void finish(uint8_t domain, uint8_t* out, size_t out_len);
  int rate() const { return rate_; }
  int num_rounds() const { return num_rounds_; }

 private:
  int rate_;
  int num_rounds_;
  const KeccakHostLoops* loops_;  // chosen once per process: copies may share it
  size_t num_buffered_ = 0;
  uint64_t state_[25];
  uint8_t buffer_[200];
};

// Encodings of SP 800-185 section 2.3.1 and RFC 9861 section 3.3; each returns the bytes.
std::string left_encode(uint64_t value);
std::string right_encode(uint64_t value);
std::string encode_string(std::string_view bytes);  // left_encode(bit length) || bytes
std::string kt_length_encode(uint64_t value);       // length_encode(0) = 00, one byte

// absorb_bytepad_prefix absorbs bytepad(encode_string(N) || encode_string(S), rate), the cSHAKE
// prefix (SP 800-185 section 3.3).
void absorb_bytepad_prefix(KeccakSponge& sponge, std::string_view function_name,
                           std::string_view customization);

// LeafHasher cuts a byte stream into leaves of leaf_len bytes, hashes each leaf with its own
// sponge (rate, domain, rounds) to a chaining value of cv_len bytes, and absorbs the chaining
// values, in order, into an outer sponge. When one update() brings at least 2 leaves per pool
// thread (and enough bytes to pay for waking them), the leaves are hashed on the thread pool.
class LeafHasher {
 public:
  LeafHasher(size_t leaf_len, int rate, uint8_t domain, int num_rounds, size_t cv_len);
  void update(const uint8_t* data, size_t len, KeccakSponge& outer);
  // finish hashes the last, partial leaf if there is one.
  void finish(KeccakSponge& outer);
  uint64_t num_leaves() const { return num_leaves_; }
  void restart();
  size_t leaf_len() const { return leaf_len_; }
  size_t chaining_value_len() const { return cv_len_; }
  int rate() const { return leaf_.rate(); }
  int num_rounds() const { return leaf_.num_rounds(); }
  uint8_t domain() const { return domain_; }
  // chaining_values hashes num_leaves whole leaves at data into out (cv_len bytes each), on the
  // thread pool when there are enough; nothing is absorbed. absorb_chaining_values absorbs
  // chaining values computed elsewhere (another process: gpucrypt hash --mpi) as if the leaves
  // had been hashed here; it must come at a leaf boundary (std::logic_error otherwise).
  void chaining_values(const uint8_t* data, size_t num_leaves, uint8_t* out) const;
  void absorb_chaining_values(const uint8_t* chaining_values, uint64_t num_leaves, KeccakSponge& outer);

 private:
  void hash_whole_leaves(const uint8_t* data, size_t num_leaves, KeccakSponge& outer);

  size_t leaf_len_;
  uint8_t domain_;
  size_t cv_len_;
  KeccakSponge leaf_;
  size_t leaf_filled_ = 0;
  uint64_t num_leaves_ = 0;
};

// The leaf hasher of a tree hash (ParallelHash: SHAKE leaves of B bytes; KT: TurboSHAKE leaves
// of 8192 bytes): the one place that states each tree's leaf rules.
LeafHasher make_leaf_hasher(const HashSpec& spec, const HashParams& params);
// tree_head_len: the input bytes that open the final node before any leaf (KT 8192, else 0).
size_t tree_head_len(const HashSpec& spec);

// TreeNode is the final node of a tree hash context: chaining values of whole leaves hashed
// elsewhere go in at a leaf boundary (see tree_hash.cpp).
class TreeNode {
 public:
  virtual ~TreeNode() = default;
  virtual void absorb_chaining_values(const uint8_t* chaining_values, uint64_t num_leaves) = 0;
};

// Factories, one per variant family. Both validate nothing: create_hash has done it.
std::unique_ptr<KeccakContext> create_portable(const HashSpec& spec, const HashParams& params);
std::unique_ptr<KeccakContext> create_openssl(const HashSpec& spec);
bool openssl_available(const HashSpec& spec);

}  // namespace gpucrypt::hash::detail
