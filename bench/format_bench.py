#!/usr/bin/env python3
"""The file format's throughput on this machine, through the Python pipeline and through the library.

    PYTHONPATH=python python3 bench/format_bench.py [--mib 256] [--repeats 5] [--device cpu] [--json OUT]

Measured, each as the median (and best) of --repeats runs, wall clock around the whole call, with a
raw 32-byte key (no scrypt: the key derivation is not the format's throughput):

* python memory->memory: fileformat.encrypt_stream / decrypt_stream on io.BytesIO (Python reads
  jobs of chunks into staging buffers and writes what retires; the library's format::ChunkStream
  seals or opens them on its scheduler's workers, with no Python on them);
* python file->file: fileformat.encrypt_file / decrypt_file (atomic output files, fsync included);
* library memory->memory: the C++ streaming Sealer / Opener (include/gpucrypt/format.hpp) fed the
  whole input in 4 MiB updates from Python: one chunk at a time on one device, no job pipeline.
  It is the reference the C++ scheduler must beat, and the path the C API (gpucrypt.h) runs.
* buffer-seal / buffer-open: fileformat.encrypt_buffer / decrypt_buffer, the whole buffer through
  the library's C++ pipeline (scheduler + jobs on subspans of the caller's buffers, no Python in
  the loop): from pageable bytes into a new bytes object, and, when the device is a GPU, from a
  page-locked buffer into a page-locked buffer (stream.page_locked), the form that can reach the
  copy engines' speed. Per-device stats of the last run go to the JSON (buffer_stats).
* file copies: the same for encrypt_file (read the file in jobs into staging, write a file,
  fsync): the ceiling of the file path.
* stream copies: what encrypt_stream's calling thread does without the cipher (read each job into
  the staging buffer, write it to a BytesIO sink, then getvalue): the ceiling of the stream path.
* memcpy ceilings, measured in the same run on the same size: a numpy copy on one thread and the
  library's all-core copy (_native.copy_into), pageable and (GPU) page-locked. A host-side
  format pipeline cannot beat reading and writing every byte once.

The input is random (os.urandom), never zeros. Figures are GB/s of plaintext (10^9 bytes/s).
Every decryption is compared with the input, so a broken path cannot report a figure.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time

from gpucrypt import _native, fileformat, stream
from gpucrypt.info import is_gpu

KEY = bytes(range(1, 33))
UPDATE_LEN = 4 << 20


def timed(repeats, function):
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        function()
        times.append(time.perf_counter() - began)
    return statistics.median(times), min(times)


def rate(num_bytes, seconds):
    return num_bytes / seconds / 1e9


def native_seal(plaintext, device):
    sealer = _native.FormatSealer(KEY, fileformat.DEFAULT_CHUNK_SIZE, device, "")
    parts = [sealer.header]
    view = memoryview(plaintext)
    for offset in range(0, len(view), UPDATE_LEN):
        parts.append(sealer.update(view[offset:offset + UPDATE_LEN]))
    parts.append(sealer.finish())
    return b"".join(parts)


def native_open(sealed, device):
    opener = _native.FormatOpener(KEY, device, "")
    parts = []
    view = memoryview(sealed)
    for offset in range(0, len(view), UPDATE_LEN):
        parts.append(opener.update(view[offset:offset + UPDATE_LEN]))
    parts.append(opener.finish())
    return b"".join(parts)


def copy_ceilings(label, source, target, repeats, record):
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None:
        source_array, target_array = numpy.frombuffer(source, numpy.uint8), numpy.frombuffer(target, numpy.uint8)
        record(f"memcpy numpy 1 thread {label}", *timed(repeats, lambda: numpy.copyto(target_array, source_array)))
    record(f"memcpy all cores {label}", *timed(repeats, lambda: _native.copy_into(target, source)))


def staging_of(device):
    """(job length, page-locked) of the staging buffers the format's streams use on `device`: read
    off a FormatStream, the library's own choice."""
    devices, share = stream.resolve_devices(device)
    probe = _native.FormatStream("seal", bytes(32), fileformat.DEFAULT_CHUNK_SIZE, devices, share, 0, "",
                                 lambda *_: None, None)
    try:
        return probe.chunks_per_job * probe.input_unit_len, any(is_gpu(device) for device in devices)
    finally:
        probe.stop()


def file_copy_ceiling(source, target, device, repeats, record):
    """What encrypt_file's calling thread does without the cipher: read `source` in jobs into the
    staging buffers (page-locked when a GPU takes part), write each to `target`, fsync."""
    job_len, page_locked = staging_of(device)

    def copy_file():
        buffer = stream.page_locked(job_len) if page_locked else bytearray(job_len)
        with open(source, "rb") as src, open(target, "wb") as dst:
            while n := src.readinto(buffer):
                fileformat.write_all(dst, memoryview(buffer)[:n])
            dst.flush()
            os.fsync(dst.fileno())

    record("file copies (read in, write out, fsync) file->file", *timed(repeats, copy_file))


def stream_copy_ceiling(plaintext, device, repeats, record):
    """The copies a stream through the format needs, without the cipher: the calling thread reads
    the input in jobs into the same staging buffers (page-locked when a GPU takes part) and writes
    each job to a BytesIO sink, as encrypt_stream does. No stream path can beat it."""
    job_len, page_locked = staging_of(device)

    def copy_through():
        source, sink = io.BytesIO(plaintext), io.BytesIO()
        buffer = stream.page_locked(job_len) if page_locked else bytearray(job_len)
        while n := source.readinto(buffer):
            sink.write(memoryview(buffer)[:n])
        return sink.getvalue()

    record("stream copies (read in, write out) memory->memory", *timed(repeats, copy_through))


def device_cases(device, plaintext, repeats, record, results):
    """encrypt_stream (memory->memory) and encrypt_buffer (pageable, and page-locked where there is
    a GPU) on another device setting, with each run's per-device shares."""
    stats = stream.StreamStats()

    def seal_stream():
        stats.__init__()
        fileformat.encrypt_stream(io.BytesIO(plaintext), io.BytesIO(), KEY, device=device, stats=stats)

    record(f"[{device}] python encrypt memory->memory", *timed(repeats, seal_stream))
    shares = {"stream": stats.shares()}
    def seal_buffer(data, out=None):
        stats.__init__()
        fileformat.encrypt_buffer(data, KEY, out=out, device=device, stats=stats)

    record(f"[{device}] buffer-seal pageable", *timed(repeats, lambda: seal_buffer(plaintext)))
    shares["buffer pageable"] = stats.shares()
    if stream.cuda_available():
        source = stream.page_locked(len(plaintext))
        sealed = stream.page_locked(fileformat.encrypted_len(len(plaintext)))
        if isinstance(source, memoryview):
            source[:] = plaintext
            record(f"[{device}] buffer-seal page-locked", *timed(repeats, lambda: seal_buffer(source, sealed)))
            shares["buffer page-locked"] = stats.shares()
    results.setdefault("device_shares", {})[device] = shares


def buffer_cases(args, plaintext, record, results):
    """encrypt_buffer / decrypt_buffer and the copy ceilings beside them."""
    file_len = fileformat.encrypted_len(len(plaintext))
    holder = {}
    seal_stats, open_stats = stream.StreamStats(), stream.StreamStats()

    def seal():
        seal_stats.__init__()
        holder["sealed"] = fileformat.encrypt_buffer(plaintext, KEY, device=args.device, stats=seal_stats)

    def open_():
        open_stats.__init__()
        holder["opened"] = fileformat.decrypt_buffer(holder["sealed"], KEY, device=args.device, stats=open_stats)

    record("buffer-seal pageable", *timed(args.repeats, seal))
    record("buffer-open pageable", *timed(args.repeats, open_))
    assert holder.pop("opened") == plaintext, "buffer round trip differs"
    results["buffer_stats"] = {"seal pageable": seal_stats.as_dict(), "open pageable": open_stats.as_dict()}
    copy_ceilings("pageable", memoryview(plaintext), bytearray(len(plaintext)), args.repeats, record)

    if args.device in ("cpu",) or args.device.startswith("opencl") or not stream.cuda_available():
        return
    source, sealed, opened = stream.page_locked(len(plaintext)), stream.page_locked(file_len), \
        stream.page_locked(len(plaintext))
    if not isinstance(source, memoryview):
        return  # no page-locked memory to be had
    source[:] = plaintext

    def seal_locked():
        seal_stats.__init__()
        fileformat.encrypt_buffer(source, KEY, out=sealed, device=args.device, stats=seal_stats)

    def open_locked():
        open_stats.__init__()
        fileformat.decrypt_buffer(sealed, KEY, out=opened, device=args.device, stats=open_stats)

    record("buffer-seal page-locked", *timed(args.repeats, seal_locked))
    record("buffer-open page-locked", *timed(args.repeats, open_locked))
    assert opened == memoryview(plaintext), "page-locked buffer round trip differs"
    results["buffer_stats"].update({"seal page-locked": seal_stats.as_dict(), "open page-locked": open_stats.as_dict()})
    copy_ceilings("page-locked", source, opened, args.repeats, record)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json")
    parser.add_argument("--also-devices", default="",
                        help="comma-separated device settings (e.g. cpu,auto) whose stream and buffer seal "
                             "rates are measured too, in the same run: CPU and GPU alone against together")
    args = parser.parse_args()

    plaintext = os.urandom(args.mib << 20)
    results = {"plaintext_bytes": len(plaintext), "repeats": args.repeats, "device": args.device,
               "cpu_count": os.cpu_count(), "gb_per_s": {}}

    def record(name, median_s, best_s):
        results["gb_per_s"][name] = {"median": rate(len(plaintext), median_s), "best": rate(len(plaintext), best_s)}
        print(f"{name:34s} median {rate(len(plaintext), median_s):6.3f} GB/s   best {rate(len(plaintext), best_s):6.3f} GB/s",
              flush=True)

    sealed_holder = {}

    def py_encrypt():
        sink = io.BytesIO()
        fileformat.encrypt_stream(io.BytesIO(plaintext), sink, KEY, device=args.device)
        sealed_holder["sealed"] = sink.getvalue()

    def py_decrypt():
        sink = io.BytesIO()
        fileformat.decrypt_stream(io.BytesIO(sealed_holder["sealed"]), sink, KEY, device=args.device)
        sealed_holder["opened"] = sink.getvalue()

    record("python encrypt memory->memory", *timed(args.repeats, py_encrypt))
    record("python decrypt memory->memory", *timed(args.repeats, py_decrypt))
    assert sealed_holder.pop("opened") == plaintext, "python memory->memory round trip differs"
    stream_copy_ceiling(plaintext, args.device, args.repeats, record)

    with tempfile.TemporaryDirectory(prefix="format-bench-") as directory:
        source, sealed_path, opened_path = (os.path.join(directory, n) for n in ("in", "in.gcx", "out"))
        with open(source, "wb") as f:
            f.write(plaintext)
        record("python encrypt file->file",
               *timed(args.repeats, lambda: fileformat.encrypt_file(source, sealed_path, KEY, device=args.device)))
        record("python decrypt file->file",
               *timed(args.repeats, lambda: fileformat.decrypt_file(sealed_path, opened_path, KEY, device=args.device)))
        with open(opened_path, "rb") as f:
            assert f.read() == plaintext, "python file->file round trip differs"
        file_copy_ceiling(source, opened_path, args.device, args.repeats, record)

    if hasattr(_native, "FormatSealer"):
        record("library Sealer memory->memory",
               *timed(args.repeats, lambda: sealed_holder.__setitem__("native", native_seal(plaintext, args.device))))
        record("library Opener memory->memory",
               *timed(args.repeats, lambda: sealed_holder.__setitem__("opened", native_open(sealed_holder["native"],
                                                                                            args.device))))
        assert sealed_holder["opened"] == plaintext, "library round trip differs"
        # The two paths write the same format: each opens what the other sealed.
        assert native_open(sealed_holder["sealed"], args.device) == plaintext
        sink = io.BytesIO()
        fileformat.decrypt_stream(io.BytesIO(sealed_holder["native"]), sink, KEY, device=args.device)
        assert sink.getvalue() == plaintext

    buffer_cases(args, plaintext, record, results)
    for other in filter(None, args.also_devices.split(",")):
        device_cases(other, plaintext, args.repeats, record, results)

    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
