"""1 GiB through a pipe: `cat FILE | gpucrypt encrypt` against `age -r` and `openssl enc -aes-256-ctr`
(issue 33's pipe row), whole shell pipelines, interleaved per round, output to /dev/null.

The file is random data in /dev/shm (page cache), so the pipe and the encryption are what is
timed. Ratios are gpucrypt's time over the peer's, per round and for the fastest round (this VM
stalls for 1-3 s at random, so medians of a few rounds move a lot).

    python3 bench/pipe_bench.py --rounds 5 --json bench/results/NAME.json
"""

from __future__ import annotations

import argparse
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
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--gpucrypt", default=shutil.which("gpucrypt") or "gpucrypt")
    parser.add_argument("--json")
    args = parser.parse_args()
    work = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    try:
        data = os.path.join(work, "data")
        with open(data, "wb") as sink:
            for _ in range(args.mib):
                sink.write(os.urandom(1 << 20))
        key_file = os.path.join(work, "key")
        with open(key_file, "wb") as sink:
            sink.write(os.urandom(32))
        identity = os.path.join(work, "age.key")
        subprocess.run(["age-keygen", "-o", identity], check=True, capture_output=True)
        recipient = subprocess.run(["age-keygen", "-y", identity], check=True, capture_output=True,
                                   text=True).stdout.strip()
        key_hex, iv_hex = os.urandom(32).hex(), os.urandom(16).hex()
        commands = {
            "gpucrypt encrypt": f"cat {data} | {args.gpucrypt} encrypt --key-file {key_file} > /dev/null",
            "age -r": f"cat {data} | age -r {recipient} > /dev/null",
            "openssl enc -aes-256-ctr": f"cat {data} | openssl enc -aes-256-ctr -K {key_hex} -iv {iv_hex} > /dev/null",
        }
        samples = time_shell_rounds(commands, args.rounds)
    finally:
        shutil.rmtree(work)
    ours = samples["gpucrypt encrypt"]
    result = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "mib": args.mib, "cpus": os.cpu_count(),
              "method": f"{args.rounds} rounds, each pipeline once per round in turn; seconds", "seconds": samples,
              "ratios": {}}
    for peer in ("age -r", "openssl enc -aes-256-ctr"):
        result["ratios"][peer] = {"fastest_round": min(ours) / min(samples[peer]),
                                  "median": statistics.median(ours) / statistics.median(samples[peer])}
    for name, values in samples.items():
        print(f"{name:26} " + " ".join(f"{v:5.2f}" for v in values) + f"   min {min(values):.2f} s")
    for peer, ratio in result["ratios"].items():
        print(f"gpucrypt / {peer}: fastest {ratio['fastest_round']:.2f}x, median {ratio['median']:.2f}x")
    if args.json:
        with open(args.json, "w") as sink:
            json.dump(result, sink, indent=1)
            sink.write("\n")


if __name__ == "__main__":
    main()
