#!/usr/bin/env python3
"""`gpucrypt encrypt --direct-io` against the page cache and the disk's direct-I/O ceiling.

    python3 bench/direct_io_bench.py OUT.json [--size-mib 1024] [--dir /var/tmp] [--repeats 3]
                                     [--device cpu]

Issue 30's disk target: encrypt and decrypt file to file against a sequential read+write ceiling
measured in the same run with direct I/O. The ceilings are `dd` with 8 MiB blocks: reading the file
(`iflag=direct` to /dev/null) and copying it (`iflag=direct oflag=direct`, a new output each time).
Timed beside them, as whole processes (start-up included): `gpucrypt encrypt` and `decrypt` with
and without --direct-io, each writing a new output (removed after the round). Rounds are
interleaved; the data is random. --dir must be on the disk to measure (not tmpfs).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from bench_files import write_and_print, write_random_file  # noqa: E402 - bench/ is the script's folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_json")
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    size = args.size_mib << 20
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="direct-io-bench-") as work:
        plain, sealed, key = (os.path.join(work, name) for name in ("plain", "sealed", "key"))
        write_random_file(plain, size)
        with open(key, "w") as out:
            out.write(os.urandom(32).hex() + "\n")
        gpucrypt = [sys.executable, "-m", "gpucrypt"]
        subprocess.run(gpucrypt + ["encrypt", "-q", "--key-file", key, "--device", args.device, "-o", sealed, plain],
                       check=True)
        output = os.path.join(work, "out")
        dd = ["dd", "bs=8M", "status=none"]
        commands = {
            "dd read, direct": dd + [f"if={plain}", "of=/dev/null", "iflag=direct"],
            "dd copy, direct": dd + [f"if={plain}", f"of={output}", "iflag=direct", "oflag=direct"],
        }
        for direct in (False, True):
            flag = ["--direct-io"] if direct else []
            suffix = ", --direct-io" if direct else ""
            commands["encrypt" + suffix] = gpucrypt + ["encrypt", "-q", "-f", "--key-file", key, "--device",
                                                      args.device, *flag, "-o", output, plain]
            commands["decrypt" + suffix] = gpucrypt + ["decrypt", "-q", "-f", "--key-file", key, "--device",
                                                      args.device, *flag, "-o", output, sealed]
        samples = {name: [] for name in commands}
        for _ in range(args.repeats):
            for name, command in commands.items():
                start = time.perf_counter()
                subprocess.run(command, check=True)
                samples[name].append(time.perf_counter() - start)
                if os.path.exists(output):
                    os.unlink(output)
    median = {name: statistics.median(values) for name, values in samples.items()}
    ceiling = median["dd copy, direct"]
    result = {
        "what": "gpucrypt encrypt/decrypt FILE -o OUT (whole process) with and without --direct-io, beside dd "
                "with direct I/O (read; read+write copy), interleaved rounds",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(), "cpu_count": os.cpu_count(), "dir": args.dir, "device": args.device,
        "size_bytes": size, "repeats": args.repeats, "samples_s": samples, "median_s": median,
        "min_s": {name: min(values) for name, values in samples.items()},
        "median_gb_per_s": {name: size / value / 1e9 for name, value in median.items()},
        "throughput_ratio_to_direct_copy": {name: ceiling / value for name, value in median.items()},
    }
    write_and_print(args.out_json, result, samples, median, size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
