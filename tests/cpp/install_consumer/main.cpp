// Uses the installed C++ headers beside the C API: each public header compiles on its own, and a
// KT128 digest assembled from a head, chaining values of leaves and a tail (hash.hpp's tree hash,
// as a device or an MPI rank feeds it) equals the streaming digest.
#include <gpucrypt/batch.hpp>
#include <gpucrypt/device.hpp>
#include <gpucrypt/format.hpp>
#include <gpucrypt/gpucrypt.hpp>
#include <gpucrypt/hash.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  using namespace gpucrypt;
  std::vector<uint8_t> message(3 * 8192 + 100);
  for (size_t i = 0; i < message.size(); ++i) message[i] = static_cast<uint8_t>(i * 7 + 1);
  const hash::HashParams params{};
  uint8_t streamed[32], assembled[32];
  auto whole = hash::create_hash("kt128", params);
  whole->update(message.data(), message.size());
  whole->finalize(streamed, sizeof streamed);

  const hash::TreeShape shape = hash::tree_shape("kt128", params);
  auto node = hash::create_tree_hash("kt128", params);
  node->update(message.data(), shape.head_len);
  const size_t num_leaves = (message.size() - shape.head_len) / shape.leaf_len;
  std::vector<uint8_t> chaining_values(num_leaves * shape.chaining_value_len);
  hash::tree_leaves("kt128", params, message.data() + shape.head_len, num_leaves, chaining_values.data());
  hash::absorb_chaining_values(*node, chaining_values.data(), num_leaves);
  const size_t done = shape.head_len + num_leaves * shape.leaf_len;
  node->update(message.data() + done, message.size() - done);
  node->finalize(assembled, sizeof assembled);
  if (std::memcmp(streamed, assembled, sizeof streamed) != 0) {
    std::fprintf(stderr, "kt128 assembled from leaves differs from the streamed digest\n");
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
