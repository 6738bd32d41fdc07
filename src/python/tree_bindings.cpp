// tree_bindings.cpp: tree hashes cut at leaf boundaries (include/gpucrypt/hash.hpp, "Tree hashes") for
// gpucrypt.mpi's `hash --mpi`. Plumbing only. module.cpp's NB_MODULE calls register_tree_bindings.
//
//   tree_shape(name, customization, block_size) -> (head_len, leaf_len, chaining_value_len);
//     ValueError for a sequential hash.
//   tree_leaves(name, customization, block_size, data) -> bytes: the chaining values of the
//     whole leaves in data (its length a multiple of leaf_len), GIL released.
//   TreeHash(name, customization, block_size): update(data), absorb_chaining_values(cvs),
//     finalize(out_len) -> bytes: the final node.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

#include "gpucrypt/hash.hpp"
#include "buffer_view.hpp"

namespace nb = nanobind;

namespace gpucrypt::python {

void register_tree_bindings(nb::module_& m);

namespace {


hash::HashParams tree_params(nb::handle customization, size_t block_size) {
  hash::HashParams params;
  BufferView s(customization);
  params.customization.assign(reinterpret_cast<const char*>(s.data()), s.size());
  params.block_size = block_size;
  return params;
}

struct PyTreeHash {
  std::unique_ptr<hash::HashContext> ctx;
  size_t chaining_value_len;

  void update(nb::handle data) {
    BufferView in(data);
    nb::gil_scoped_release release;
    ctx->update(in.data(), in.size());
  }
  void absorb_chaining_values(nb::handle chaining_values) {
    BufferView in(chaining_values);
    if (in.size() % chaining_value_len != 0)
      throw std::invalid_argument("chaining values: length not a multiple of " + std::to_string(chaining_value_len));
    hash::absorb_chaining_values(*ctx, in.data(), in.size() / chaining_value_len);
  }
  nb::bytes finalize(size_t out_len) {
    uint8_t* out = nullptr;
    nb::bytes result = new_digest_bytes(out_len, &out);
    ctx->finalize(out, out_len);
    return result;
  }
};

}  // namespace

void register_tree_bindings(nb::module_& m) {
  m.def("tree_shape", [](std::string_view name, nb::handle customization, size_t block_size) {
    const hash::TreeShape shape = hash::tree_shape(name, tree_params(customization, block_size));
    return std::make_tuple(shape.head_len, shape.leaf_len, shape.chaining_value_len);
  });
  m.def("tree_leaves", [](std::string_view name, nb::handle customization, size_t block_size, nb::handle data) {
    const hash::HashParams params = tree_params(customization, block_size);
    const hash::TreeShape shape = hash::tree_shape(name, params);
    BufferView in(data);
    if (in.size() % shape.leaf_len != 0)
      throw std::invalid_argument("tree_leaves: data is not a whole number of " + std::to_string(shape.leaf_len) +
                                  "-byte leaves");
    const size_t num_leaves = in.size() / shape.leaf_len;
    uint8_t* out = nullptr;
    nb::bytes result = new_bytes(num_leaves * shape.chaining_value_len, &out);
    {
      nb::gil_scoped_release release;
      hash::tree_leaves(name, params, in.data(), num_leaves, out);
    }
    return result;
  });
  nb::class_<PyTreeHash>(m, "TreeHash")
      .def("__init__",
           [](PyTreeHash* self, std::string_view name, nb::handle customization, size_t block_size) {
             const hash::HashParams params = tree_params(customization, block_size);
             new (self) PyTreeHash{hash::create_tree_hash(name, params),
                                   hash::tree_shape(name, params).chaining_value_len};
           })
      .def("update", &PyTreeHash::update)
      .def("absorb_chaining_values", &PyTreeHash::absorb_chaining_values)
      .def("finalize", &PyTreeHash::finalize);
}

}  // namespace gpucrypt::python
