"""Pipes through two gpucrypt installs, interleaved: `cat 1GiB | gpucrypt encrypt`, `cat SEALED |
gpucrypt decrypt` (both `--device cpu`, output to a file in /dev/shm) and `cat 1GiB | gpucrypt hash
-a kt128`, each install's command once per round in turn (issue 30 item 5: the library reading and
writing the descriptors against the Python reading loop it replaced).

Each install is a Python interpreter that imports its own gpucrypt (`python -m gpucrypt`). The
data is random, in /dev/shm (page cache), so the pipe and the work are what is timed. This VM
stalls for 1-3 s at random: compare medians and minimums of several rounds.

    python3 bench/pipe_engine_bench.py --before /path/python --after /path/python --rounds 5 \
        --json bench/results/NAME.json
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import sys
import statistics
import subprocess
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_files import time_shell_rounds  # noqa: E402 - bench/ is the script's folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the Python interpreter of the install before")
    parser.add_argument("--after", required=True, help="the Python interpreter of the install after")
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args()
    work = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    installs = {"before": args.before, "after": args.after}
    try:
        data, key, sealed = (os.path.join(work, name) for name in ("data", "key", "sealed"))
        with open(data, "wb") as sink:
            for _ in range(args.mib):
                sink.write(os.urandom(1 << 20))
        with open(key, "wb") as sink:
            sink.write(os.urandom(32))
        subprocess.run(f"{args.after} -m gpucrypt encrypt --key-file {key} --device cpu -o {sealed} {data}",
                       shell=True, check=True)
        commands = {}
        for label, python in installs.items():
            out = os.path.join(work, f"out-{label}")
            commands[f"encrypt {label}"] = f"cat {data} | {python} -m gpucrypt encrypt --key-file {key} --device cpu > {out}"
            commands[f"decrypt {label}"] = f"cat {sealed} | {python} -m gpucrypt decrypt --key-file {key} --device cpu > {out}"
            commands[f"hash kt128 {label}"] = f"cat {data} | {python} -m gpucrypt hash -a kt128 > {out}.digest"
        samples = time_shell_rounds(commands, args.rounds)
        # What the last round's decrypts wrote is the plaintext; the digests agree.
        for label in installs:
            assert filecmp.cmp(os.path.join(work, f"out-{label}"), data, shallow=False), label
        digests = {open(os.path.join(work, f"out-{label}.digest")).read() for label in installs}
        assert len(digests) == 1, digests
    finally:
        shutil.rmtree(work)
    result = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "mib": args.mib, "cpus": os.cpu_count(),
              "installs": installs,
              "method": f"{args.rounds} rounds, each command once per round in turn; seconds", "seconds": samples}
    for name, times in samples.items():
        print(f"{name:22s} median {statistics.median(times):6.2f} s  min {min(times):6.2f} s  "
              f"({args.mib / 1024 / statistics.median(times):.2f} GiB/s median)")
    if args.json:
        with open(args.json, "w") as sink:
            json.dump(result, sink, indent=1)


if __name__ == "__main__":
    main()
