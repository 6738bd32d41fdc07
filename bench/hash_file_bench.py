#!/usr/bin/env python3
"""`gpucrypt hash` of one large file against reading that file, end to end.

    python3 bench/hash_file_bench.py OUT.json [--size-mib 4096] [--dir /dev/shm] [--repeats 3]
                                     [--algorithms kt128,sha3-256] [--devices cpu,cuda:0,auto]
                                     [--peers openssl] [--in-process]

Issue 30's hash target: `gpucrypt hash -a kt128` of a file in page cache >= 0.8x the read
ceiling, measured in the same run: `cat FILE > /dev/null` (one thread) and a parallel pread of
the file with as many threads as cores; with --peers openssl, `openssl dgst -sha3-256` of the same
file beside `gpucrypt hash -a sha3-256` (its digest must agree); with --in-process, each
algorithm's stream.hash_stream in this process through the library's positional reader (what a
regular file gets) and through the Python reader (what a pipe gets: the file behind an object
with no fileno), the reader alone compared. Every other command is the whole process a user starts
(start-up included); rounds are interleaved; every device's digest must equal the CPU's. Each
`gpucrypt hash` run also reports its own figures (--stats), kept per round in the JSON's
engine_stats: the library's wall, read and hash seconds beside the process's. The data is random
(never zeros).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from bench_files import parallel_read, write_and_print, write_random_file  # noqa: E402 - bench/ is the script's folder


def digest_of(line: str) -> str:
    """The hex digest of a `gpucrypt hash` line, bare ('HEX  FILE') or tagged ('NAME (FILE) = HEX')."""
    line = line.strip()
    return line.rsplit(" = ", 1)[1] if " = " in line else line.split()[0]


# Each `gpucrypt hash` run's own figures (its --stats line: the library's wall, read and hash
# seconds and the device), kept beside the whole process's time: what the start-up costs and which
# stage the rest goes to. Keyed by the command's name, one record per round.
ENGINE_STATS: dict = {}


def hash_command(algorithm: str, device: str, path: str) -> str:
    """The digest `gpucrypt hash -a ALGORITHM --device DEVICE --stats PATH` prints; its stats line
    goes to ENGINE_STATS."""
    run = subprocess.run([sys.executable, "-m", "gpucrypt", "hash", "-a", algorithm, "--device", device, "--stats", path],
                         check=True, capture_output=True, text=True)
    stats = json.loads(run.stderr.strip().splitlines()[-1])
    ENGINE_STATS.setdefault(f"{algorithm}@{device}", []).append(
        {key: stats[key] for key in ("wall_s", "read_s", "compute_s")} | {"devices": sorted(stats["devices"])})
    return digest_of(run.stdout)


def timed(function) -> tuple[float, object]:
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_json")
    parser.add_argument("--size-mib", type=int, default=4096)
    parser.add_argument("--dir", default="/dev/shm")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--algorithms", default="kt128,sha3-256")
    parser.add_argument("--devices", default=None, help="default: cpu, plus cuda:0 and auto where CUDA is present")
    parser.add_argument("--peers", default="", help="openssl: also time `openssl dgst -sha3-256 FILE`")
    parser.add_argument("--in-process", action="store_true",
                        help="also time stream.hash_stream with the library's reader and with the Python reader")
    args = parser.parse_args()
    import gpucrypt
    has_cuda = any(d["kind"] == "cuda" for d in gpucrypt.devices())
    devices = args.devices.split(",") if args.devices else (["cpu", "cuda:0", "auto"] if has_cuda else ["cpu"])
    size = args.size_mib << 20
    threads = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="hash-bench-") as work:
        path = os.path.join(work, "data")
        write_random_file(path, size)
        commands = {
            "cat": lambda: subprocess.run(f"cat '{path}' > /dev/null", shell=True, check=True),
            "parallel_read": lambda: parallel_read(path, threads),
        }
        for algorithm in args.algorithms.split(","):
            for device in devices:
                if device != "cpu" and not algorithm.startswith(("kt", "parallelhash")):
                    continue   # sponges stream through the CPU on every setting
                commands[f"{algorithm}@{device}"] = (
                    lambda algorithm=algorithm, device=device: hash_command(algorithm, device, path))
        if "openssl" in args.peers.split(","):
            commands["openssl-sha3-256"] = lambda: digest_of(subprocess.run(
                ["openssl", "dgst", "-sha3-256", "-r", path], check=True, capture_output=True, text=True).stdout)
        if args.in_process:
            from gpucrypt import stream

            class NoDescriptor:
                """The file without fileno(): stream.hash_stream reads it in Python, as a pipe."""

                def __init__(self, source):
                    self.readinto, self.read = source.readinto, source.read

            def in_process(algorithm, library_reader):
                with open(path, "rb", buffering=0) as source:
                    return stream.hash_stream(algorithm, source if library_reader else NoDescriptor(source),
                                              32 if algorithm.startswith(("kt", "shake", "parallelhash")) else None
                                              ).hex()

            for algorithm in args.algorithms.split(","):
                for reader in ("library", "python"):
                    commands[f"{algorithm}@cpu in-process {reader} reader"] = (
                        lambda algorithm=algorithm, reader=reader: in_process(algorithm, reader == "library"))
        samples = {name: [] for name in commands}
        digests = {}
        for _ in range(args.repeats):
            for name, command in commands.items():
                seconds, result = timed(command)
                samples[name].append(seconds)
                if isinstance(result, str):
                    digests[name] = result
        for algorithm in args.algorithms.split(","):
            found = {digests[n] for n in digests if n.startswith(algorithm + "@")}
            if algorithm == "sha3-256" and "openssl-sha3-256" in digests:
                found.add(digests["openssl-sha3-256"])
            if len(found) > 1:
                raise SystemExit(f"{algorithm}: devices disagree: {digests}")
    median = {name: statistics.median(values) for name, values in samples.items()}
    ceiling = min(median["cat"], median["parallel_read"])
    result = {
        "what": "gpucrypt hash FILE (whole process) vs reading the file (cat, parallel pread), interleaved rounds",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(), "cpu_count": threads, "dir": args.dir, "size_bytes": size,
        "repeats": args.repeats, "samples_s": samples, "median_s": median,
        "min_s": {name: min(values) for name, values in samples.items()},
        "median_gb_per_s": {name: size / value / 1e9 for name, value in median.items()},
        "throughput_ratio_to_read_ceiling": {name: ceiling / value for name, value in median.items()
                                             if "@" in name or name.startswith("openssl")},
        "engine_stats": ENGINE_STATS,
        "devices": gpucrypt.devices(),
    }
    write_and_print(args.out_json, result, samples, median, size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
