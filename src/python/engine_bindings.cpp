// engine_bindings.cpp: the batch engine's entry points in gpucrypt._native (include/gpucrypt/batch.hpp).
// Plumbing only: Python objects in, a BatchPlan built and run with the GIL released, bytes out.
// module.cpp's NB_MODULE calls register_engine_bindings(m).
//
//   Batch(): add_suite((operation, name (an AEAD name for seal/open), pkcs7, tag_len, hash_out_len, variant, function_name,
//     customization, block_size, xts_unit_len)) -> suite index; add(suite, key, iv, aad, data) -> request index
//     (checked now; key/IV/AAD None when absent); add_many(suite, key, ivs, aad, messages) -> the
//     first request's index (one key, a sequence of IVs or None, one AAD); run(device, executor="") -> (outputs:
//     list[bytes], status: bytes, suite_variants: list[str], info: dict), which empties the batch.
//     status[i] is 0 ok, 1 authentication failed, 2 invalid padding.
//   aead_packed(name, key, seal, nonces, nonce_len, data, lengths, aad, tag_len, variant, device,
//               out) -> (output, status: bytes, variant: str, info: dict)
//     Many messages of any AEAD under one key, already packed back to back in `data` (lengths: native
//     uint64 array); the outputs are packed back to back into `out` (a writable buffer, or None
//     for a new bytes object). The gpucrypt file format's chunks go through here.
//   wipe(buffer): zeroes a writable buffer (staging buffers, bytearray keys).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "gpucrypt/batch.hpp"
#include "gpucrypt/cipher.hpp"
#include "gpucrypt/parallel.hpp"
#include "buffer_view.hpp"

namespace nb = nanobind;

namespace gpucrypt::python {

void register_engine_bindings(nb::module_& m);

namespace {

using engine::BatchBuilder;
using engine::BatchPlan;
using engine::BatchResult;
using engine::Operation;
using engine::Suite;

// Buffer views held until the batch has run; bytes objects are read without the buffer protocol.
class Views {
 public:
  Views() = default;
  Views(const Views&) = delete;
  Views& operator=(const Views&) = delete;
  ~Views() {
    for (auto& view : views_) PyBuffer_Release(&view);
  }
  ByteSpan get(nb::handle obj) {
    if (obj.is_none()) return {};
    if (PyBytes_Check(obj.ptr()))
      return {reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(obj.ptr())),
              static_cast<size_t>(PyBytes_GET_SIZE(obj.ptr()))};
    Py_buffer view;
    if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) throw nb::python_error();
    views_.push_back(view);
    return {static_cast<const uint8_t*>(view.buf), static_cast<size_t>(view.len)};
  }
  MutableByteSpan get_writable(nb::handle obj) {
    Py_buffer view;
    if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) throw nb::python_error();
    views_.push_back(view);
    return {static_cast<uint8_t*>(view.buf), static_cast<size_t>(view.len)};
  }

 private:
  std::vector<Py_buffer> views_;
};

Operation parse_operation(std::string_view op) {
  if (op == "encrypt") return Operation::encrypt;
  if (op == "decrypt") return Operation::decrypt;
  if (op == "seal") return Operation::seal;
  if (op == "open") return Operation::open;
  if (op == "hash") return Operation::hash;
  throw std::invalid_argument("unknown batch operation '" + std::string(op) + "'");
}

Suite parse_suite(nb::handle spec, Views& views) {
  nb::tuple t = nb::cast<nb::tuple>(spec);
  if (t.size() != 10) throw std::invalid_argument("a batch suite is a 10-tuple");
  Suite suite;
  suite.operation = parse_operation(nb::cast<std::string_view>(t[0]));
  const auto name = nb::cast<std::string_view>(t[1]);
  if (suite.operation == Operation::hash) suite.hash_name = std::string(name);
  else if (suite.operation == Operation::seal || suite.operation == Operation::open) suite.aead = parse_aead_name(name);
  else suite.cipher = parse_cipher_name(name);
  suite.pkcs7 = nb::cast<bool>(t[2]);
  suite.tag_len = static_cast<uint8_t>(nb::cast<unsigned>(t[3]));
  suite.hash_out_len = nb::cast<uint64_t>(t[4]);
  suite.variant = nb::cast<std::string>(t[5]);
  const ByteSpan function_name = views.get(t[6]), customization = views.get(t[7]);
  suite.hash_params.function_name.assign(reinterpret_cast<const char*>(function_name.data()), function_name.size());
  suite.hash_params.customization.assign(reinterpret_cast<const char*>(customization.data()), customization.size());
  suite.hash_params.block_size = nb::cast<size_t>(t[8]);
  suite.xts_unit_len = nb::cast<uint64_t>(t[9]);
  return suite;
}

nb::dict run_info(const BatchResult& result) {
  nb::dict info;
  info["device"] = result.device;
  info["executor"] = result.executor;
  info["key_setup_s"] = result.timings.key_setup_s;
  info["h2d_s"] = result.timings.h2d_s;
  info["compute_s"] = result.timings.compute_s;
  info["d2h_s"] = result.timings.d2h_s;
  info["total_s"] = result.timings.total_s;
  return info;
}

nb::bytes status_bytes(const BatchResult& result) {
  return nb::bytes(reinterpret_cast<const char*>(result.status.data()), result.status.size());
}

// A batch being assembled from Python: requests are checked as they are added; the data they
// reference stays alive (and, for writable buffers, locked against resizing) until run().
class PyBatch {
 public:
  uint32_t add_suite(nb::handle spec) {
    Views suite_views;
    return builder_->add_suite(parse_suite(spec, suite_views));
  }
  uint32_t add(uint32_t suite, nb::handle key, nb::handle iv, nb::handle aad, nb::handle data) {
    Views transient;  // key, IV and AAD are copied into the plan at once
    const ByteSpan input = views_->get(data);
    const uint32_t index = builder_->add(suite, transient.get(key), transient.get(iv), transient.get(aad), input);
    keep_alive_.push_back(nb::borrow(data));
    return index;
  }
  // Many requests of one suite in one call: one key (or none), ivs a sequence of as many IVs as
  // there are messages (or None), one AAD (or None). The per-request Python of Batch.add was most
  // of a batch of 100k small requests. Returns the first request's index; the others follow it.
  // A request the builder refuses names its own index; an item that is not bytes-like raises the
  // TypeError of the buffer protocol (the facade names the item).
  uint32_t add_many(uint32_t suite, nb::handle key, nb::handle ivs, nb::handle aad, nb::handle messages) {
    nb::object message_items = nb::steal(PySequence_Fast(messages.ptr(), "messages must be a sequence"));
    if (!message_items.is_valid()) throw nb::python_error();
    nb::object iv_items;
    const size_t num_messages = static_cast<size_t>(PySequence_Fast_GET_SIZE(message_items.ptr()));
    if (!ivs.is_none()) {
      iv_items = nb::steal(PySequence_Fast(ivs.ptr(), "ivs must be a sequence"));
      if (!iv_items.is_valid()) throw nb::python_error();
      if (static_cast<size_t>(PySequence_Fast_GET_SIZE(iv_items.ptr())) != num_messages)
        throw std::invalid_argument(std::to_string(PySequence_Fast_GET_SIZE(iv_items.ptr())) + " IVs for " +
                                    std::to_string(num_messages) + " messages");
    }
    Views transient;  // key, IVs and AAD are copied into the plan at once
    const ByteSpan key_bytes = transient.get(key), aad_bytes = transient.get(aad);
    const uint32_t first = static_cast<uint32_t>(builder_->size());
    if (first == 0) {  // (reserving on every call would copy the vectors once per call)
      builder_->reserve(num_messages);
      keep_alive_.reserve(num_messages);
    }
    for (size_t i = 0; i < num_messages; ++i) {
      const auto index = static_cast<Py_ssize_t>(i);
      PyObject* data = PySequence_Fast_GET_ITEM(message_items.ptr(), index);
      const ByteSpan iv = iv_items.is_valid() ? transient.get(PySequence_Fast_GET_ITEM(iv_items.ptr(), index))
                                              : ByteSpan{};
      builder_->add(suite, key_bytes, iv, aad_bytes, views_->get(data));
      keep_alive_.push_back(nb::borrow(data));
    }
    return first;
  }
  size_t size() const { return builder_->size(); }
  void keep_submission_order(bool keep) {
    keep_order_ = keep;
    builder_->keep_submission_order(keep);
  }

  // Runs and resets the batch; returns (outputs, status, suite_variants, info).
  nb::tuple run(std::string_view device, std::string_view executor) {
    BatchResult result;
    BatchPlan plan;
    const std::string device_name(device), executor_name(executor);
    // The requests this run executes, with the views and references that keep their data alive,
    // are taken out together before the GIL is released: a thread that adds meanwhile fills a
    // new batch, whose data stays referenced (python/gpucrypt/batch.py also serialises add/run).
    std::unique_ptr<BatchBuilder> builder = std::exchange(builder_, std::make_unique<BatchBuilder>());
    builder_->keep_submission_order(keep_order_);
    std::unique_ptr<Views> views = std::exchange(views_, std::make_unique<Views>());
    std::vector<nb::object> keep_alive = std::exchange(keep_alive_, {});
    double build_s = 0;
    {
      nb::gil_scoped_release release;
      const auto start = std::chrono::steady_clock::now();
      plan = builder->build();
      build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      result = engine::run_batch(plan, device_name, executor_name);
    }
    views.reset();
    keep_alive.clear();
    // The outputs: every bytes object made first (with the GIL), then filled from the plan's
    // packed output over the thread pool without it. Copying 100k outputs of 1 KiB one by one
    // with the GIL held (first touch of ~100 MB of new objects) took longer than their encryption.
    const size_t num_requests = plan.requests.size(), num_groups = plan.groups.size();
    nb::list outputs = nb::steal<nb::list>(PyList_New(static_cast<Py_ssize_t>(num_requests)));
    if (!outputs.is_valid()) throw nb::python_error();
    std::vector<uint8_t*> destinations(num_requests);
    uint64_t total_output_len = 0;
    for (size_t i = 0; i < num_requests; ++i) {
      PyList_SET_ITEM(outputs.ptr(), static_cast<Py_ssize_t>(i),
                      new_bytes(result.output_len[i], &destinations[i]).release().ptr());
      total_output_len += result.output_len[i];
    }
    {
      nb::gil_scoped_release release;
      constexpr uint64_t kMinBytesPerTask = 256 << 10;
      const size_t grain = std::max<size_t>(
          1, static_cast<size_t>(kMinBytesPerTask * num_requests / std::max<uint64_t>(total_output_len, 1)));
      cpu::parallel_for(num_requests, grain, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i)
          if (result.output_len[i] != 0) std::memcpy(destinations[i], plan.output_of(plan.requests[i]), result.output_len[i]);
      });
      // The packed input and output wiped over the pool (one thread took ~40 ms for a 256 MiB
      // batch's 512 MiB on the H200 host), the rest of the plan here, not with the GIL held at
      // the end of this function.
      const auto wipe = [](uint8_t* bytes, size_t len) { cpu::parallel_copy(bytes, nullptr, len); };
      plan.owned_input.clear_with(wipe);
      plan.owned_output.clear_with(wipe);
      plan = BatchPlan();
    }
    nb::list variants;
    for (const auto& v : result.suite_variants) variants.append(v);
    nb::dict info = run_info(result);
    info["build_s"] = build_s;  // checking done at add(); this is packing, sorting and grouping
    info["groups"] = num_groups;  // runs of one suite the executors launch one by one
    return nb::make_tuple(outputs, status_bytes(result), variants, info);
  }

  void clear() {
    views_ = std::make_unique<Views>();
    keep_alive_.clear();
  }

 private:
  std::unique_ptr<BatchBuilder> builder_ = std::make_unique<BatchBuilder>();
  std::unique_ptr<Views> views_ = std::make_unique<Views>();
  std::vector<nb::object> keep_alive_;
  bool keep_order_ = false;
};

nb::tuple aead_packed(std::string_view name, nb::handle key, bool seal, nb::handle nonces, size_t nonce_len,
                      nb::handle data, nb::handle lengths, nb::handle aad, unsigned tag_len,
                      std::string_view variant, std::string_view device, nb::handle out) {
  Views views;
  const ByteSpan key_bytes = views.get(key), nonce_bytes = views.get(nonces), input = views.get(data),
                 aad_bytes = views.get(aad), length_bytes = views.get(lengths);
  if (length_bytes.size() % sizeof(uint64_t) != 0)
    throw std::invalid_argument("aead_packed: lengths must be a uint64 array");
  const size_t num_messages = length_bytes.size() / sizeof(uint64_t);
  if (nonce_len == 0 || nonce_bytes.size() != num_messages * nonce_len)
    throw std::invalid_argument("aead_packed: expected " + std::to_string(num_messages) + " nonces of " +
                                std::to_string(nonce_len) + " bytes");
  std::vector<uint64_t> lens(num_messages);
  if (num_messages) std::memcpy(lens.data(), length_bytes.data(), length_bytes.size());

  BatchBuilder builder;
  builder.reserve(num_messages);
  Suite suite;
  suite.operation = seal ? Operation::seal : Operation::open;
  suite.aead = parse_aead_name(name);
  suite.tag_len = static_cast<uint8_t>(tag_len);
  suite.variant = std::string(variant);
  const uint32_t suite_index = builder.add_suite(suite);
  uint64_t offset = 0;
  {
    // Per-message bookkeeping (hundreds of chunks per stream job) without the GIL, so that the
    // stream's reader and the other devices' workers keep running meanwhile.
    nb::gil_scoped_release release;
    for (size_t i = 0; i < num_messages; ++i) {
      builder.add_packed(suite_index, key_bytes, nonce_bytes.subspan(i * nonce_len, nonce_len), aad_bytes, offset,
                         lens[i]);
      offset += lens[i];
    }
  }
  if (offset != input.size())
    throw std::invalid_argument("aead_packed: lengths add up to " + std::to_string(offset) + " bytes, data has " +
                                std::to_string(input.size()));
  const uint64_t out_len = builder.packed_output_len();
  nb::object output_object;
  MutableByteSpan output;
  if (out.is_none()) {
    PyObject* bytes = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(out_len));
    if (!bytes) throw nb::python_error();
    output_object = nb::steal(bytes);
    output = MutableByteSpan(reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(bytes)), out_len);
  } else {
    output_object = nb::borrow(out);
    output = views.get_writable(out);
    if (output.size() < out_len)
      throw std::invalid_argument("aead_packed: output buffer holds " + std::to_string(output.size()) +
                                  " bytes, " + std::to_string(out_len) + " needed");
    output = output.first(out_len);
  }
  BatchResult result;
  const std::string device_name(device);
  {
    nb::gil_scoped_release release;
    BatchPlan plan = builder.build_packed(input, output);
    result = engine::run_batch(plan, device_name);
    // A failed open writes nothing, so a caller's `out` keeps its bytes; this new bytes object
    // was never initialised and must not hand out old heap contents.
    if (out.is_none()) engine::zero_failed_outputs(plan, result);
  }
  const std::string variant_name = result.suite_variants.empty() ? "" : result.suite_variants[0];
  return nb::make_tuple(output_object, status_bytes(result), variant_name, run_info(result));
}

}  // namespace

void register_engine_bindings(nb::module_& m) {
  nb::class_<PyBatch>(m, "Batch")
      .def(nb::init<>())
      .def("add_suite", &PyBatch::add_suite)
      .def("add", &PyBatch::add, nb::arg("suite"), nb::arg("key").none(), nb::arg("iv").none(), nb::arg("aad").none(),
           nb::arg("data"))
      .def("add_many", &PyBatch::add_many, nb::arg("suite"), nb::arg("key").none(), nb::arg("ivs").none(),
           nb::arg("aad").none(), nb::arg("messages"))
      .def("run", &PyBatch::run, nb::arg("device"), nb::arg("executor") = "")
      .def("clear", &PyBatch::clear)
      .def("keep_submission_order", &PyBatch::keep_submission_order, nb::arg("keep"))
      .def("__len__", &PyBatch::size);
  m.def("aead_packed", &aead_packed, nb::arg("name"), nb::arg("key"), nb::arg("seal"), nb::arg("nonces"),
        nb::arg("nonce_len"), nb::arg("data"), nb::arg("lengths"), nb::arg("aad").none(), nb::arg("tag_len"),
        nb::arg("variant"), nb::arg("device"), nb::arg("out").none());
  // The stream engine's in-memory sources and sinks (stream.MemorySource/MemorySink): a memcpy
  // over the CPU pool with the GIL released, since one core copies a fifth of PCIe speed.
  m.def("copy_into", [](nb::handle destination, nb::handle source) {
    Views views;
    const MutableByteSpan to = views.get_writable(destination);
    const ByteSpan from = views.get(source);
    if (to.size() < from.size())
      throw std::invalid_argument("copy_into: destination has " + std::to_string(to.size()) + " bytes for " +
                                  std::to_string(from.size()));
    nb::gil_scoped_release release;
    cpu::parallel_copy(to.data(), from.data(), from.size());
    return from.size();
  });
  m.def("wipe", [](nb::handle buffer) {
    Views views;
    MutableByteSpan span = views.get_writable(buffer);
    nb::gil_scoped_release release;
    // Staging buffers run to hundreds of MiB: zero them with every core. The memset cannot be
    // dropped as dead stores: the memory stays reachable from Python.
    if (span.size() >= (size_t(4) << 20)) cpu::parallel_copy(span.data(), nullptr, span.size());
    else secure_zero(span.data(), span.size());
  });
}

}  // namespace gpucrypt::python
