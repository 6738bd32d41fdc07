#!/usr/bin/env python3
"""`gpucrypt encrypt` / `decrypt` file to file, end to end, against copies of the same file.

    python3 bench/file_bench.py OUT.json [--size-mib 1024] [--dir /dev/shm] [--repeats 5]
                                [--device auto] [--threads N] [--quick] [--baseline-path DIR]
                                [--mapped-output] [--settle N] [--compare-device DEV]

Issue 30's ceilings, measured in the same run, interleaved (one round = every command once, in
turn, every other round in reverse order, so that a noisy neighbour hits them all alike):
- `cp` of the file (coreutils: copy_file_range / read+write, one thread);
- a parallel copy: N threads, each copying its own range of the file with pread/pwrite into a
  preallocated output (what our file pipeline does minus the sealing), N = --threads (default:
  the machine's cores);
- `gpucrypt encrypt --key-file K -o OUT FILE` and `gpucrypt decrypt ... -o OUT FILE.gcx`: the
  command a user types, wall clock of the whole process (start-up included), beside the engine's
  own figure from --stats (first read to last write).
With --recipients, `encrypt -r RECIPIENT` and `decrypt -i IDENTITY` (format version 2, issue 36)
run beside the key-file commands in the same rounds: recipients change only the header, so the
target is the key file's time within 2% (recipient_ratio: medians, and the median of each
round's own ratio).
With --mapped-output, the two commands run with GPUCRYPT_FILE_MAPPED_OUTPUT=0 (pwrites) as
encrypt / decrypt and with =1 (the file pipeline's writes as copies into a shared mapping of the
output; docs/file-format.md) as encrypt_mapped / decrypt_mapped, interleaved with the rest.
Without it, the library's own choice (auto) is timed.
With --compare-device DEV (e.g. cpu), the two commands also run with --device DEV as
encrypt_DEV / decrypt_DEV in the same rounds: issue 30's "auto is never slower than the fastest
device alone", measured end to end (compare_ratio: DEV's median time over --device's).
With --baseline-path DIR, the same two commands also run from another build of gpucrypt
installed in DIR (`pip install --target DIR` of an older commit), as encrypt_baseline /
decrypt_baseline, interleaved with the rest: before and after in one run.
`auto` keeps the device set it measured on the machine across processes (docs/engine.md, "Kept on
this machine"): the benchmark gives its commands a store of their own in its temporary directory,
so it starts as on a fresh machine (the setup's encrypt is the first, probing run). With
--settle N, each gpucrypt command first runs N times untimed (their seconds and stats are in the
JSON as settle_s / settle_stats): what a user gets once the machine's kept set settled.
The output file is removed between runs (every command writes a new file, as a user's would).
Every output is checked once: the decrypted file equals the input. The data is random (never
zeros). The JSON has every sample; the median and the ratios to both ceilings are printed.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from bench_files import parallel_copy, write_random_file  # noqa: E402 - bench/ is the script's folder






def timed(command, env=None) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    return time.perf_counter() - start, done.stderr


def engine_stats(stderr: str) -> dict:
    """The --stats JSON line: the engine's wall (first read to last write), its stage sums and
    each device's jobs, bytes and stages; {} when there is none."""
    for line in reversed(stderr.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {}


def digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as source:
        while block := source.read(64 << 20):
            h.update(block)
    return h.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_json")
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--dir", default="/dev/shm")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--quick", action="store_true", help="64 MiB, 2 repeats (a smoke test)")
    parser.add_argument("--recipients", action="store_true",
                        help="also time encrypt -r / decrypt -i against the key-file commands")
    parser.add_argument("--mapped-output", action="store_true",
                        help="time encrypt/decrypt with GPUCRYPT_FILE_MAPPED_OUTPUT=0 and =1 (writes through a "
                             "shared mapping of the output), as encrypt_mapped / decrypt_mapped")
    parser.add_argument("--baseline-path", default=None, metavar="DIR",
                        help="also time the gpucrypt installed in DIR (PYTHONPATH), e.g. an older commit")
    parser.add_argument("--compare-device", default=None, metavar="DEV",
                        help="also time encrypt/decrypt with --device DEV in the same rounds")
    parser.add_argument("--settle", type=int, default=0, metavar="N",
                        help="run each gpucrypt command N times untimed first (auto's kept set settles)")
    args = parser.parse_args()
    if args.quick:
        args.size_mib, args.repeats = 64, 2
    size = args.size_mib << 20
    gpucrypt_command = [sys.executable, "-m", "gpucrypt"]
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="file-bench-") as work:
        plain, sealed, out, key = (os.path.join(work, name) for name in ("plain", "plain.gcx", "out", "key"))
        write_random_file(plain, size)
        os.environ["GPUCRYPT_CACHE_DIR"] = os.path.join(work, "cache")   # a fresh machine's store
        subprocess.run(gpucrypt_command + ["keygen", "--symmetric", "-o", key], check=True)
        subprocess.run(gpucrypt_command + ["encrypt", "-q", "--key-file", key, "--device", args.device, "-o", sealed,
                                           plain], check=True)
        commands = {
            "cp": lambda: timed(["cp", plain, out]),
            "parallel_copy": lambda: (lambda t0: (parallel_copy(plain, out, args.threads),
                                                  time.perf_counter() - t0)[1])(time.perf_counter()),
            "encrypt": lambda: timed(gpucrypt_command + ["encrypt", "-q", "--stats", "--key-file", key, "--device",
                                                         args.device, "-o", out, plain]),
            "decrypt": lambda: timed(gpucrypt_command + ["decrypt", "-q", "--stats", "--key-file", key, "--device",
                                                         args.device, "-o", out, sealed]),
        }
        engine = {"encrypt": [], "decrypt": []}
        if args.recipients:
            identity, sealed_v2 = os.path.join(work, "identity"), os.path.join(work, "plain.v2.gcx")
            recipient = subprocess.run(gpucrypt_command + ["keygen", "-o", identity], check=True, capture_output=True,
                                       text=True).stdout.strip()
            subprocess.run(gpucrypt_command + ["encrypt", "-q", "-r", recipient, "--device", args.device, "-o",
                                               sealed_v2, plain], check=True)
            commands["encrypt_recipient"] = lambda: timed(gpucrypt_command + [
                "encrypt", "-q", "--stats", "-r", recipient, "--device", args.device, "-o", out, plain])
            commands["decrypt_identity"] = lambda: timed(gpucrypt_command + [
                "decrypt", "-q", "--stats", "-i", identity, "--device", args.device, "-o", out, sealed_v2])
            engine.update(encrypt_recipient=[], decrypt_identity=[])
        if args.mapped_output:
            os.environ["GPUCRYPT_FILE_MAPPED_OUTPUT"] = "0"  # the plain rows: pwrites, whatever auto picks
            mapped_env = dict(os.environ, GPUCRYPT_FILE_MAPPED_OUTPUT="1")
            for what, source in (("encrypt", plain), ("decrypt", sealed)):
                commands[f"{what}_mapped"] = (lambda what=what, source=source: timed(
                    gpucrypt_command + [what, "-q", "--stats", "--key-file", key, "--device", args.device, "-o", out,
                                        source], env=mapped_env))
                engine[f"{what}_mapped"] = []
        if args.compare_device:
            for what, source in (("encrypt", plain), ("decrypt", sealed)):
                commands[f"{what}_{args.compare_device}"] = (lambda what=what, source=source: timed(
                    gpucrypt_command + [what, "-q", "--stats", "--key-file", key, "--device", args.compare_device,
                                        "-o", out, source]))
                engine[f"{what}_{args.compare_device}"] = []
        if args.baseline_path:
            baseline_env = dict(os.environ, PYTHONPATH=os.path.abspath(args.baseline_path))
            for what, source in (("encrypt", plain), ("decrypt", sealed)):
                commands[f"{what}_baseline"] = (lambda what=what, source=source: timed(
                    gpucrypt_command + [what, "-q", "--stats", "--key-file", key, "--device", args.device, "-o", out,
                                        source], env=baseline_env))
                engine[f"{what}_baseline"] = []
        samples = {name: [] for name in commands}
        engine_detail = {}
        settle_s, settle_stats = {}, {}
        for _ in range(args.settle):
            for name in engine:
                if os.path.exists(out):
                    os.unlink(out)
                seconds, stderr = commands[name]()
                settle_s.setdefault(name, []).append(seconds)
                settle_stats.setdefault(name, []).append(engine_stats(stderr))
        for round_index in range(args.repeats):
            # Every other round in reverse order, so that load rising or falling during a round
            # does not favour the commands that come first.
            for name, run in (reversed(commands.items()) if round_index % 2 else commands.items()):
                if os.path.exists(out):
                    os.unlink(out)
                result = run()
                if isinstance(result, tuple):
                    seconds, stderr = result
                    if name in engine:
                        stats = engine_stats(stderr)
                        engine[name].append(stats.get("wall_s", float("nan")))
                        engine_detail.setdefault(name, []).append(stats)
                else:
                    seconds = result
                samples[name].append(seconds)
                if name.startswith("decrypt") and len(samples[name]) == 1 and digest(out) != digest(plain):
                    raise SystemExit(f"{name} gave a file different from the input")
        median = {name: statistics.median(values) for name, values in samples.items()}
        result = {
            "what": "gpucrypt encrypt/decrypt file to file (whole process) vs cp and a parallel pread/pwrite copy "
                    "of the same file, interleaved rounds",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": platform.node(), "cpu_count": os.cpu_count(), "machine": platform.machine(),
            "dir": args.dir, "size_bytes": size, "device": args.device, "threads": args.threads,
            "repeats": args.repeats, "samples_s": samples, "engine_wall_s": engine, "engine_stats": engine_detail,
            "median_s": median,
            "median_gbps": {name: size / value / 1e9 for name, value in median.items()},
            "time_ratio_to_cp": {name: median[name] / median["cp"] for name in engine},
            "throughput_ratio_to_parallel_copy": {name: median["parallel_copy"] / median[name] for name in engine},
            "baseline_path": args.baseline_path,
            "settle": args.settle, "settle_s": settle_s, "settle_stats": settle_stats,
        }
        if args.compare_device:
            result["compare_ratio"] = {what: median[f"{what}_{args.compare_device}"] / median[what]
                                       for what in ("encrypt", "decrypt")}
        if args.recipients:
            result["recipient_ratio"] = {
                f"{v2} / {v1}": {
                    "median_time_ratio": median[v2] / median[v1],
                    "median_of_round_ratios": statistics.median(a / b for a, b in zip(samples[v2], samples[v1])),
                    "min_time_ratio": min(samples[v2]) / min(samples[v1]),
                    "engine_median_ratio": statistics.median(engine[v2]) / statistics.median(engine[v1]),
                } for v2, v1 in (("encrypt_recipient", "encrypt"), ("decrypt_identity", "decrypt"))}
    with open(args.out_json, "w") as sink:
        json.dump(result, sink, indent=1)
    for name, value in median.items():
        print(f"{name:14s} median {value:7.3f} s  {size / value / 1e9:6.2f} GB/s")
    print("time / cp:", {k: round(v, 3) for k, v in result["time_ratio_to_cp"].items()})
    print("throughput / parallel copy:", {k: round(v, 3) for k, v in result["throughput_ratio_to_parallel_copy"].items()})
    if "compare_ratio" in result:
        print(f"{args.compare_device} time / {args.device} time:", {k: round(v, 3) for k, v in result["compare_ratio"].items()})
    for name, details in engine_detail.items():
        print(name, "device choices:", [stats.get("device_choice", "")[:160] for stats in details])
    for pair, ratios in result.get("recipient_ratio", {}).items():
        print(pair, {k: round(v, 4) for k, v in ratios.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
