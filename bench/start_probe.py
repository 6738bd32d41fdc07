#!/usr/bin/env python3
"""Where a file command's time goes outside the engine: Python's start, the imports, CUDA's start-up
and the process's exit, and `gpucrypt encrypt`/`decrypt` with and without the GPUs started early.

    python3 bench/start_probe.py OUT.json [--size-mib 4096] [--dir /dev/shm] [--rounds 5] [--hash kt128]

Rows (whole processes, interleaved rounds, medians; the data is random):
- python_pass, import_cli: `python3 -c pass` and `import gpucrypt.cli`;
- cuda_init: cuInit and the device count alone through ctypes (what listing the GPUs costs, no context);
- cuda_contexts / cuda_contexts_os_exit: cuInit and every device's primary context through ctypes,
  ending normally or by os._exit (what exit costs when Python's and CUDA's exit code is skipped);
- encrypt_cli / decrypt_cli: `python3 -m gpucrypt encrypt|decrypt` as a user runs it (gpucrypt.__main__
  starts the GPUs early for a large file);
- encrypt_cpu / decrypt_cpu: the same with --device cpu (no GPU started), beside `auto`'s;
- encrypt_late / decrypt_late: the same command run by gpucrypt.cli directly, which does not
  (every GPU starts at its first use, as before the fourteenth session);
- with --hash ALG: hash_cli / hash_late, `hash -a ALG --device cuda:0` of the same file both ways;
- parallel_copy: the file target's ceiling (bench_files.parallel_copy, one thread per core).
Each child prints the time it ended its work; `exit_s` is the parent's time after that, and the
engine's own figures come from --stats.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_files import parallel_copy, write_random_file  # noqa: E402

INIT = ("import ctypes, os, sys, time\n"
        "cuda = ctypes.CDLL('libcuda.so.1'); cuda.cuInit(0); count = ctypes.c_int()\n"
        "cuda.cuDeviceGetCount(ctypes.byref(count))\n")
END = "sys.stderr.write(f'X end {time.time():.6f}\\n'); sys.stderr.flush()\n"
CONTEXTS = (INIT +
            "for i in range(count.value): cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctypes.c_void_p()), i)\n" + END)
LATE = ("import sys, time\nfrom gpucrypt.cli import cli\ncode = 0\n"
        "try:\n    cli.main(args=sys.argv[1:], prog_name='gpucrypt')\n"
        "except SystemExit as done:\n    code = done.code or 0\n"
        "sys.stderr.write(f'X end {time.time():.6f}\\n')\nsys.exit(code)\n")


def cuda_driver_present() -> bool:
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_json")
    parser.add_argument("--size-mib", type=int, default=4096)
    parser.add_argument("--dir", default="/dev/shm")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--hash", default=None, metavar="ALG", help="also time `hash -a ALG --device cuda:0` both ways")
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="start-probe-") as work:
        plain, sealed, out, key = (os.path.join(work, name) for name in ("plain", "plain.gcx", "out", "key"))
        write_random_file(plain, args.size_mib << 20)
        with open(key, "wb") as sink:
            sink.write(os.urandom(32))
        subprocess.run([py, "-m", "gpucrypt", "encrypt", "-q", "--key-file", key, "-o", sealed, plain], check=True)
        commands = {"python_pass": [py, "-c", "pass"], "import_cli": [py, "-c", "import gpucrypt.cli"]}
        if cuda_driver_present():
            commands.update(cuda_init=[py, "-c", INIT + END], cuda_contexts=[py, "-c", CONTEXTS], cuda_contexts_os_exit=[py, "-c", CONTEXTS + "os._exit(0)"])
        for what, source in (("encrypt", plain), ("decrypt", sealed)):
            options = [what, "-q", "--stats", "--key-file", key, "-o", out, source]
            commands[f"{what}_cli"] = [py, "-m", "gpucrypt"] + options
            commands[f"{what}_late"] = [py, "-c", LATE] + options
            commands[f"{what}_cpu"] = [py, "-m", "gpucrypt"] + options + ["--device", "cpu"]
        if args.hash:
            options = ["hash", "-a", args.hash, "--device", "cuda:0", "--stats", plain]
            commands.update(hash_cli=[py, "-m", "gpucrypt"] + options, hash_late=[py, "-c", LATE] + options)
        samples = {name: [] for name in list(commands) + ["parallel_copy"]}
        details = {name: [] for name in commands}
        for round_index in range(args.rounds):
            names = list(samples)
            for name in (reversed(names) if round_index % 2 else names):
                if os.path.exists(out):
                    os.unlink(out)
                start = time.perf_counter()
                if name == "parallel_copy":
                    parallel_copy(plain, out, os.cpu_count() or 1)
                    samples[name].append(time.perf_counter() - start)
                    continue
                run = subprocess.run(commands[name], capture_output=True, text=True)
                ended, seconds = time.time(), time.perf_counter() - start
                if run.returncode != 0:
                    raise SystemExit(f"{name} failed: {run.stderr[-500:]}")
                detail = {}
                for line in run.stderr.splitlines():
                    if line.startswith("X end "):
                        detail["exit_s"] = round(ended - float(line.split()[2]), 3)
                    elif line.startswith("{"):
                        stats = json.loads(line)
                        detail.update({key: stats.get(key) for key in ("wall_s", "read_s", "write_s", "device_choice")})
                samples[name].append(seconds)
                details[name].append(detail)
        median = {name: statistics.median(values) for name, values in samples.items()}
        ratio = {name: median["parallel_copy"] / median[name] for name in median if name.startswith(("encrypt", "decrypt", "hash"))}
        result = {"what": __doc__.split("\n")[0], "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "cpu_count": os.cpu_count(), "size_bytes": args.size_mib << 20, "rounds": args.rounds,
                  "samples_s": samples, "median_s": median, "details": details,
                  "throughput_ratio_to_parallel_copy": ratio}
    with open(args.out_json, "w") as sink:
        json.dump(result, sink, indent=1)
    for name, value in median.items():
        print(f"{name:24s} median {value:6.3f} s  {ratio.get(name, float('nan')):5.3f}x parallel copy  "
              f"{details.get(name, [{}])[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
