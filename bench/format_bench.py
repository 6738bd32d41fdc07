#!/usr/bin/env python3
"""The file format's throughput on this machine, through the Python pipeline and through the library.

    PYTHONPATH=python python3 bench/format_bench.py [--mib 256] [--repeats 5] [--device cpu] [--json OUT]

Measured, each as the median (and best) of --repeats runs, wall clock around the whole call, with a
raw 32-byte key (no scrypt: the key derivation is not the format's throughput):

* python memory->memory: fileformat.encrypt_stream / decrypt_stream on io.BytesIO (the stream
  engine's job pipeline in Python over the batch engine's packed GCM calls);
* python file->file: fileformat.encrypt_file / decrypt_file (atomic output files, fsync included);
* library memory->memory: the C++ streaming Sealer / Opener (include/gpucrypt/format.hpp) fed the
  whole input in 4 MiB updates from Python: one chunk at a time on one device, no job pipeline.
  It is the reference the C++ scheduler must beat, and the path the C API (gpucrypt.h) runs.

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

from gpucrypt import _native, fileformat

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json")
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

    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
