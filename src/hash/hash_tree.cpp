// hash_tree.cpp: tree hashes cut at leaf boundaries for several processes (gpucrypt/hash.hpp, "Tree
// hashes"). Only plumbing: the leaf rules are make_leaf_hasher's and the final-node rules are the
// contexts' in keccak_portable.cpp, so a digest assembled from parts is the streaming one.
#include <stdexcept>

#include "gpucrypt/hash.hpp"
#include "hash_internal.hpp"

namespace gpucrypt::hash {

TreeShape tree_shape(std::string_view name, const HashParams& params) {
  const detail::HashSpec& spec = detail::find_spec(name);
  const detail::LeafHasher leaves = detail::make_leaf_hasher(spec, params);
  return {detail::tree_head_len(spec), leaves.leaf_len(), leaves.chaining_value_len(), leaves.rate(),
          leaves.num_rounds(), leaves.domain()};
}

void tree_leaves(std::string_view name, const HashParams& params, const uint8_t* data, size_t num_leaves,
                 uint8_t* out) {
  create_tree_hash(name, params);  // checks the parameters as create_hash does
  detail::make_leaf_hasher(detail::find_spec(name), params).chaining_values(data, num_leaves, out);
}

std::unique_ptr<HashContext> create_tree_hash(std::string_view name, const HashParams& params) {
  const detail::HashSpec& spec = detail::find_spec(name);
  detail::make_leaf_hasher(spec, params);  // throws for sequential hashes
  return create_hash(name, params, detail::variant_portable());
}

void absorb_chaining_values(HashContext& tree_hash, const uint8_t* chaining_values, uint64_t num_leaves) {
  auto* node = dynamic_cast<detail::TreeNode*>(&tree_hash);
  if (node == nullptr) throw std::invalid_argument("not a tree hash context (use create_tree_hash)");
  node->absorb_chaining_values(chaining_values, num_leaves);
}

}  // namespace gpucrypt::hash
