// hash.hpp: the Keccak hash family behind gpucrypt.hash(), gpucrypt.new() and the CLI.
//
// Names (case-insensitive; '-' and '_' are ignored, so hashlib's sha3_256 and shake_128 work):
//   sha3-224 sha3-256 sha3-384 sha3-512       FIPS 202, fixed digest size
//   shake128 shake256                          FIPS 202 XOFs
//   keccak-224 keccak-256 keccak-384 keccak-512  original Keccak (pad byte 0x01), fixed size
//   cshake128 cshake256                        SP 800-185; function_name N, customization S
//   parallelhash128 parallelhash256            SP 800-185; block_size B, customization S; the
//                                              output length L is chosen by the caller and is
//                                              part of the input, so it is not an XOF
//   parallelhash128-xof parallelhash256-xof    SP 800-185 XOF forms
//   kt128 kt256                                RFC 9861 KangarooTwelve; customization C
//
// Variants (see hash_variants): "keccak_openssl" (libcrypto's EVP, sha3-* and shake* only) and
// "keccak_portable" (src/core/keccak.h, every name; the reference and the GPU's twin).
//
// Errors: bad names, variants, parameters and output lengths throw std::invalid_argument with a
// message fit for the user; update() or finalize() after finalize() throws std::logic_error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpucrypt::hash {

struct HashParams {
  std::string function_name;  // cSHAKE's N (bytes); only cshake128/cshake256 accept it
  std::string customization;  // cSHAKE/ParallelHash S, KangarooTwelve C (bytes)
  size_t block_size = 8192;   // ParallelHash B in bytes; ignored by every other hash
};

// HashContext is one streaming computation. update() accepts any split of the input;
// finalize() may be called once and writes out_len bytes: exactly digest_size for fixed-size
// hashes, any length >= 1 for the others. Copy the state with clone() to finalize more than
// once (hashlib's digest() does that).
class HashContext {
 public:
  virtual ~HashContext() = default;
  virtual void update(const uint8_t* data, size_t len) = 0;
  virtual void finalize(uint8_t* out, size_t out_len) = 0;
  virtual std::unique_ptr<HashContext> clone() const = 0;
  virtual const std::string& variant() const = 0;  // "keccak_openssl" or "keccak_portable"
};

struct HashInfo {
  std::string name;         // canonical spelling, e.g. "sha3-256"
  size_t digest_size;       // bytes; 0 when the caller chooses the output length
  size_t rate;              // sponge rate in bytes (hashlib's block_size)
  bool is_xof;              // output is a prefix of an unbounded stream (shake, cshake, PH-xof, kt)
  bool takes_customization;
  bool takes_block_size;
};

// hash_info returns the description of a hash, accepting any spelling described above.
// Throws std::invalid_argument("unknown hash 'x'; known: ...").
const HashInfo& hash_info(std::string_view name);

// list_hashes returns every hash in the order of the file comment.
std::vector<HashInfo> list_hashes();

// hash_variants returns the CPU variants that can compute `name` on this machine, fastest first.
std::vector<std::string> hash_variants(std::string_view name);

// How this CPU runs Keccak on the host: its serial loops ("avx512", "bmi2" or "portable": one
// sponge, such as a tree's final node) and how many tree leaves one core hashes at once (8 where
// the CPU runs the eight-way AVX-512 sponge, else 1). `gpucrypt hash --device auto` reads it to
// keep tree hashes on a CPU that hashes leaves faster than the host link carries them to a GPU.
struct HostKeccak {
  std::string loops;
  int leaves_at_once;
};
HostKeccak host_keccak();

// create_hash starts a computation. variant "" picks the fastest; an unknown variant or one that
// cannot compute this hash, and parameters the hash does not take, throw std::invalid_argument.
std::unique_ptr<HashContext> create_hash(std::string_view name, const HashParams& params,
                                         std::string_view variant = "");

// hash_once hashes one message with default parameters into out (out_len bytes, checked as in
// finalize), reusing a context kept per thread: the fast path of a one-shot hash.
void hash_once(std::string_view name, std::string_view variant, const uint8_t* data, size_t len, uint8_t* out,
               size_t out_len);

// hash_many hashes num_messages independent messages (messages[i], lens[i] bytes; a null
// pointer is fine for an empty message) into out + i * out_len_each, spread over the CPU thread
// pool. Parameters and out_len_each are checked as in create_hash/finalize before any work.
void hash_many(std::string_view name, const HashParams& params, const uint8_t* const* messages,
               const size_t* lens, size_t num_messages, uint8_t* out, size_t out_len_each,
               std::string_view variant = "");

}  // namespace gpucrypt::hash

namespace gpucrypt::hash {

// Tree hashes (ParallelHash128/256 and their XOFs, KT128/256) split across processes, as
// `gpucrypt hash --mpi` does; the tree rules themselves stay in src/hash (hash_tree.cpp).
// The input is: a head of tree_shape().head_len bytes (KT: the first 8192 bytes open the final
// node; ParallelHash: none), whole leaves of leaf_len bytes that any process may hash with
// tree_leaves, and a tail (the rest, shorter than a leaf or not). A TreeHash takes the head
// with update(), the chaining values of the whole leaves in order with
// absorb_chaining_values(), then the tail with update() and finalize(): the digest is the one
// create_hash gives for the whole input. Sequential hashes throw std::invalid_argument.
struct TreeShape {
  size_t head_len;
  size_t leaf_len;
  size_t chaining_value_len;
  // How a device hashes a leaf (make_leaf_hasher's rules): a sponge of this rate and round count
  // padded with leaf_domain, squeezed to chaining_value_len bytes.
  int rate;
  int leaf_rounds;
  uint8_t leaf_domain;
};
TreeShape tree_shape(std::string_view name, const HashParams& params);

// tree_leaves writes the chaining values of num_leaves whole leaves (data: num_leaves * leaf_len
// bytes) to out (num_leaves * chaining_value_len bytes), on the CPU thread pool.
void tree_leaves(std::string_view name, const HashParams& params, const uint8_t* data, size_t num_leaves,
                 uint8_t* out);

// create_tree_hash: the final node (a HashContext of variant keccak_portable);
// absorb_chaining_values on it must come right after the head or after earlier chaining values
// (std::logic_error otherwise).
std::unique_ptr<HashContext> create_tree_hash(std::string_view name, const HashParams& params);
void absorb_chaining_values(HashContext& tree_hash, const uint8_t* chaining_values, uint64_t num_leaves);

}  // namespace gpucrypt::hash
