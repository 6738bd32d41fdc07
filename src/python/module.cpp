// module.cpp: the nanobind extension gpucrypt._native. Thin: argument plumbing and the GIL;
// every decision lives in the C++ API or in python/gpucrypt/.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>

#include "gpucrypt/aead.hpp"
#include "gpucrypt/device.hpp"
#include "gpucrypt/cipher.hpp"
#include "gpucrypt/parallel.hpp"
#include "gpucrypt/hash.hpp"
#include "gpucrypt/scheduler.hpp"
#include "buffer_view.hpp"

namespace nb = nanobind;
using namespace gpucrypt;
using gpucrypt::python::BufferView;
using gpucrypt::python::new_bytes;
using gpucrypt::python::new_digest_bytes;

// Bindings that live in their own files (CUDA device-pointer entry points, GPU hashing).
namespace gpucrypt::python {
void register_resident_bindings(nb::module_& m);
void register_cuda_hash_bindings(nb::module_& m);
void register_engine_bindings(nb::module_& m);
void register_speed_bindings(nb::module_& m);
void register_tree_bindings(nb::module_& m);
void register_format_bindings(nb::module_& m);
void register_file_output_bindings(nb::module_& m);
void register_transform_bindings(nb::module_& m);
}  // namespace gpucrypt::python

namespace {

// An option the library reads as text (a CPU share): None is "" (not given), anything else its str()
// (a float's shortest repr, which the library's parser reads back exactly).
std::string option_text(nb::handle value) { return value.is_none() ? "" : nb::cast<std::string>(nb::str(value)); }

nb::dict variant_dict(const VariantInfo& v) {
  nb::dict d;
  d["name"] = v.name;
  d["backend"] = v.backend;
  d["algorithm"] = v.algorithm;
  d["constant_time"] = v.constant_time;
  d["technique"] = v.technique;
  d["only_mode"] = v.only_mode.empty() ? nb::none() : nb::cast(v.only_mode);
  d["slower_in_mode"] = v.slower_in_mode.empty() ? nb::none() : nb::cast(v.slower_in_mode);
  return d;
}

nb::dict device_dict(const DeviceInfo& d) {
  nb::dict e;
  e["name"] = d.name;
  e["kind"] = d.kind;
  e["type"] = d.type;
  e["description"] = d.description;
  e["compute_units"] = d.num_compute_units;
  e["memory_bytes"] = d.memory_bytes;
  return e;
}

// Releasing and retaking the GIL costs about as much as encrypting a few hundred bytes on the
// CPU, so small CPU calls keep it (they finish before another thread would get far); GPU calls
// and large ones release it.
constexpr size_t kMinBytesToReleaseGil = 4096;

struct PyCipherStream {
  std::unique_ptr<CipherStream> stream;
  bool on_cpu;
  // One update at a time, whichever thread calls: CipherContext.update calls in without a Python
  // lock. Taken inside the GIL release, so no thread waits for the GIL while holding it.
  std::unique_ptr<std::mutex> mutex = std::make_unique<std::mutex>();

  explicit PyCipherStream(std::unique_ptr<CipherStream> s)
      : stream(std::move(s)), on_cpu(stream->device() == "cpu") {}

  void run(const uint8_t* in, uint8_t* out, size_t len) {
    if (on_cpu && len < kMinBytesToReleaseGil) {
      std::lock_guard<std::mutex> lock(*mutex);
      return stream->update(in, out, len);
    }
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(*mutex);
    stream->update(in, out, len);
  }
  nb::bytes update(nb::handle data) {
    BufferView in(data);
    uint8_t* out = nullptr;
    nb::bytes result = new_bytes(in.size(), &out);
    run(in.data(), out, in.size());
    return result;
  }
  size_t update_into(nb::handle data, nb::handle buffer) {
    BufferView in(data);
    BufferView out(buffer, /*writable=*/true);
    if (out.size() < in.size())
      throw std::invalid_argument("output buffer too small: " + std::to_string(out.size()) +
                                  " bytes for " + std::to_string(in.size()));
    run(in.data(), out.data(), in.size());
    return in.size();
  }
  // XTS data units (CipherStream::update_units): into buffer when given (returns the length),
  // else into new bytes.
  nb::object update_units(nb::handle data, nb::handle buffer, size_t unit_len, uint64_t first_unit) {
    BufferView in(data);
    uint8_t* out = nullptr;
    nb::object result;
    std::optional<BufferView> target;
    if (buffer.is_none()) {
      result = new_bytes(in.size(), &out);
    } else {
      target.emplace(buffer, /*writable=*/true);
      if (target->size() < in.size())
        throw std::invalid_argument("output buffer too small: " + std::to_string(target->size()) + " bytes for " +
                                    std::to_string(in.size()));
      out = target->data();
      result = nb::int_(in.size());
    }
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(*mutex);
    stream->update_units(in.data(), out, in.size(), unit_len, first_unit);
    return result;
  }
  // A new stream over this one's key schedule (CipherStream::restarted).
  PyCipherStream restarted(bool encrypt, nb::handle iv) const {
    std::vector<uint8_t> iv_bytes;
    if (!iv.is_none()) {
      BufferView v(iv);
      iv_bytes.assign(v.data(), v.data() + v.size());
    }
    return PyCipherStream(stream->restarted(encrypt ? Direction::encrypt : Direction::decrypt, iv_bytes));
  }
};

// The bytes of Python objects read in place: a bytes object directly, anything else through the
// buffer protocol, its view held until the reader dies (in a deque, which never moves them).
class InPlaceReader {
 public:
  ByteSpan operator()(nb::handle item) {
    if (PyBytes_Check(item.ptr()))
      return {reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(item.ptr())),
              static_cast<size_t>(PyBytes_GET_SIZE(item.ptr()))};
    return views_.emplace_back(item).span();
  }

 private:
  std::deque<BufferView> views_;
};

// A list or tuple as itself, anything else iterable as a new list (PySequence_Fast).
nb::object as_sequence(nb::handle items, const char* what) {
  nb::object sequence = nb::steal(PySequence_Fast(items.ptr(), what));
  if (!sequence.is_valid()) throw nb::python_error();
  return sequence;
}

// Below this many input bytes a thread-pool task costs more than it saves.
constexpr size_t kMinBytesPerTask = 64 * 1024;

// Any AEAD (gpucrypt/aead.hpp; GCM's implementations are Aeads): Python's AEAD holds one per device.
struct PyGcm {
  std::unique_ptr<Aead> gcm;
  bool on_cpu;

  explicit PyGcm(std::unique_ptr<Aead> g) : gcm(std::move(g)), on_cpu(gcm->device() == "cpu") {}

  bool keeps_gil(size_t len) const { return on_cpu && len < kMinBytesToReleaseGil; }

  nb::bytes seal(nb::handle nonce, nb::handle aad, nb::handle plaintext, size_t tag_len) {
    BufferView n(nonce), a(aad), p(plaintext);
    uint8_t* out = nullptr;
    nb::bytes result = new_bytes(p.size() + tag_len, &out);
    if (keeps_gil(p.size() + a.size())) {
      gcm->seal(n.span(), a.span(), p.span(), tag_len, out);
      return result;
    }
    nb::gil_scoped_release release;
    gcm->seal(n.span(), a.span(), p.span(), tag_len, out);
    return result;
  }
  // Returns None when the tag does not verify; the Python layer raises InvalidTag.
  nb::object open(nb::handle nonce, nb::handle aad, nb::handle ciphertext, size_t tag_len) {
    BufferView n(nonce), a(aad), c(ciphertext);
    if (c.size() < tag_len) return nb::none();
    uint8_t* out = nullptr;
    nb::bytes result = new_bytes(c.size() - tag_len, &out);
    bool ok;
    if (keeps_gil(c.size() + a.size())) {
      ok = gcm->open(n.span(), a.span(), c.span(), tag_len, out);
    } else {
      nb::gil_scoped_release release;
      ok = gcm->open(n.span(), a.span(), c.span(), tag_len, out);
    }
    if (!ok) return nb::none();
    return result;
  }
  // encrypt_many/decrypt_many on the CPU: every message read in place from the Python sequences
  // and its output written straight into the bytes object returned, the messages spread over the
  // thread pool. (Packing the inputs into one buffer and cutting the packed output into bytes
  // objects were half of encrypt_many's time.) Returns (outputs, status): status[i] is 0, or 1
  // when message i's tag did not verify, whose output is then zeros.
  nb::tuple run_many(bool seal, nb::handle nonces, nb::handle messages, nb::handle aad, size_t tag_len) {
    if (!on_cpu) throw std::invalid_argument("run_many runs CPU ciphers only, not " + gcm->device());
    const nb::object nonce_items = as_sequence(nonces, "nonces must be a sequence");
    const nb::object message_items = as_sequence(messages, "messages must be a sequence");
    const size_t num_messages = static_cast<size_t>(PySequence_Fast_GET_SIZE(message_items.ptr()));
    if (static_cast<size_t>(PySequence_Fast_GET_SIZE(nonce_items.ptr())) != num_messages)
      throw std::invalid_argument(std::to_string(PySequence_Fast_GET_SIZE(nonce_items.ptr())) + " nonces for " +
                                  std::to_string(num_messages) + " messages");
    InPlaceReader read;
    const ByteSpan aad_bytes = aad.is_none() ? ByteSpan{} : read(aad);
    std::vector<ByteSpan> inputs(num_messages), nonce_spans(num_messages);
    std::vector<uint8_t*> outputs(num_messages);
    nb::list result = nb::steal<nb::list>(PyList_New(static_cast<Py_ssize_t>(num_messages)));
    if (!result.is_valid()) throw nb::python_error();
    size_t total_len = 0;
    for (size_t i = 0; i < num_messages; ++i) {
      const auto index = static_cast<Py_ssize_t>(i);
      inputs[i] = read(PySequence_Fast_GET_ITEM(message_items.ptr(), index));
      nonce_spans[i] = read(PySequence_Fast_GET_ITEM(nonce_items.ptr(), index));
      // A ciphertext shorter than its tag fails authentication like any other (status 1, no output).
      const size_t out_len = seal ? inputs[i].size() + tag_len
                                  : inputs[i].size() - std::min(inputs[i].size(), tag_len);
      PyList_SET_ITEM(result.ptr(), index, new_bytes(out_len, &outputs[i]).release().ptr());
      total_len += inputs[i].size();
    }
    std::string status(num_messages, '\0');
    {
      nb::gil_scoped_release release;
      const size_t grain = std::max<size_t>(1, kMinBytesPerTask * num_messages / std::max<size_t>(total_len, 1));
      cpu::parallel_for(num_messages, grain, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
          if (seal) {
            gcm->seal(nonce_spans[i], aad_bytes, inputs[i], tag_len, outputs[i]);
          } else if (inputs[i].size() < tag_len) {
            status[i] = 1;
          } else if (!gcm->open(nonce_spans[i], aad_bytes, inputs[i], tag_len, outputs[i])) {
            status[i] = 1;
            std::memset(outputs[i], 0, inputs[i].size() - tag_len);  // never uninitialised memory
          }
        }
      });
    }
    return nb::make_tuple(result, nb::bytes(status.data(), status.size()));
  }
};

struct PyHash {
  std::unique_ptr<hash::HashContext> ctx;

  void update(nb::handle data) {
    BufferView in(data);
    if (in.size() >= 4096) {
      nb::gil_scoped_release release;
      ctx->update(in.data(), in.size());
    } else {
      ctx->update(in.data(), in.size());
    }
  }
  nb::bytes finalize(size_t out_len) {
    uint8_t* out = nullptr;
    nb::bytes result = new_digest_bytes(out_len, &out);
    ctx->finalize(out, out_len);
    return result;
  }
  PyHash copy() const { return PyHash{ctx->clone()}; }
};

}  // namespace

NB_MODULE(_native, m) {
  m.doc() = "gpucrypt native core (C++/CUDA); use the gpucrypt package, not this module";

  nb::exception<DeviceError>(m, "DeviceError", PyExc_RuntimeError);
  gpucrypt::python::register_resident_bindings(m);
  gpucrypt::python::register_cuda_hash_bindings(m);
  gpucrypt::python::register_engine_bindings(m);
  gpucrypt::python::register_speed_bindings(m);
  gpucrypt::python::register_tree_bindings(m);
  gpucrypt::python::register_format_bindings(m);
  gpucrypt::python::register_file_output_bindings(m);
  gpucrypt::python::register_transform_bindings(m);

  m.def("parse_device_name", [](std::string_view device) {
    const DeviceName d = parse_device_name(device);
    return nb::make_tuple(d.kind, d.index, d.canonical);
  });
  m.def("constant_time_variant", &constant_time_variant, nb::arg("algorithm"), nb::arg("device"), nb::arg("mode") = "");
  m.def("variants", [] {
    nb::list out;
    for (const auto& v : list_variants()) out.append(variant_dict(v));
    return out;
  });
  m.def("devices", [] {
    nb::list out;
    for (const auto& d : list_devices()) out.append(device_dict(d));
    return out;
  });
  // One device through the registry (include/gpucrypt/device.hpp): what it is, and the variant it
  // runs for a cipher when the caller names none (constant_time: the file format's choice).
  // The device policy (gpucrypt/device.hpp select_devices): (devices, cpu_share) with the share
  // as Python's stream layer spells it, "auto" or a float. Its arguments as Python holds them: the
  // devices as text ("cuda:0,cuda:1"), any iterable of names or None; the share None, text or a
  // number, which the library's parser reads from its text (parse_cpu_share), as the CLI's.
  m.def(
      "select_devices",
      [](std::string_view device, nb::handle devices, nb::handle cpu_share, bool check_present) {
        const std::string device_list = devices.is_none() ? ""
                                        : nb::isinstance<nb::str>(devices)
                                            ? nb::cast<std::string>(devices)
                                            : nb::cast<std::string>(nb::str(",").attr("join")(devices));
        const DeviceSelection s = select_devices(device, device_list, option_text(cpu_share), check_present);
        nb::list names;
        for (const std::string& name : s.devices) names.append(name);
        return nb::make_tuple(names, s.cpu_share < 0 ? nb::object(nb::str("auto")) : nb::object(nb::float_(s.cpu_share)));
      },
      nb::arg("device"), nb::arg("devices").none(), nb::arg("cpu_share").none(), nb::arg("check_present"));
  // select_devices' share parser: None for None or "", "auto", or a float 0..1 from a number or its
  // text (ValueError naming the text).
  m.def(
      "parse_cpu_share",
      [](nb::handle value) -> nb::object {
        const std::optional<double> share = parse_cpu_share(option_text(value));
        if (!share) return nb::none();
        return *share < 0 ? nb::object(nb::str("auto")) : nb::object(nb::float_(*share));
      },
      nb::arg("value").none());
  m.def("auto_gpus", &auto_gpus);
  m.def("start_devices_early", &start_devices_early, nb::arg("devices"), nb::arg("local_rank") = 0,
        nb::arg("local_size") = 1,
        "Starts the named GPUs ('auto': every one auto_gpus gives, or local rank k of n's share: deal_gpus) on a "
        "library thread ahead of their first use (gpucrypt/device.hpp start_devices_early); once per process.");
  m.def("forget_device_sets", &engine::forget_device_sets,
        "Forgets the device sets this process measured and kept (gpucrypt/scheduler.hpp): each kind of work "
        "probes its devices again on its next run.");
  m.def(
      "charge_first_run_from",
      [](double monotonic_s) {
        // time.monotonic() and steady_clock both count CLOCK_MONOTONIC on Linux.
        engine::charge_first_run_from(std::chrono::steady_clock::time_point(
            std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(monotonic_s))));
      },
      nb::arg("monotonic_s"),
      "For a program that is one command (the CLI): when it began, as time.monotonic() gave it; its first run on a "
      "device set kept on this machine is charged from then, its devices' start-up included (gpucrypt/scheduler.hpp).");
  m.def("machine_description", &machine_description,
        "This machine as device sets are kept for it across processes (gpucrypt/device.hpp machine_description).");
  m.def("machine_store_path", &engine::machine_store_path,
        "The file that keeps measured device sets on this machine, or '' (gpucrypt/scheduler.hpp).");
  m.def("deal_gpus", &deal_gpus, nb::arg("gpus"), nb::arg("local_rank"), nb::arg("local_size"),
        "The GPUs of local rank k of n on a node with `gpus` (gpucrypt/device.hpp deal_gpus).");
  m.def("wait_devices_started", &wait_devices_started, nb::call_guard<nb::gil_scoped_release>(),
        "Returns once start_devices_early's thread is done.");
  m.def("device_info", [](std::string_view device) { return device_dict(gpucrypt::device(device).info()); },
        nb::arg("device"));
  m.def(
      "device_traits",
      [](std::string_view device) {
        const DeviceTraits traits = device_traits(device);
        nb::dict d;
        d["is_gpu"] = traits.is_gpu;
        d["job_len"] = traits.job_len;
        d["workers"] = traits.workers;
        return d;
      },
      nb::arg("device"),
      "What a device is to a caller that spreads work (device_traits; no device opened): is_gpu, job_len, workers.");
  m.def(
      "device_select",
      [](std::string_view device, std::string_view cipher, bool constant_time) {
        const CipherName name = parse_cipher_name(cipher);
        return variant_dict(gpucrypt::device(device).select(name.algorithm, name.mode, constant_time));
      },
      nb::arg("device"), nb::arg("cipher"), nb::arg("constant_time") = false);
  m.def("cuda_unavailable_reason", &cuda_unavailable_reason);
  m.def("backend_unavailable_reasons", &backend_unavailable_reasons,
        "[(kind, why no device of it works here, or '')] for every backend of the registry.");
  m.def("parse_cipher_name", [](std::string_view name) {
    CipherName n = parse_cipher_name(name);
    nb::dict d;
    d["canonical"] = n.canonical;
    d["algorithm"] = std::string(algorithm_name(n.algorithm));
    d["key_bits"] = n.key_bits;
    d["mode"] = std::string(mode_name(n.mode));
    d["key_len"] = n.key_len();
    // Whether a message can be cut into independent pieces, per direction (mode_is_parallel).
    d["parallel_encrypt"] = mode_is_parallel(n.mode, Direction::encrypt);
    d["parallel_decrypt"] = mode_is_parallel(n.mode, Direction::decrypt);
    d["keystream"] = mode_is_keystream(n.mode);
    d["whole_blocks"] = mode_needs_whole_blocks(n.mode);
    return d;
  });
  // Every mode with its rules (cipher.hpp), for Python's lists (gpucrypt.modes(), cipher.KEYSTREAM_MODES).
  m.def("mode_rules", [] {
    nb::dict rules;
    for (Mode mode : list_modes()) {
      nb::dict r;
      r["aead"] = mode_is_aead(mode);
      r["stream"] = mode_is_stream(mode);
      r["keystream"] = mode_is_keystream(mode);
      r["whole_blocks"] = mode_needs_whole_blocks(mode);
      r["parallel_encrypt"] = mode_is_parallel(mode, Direction::encrypt);
      r["parallel_decrypt"] = mode_is_parallel(mode, Direction::decrypt);
      rules[nb::str(std::string(mode_name(mode)).c_str())] = r;
    }
    return rules;
  });

  m.def(
      "range_iv",
      [](std::string_view cipher, nb::bytes iv, uint64_t first_block, std::optional<nb::bytes> previous_block) {
        const CipherName name = parse_cipher_name(cipher);
        if (iv.size() != 16) throw std::invalid_argument("range_iv: the IV must be 16 bytes");
        const bool needs_previous = first_block > 0 && mode_range_needs_previous(name.mode);
        if (needs_previous && (!previous_block || previous_block->size() != 16))
          throw std::invalid_argument("range_iv: " + name.canonical + " needs the 16-byte block before the range");
        uint8_t out[16];
        mode_range_iv(name.mode, reinterpret_cast<const uint8_t*>(iv.c_str()), first_block,
                      needs_previous ? reinterpret_cast<const uint8_t*>(previous_block->c_str()) : nullptr, out);
        return nb::bytes(reinterpret_cast<const char*>(out), 16);
      },
      nb::arg("cipher"), nb::arg("iv"), nb::arg("first_block"), nb::arg("previous_block").none() = nb::none(),
      "The starting IV/counter of the piece of a parallel-mode message that begins at first_block "
      "(mode_range_iv): CTR counts on, CBC/CFB decryption take previous_block.");

  nb::class_<PyCipherStream>(m, "CipherStream")
      .def("update", &PyCipherStream::update)
      .def("update_into", &PyCipherStream::update_into)
      .def("update_units", &PyCipherStream::update_units, nb::arg("data"), nb::arg("out").none(), nb::arg("unit_len"),
           nb::arg("first_unit"))
      .def("restarted", &PyCipherStream::restarted, nb::arg("encrypt"), nb::arg("iv").none())
      .def_prop_ro("variant", [](const PyCipherStream& s) { return s.stream->variant().name; })
      .def_prop_ro("constant_time",
                   [](const PyCipherStream& s) { return s.stream->variant().constant_time; })
      .def_prop_ro("device", [](const PyCipherStream& s) { return s.stream->device(); });
  m.def("create_cipher_stream", [](std::string_view name, bool encrypt, nb::handle key,
                                   nb::handle iv, std::string_view variant, std::string_view device) {
    BufferView k(key);
    std::vector<uint8_t> iv_bytes;
    if (!iv.is_none()) {
      BufferView v(iv);
      iv_bytes.assign(v.data(), v.data() + v.size());
    }
    return PyCipherStream(create_cipher_stream(parse_cipher_name(name),
                                               encrypt ? Direction::encrypt : Direction::decrypt,
                                               k.span(), iv_bytes, variant, device));
  }, nb::arg("name"), nb::arg("encrypt"), nb::arg("key"), nb::arg("iv").none(), nb::arg("variant"),
     nb::arg("device"));

  nb::class_<PyGcm>(m, "Gcm")
      .def("seal", &PyGcm::seal)
      .def("open", &PyGcm::open)
      .def("run_many", &PyGcm::run_many, nb::arg("seal"), nb::arg("nonces"), nb::arg("messages"), nb::arg("aad").none(),
           nb::arg("tag_len"))
      .def_prop_ro("variant", [](const PyGcm& g) { return g.gcm->variant().name; })
      .def_prop_ro("constant_time", [](const PyGcm& g) { return g.gcm->variant().constant_time; })
      .def_prop_ro("device", [](const PyGcm& g) { return g.gcm->device(); });
  m.def("create_gcm", [](std::string_view name, nb::handle key, std::string_view variant,
                         std::string_view device) {
    BufferView k(key);
    return PyGcm(create_gcm(parse_cipher_name(name), k.span(), variant, device));
  });
  m.def("create_aead", [](std::string_view name, nb::handle key, std::string_view variant, std::string_view device) {
    BufferView k(key);
    return PyGcm(create_aead(name, k.span(), variant, device));
  });
  // An AEAD name's rules (gpucrypt/aead.hpp AeadName), for Python's checks and messages.
  m.def("aead_info", [](std::string_view name) {
    const AeadName a = parse_aead_name(name);
    nb::dict d;
    d["canonical"] = a.canonical;
    d["algorithm"] = std::string(algorithm_name(a.algorithm));
    d["key_bits"] = a.key_bits;
    d["construction"] = std::string(aead_construction_name(a.construction));
    d["key_len"] = a.key_len;
    d["nonce_min"] = a.nonce_min;
    d["nonce_max"] = a.nonce_max;
    d["tag_min"] = a.tag_min;
    d["tag_max"] = a.tag_max;
    d["max_plaintext"] = a.max_plaintext;
    d["max_aad"] = a.max_aad;
    return d;
  });
  m.def("aeads", &list_aeads);
  m.def("check_aead_arguments", [](std::string_view name, uint64_t nonce_len, uint64_t aad_len, uint64_t data_len,
                                   size_t tag_len) {
    check_aead_arguments(parse_aead_name(name), nonce_len, aad_len, data_len, tag_len);
  });

  nb::class_<PyHash>(m, "Hash")
      .def("update", &PyHash::update)
      .def("finalize", &PyHash::finalize)
      .def("copy", &PyHash::copy)
      .def_prop_ro("variant", [](const PyHash& h) { return h.ctx->variant(); });
  m.def("hash_info", [](std::string_view name) {
    const hash::HashInfo& info = hash::hash_info(name);
    nb::dict d;
    d["name"] = info.name;
    d["digest_size"] = info.digest_size;
    d["rate"] = info.rate;
    d["is_xof"] = info.is_xof;
    d["takes_customization"] = info.takes_customization;
    d["takes_block_size"] = info.takes_block_size;
    return d;
  });
  // host_keccak() -> (the host's serial Keccak loops, tree leaves one core hashes at once)
  m.def("host_keccak", [] {
    const hash::HostKeccak host = hash::host_keccak();
    return std::make_pair(host.loops, host.leaves_at_once);
  });
  m.def("hash_names", [] {
    std::vector<std::string> names;
    for (const auto& h : hash::list_hashes()) names.push_back(h.name);
    return names;
  });
  m.def("create_hash", [](std::string_view name, nb::handle function_name,
                          nb::handle customization, size_t block_size, std::string_view variant) {
    hash::HashParams params;
    BufferView n(function_name), s(customization);
    params.function_name.assign(reinterpret_cast<const char*>(n.data()), n.size());
    params.customization.assign(reinterpret_cast<const char*>(s.data()), s.size());
    params.block_size = block_size;
    return PyHash{hash::create_hash(name, params, variant)};
  });
  m.def("hash_many", [](std::string_view name, nb::list messages, size_t out_len,
                        std::string_view variant) {
    // Per message: its bytes read in place (bytes objects without the buffer protocol) and its
    // digest written straight into the bytes object returned, so 100k small messages cost no
    // allocation beyond the digests themselves.
    const size_t num_messages = nb::len(messages);
    InPlaceReader read;
    std::vector<const uint8_t*> ptrs(num_messages);
    std::vector<size_t> lens(num_messages);
    std::vector<uint8_t*> outs(num_messages);
    nb::list result = nb::steal<nb::list>(PyList_New(static_cast<Py_ssize_t>(num_messages)));
    if (!result.is_valid()) throw nb::python_error();
    for (size_t i = 0; i < num_messages; ++i) {
      const ByteSpan message = read(messages[i]);
      ptrs[i] = message.data();
      lens[i] = message.size();
      PyList_SET_ITEM(result.ptr(), static_cast<Py_ssize_t>(i), new_bytes(out_len, &outs[i]).release().ptr());
    }
    std::vector<uint8_t> packed(out_len * num_messages);
    {
      nb::gil_scoped_release release;
      hash::hash_many(name, hash::HashParams{}, ptrs.data(), lens.data(), num_messages, packed.data(),
                      out_len, variant);
      for (size_t i = 0; i < num_messages; ++i) std::memcpy(outs[i], packed.data() + i * out_len, out_len);
    }
    return result;
  });
  // One-shot hash with default parameters: one call, the context finalised without a copy.
  m.def("hash_once", [](std::string_view name, nb::handle data, size_t out_len, std::string_view variant) {
    BufferView in(data);
    uint8_t* out = nullptr;
    nb::bytes result = new_digest_bytes(out_len, &out);
    if (in.size() < kMinBytesToReleaseGil) {
      hash::hash_once(name, variant, in.data(), in.size(), out, out_len);
    } else {
      nb::gil_scoped_release release;
      hash::hash_once(name, variant, in.data(), in.size(), out, out_len);
    }
    return result;
  });
  // Cuts `packed` into a list of bytes objects of max(0, lengths[i] + adjust) bytes each, back
  // to back (encrypt_many's outputs: adjust = +tag length to seal, -tag length to open).
  m.def("split_packed", [](nb::handle packed, nb::handle lengths, int64_t adjust) {
    BufferView data(packed), length_view(lengths);
    if (length_view.size() % sizeof(uint64_t) != 0) throw std::invalid_argument("split_packed: lengths must be a uint64 array");
    const size_t num_items = length_view.size() / sizeof(uint64_t);
    nb::list result = nb::steal<nb::list>(PyList_New(static_cast<Py_ssize_t>(num_items)));
    if (!result.is_valid()) throw nb::python_error();
    size_t offset = 0;
    for (size_t i = 0; i < num_items; ++i) {
      uint64_t length;
      std::memcpy(&length, length_view.data() + i * sizeof length, sizeof length);
      const int64_t wanted = static_cast<int64_t>(length) + adjust;
      const size_t take = wanted > 0 ? static_cast<size_t>(wanted) : 0;
      if (offset + take > data.size()) throw std::invalid_argument("split_packed: lengths exceed the data");
      PyObject* item = PyBytes_FromStringAndSize(reinterpret_cast<const char*>(data.data() + offset),
                                                 static_cast<Py_ssize_t>(take));
      if (!item) throw nb::python_error();
      PyList_SET_ITEM(result.ptr(), static_cast<Py_ssize_t>(i), item);
      offset += take;
    }
    return result;
  });
}
