// format_bindings.cpp: the file format's chunk ranges (include/gpucrypt/format.hpp) for Python.
//   FORMAT_HEADER_LEN, FORMAT_TAG_LEN, FORMAT_NONCE_LEN, FORMAT_KEY_LEN, FORMAT_{DEFAULT,MIN,MAX}_CHUNK_LEN:
//     format.hpp's sizes.
//   FormatLayout(chunk_len, plaintext_len): format.hpp's Layout (.num_chunks, .file_len,
//     .plaintext_range(first, count), .sealed_range(first, count) -> (offset, length)).
//   format_seal_chunks(payload_key, layout, first, count, plaintext, out, device="cpu", variant="")
//     -> (variant that ran, {h2d_s, compute_s, d2h_s})
//   format_open_chunks(...same, sealed...) -> as seal's; DecryptionError naming the first chunk that failed,
//     the ranges of failed chunks in `out` left untouched.
//   FormatSealer(key, chunk_len, device, variant): .header, .update(data) -> bytes, .finish() -> bytes
//   FormatOpener(key, device, variant): .update(data) -> bytes, .finish() -> bytes (raises ValueError
//     naming the failure; kdf 2, raw keys only: passphrases are Python's)
//   format_seal_body(payload_key, header, chunk_len, plaintext, out, devices, cpu_share, job_len, variant,
//                    progress, cancelled) -> (new bytes when out is None else None, stats dict):
//     the whole file (header of any length + sealed chunks) into `out` (or a new bytes object) on the in-memory
//     pipeline (format.hpp seal_body), with the GIL released. cpu_share: None or "auto" (measured), or a
//     number 0..1 (scheduler_callbacks.hpp cpu_share_of); no devices: the
//     library's choice for these buffers (format.hpp buffer_devices).
//   format_open_body(payload_key, chunk_len, plaintext_len, body, out, ...same...) -> (new bytes or None,
//     stats dict, None or (message, chunk_index, released_len) of an authentication failure)
//   format_check_out(out, len, what): their check of `out` (None passes; TypeError without a buffer,
//     ValueError read-only, not C-contiguous, or under len bytes: "out holds N bytes; WHAT needs LEN").
//   FormatStream(operation "seal" | "open", payload_key, chunk_len, devices, cpu_share, job_len, variant,
//                retire, cancelled): format.hpp's ChunkStream. .input_unit_len, .chunks_per_job,
//     .output_capacity(input_len); .submit(job_id, input, output, at_end, trailing_data) and .drain()
//     return None, or (message, chunk_index, released_len) of an authentication failure (after which
//     the stream only stops); .stop(); .stats() -> the stats dict. The workers never touch Python:
//     the buffers are held (buffer protocol) from submit until retire(job_id, num_chunks, output_len), which
//     runs on the calling thread with the GIL, in order.
//   format_seal_file(in_fd, in_offset, out_fd, out_offset, header, payload_key, chunk_len, devices, cpu_share,
//                    job_len, variant, progress, cancelled, input_name, output_name) (the tests' way to the
//                    library's own refusals; Python's files go through format_seal_ends / format_open_ends):
//     format.hpp's seal_file between regular files -> (input_len, output_len, stats dict
//     with read_s / write_s, None or the authentication failure tuple); progress gets input bytes; a
//     read or write error is OSError naming input_name or output_name; direct_input=True reads the input
//     with O_DIRECT (format.hpp PipelineOptions::direct_input).
//   format_seal_file_chunks / format_open_file_chunks(in_fd, in_offset, out_fd, out_offset, payload_key,
//     chunk_len, plaintext_len, first, count, ...as above...) -> (stats dict, None or the failure tuple):
//     chunks [first, first + count) only (an MPI rank's share), offsets as format.hpp's.
//   format_seal_ends / format_open_ends(in_fd, in_offset, already_read, input_ended, out, out_offset, header,
//     payload_key, chunk_len, devices, cpu_share, job_len, variant, progress, cancelled, input_name, output_name,
//     direct_input): format.hpp's seal_ends / open_ends, which choose the file pipeline (regular files at
//     known offsets, -1: not seekable) or the streaming path (pipes, FIFOs, devices, sockets: read(2) in order
//     from already_read, or with in_fd -1 from `reader`, a file object's readinto or read); `out` a descriptor,
//     None for nowhere, or a file object given each piece of output by format_write_all's rule, in order -> as
//     format_seal_file, and whether the file pipeline ran.
//   format_hash_ends(source, name, customization, function_name, block_size, out_len, device, block_len,
//                    variant, progress, cancelled)
//     -> (digest bytes, stats dict in the pipelines' shape): format.hpp's hash_ends over the file object
//     `source` (PythonInput: a regular file at a known offset by the library's positional readers in blocks
//     of about block_len bytes, 0: the library's, a tree's leaves on `device`; else the stream hasher, from
//     its descriptor or its readinto or read); `variant` "" or a CPU hash variant that hashes it all;
//     progress gets bytes hashed; a read error is OSError naming the source's file.
//   format_write_all(dst, data): every byte of data through dst.write (format.hpp writing_all; BlockingIOError
//     when a raw dst takes nothing, ValueError for a count above what it was given).
//   format_reserve_file(fd, length, name): format.hpp's reserve_file (OSError naming `name`).
//   format_positional_problem(fd, output) -> "" or why the file pipeline cannot use fd by offset.
//   format_available_memory_len() -> bytes or None; format_check_scrypt_memory(log2n, available or None)
//     (ValueError naming the memory); format_memory_text(num_bytes) -> "256 MiB": format.hpp's scrypt rule.
//   format_suite_name(suite) -> "AES-256-GCM"; format_suite_of_aead(aead_name) -> 1 (FormatError for others).
//   format_file_len(plaintext_len, chunk_len) -> the file's length (ValueError for a bad chunk_len);
//   format_layout_for_file(file_len, chunk_len, header_len=80) -> FormatLayout; DecryptionError when no
//     file has that length, FormatError when it is shorter than its header (format.hpp's layout_for_file).
//   Progress is progress(n) with the bytes done since its last call (format_seal_ends / format_open_ends:
//   once per chunk, n its input bytes; format_seal_file and the chunk ranges: the input bytes done so far).
//   Both call progress and cancelled() -> bool with the GIL, on the calling
//   thread; cancelled() raising, progress() raising or a signal (PyErr_CheckSignals, e.g.
//   KeyboardInterrupt) stops the pipeline and raises that exception; cancelled() returning True
//   raises gpucrypt.stream.Cancelled.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "gpucrypt/scheduler.hpp"

#include "gpucrypt/format.hpp"
#include "buffer_view.hpp"
#include "scheduler_callbacks.hpp"

namespace nb = nanobind;

namespace gpucrypt::python {

void register_format_bindings(nb::module_& m);

namespace {

nb::dict info_of(const format::ChunkRun& run) {
  nb::dict info;
  info["h2d_s"] = run.h2d_s;
  info["compute_s"] = run.compute_s;
  info["d2h_s"] = run.d2h_s;
  return info;
}

nb::bytes to_bytes(const std::vector<uint8_t>& v) { return nb::bytes(reinterpret_cast<const char*>(v.data()), v.size()); }

std::pair<std::string, nb::dict> seal_range(nb::handle key, const format::Layout& layout, uint64_t first, uint64_t count,
                                            nb::handle plaintext, nb::handle out, std::string_view device,
                                            std::string_view variant) {
  BufferView key_view(key), in(plaintext), output(out, true);
  format::ChunkRun run;
  {
    nb::gil_scoped_release release;
    run = format::seal_chunks(key_view.span(), layout, first, count, in.span(),
                              MutableByteSpan(output.data(), output.size()), device, variant);
  }
  return {run.variant, info_of(run)};
}

std::pair<std::string, nb::dict> open_range(nb::handle key, const format::Layout& layout, uint64_t first, uint64_t count, nb::handle sealed,
                     nb::handle out, std::string_view device, std::string_view variant) {
  BufferView key_view(key), in(sealed), output(out, true);
  format::ChunkRun run;
  {
    nb::gil_scoped_release release;
    run = format::open_chunks(key_view.span(), layout, first, count, in.span(),
                              MutableByteSpan(output.data(), output.size()), device, variant);
  }
  return {run.variant, info_of(run)};
}

struct PySealer {
  format::Sealer sealer;
  PySealer(nb::handle key, uint32_t chunk_len, std::string_view device, std::string_view variant)
      : sealer(BufferView(key).span(), chunk_len, device, variant) {}
};

struct PyOpener {
  format::Opener opener;
  PyOpener(nb::handle key, std::string_view device, std::string_view variant)
      : opener(BufferView(key).span(), device, variant) {}
};

// ---- the in-memory pipeline -----------------------------------------------------------------

// A caller's `out` for the in-memory pipelines (None: a new bytes object): TypeError for what has no
// buffer, ValueError for a read-only or non-contiguous one or one of fewer than `len` bytes, naming
// `what` needs them. fileformat asks (format_check_out) before any key is derived, then again here.
void check_out(nb::handle out, uint64_t len, const std::string& what) {
  if (out.is_none()) return;
  Py_buffer probe;
  if (PyObject_GetBuffer(out.ptr(), &probe, PyBUF_FULL_RO) != 0) {
    PyErr_Clear();
    throw nb::type_error(("out must be a writable buffer, not " + std::string(Py_TYPE(out.ptr())->tp_name)).c_str());
  }
  const bool writable = !probe.readonly, contiguous = PyBuffer_IsContiguous(&probe, 'C');
  const uint64_t size = static_cast<uint64_t>(probe.len);
  PyBuffer_Release(&probe);
  if (!writable)
    throw std::invalid_argument("out must be writable (bytearray, memoryview, numpy array, stream.page_locked)");
  if (!contiguous) throw std::invalid_argument("out must be C-contiguous");
  if (size < len)
    throw std::invalid_argument("out holds " + std::to_string(size) + " bytes; " + what + " needs " +
                                std::to_string(len));
}

// `out`, or a new bytes object of `len` bytes when out is None: (owner to return or None, span).
// A new bytes object is filled before Python sees it, which CPython allows its creator.
struct Output {
  nb::object fresh;
  std::optional<BufferView> view;
  MutableByteSpan span;
  Output(nb::handle out, uint64_t len, const char* what) {
    if (out.is_none()) {
      fresh = nb::steal(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(len)));
      if (!fresh.is_valid()) throw nb::python_error();
      span = MutableByteSpan(reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(fresh.ptr())), len);
      return;
    }
    check_out(out, len, what);
    view.emplace(out, true);
    span = MutableByteSpan(view->data(), len);
  }
  nb::object result() const { return fresh.is_valid() ? fresh : nb::none(); }
};

nb::dict stats_dict(const format::PipelineStats& stats) {
  nb::dict devices;
  for (const auto& d : stats.devices) {
    nb::dict device;
    device["jobs"] = d.jobs;
    device["bytes"] = d.bytes;
    device["busy_s"] = d.busy_s;
    device["variant"] = d.variant;
    device["h2d_s"] = d.h2d_s;
    device["compute_s"] = d.compute_s;
    device["d2h_s"] = d.d2h_s;
    devices[nb::cast(d.name)] = device;
  }
  nb::dict result;
  result["wall_s"] = stats.wall_s;
  result["wait_s"] = stats.wait_s;
  result["device_choice"] = stats.device_choice;
  result["devices"] = devices;
  return result;
}

// A Python progress(n) taking the bytes done since its last call, in steps of at most step_len
// (encrypt_stream's promise: once per chunk, with the input bytes it consumed), from the library's
// running total (PipelineOptions::progress: input bytes done so far). None stays None.
nb::object progress_in_steps(nb::handle progress, uint64_t step_len = UINT64_MAX) {
  if (progress.is_none()) return nb::none();
  auto reported = std::make_shared<uint64_t>(0);
  return nb::cpp_function([progress = nb::borrow<nb::object>(progress), step_len, reported](uint64_t done) {
    while (*reported < done) {  // (a job of only an empty final chunk adds nothing)
      const uint64_t step = std::min(step_len, done - *reported);
      *reported += step;
      progress(step);
    }
  });
}

// Runs `pipeline` with the GIL released; progress and cancelled take it back. A Python exception
// from either, or a pending signal, stops the pipeline (as a cancellation) and is raised here
// once every worker has stopped.
template <typename Pipeline>
format::PipelineStats run_released(format::PipelineOptions& options, nb::handle progress, nb::handle cancelled,
                                   Pipeline&& pipeline) {
  SchedulerCallbacks callbacks;
  if (!progress.is_none()) options.progress = [&](uint64_t done) { callbacks.call(progress, done); };
  options.cancelled = [&] { return callbacks.poll_cancelled(cancelled, true); };
  format::PipelineStats stats;
  try {
    nb::gil_scoped_release release;
    stats = pipeline();
  } catch (const engine::Cancelled&) {
    callbacks.raise_stopped();
  }
  callbacks.raise_if_stopped();
  return stats;
}

format::PipelineOptions pipeline_options(std::vector<std::string> devices, nb::handle cpu_share, uint64_t job_len,
                                         std::string variant) {
  format::PipelineOptions options;
  options.devices = std::move(devices);
  options.cpu_share = cpu_share_of(cpu_share);
  options.job_len = job_len;
  options.variant = std::move(variant);
  return options;
}

// No devices given: the in-memory pipeline's own choice (format.hpp buffer_devices).
void choose_buffer_devices(format::PipelineOptions& options, ByteSpan in, ByteSpan out) {
  if (!options.devices.empty()) return;
  DeviceSelection chosen = format::buffer_devices(in, out);
  options.devices = std::move(chosen.devices);
  options.cpu_share = chosen.cpu_share;
}

nb::tuple seal_body(nb::handle payload_key, nb::handle header, uint32_t chunk_len, nb::handle plaintext, nb::handle out,
                    std::vector<std::string> devices, nb::handle cpu_share, uint64_t job_len, std::string variant,
                    nb::handle progress, nb::handle cancelled) {
  BufferView key_view(payload_key), header_view(header), in(plaintext);
  format::check_chunk_len(chunk_len);
  const format::Layout layout{chunk_len, in.size()};
  // The header is opaque here: version 1's 80 bytes, or version 2's recipient stanzas (any length);
  // the body follows it whatever its length.
  const size_t header_len = header_view.size();
  Output output(out, layout.file_len() - format::kHeaderLen + header_len, "the encrypted file");
  if (ranges_overlap(in.data(), in.size(), output.span.data(), output.span.size()))
    throw std::invalid_argument("out overlaps the input (in place is not supported: each chunk's tag shifts the "
                                "chunks after it)");
  auto options = pipeline_options(std::move(devices), cpu_share, job_len, std::move(variant));
  choose_buffer_devices(options, in.span(), output.span);
  const format::PipelineStats stats = run_released(options, progress_in_steps(progress), cancelled, [&] {
    return format::seal_body(key_view.span(), layout, in.span(), output.span.subspan(header_len), options);
  });
  std::copy(header_view.data(), header_view.data() + header_len, output.span.data());
  return nb::make_tuple(output.result(), stats_dict(stats));
}

nb::tuple open_body(nb::handle payload_key, uint32_t chunk_len, uint64_t plaintext_len, nb::handle body, nb::handle out,
                    std::vector<std::string> devices, nb::handle cpu_share, uint64_t job_len, std::string variant,
                    nb::handle progress, nb::handle cancelled) {
  BufferView key_view(payload_key), in(body);
  format::check_chunk_len(chunk_len);
  const format::Layout layout{chunk_len, plaintext_len};
  Output output(out, plaintext_len, "the plaintext");
  auto options = pipeline_options(std::move(devices), cpu_share, job_len, std::move(variant));
  choose_buffer_devices(options, in.span(), output.span);
  std::optional<format::DecryptionError> failure;
  const format::PipelineStats stats = run_released(options, progress_in_steps(progress), cancelled, [&] {
    try {
      return format::open_body(key_view.span(), layout, in.span(), output.span, options);
    } catch (const format::DecryptionError& error) {
      failure.emplace(error);
      return format::PipelineStats{};
    }
  });
  nb::object failed = nb::none();
  if (failure) failed = nb::make_tuple(std::string(failure->what()), failure->chunk_index, failure->released_len);
  return nb::make_tuple(output.result(), stats_dict(stats), failed);
}

// ---- between regular files ----------------------------------------------------------------------

// A FileError as Python's OSError(errno, strerror, filename) naming the path the user gave for the
// side that failed; the library's words (what it was doing) follow the errno's message.
[[noreturn]] void raise_file_error(const format::FileError& error, const std::string& input_name,
                                   const std::string& output_name) {
  const int code = error.code().value();
  const std::string what = error.what();  // "<context>: <strerror>"
  // The path names the side ("reading the input" / "writing the output" is for the C API's
  // callers); what the library adds in parentheses after it ("5001312 bytes needed, 2097152 bytes
  // free") follows errno's words.
  std::string detail = what.substr(0, what.find(':'));
  const size_t open = detail.find(" (");
  detail = open == std::string::npos ? "" : detail.substr(open + 2, detail.size() - open - 3);
  // An empty name: the caller names the path itself (an anonymous temporary file has none).
  const std::string& name = error.on_output ? output_name : input_name;
  const std::string message = std::string(std::strerror(code)) + (detail.empty() ? "" : " (" + detail + ")");
  nb::object os_error_type = nb::module_::import_("builtins").attr("OSError");
  nb::object os_error = name.empty() ? os_error_type(code, message) : os_error_type(code, message, name);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(os_error.ptr())), os_error.ptr());
  throw nb::python_error();
}

// What format_hash_ends returns: (digest, stats dict shaped as the pipelines' (stats_dict, with
// read_s): one job of `bytes` on the device that hashed, busy for the hashing's seconds).
nb::tuple hash_run_result(const std::vector<uint8_t>& digest, const format::FileHashStats& stats) {
  nb::dict device, devices, stats_out;
  device["jobs"] = 1;
  device["bytes"] = stats.bytes;
  device["busy_s"] = stats.hash_s;
  devices[nb::cast(stats.device)] = device;
  stats_out["bytes"] = stats.bytes;
  stats_out["wall_s"] = stats.wall_s;
  stats_out["read_s"] = stats.read_s;
  stats_out["wait_s"] = 0.0;
  stats_out["devices"] = devices;
  return nb::make_tuple(to_bytes(digest), stats_out);
}

// format_seal_file's and the ends' (format_seal_ends / format_open_ends) common part: `work` (returning the FileRun) with the GIL
// released; FileError raised as OSError naming the user's paths; returns (input length, output
// length, stats with the I/O times, None or the authentication failure as (message, chunk index,
// released length)).
template <typename Work>
nb::tuple run_file_released(format::PipelineOptions& options, nb::handle progress, nb::handle cancelled,
                            const std::string& input_name, const std::string& output_name, Work&& work) {
  std::optional<format::DecryptionError> failure;
  std::optional<format::FileError> file_error;
  format::FileRun run;
  run.stats = run_released(options, progress, cancelled, [&] {
    try {
      run = work();
    } catch (const format::DecryptionError& error) {
      failure.emplace(error);
    } catch (const format::FileError& error) {
      file_error.emplace(error);
    }
    return run.stats;
  });
  if (file_error) raise_file_error(*file_error, input_name, output_name);
  nb::dict stats = stats_dict(run.stats);
  stats["read_s"] = run.stats.read_s;
  stats["write_s"] = run.stats.write_s;
  nb::object failed = nb::none();
  if (failure) failed = nb::make_tuple(std::string(failure->what()), failure->chunk_index, failure->released_len);
  return nb::make_tuple(run.input_len, run.output_len, stats, failed);
}

// format_seal_file: format.hpp's seal_file with the GIL released, for the tests that drive the
// file pipeline by descriptors (tests/test_file_pipeline.py); files themselves go through
// format_seal_ends / format_open_ends. Returns (input_len, output_len, stats dict, None).
// progress(input bytes done), cancelled() as seal_body's.
nb::tuple seal_file_released(int in_fd, uint64_t in_offset, int out_fd, uint64_t out_offset, nb::handle header,
                    nb::handle payload_key, uint32_t chunk_len, std::vector<std::string> devices, nb::handle cpu_share,
                    uint64_t job_len, std::string variant, nb::handle progress, nb::handle cancelled,
                    const std::string& input_name, const std::string& output_name, bool direct_input) {
  BufferView key_view(payload_key), header_view(header);
  auto options = pipeline_options(std::move(devices), cpu_share, job_len, std::move(variant));
  options.direct_input = direct_input;
  return run_file_released(options, progress, cancelled, input_name, output_name, [&] {
    return format::seal_file(in_fd, in_offset, out_fd, out_offset, header_view.span(), key_view.span(), chunk_len,
                             options);
  });
}

// A Python file object with no descriptor as the library's reader (format.hpp InputEnd::read), called
// on the calling thread with the GIL taken: its readinto where it has one (no copy; a RawIOBase with
// only read() raises NotImplementedError there), else read() of at most `request_len` bytes (an input
// unit: a chunk, with its tag when opening; what the source allocates per request stays bounded). None (a non-blocking source
// with nothing yet) is asked again.
format::StreamReader python_reader(nb::handle source, size_t request_len) {
  auto use_readinto = std::make_shared<bool>(nb::hasattr(source, "readinto"));
  return [source, use_readinto, request_len](MutableByteSpan buffer) -> size_t {
    nb::gil_scoped_acquire gil;
    for (;;) {
      if (*use_readinto) {
        PyObject* view = PyMemoryView_FromMemory(reinterpret_cast<char*>(buffer.data()),
                                                 static_cast<Py_ssize_t>(buffer.size()), PyBUF_WRITE);
        if (view == nullptr) throw nb::python_error();
        nb::object target = nb::steal(view);
        nb::object count;
        try {
          count = source.attr("readinto")(target);
        } catch (nb::python_error& error) {
          if (!error.matches(nb::handle(PyExc_NotImplementedError)) &&
              !error.matches(nb::module_::import_("io").attr("UnsupportedOperation")))
            throw;
          *use_readinto = false;
          continue;
        }
        target.attr("release")();  // the buffer is the library's: nothing may keep a view of it
        if (count.is_none()) continue;
        const size_t n = nb::cast<size_t>(count);
        // More than the buffer holds breaks readinto's contract: the bytes past it were never stored,
        // so taking the count (or the buffer's length) would seal or open data that is not the input.
        if (n > buffer.size())
          throw std::invalid_argument("the input's readinto() said it stored " + std::to_string(n) + " bytes in a " +
                                      std::to_string(buffer.size()) + "-byte buffer");
        return n;
      }
      const size_t asked = std::min(buffer.size(), request_len);
      nb::object block = source.attr("read")(asked);
      if (block.is_none()) continue;
      BufferView view(block);
      // A read() that returns more than it was asked for would have its excess dropped: refused, not
      // lost (nothing silently wrong).
      if (view.size() > asked)
        throw std::invalid_argument("the input's read(" + std::to_string(asked) + ") returned " +
                                    std::to_string(view.size()) + " bytes, more than it was asked for");
      std::memcpy(buffer.data(), view.data(), view.size());
      return view.size();
    }
  };
}

// A Python file object as the library's writer (format.hpp writing_all, which follows short counts and
// refuses a count of 0 or one above what was given), called with the GIL taken: its write() gets each
// piece as a memoryview that is released after the call (the buffer is the library's and reused). None
// is "nothing taken" from a raw file (io.RawIOBase: non-blocking, its buffer full), and "all of it"
// from any other object (old-style writers return no count).
format::StreamWriter python_writer(nb::handle destination) {
  const bool raw = nb::isinstance(destination, nb::module_::import_("io").attr("RawIOBase"));
  return format::writing_all([destination = nb::borrow<nb::object>(destination), raw](ByteSpan bytes) -> size_t {
    nb::gil_scoped_acquire gil;
    PyObject* view = PyMemoryView_FromMemory(reinterpret_cast<char*>(const_cast<uint8_t*>(bytes.data())),
                                             static_cast<Py_ssize_t>(bytes.size()), PyBUF_READ);
    if (view == nullptr) throw nb::python_error();
    nb::object piece = nb::steal(view);
    nb::object count = destination.attr("write")(piece);
    piece.attr("release")();
    if (count.is_none()) return raw ? 0 : bytes.size();
    const long long taken = nb::cast<long long>(count);
    if (taken < 0)
      throw std::invalid_argument("the output's write() returned " + std::to_string(taken));
    return static_cast<size_t>(taken);
  });
}

// ---- Python file objects as the library's ends (format.hpp InputEnd / OutputEnd) ---------------
// Which file objects the library reads or writes by their descriptor, from where, and where it leaves
// them: the one place (fileformat's streams and stream.hash_stream hand their file objects here).

bool truthy(nb::handle value) {
  const int answer = PyObject_IsTrue(value.ptr());
  if (answer < 0) throw nb::python_error();
  return answer == 1;
}

// Where a seekable file object stands (what the library reads or writes it from by offset); -1 when it
// is not seekable or cannot say (no such method, a closed file, io.UnsupportedOperation).
int64_t offset_of(nb::handle file) {
  try {
    return truthy(file.attr("seekable")()) ? nb::cast<int64_t>(file.attr("tell")()) : -1;
  } catch (nb::python_error& error) {
    if (error.matches(nb::handle(PyExc_AttributeError)) || error.matches(nb::handle(PyExc_OSError)) ||
        error.matches(nb::handle(PyExc_ValueError)))
      return -1;
    throw;
  }
}

// The raw file under a buffered reader or writer, or the object itself; exactly these types: a subclass
// or a proxy may do more than read or write.
nb::object raw_of(nb::handle file) {
  const nb::module_ io = nb::module_::import_("io");
  const nb::handle type = file.type();
  const bool buffered = type.is(io.attr("BufferedReader")) || type.is(io.attr("BufferedWriter")) ||
                        type.is(io.attr("BufferedRandom"));
  return buffered ? nb::object(file.attr("raw")) : nb::borrow<nb::object>(file);
}

// The descriptor of a file object that is only its descriptor (io.FileIO, a raw file saying
// `reads_its_descriptor` such as the CLI's terminal, or a buffered reader or writer over one), else -1:
// others with a fileno() (a gzip file, a wrapper that transforms) are read and written through their
// methods.
int descriptor_of(nb::handle file) {
  const nb::object raw = raw_of(file);
  const bool only_its_descriptor = raw.type().is(nb::module_::import_("io").attr("FileIO")) ||
                                   truthy(nb::getattr(raw, "reads_its_descriptor", nb::bool_(false)));
  if (!only_its_descriptor || truthy(raw.attr("closed"))) return -1;
  return nb::cast<int>(raw.attr("fileno")());
}

// A Python file object as an InputEnd: its descriptor after what a buffered reader already holds, at
// its offset where it is seekable; else its readinto or read (python_reader, requests of request_len
// bytes at most). The offset is taken before a buffered reader's bytes are.
class PythonInput {
 public:
  PythonInput(nb::handle source, size_t request_len)
      : source_(nb::borrow<nb::object>(source)), offset_(offset_of(source)), fd_(descriptor_of(source)) {
    nb::object name = nb::getattr(source, "name", nb::str(""));
    if (nb::isinstance<nb::str>(name)) name_ = nb::cast<std::string>(name);
    bool ended = false;
    nb::object buffered = nb::bytes("", 0);
    if (fd_ >= 0) {
      const nb::object read1 = nb::getattr(source, "read1", nb::none());
      // What a buffered reader holds (or its next read); b"": the input already ended.
      const nb::object held = read1.is_none() ? nb::object(nb::none()) : read1();
      ended = (!held.is_none() && nb::len(held) == 0) ||
              truthy(nb::getattr(raw_of(source), "at_end", nb::bool_(false)));
      if (!held.is_none()) buffered = held;
    }
    before_.emplace(buffered);
    end_ = {fd_, offset_, before_->span(), ended,
            fd_ >= 0 ? format::StreamReader() : python_reader(source, request_len)};
  }
  const format::InputEnd& end() const { return end_; }
  const std::string& name() const { return name_; }
  // After the library read it by offset: the file object stands where the descriptor was left.
  void follow() const {
    if (fd_ >= 0 && offset_ >= 0) source_.attr("seek")(::lseek(fd_, 0, SEEK_CUR));
  }

 private:
  nb::object source_;
  int64_t offset_;
  int fd_;
  std::string name_;
  std::optional<BufferView> before_;
  format::InputEnd end_;
};

// A Python file object as an OutputEnd: nowhere when it says `discards_output` (decrypt --check:
// authenticate, keep nothing); its descriptor where it has one, after flushing what the caller wrote
// before (a header: the descriptor's offset is then real); else its write() (python_writer). Over
// the library's AtomicOutput (fileformat.atomic_output), the output's errors name its path as given.
class PythonOutput {
 public:
  explicit PythonOutput(nb::handle destination) : destination_(nb::borrow<nb::object>(destination)) {
    end_.discard = truthy(nb::getattr(destination, "discards_output", nb::bool_(false)));
    if (end_.discard) return;
    format::AtomicOutput* atomic = nullptr;
    if (nb::try_cast(raw_of(destination), atomic) && atomic != nullptr) name_ = atomic->path();
    end_.fd = descriptor_of(destination);
    if (end_.fd < 0) {
      end_.write = python_writer(destination);
      return;
    }
    destination.attr("flush")();
    end_.offset = offset_of(destination);
  }
  const format::OutputEnd& end() const { return end_; }
  const std::string& name() const { return name_; }
  void follow() const {
    if (end_.fd >= 0) destination_.attr("seek")(::lseek(end_.fd, 0, SEEK_CUR));
  }

 private:
  nb::object destination_;
  std::string name_;  // "": the caller names the output's errors (stdout: the CLI)
  format::OutputEnd end_;
};

// format_seal_ends / format_open_ends: format.hpp's seal_ends / open_ends between Python file objects
// (PythonInput / PythonOutput) with the GIL released; returns as format_seal_file, and whether the file
// pipeline ran (the file objects then stand after what was read and written).
nb::tuple run_ends(bool sealing, nb::handle source, nb::handle destination, nb::handle header, nb::handle payload_key,
                   uint32_t chunk_len, std::vector<std::string> devices, nb::handle cpu_share, uint64_t job_len,
                   std::string variant, nb::handle progress, nb::handle cancelled, bool direct_input) {
  BufferView key_view(payload_key);
  std::optional<BufferView> header_view;
  if (sealing) header_view.emplace(header);
  const ByteSpan header_span = sealing ? header_view->span() : ByteSpan();
  // No devices: "auto", chosen by the library with the set kept on this machine (PipelineOptions::automatic).
  const bool automatic = devices.empty();
  auto options = pipeline_options(std::move(devices), cpu_share, job_len, std::move(variant));
  options.automatic = automatic;
  options.direct_input = direct_input;
  const size_t unit_len = chunk_len + (sealing ? 0 : format::kTagLen);
  const PythonInput in(source, unit_len);
  const PythonOutput out(destination);
  const bool positional = format::ends_by_offset(in.end(), out.end());
  nb::tuple result = run_file_released(options, progress_in_steps(progress, unit_len), cancelled, in.name(), out.name(), [&] {
    return sealing ? format::seal_ends(in.end(), out.end(), header_span, key_view.span(), chunk_len, options)
                   : format::open_ends(in.end(), out.end(), key_view.span(), chunk_len, options);
  });
  if (positional) {
    in.follow();
    out.follow();
  }
  return nb::make_tuple(result[0], result[1], result[2], result[3], positional);
}

// format_seal_file_chunks / format_open_file_chunks: chunks [first, first + count) of a file of
// plaintext_len bytes (format.hpp seal_file_chunks / open_file_chunks: an MPI rank's share) ->
// (stats dict, None or the authentication failure tuple, released_len counted from chunk first).
nb::tuple run_file_chunks(bool sealing, int in_fd, uint64_t in_offset, int out_fd, uint64_t out_offset,
                          nb::handle payload_key, uint32_t chunk_len, uint64_t plaintext_len, uint64_t first,
                          uint64_t count, std::vector<std::string> devices, nb::handle cpu_share, uint64_t job_len,
                          std::string variant, nb::handle progress, nb::handle cancelled,
                          const std::string& input_name, const std::string& output_name) {
  BufferView key_view(payload_key);
  format::check_chunk_len(chunk_len);
  const format::Layout layout{chunk_len, plaintext_len};
  auto options = pipeline_options(std::move(devices), cpu_share, job_len, std::move(variant));
  std::optional<format::DecryptionError> failure;
  std::optional<format::FileError> file_error;
  const format::PipelineStats stats = run_released(options, progress, cancelled, [&] {
    try {
      return sealing ? format::seal_file_chunks(in_fd, in_offset, out_fd, out_offset, key_view.span(), layout, first,
                                                count, options)
                     : format::open_file_chunks(in_fd, in_offset, out_fd, out_offset, key_view.span(), layout, first,
                                                count, options);
    } catch (const format::DecryptionError& error) {
      failure.emplace(error);
    } catch (const format::FileError& error) {
      file_error.emplace(error);
    }
    return format::PipelineStats{};
  });
  if (file_error) raise_file_error(*file_error, input_name, output_name);
  nb::dict stats_out = stats_dict(stats);
  stats_out["read_s"] = stats.read_s;
  stats_out["write_s"] = stats.write_s;
  nb::object failed = nb::none();
  if (failure) failed = nb::make_tuple(std::string(failure->what()), failure->chunk_index, failure->released_len);
  return nb::make_tuple(stats_out, failed);
}

// ---- the streaming pipeline ---------------------------------------------------------------------

class PyChunkStream {
 public:
  PyChunkStream(std::string_view operation, nb::handle payload_key, uint32_t chunk_len, std::vector<std::string> devices,
                nb::handle cpu_share, uint64_t job_len, std::string variant, nb::object retire, nb::object cancelled)
      : retire_(std::move(retire)), cancelled_(std::move(cancelled)) {
    if (operation != "seal" && operation != "open")
      throw std::invalid_argument("FormatStream: operation is 'seal' or 'open', got '" + std::string(operation) + "'");
    auto options = pipeline_options(std::move(devices), cpu_share, job_len, std::move(variant));
    options.cancelled = [this] { return callbacks_.poll_cancelled(cancelled_, true); };
    BufferView key(payload_key);
    stream_.emplace(operation == "seal" ? format::ChunkStream::Operation::seal : format::ChunkStream::Operation::open,
                    key.span(), chunk_len, std::move(options), [this](uint64_t job_id, uint64_t num_chunks, uint64_t output_len) {
                      nb::gil_scoped_acquire gil;
                      held_.erase(job_id);
                      callbacks_.call(retire_, job_id, num_chunks, output_len);
                    });
  }

  ~PyChunkStream() { stop(); }

  nb::object submit(uint64_t job_id, nb::handle input, nb::handle output, bool at_end, bool trailing_data) {
    auto views = std::make_unique<Held>(input, output);
    const ByteSpan in = views->input.span();
    const MutableByteSpan out(views->output.data(), views->output.size());
    held_[job_id] = std::move(views);
    return run_released([&] { stream_->submit(job_id, in, out, at_end, trailing_data); });
  }

  nb::object drain() {
    return run_released([&] { stream_->drain(); });
  }

  void stop() {
    if (!stream_) return;
    {
      nb::gil_scoped_release release;
      stream_->stop();
    }
    held_.clear();  // no worker uses the buffers any more
  }

  const format::ChunkStream& stream() const { return *stream_; }

 private:
  struct Held {
    BufferView input, output;
    Held(nb::handle in, nb::handle out) : input(in), output(out, true) {}
  };

  // A blocking stream call with the GIL released: None, or the authentication failure as a tuple.
  template <typename Call>
  nb::object run_released(Call&& call) {
    std::optional<format::DecryptionError> failure;
    try {
      nb::gil_scoped_release release;
      try {
        call();
      } catch (const format::DecryptionError& error) {
        failure.emplace(error);
      }
    } catch (const engine::Cancelled&) {
      callbacks_.raise_stopped();
    }
    callbacks_.raise_if_stopped();
    if (!failure) return nb::none();
    return nb::make_tuple(std::string(failure->what()), failure->chunk_index, failure->released_len);
  }

  nb::object retire_, cancelled_;
  SchedulerCallbacks callbacks_;
  std::map<uint64_t, std::unique_ptr<Held>> held_;  // touched with the GIL held only
  std::optional<format::ChunkStream> stream_;       // last: its workers stop before the rest goes
};

// A parsed header as Python's fileformat.Header takes it (format_parse_header, format_read_header).
nb::dict header_dict(ByteSpan data, int max_scrypt_log2n) {
  const format::HeaderFields fields = format::parse_header(data, max_scrypt_log2n);
  const auto bytes_of = [](ByteSpan span) { return nb::bytes(reinterpret_cast<const char*>(span.data()), span.size()); };
  nb::list stanzas;
  for (const auto& stanza : fields.stanzas) stanzas.append(nb::make_tuple(int(stanza.type), bytes_of(stanza.body)));
  nb::dict out;
  out["version"] = fields.version;
  out["suite"] = fields.suite;
  out["kdf"] = fields.kdf;
  out["scrypt_log2n"] = fields.scrypt_log2n;
  out["chunk_len"] = fields.chunk_len;
  out["header"] = bytes_of(data.first(fields.header_len));
  out["prefix"] = bytes_of(data.first(fields.header_len - fields.mac.size()));
  out["salt"] = bytes_of(fields.salt);
  out["mac"] = bytes_of(fields.mac);
  out["stanzas"] = stanzas;
  return out;
}

// The one secret of format_build_header / format_open_header: the first of passphrase, key and
// file_key given (None: not given), its buffer held in `view` for as long as the secret is used.
format::HeaderSecret header_secret(nb::handle passphrase, nb::handle key, nb::handle file_key,
                                   std::optional<BufferView>& view) {
  using Kind = format::HeaderSecret::Kind;
  format::HeaderSecret secret;
  for (const auto& [given, kind] : {std::pair{passphrase, Kind::passphrase}, std::pair{key, Kind::key},
                                    std::pair{file_key, Kind::file_key}}) {
    if (given.is_none()) continue;
    view.emplace(given);
    secret.kind = kind;
    secret.bytes = view->span();
    break;
  }
  return secret;
}

}  // namespace

void register_format_bindings(nb::module_& m) {
  // format::FormatError and DecryptionError as gpucrypt.fileformat's classes (a DecryptionError of
  // the header has chunk_index None), so that Python re-raises nothing; both are ValueErrors.
  nb::register_exception_translator([](const std::exception_ptr& thrown, void*) {
    try {
      std::rethrow_exception(thrown);
    } catch (const format::DecryptionError& error) {
      nb::object chunk_index = error.chunk_index == UINT64_MAX ? nb::none() : nb::cast(error.chunk_index);
      nb::object raised = nb::module_::import_("gpucrypt.fileformat").attr("DecryptionError")(
          std::string(error.what()), chunk_index, error.released_len);
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(raised.ptr())), raised.ptr());
    } catch (const format::FormatError& error) {
      PyErr_SetString(nb::module_::import_("gpucrypt.fileformat").attr("FormatError").ptr(), error.what());
    }
  });
  // The one header parser (format.hpp parse_header) and reader (read_header: `read(n)` is a Python
  // file's read, None or b"" at its end): a dict of the fields, with the header's bytes ("header",
  // "prefix": what the MAC covers, "mac", "salt") and the stanzas as (type, body).
  m.def(
      "format_parse_header",
      [](nb::handle data, int max_scrypt_log2n) {
        BufferView view(data);
        return header_dict(view.span(), max_scrypt_log2n);
      },
      nb::arg("data"), nb::arg("max_scrypt_log2n"));
  m.def(
      "format_read_header",
      [](nb::handle read, int max_scrypt_log2n) {
        const std::vector<uint8_t> header = format::read_header([read](MutableByteSpan buffer) -> size_t {
          nb::object block = read(buffer.size());
          if (block.is_none()) return 0;
          BufferView view(block);
          const size_t n = std::min(view.size(), buffer.size());
          std::memcpy(buffer.data(), view.data(), n);
          return n;
        });
        return header_dict(header, max_scrypt_log2n);
      },
      nb::arg("read"), nb::arg("max_scrypt_log2n"));
  // Either version's header (format.hpp build_header / open_header) for a passphrase, a raw key or,
  // version 2, stanzas: building, `wrap(file_key)` returns them as [(type, body)] (Python's
  // recipients.py); opening, `file_key` is what a stanza gave. The payload key goes into the
  // caller's 32-byte writable buffer, which the caller wipes. `available`: the memory scrypt may
  // have (None: unknown).
  m.def(
      "format_build_header",
      [](nb::handle payload_key, uint32_t chunk_len, int scrypt_log2n, nb::handle salt,
         std::optional<int64_t> available, nb::handle passphrase, nb::handle key, nb::handle wrap) {
        BufferView key_out(payload_key, true);
        if (key_out.size() != format::kKeyLen) throw std::invalid_argument("payload_key: 32 writable bytes");
        std::optional<BufferView> secret_view, salt_view;
        format::HeaderSecret secret = header_secret(passphrase, key, nb::none(), secret_view);
        if (!salt.is_none()) salt_view.emplace(salt);
        const ByteSpan salt_span = salt_view ? salt_view->span() : ByteSpan();
        std::vector<uint8_t> header;
        if (!wrap.is_none()) {  // the stanzas are Python's: the GIL stays held
          secret.wrap = [wrap](ByteSpan file_key) {
            std::vector<std::pair<uint8_t, std::vector<uint8_t>>> stanzas;
            for (nb::handle stanza : wrap(nb::bytes(reinterpret_cast<const char*>(file_key.data()), file_key.size()))) {
              BufferView body(stanza[1]);
              stanzas.emplace_back(nb::cast<uint8_t>(stanza[0]), std::vector<uint8_t>(body.data(), body.data() + body.size()));
            }
            return stanzas;
          };
          header = format::build_header(secret, scrypt_log2n, chunk_len, salt_span, available, key_out.data());
        } else {
          nb::gil_scoped_release release;  // scrypt: about a second at the default work factor
          header = format::build_header(secret, scrypt_log2n, chunk_len, salt_span, available, key_out.data());
        }
        return to_bytes(header);
      },
      nb::arg("payload_key"), nb::arg("chunk_len"), nb::arg("scrypt_log2n"), nb::arg("salt").none(),
      nb::arg("available").none(), nb::arg("passphrase").none() = nb::none(), nb::arg("key").none() = nb::none(),
      nb::arg("wrap").none() = nb::none());
  m.def(
      "format_open_header",
      [](nb::handle header, nb::handle payload_key, int max_scrypt_log2n, std::optional<int64_t> available,
         nb::handle passphrase, nb::handle key, nb::handle file_key) {
        BufferView header_view(header), key_out(payload_key, true);
        if (key_out.size() != format::kKeyLen) throw std::invalid_argument("payload_key: 32 writable bytes");
        std::optional<BufferView> secret_view;
        const format::HeaderSecret secret = header_secret(passphrase, key, file_key, secret_view);
        nb::gil_scoped_release release;  // scrypt
        return format::open_header(header_view.span(), secret, max_scrypt_log2n, available, key_out.data()).header_len;
      },
      nb::arg("header"), nb::arg("payload_key"), nb::arg("max_scrypt_log2n"), nb::arg("available").none(),
      nb::arg("passphrase").none() = nb::none(), nb::arg("key").none() = nb::none(),
      nb::arg("file_key").none() = nb::none());
  m.def(
      "format_scrypt",
      [](nb::handle passphrase, nb::handle salt, int log2n) {
        BufferView passphrase_view(passphrase), salt_view(salt);
        std::vector<uint8_t> key(format::kKeyLen);
        {
          nb::gil_scoped_release release;
          format::scrypt(passphrase_view.span(), salt_view.span(), log2n, key.data());
        }
        return to_bytes(key);
      },
      nb::arg("passphrase"), nb::arg("salt"), nb::arg("log2n"));
  m.def(
      "format_auto_leaves_gpus_out",
      [](bool opening, std::string variant, bool direct_input) {
        format::PipelineOptions options;
        options.automatic = true;
        options.variant = std::move(variant);
        options.direct_input = direct_input;
        return format::automatic_leaves_gpus_out(opening, options);
      },
      nb::arg("opening"), nb::arg("variant"), nb::arg("direct_input"),
      "Whether a file's seal or open under 'auto' would run with no GPU on this machine (format.hpp "
      "automatic_leaves_gpus_out): the set kept there leaves them out. Lists no GPU.");
  m.def("format_check_out", &check_out, nb::arg("out").none(), nb::arg("len"), nb::arg("what"));
  m.def("format_seal_body", &seal_body, nb::arg("payload_key"), nb::arg("header"), nb::arg("chunk_len"),
        nb::arg("plaintext"), nb::arg("out").none(), nb::arg("devices"), nb::arg("cpu_share").none(), nb::arg("job_len"),
        nb::arg("variant"), nb::arg("progress").none(), nb::arg("cancelled").none());
  m.def("format_open_body", &open_body, nb::arg("payload_key"), nb::arg("chunk_len"), nb::arg("plaintext_len"),
        nb::arg("body"), nb::arg("out").none(), nb::arg("devices"), nb::arg("cpu_share").none(), nb::arg("job_len"),
        nb::arg("variant"), nb::arg("progress").none(), nb::arg("cancelled").none());
  m.def("format_seal_file", &seal_file_released,
        nb::arg("in_fd"), nb::arg("in_offset"), nb::arg("out_fd"), nb::arg("out_offset"), nb::arg("header"),
        nb::arg("payload_key"), nb::arg("chunk_len"), nb::arg("devices"), nb::arg("cpu_share").none(), nb::arg("job_len"),
        nb::arg("variant"), nb::arg("progress").none(), nb::arg("cancelled").none(), nb::arg("input_name"),
        nb::arg("output_name"), nb::arg("direct_input") = false);
  for (const bool sealing : {true, false}) {
    m.def(sealing ? "format_seal_file_chunks" : "format_open_file_chunks",
          [sealing](int in_fd, uint64_t in_offset, int out_fd, uint64_t out_offset, nb::handle payload_key,
                    uint32_t chunk_len, uint64_t plaintext_len, uint64_t first, uint64_t count,
                    std::vector<std::string> devices, nb::handle cpu_share, uint64_t job_len, std::string variant,
                    nb::handle progress, nb::handle cancelled, const std::string& input_name,
                    const std::string& output_name) {
            return run_file_chunks(sealing, in_fd, in_offset, out_fd, out_offset, payload_key, chunk_len,
                                   plaintext_len, first, count, std::move(devices), cpu_share, job_len,
                                   std::move(variant), progress, cancelled, input_name, output_name);
          },
          nb::arg("in_fd"), nb::arg("in_offset"), nb::arg("out_fd"), nb::arg("out_offset"), nb::arg("payload_key"),
          nb::arg("chunk_len"), nb::arg("plaintext_len"), nb::arg("first"), nb::arg("count"), nb::arg("devices"),
          nb::arg("cpu_share").none(), nb::arg("job_len"), nb::arg("variant"), nb::arg("progress").none(),
          nb::arg("cancelled").none(), nb::arg("input_name"), nb::arg("output_name"));
  }
  for (const bool sealing : {true, false}) {
    m.def(sealing ? "format_seal_ends" : "format_open_ends",
          [sealing](nb::handle source, nb::handle destination, nb::handle header, nb::handle payload_key,
                    uint32_t chunk_len, std::vector<std::string> devices, nb::handle cpu_share, uint64_t job_len,
                    std::string variant, nb::handle progress, nb::handle cancelled, bool direct_input) {
            return run_ends(sealing, source, destination, header, payload_key, chunk_len, std::move(devices),
                            cpu_share, job_len, std::move(variant), progress, cancelled, direct_input);
          },
          nb::arg("source"), nb::arg("destination"), nb::arg("header").none(), nb::arg("payload_key"),
          nb::arg("chunk_len"), nb::arg("devices"), nb::arg("cpu_share").none(), nb::arg("job_len"), nb::arg("variant"),
          nb::arg("progress").none(), nb::arg("cancelled").none(), nb::arg("direct_input") = false);
  }
  m.def("format_hash_ends",
        [](nb::handle source, std::string_view name, nb::bytes customization, nb::bytes function_name,
           size_t block_size, size_t out_len, const std::string& device, uint64_t block_len, std::string variant,
           nb::handle progress, nb::handle cancelled) {
          hash::HashParams params;
          params.customization.assign(customization.c_str(), customization.size());
          params.function_name.assign(function_name.c_str(), function_name.size());
          params.block_size = block_size;
          // A reader's read() requests are a block at most (what the source allocates per call stays bounded).
          const PythonInput in(source, block_len ? block_len : format::kHashStreamBlockLen);
          format::PipelineOptions options;
          options.devices = {device};
          options.job_len = block_len;
          options.variant = std::move(variant);
          format::FileHashStats stats;
          std::vector<uint8_t> digest;
          try {
            run_released(options, progress_in_steps(progress), cancelled, [&] {
              digest = format::hash_ends(in.end(), name, params, out_len, options, &stats);
              return format::PipelineStats{};
            });
          } catch (const format::FileError& error) {
            raise_file_error(error, in.name(), in.name());
          }
          in.follow();  // a regular file was hashed by offset to its end; a stream's descriptor is at its end too
          return hash_run_result(digest, stats);
        },
        nb::arg("source"), nb::arg("name"), nb::arg("customization"), nb::arg("function_name"),
        nb::arg("block_size"), nb::arg("out_len"), nb::arg("device"), nb::arg("block_len"), nb::arg("variant"),
        nb::arg("progress").none(),
        nb::arg("cancelled").none());
  m.def("format_write_all",
        [](nb::handle destination, nb::handle data) {
          BufferView bytes(data);
          try {
            python_writer(destination)(bytes.span());
          } catch (const format::FileError& error) {
            raise_file_error(error, "", "");
          }
        },
        nb::arg("dst"), nb::arg("data"),
        "Write every byte of `data` to `dst`, the one place every writer of gpucrypt.fileformat goes\n"
        "through (the library's writing_all, which the file format's own writer to a file object\n"
        "with no descriptor is too).\n\n"
        "Buffered files write everything or raise, but a raw destination (an unbuffered file, a\n"
        "socket's makefile(buffering=0), a pipe) may take fewer bytes than offered; the rest is\n"
        "written by further calls. A raw destination that returns None (non-blocking, nothing taken)\n"
        "or 0 cannot make progress: BlockingIOError, never a silent loss. A count above what it was\n"
        "given is a ValueError. Other file-like objects that return None (no count) are taken to\n"
        "have written everything, as old-style writers do.");
  m.def("format_positional_problem", &format::positional_problem, nb::arg("fd"), nb::arg("output"));
  m.def("format_reserve_file",
        [](int fd, uint64_t length, const std::string& name) {
          try {
            nb::gil_scoped_release release;
            format::reserve_file(fd, length);
          } catch (const format::FileError& error) {
            raise_file_error(error, name, name);
          }
        },
        nb::arg("fd"), nb::arg("length"), nb::arg("name"));
  // The cipher suites (format.hpp suite_name / suite_of_aead), so that Python keeps no table of them.
  m.def("format_suite_name", &format::suite_name, nb::arg("suite"));
  m.def("format_suite_of_aead", &format::suite_of_aead, nb::arg("aead_name"));
  // The layout's length rules (format.hpp), so that Python does not restate them.
  m.def("format_check_chunk_len", [](int64_t chunk_len) {
    if (chunk_len < 0) throw format::FormatError("chunk size " + std::to_string(chunk_len) + " is negative");
    format::check_chunk_len(static_cast<uint64_t>(chunk_len));
  }, nb::arg("chunk_len"));
  m.def("format_file_len", [](uint64_t plaintext_len, uint64_t chunk_len) {
    format::check_chunk_len(chunk_len);
    return format::Layout{static_cast<uint32_t>(chunk_len), plaintext_len}.file_len();
  }, nb::arg("plaintext_len"), nb::arg("chunk_len"));
  m.def("format_layout_for_file", [](uint64_t file_len, uint64_t chunk_len, uint64_t header_len) {
    format::check_chunk_len(chunk_len);
    return format::layout_for_file(file_len, static_cast<uint32_t>(chunk_len), header_len);
  }, nb::arg("file_len"), nb::arg("chunk_len"), nb::arg("header_len") = format::kHeaderLen);
  nb::class_<PyChunkStream>(m, "FormatStream")
      .def(nb::init<std::string_view, nb::handle, uint32_t, std::vector<std::string>, nb::handle, uint64_t, std::string,
                    nb::object, nb::object>(),
           nb::arg("operation"), nb::arg("payload_key"), nb::arg("chunk_len"), nb::arg("devices"), nb::arg("cpu_share").none(),
           nb::arg("job_len"), nb::arg("variant"), nb::arg("retire"), nb::arg("cancelled").none())
      .def_prop_ro("input_unit_len", [](const PyChunkStream& s) { return s.stream().input_unit_len(); })
      .def_prop_ro("chunks_per_job", [](const PyChunkStream& s) { return s.stream().chunks_per_job(); })
      .def("output_capacity", [](const PyChunkStream& s, uint64_t n) { return s.stream().output_capacity(n); })
      .def("submit", &PyChunkStream::submit, nb::arg("job_id"), nb::arg("input"), nb::arg("output"), nb::arg("at_end"),
           nb::arg("trailing_data") = false)
      .def("drain", &PyChunkStream::drain)
      .def("stop", &PyChunkStream::stop)
      .def("stats", [](const PyChunkStream& s) { return stats_dict(s.stream().stats()); });
  // The format's sizes, which gpucrypt.fileformat takes from here rather than restating them.
  m.attr("FORMAT_HEADER_LEN") = format::kHeaderLen;
  m.attr("FORMAT_TAG_LEN") = format::kTagLen;
  m.attr("FORMAT_NONCE_LEN") = format::kNonceLen;
  m.attr("FORMAT_KEY_LEN") = format::kKeyLen;
  m.attr("FORMAT_DEFAULT_CHUNK_LEN") = format::kDefaultChunkLen;
  m.attr("FORMAT_HASH_STREAM_BLOCK_LEN") = format::kHashStreamBlockLen;
  m.attr("FORMAT_MIN_CHUNK_LEN") = format::kMinChunkLen;
  m.attr("FORMAT_MAX_CHUNK_LEN") = format::kMaxChunkLen;
  m.attr("FORMAT_DEFAULT_SCRYPT_LOG2N") = format::kDefaultScryptLog2n;
  m.attr("FORMAT_MAX_SCRYPT_LOG2N") = format::kMaxScryptLog2n;
  // The chunk layout (format.hpp Layout): where each chunk lies, so that Python computes no offsets.
  nb::class_<format::Layout>(m, "FormatLayout")
      .def("__init__",
           [](format::Layout* self, uint64_t chunk_len, uint64_t plaintext_len) {
             format::check_chunk_len(chunk_len);
             new (self) format::Layout{static_cast<uint32_t>(chunk_len), plaintext_len};
           },
           nb::arg("chunk_len"), nb::arg("plaintext_len"))
      .def_ro("chunk_len", &format::Layout::chunk_len)
      .def_ro("plaintext_len", &format::Layout::plaintext_len)
      .def_prop_ro("num_chunks", &format::Layout::num_chunks)
      .def_prop_ro("file_len", &format::Layout::file_len)
      .def("plaintext_range", &format::Layout::plaintext_range, nb::arg("first"), nb::arg("count"))
      .def("sealed_range", &format::Layout::sealed_range, nb::arg("first"), nb::arg("count"))
      .def("__repr__", [](const format::Layout& layout) {
        return "FormatLayout(chunk_len=" + std::to_string(layout.chunk_len) +
               ", plaintext_len=" + std::to_string(layout.plaintext_len) + ")";
      });
  m.def("format_seal_chunks", &seal_range, nb::arg("payload_key"), nb::arg("layout"), nb::arg("first"),
        nb::arg("count"), nb::arg("plaintext"), nb::arg("out"), nb::arg("device") = "cpu", nb::arg("variant") = "");
  m.def("format_open_chunks", &open_range, nb::arg("payload_key"), nb::arg("layout"), nb::arg("first"),
        nb::arg("count"), nb::arg("sealed"), nb::arg("out"), nb::arg("device") = "cpu", nb::arg("variant") = "");
  nb::class_<PySealer>(m, "FormatSealer")
      .def(nb::init<nb::handle, uint32_t, std::string_view, std::string_view>(), nb::arg("key"),
           nb::arg("chunk_len") = format::kDefaultChunkLen, nb::arg("device") = "cpu", nb::arg("variant") = "")
      .def_prop_ro("header", [](PySealer& s) { return to_bytes(s.sealer.header()); })
      .def("update", [](PySealer& s, nb::handle data) {
        BufferView view(data);
        std::vector<uint8_t> out;
        { nb::gil_scoped_release release; s.sealer.update(view.span(), out); }
        return to_bytes(out);
      })
      .def("finish", [](PySealer& s) {
        std::vector<uint8_t> out;
        { nb::gil_scoped_release release; s.sealer.finish(out); }
        return to_bytes(out);
      });
  nb::class_<PyOpener>(m, "FormatOpener")
      .def(nb::init<nb::handle, std::string_view, std::string_view>(), nb::arg("key"), nb::arg("device") = "cpu",
           nb::arg("variant") = "")
      .def("update", [](PyOpener& o, nb::handle data) {
        BufferView view(data);
        std::vector<uint8_t> out;
        { nb::gil_scoped_release release; o.opener.update(view.span(), out); }
        return to_bytes(out);
      })
      .def("finish", [](PyOpener& o) {
        std::vector<uint8_t> out;
        { nb::gil_scoped_release release; o.opener.finish(out); }
        return to_bytes(out);
      });
  // scrypt's memory rule (format.hpp check_scrypt_memory): available None is unknown (passes).
  m.def("format_available_memory_len", &format::available_memory_len);
  m.def("format_check_scrypt_memory",
        [](int log2n, std::optional<int64_t> available) { format::check_scrypt_memory(log2n, available); },
        nb::arg("log2n"), nb::arg("available").none());
  m.def("format_memory_text", &format::memory_text, nb::arg("num_bytes"));
  m.def("format_scrypt_memory_len", &format::scrypt_memory_len, nb::arg("log2n"));
}

}  // namespace gpucrypt::python
