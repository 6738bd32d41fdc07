#!/usr/bin/env python3
"""Benchmarks of the batch and stream engines; results as JSON to the path given (docs/engine.md).

    python3 bench/engine_bench.py OUT.json [--device cpu] [--quick] [--stream-mib 1024]

Batch vs bulk (the Harrison-Waldron comparison): N messages of S bytes through gpucrypt.Batch,
one key for all or a key per message, against one bulk call of the same mode over N*S bytes;
S from 16 B to 64 KiB, N from 1 to 2^20 (cells above --max-total-mib are skipped). Reported: the
engine's own time (plan execution), the packing time, the end-to-end Python time, and the batch
throughput as a fraction of bulk.

Stream: the file format (AES-256-GCM chunks) memory -> memory and disk -> disk, AES-256-CTR
memory -> memory through StreamCipher, SHA3-256 of a file; with the stream engine's time split
per stage (read, compute, write, wait; per device: H2D, kernel, D2H where the device has them).

References measured in the same run, because on a shared machine the figures move: OpenSSL
(`openssl speed -evp ... -multi N`, the host's cores) and one bulk native call per mode.
Every figure is the best of --repeats runs (wall clock, time.perf_counter). Bulk GCM is one
message, which OpenSSL runs on one core; bulk CTR is split over the thread pool; bulk CBC
encryption is serial (one core): a batch of many messages uses every core, so it can beat them.
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from array import array

import gpucrypt
from gpucrypt import _native, fileformat, stream
from gpucrypt.batch import Batch, seal_packed

SIZES = (16, 64, 256, 1024, 4096, 16384, 65536)
COUNTS = (1, 16, 256, 4096, 65536, 1 << 20)
BATCH_MODES = ("aes-256-ctr", "aes-256-gcm", "aes-256-cbc")


def best_of(repeats, function):
    best = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        elapsed = time.perf_counter() - start
        if best is None or elapsed < best[0]:
            best = (elapsed, result)
    return best


def gbps(num_bytes, seconds):
    return num_bytes / seconds / 1e9 if seconds > 0 else None


# ----------------------------------------------------------------------------- references

def openssl_speed(algorithm, block_len, seconds=1, multi=None):
    binary = shutil.which("openssl")
    if not binary:
        return None
    command = [binary, "speed", "-elapsed", "-seconds", str(seconds), "-bytes", str(block_len), "-evp", algorithm]
    if multi and multi > 1:
        command[2:2] = ["-multi", str(multi)]
    output = subprocess.run(command, capture_output=True, text=True).stdout
    match = re.search(rf"^{re.escape(algorithm.upper())}\s+([\d.]+)k", output, re.MULTILINE | re.IGNORECASE)
    return float(match.group(1)) * 1000 / 1e9 if match else None


def bulk_seconds(name, total_len, device, repeats):
    """One native call over total_len bytes (the bulk kernel/engine of the mode)."""
    data = os.urandom(total_len)
    key = bytes(range(32))
    if name.endswith("-gcm"):
        # One message through the same OpenSSL/portable GCM as AEAD.encrypt, into a reused buffer
        # (a fresh 64 MiB result would add a page fault per 4 KiB to the measurement).
        out = bytearray(total_len + 16)
        lengths = array("Q", [total_len])
        return best_of(repeats, lambda: seal_packed(name, key, bytes(12), 12, data, lengths, out, device=device))[0]
    out = bytearray(total_len)

    def run():
        _native.create_cipher_stream(name, True, key, bytes(16), "", device).update_into(data, out)
    return best_of(repeats, run)[0]


# ----------------------------------------------------------------------------- batch vs bulk

def batch_cell(name, size, count, own_keys, device, repeats, pool):
    messages = [pool[(i * size) % (len(pool) - size):(i * size) % (len(pool) - size) + size]
                for i in range(min(count, 1024))]
    if own_keys:  # a distinct key for every message
        blob = os.urandom(32 * count)
        keys = [blob[32 * i:32 * i + 32] for i in range(count)]
    else:
        keys = [bytes(range(32))]
    iv = bytes(12) if name.endswith("-gcm") else bytes(16)
    padding = False if name.endswith("-cbc") else None
    best = None
    for _ in range(repeats):
        b = Batch(device)
        start = time.perf_counter()
        for i in range(count):
            b.add(name, keys[i % len(keys)], messages[i % len(messages)], iv=iv, padding=padding)
        added = time.perf_counter()
        b.run()
        done = time.perf_counter()
        cell = {"add_s": added - start, "run_s": done - added, "engine_s": b.stats["total_s"],
                "build_s": b.stats["build_s"], "compute_s": b.stats["compute_s"],
                "variant": next(iter(b.stats["variants"].values()))}
        if best is None or cell["engine_s"] < best["engine_s"]:
            best = cell
    return best


def batch_vs_bulk(args, log):
    results = []
    pool = os.urandom(1 << 20)
    for name in BATCH_MODES:
        for size in SIZES:
            for count in COUNTS:
                total = size * count
                if total > args.max_total_mib << 20 or (args.quick and count > 65536):
                    continue
                repeats = args.repeats if total < (16 << 20) else max(1, args.repeats - 1)
                bulk_s = bulk_seconds(name, total, args.device, repeats)
                row = {"mode": name, "message_len": size, "num_messages": count, "total_len": total,
                       "bulk_s": bulk_s, "bulk_gbps": gbps(total, bulk_s)}
                for label, own_keys in (("same_key", False), ("own_keys", True)):
                    cell = batch_cell(name, size, count, own_keys, args.device, repeats, pool)
                    cell["engine_gbps"] = gbps(total, cell["engine_s"])
                    cell["end_to_end_gbps"] = gbps(total, cell["add_s"] + cell["run_s"])
                    cell["fraction_of_bulk"] = bulk_s / cell["engine_s"] if cell["engine_s"] else None
                    row[label] = cell
                results.append(row)
                log(f"{name} {size:>6} B x {count:>7}: bulk {row['bulk_gbps']:.3f} GB/s, batch same key "
                    f"{row['same_key']['engine_gbps']:.3f} ({row['same_key']['fraction_of_bulk']:.0%}), own keys "
                    f"{row['own_keys']['engine_gbps']:.3f} ({row['own_keys']['fraction_of_bulk']:.0%}) GB/s")
    return results


# ----------------------------------------------------------------------------- stream

class _GeneratedSource(io.RawIOBase):
    """size bytes from a 64 MiB random block, produced on demand (no file, no page cache)."""

    def __init__(self, size, block):
        self.remaining, self.block, self.position = size, block, 0

    def readable(self):
        return True

    def readinto(self, buffer):
        count = min(len(buffer), self.remaining, len(self.block) - self.position)
        buffer[:count] = self.block[self.position:self.position + count]
        self.position = (self.position + count) % len(self.block)
        self.remaining -= count
        return count


class _NullSink(io.RawIOBase):
    def writable(self):
        return True

    def write(self, data):
        return len(data)


def stream_cases(args, log):
    size = args.stream_mib << 20
    block = os.urandom(64 << 20)
    key = bytes(range(32))
    results = []

    def record(label, num_bytes, seconds, stats=None, **extra):
        row = {"case": label, "bytes": num_bytes, "seconds": seconds, "gbps": gbps(num_bytes, seconds), **extra}
        if stats is not None:
            row["stats"] = stats.as_dict()
        results.append(row)
        split = ""
        if stats is not None:
            split = (f" (read {stats.read_s:.3f} s, compute {stats.compute_s:.3f} s, write {stats.write_s:.3f} s, "
                     f"wait {stats.wait_s:.3f} s)")
        log(f"{label}: {row['gbps']:.2f} GB/s{split}")

    # File format, memory -> memory, by job size.
    for job_mib in (1, 2, 4, 16):
        def encrypt():
            stats = stream.StreamStats()
            fileformat.encrypt_stream(_GeneratedSource(size, block), _NullSink(), key, device=args.device,
                                      cpu_share=args.cpu_share, job_size=job_mib << 20, stats=stats)
            return stats
        seconds, stats = best_of(args.repeats, encrypt)
        record(f"file format encrypt, memory->memory, {job_mib} MiB jobs", size, seconds, stats, job_mib=job_mib)
    sealed = io.BytesIO()
    fileformat.encrypt_stream(_GeneratedSource(min(size, 512 << 20), block), sealed, key, device=args.device)
    sealed_bytes = sealed.getvalue()

    def decrypt():
        stats = stream.StreamStats()
        fileformat.decrypt_stream(io.BytesIO(sealed_bytes), _NullSink(), key, device=args.device,
                                  cpu_share=args.cpu_share, stats=stats)
        return stats
    seconds, stats = best_of(args.repeats, decrypt)
    record("file format decrypt, memory->memory, default jobs", len(sealed_bytes), seconds, stats)

    # File format, disk -> disk (page cache: the file was just written).
    with tempfile.TemporaryDirectory(dir=args.tmp) as directory:
        plain = os.path.join(directory, "plain")
        with open(plain, "wb") as f:
            for offset in range(0, size, len(block)):
                f.write(block[:min(len(block), size - offset)])

        def encrypt_file():
            stats = stream.StreamStats()
            fileformat.encrypt_file(plain, os.path.join(directory, "sealed"), key, device=args.device,
                                    cpu_share=args.cpu_share, stats=stats)
            return stats
        seconds, stats = best_of(args.repeats, encrypt_file)
        record("file format encrypt_file, disk->disk (page cache, fsync included)", size, seconds, stats)

        def decrypt_file():
            stats = stream.StreamStats()
            fileformat.decrypt_file(os.path.join(directory, "sealed"), os.path.join(directory, "back"), key,
                                    device=args.device, cpu_share=args.cpu_share, stats=stats)
            return stats
        seconds, stats = best_of(args.repeats, decrypt_file)
        record("file format decrypt_file, disk->disk (page cache, fsync included)", size, seconds, stats)

        def hash_file():
            stats = stream.StreamStats()
            stream.hash_file("sha3-256", plain, stats=stats)
            return stats
        seconds, stats = best_of(args.repeats, hash_file)
        record("sha3-256 hash_file (stream engine: read overlapped with hashing)", size, seconds, stats)
        seconds, _ = best_of(args.repeats, lambda: gpucrypt.hash("sha3-256", block))
        record("sha3-256 one call over 64 MiB in memory (reference)", len(block), seconds)

    # AES-256-CTR memory -> memory through StreamCipher, 4 MiB pieces.
    piece = block[:4 << 20]

    def ctr_stream():
        s = stream.StreamCipher("aes-256-ctr", key, bytes(16), device=args.device, cpu_share=args.cpu_share)
        for _ in range(size // len(piece)):
            s.update(piece)
        s.finalize()
        return s.stats
    seconds, stats = best_of(args.repeats, ctr_stream)
    record("aes-256-ctr StreamCipher, memory->memory, 4 MiB chunks", size, seconds, stats)
    for name in ("aes-256-ctr", "aes-256-gcm"):
        seconds = bulk_seconds(name, 64 << 20, args.device, args.repeats)
        record(f"{name} one native call over 64 MiB (bulk reference)", 64 << 20, seconds)
    return results


# ----------------------------------------------------------------------------- main

def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    try:
        revision = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                  cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        revision = ""
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "cpu": model, "cpu_count": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "gpucrypt": gpucrypt.__version__, "git": revision,
            "devices": gpucrypt.devices()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", help="JSON file to write")
    parser.add_argument("--device", default="cpu", help="cpu, cuda:N or auto (default cpu)")
    parser.add_argument("--cpu-share", default=None, help="stream engine CPU share (auto or 0..1)")
    parser.add_argument("--quick", action="store_true", help="fewer cells (no 1M-message cells)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-total-mib", type=int, default=64, help="skip batch cells above this many MiB")
    parser.add_argument("--stream-mib", type=int, default=1024, help="bytes per stream case, in MiB")
    parser.add_argument("--tmp", default=None, help="directory for the disk cases")
    parser.add_argument("--skip", action="append", default=[], choices=["batch", "stream"])
    args = parser.parse_args()

    def log(line):
        print(line, file=sys.stderr, flush=True)

    report = {"machine": machine(), "device": args.device,
              "openssl_speed_gbps": {}, "batch_vs_bulk": [], "stream": []}
    for algorithm in ("aes-256-gcm", "aes-256-ctr"):
        report["openssl_speed_gbps"][algorithm] = {
            "1_core_16KiB": openssl_speed(algorithm, 16384),
            f"{os.cpu_count()}_cores_16KiB": openssl_speed(algorithm, 16384, multi=os.cpu_count()),
        }
    log(f"openssl speed: {report['openssl_speed_gbps']}")
    if "batch" not in args.skip:
        report["batch_vs_bulk"] = batch_vs_bulk(args, log)
    if "stream" not in args.skip:
        report["stream"] = stream_cases(args, log)
    with open(args.output, "w") as f:
        json.dump(report, f, indent=1, default=str)
    log(f"wrote {args.output}")


if __name__ == "__main__":
    main()
