#!/usr/bin/env python3
"""`gpucrypt encrypt/decrypt` in one process against `mpirun -n N gpucrypt ... --mpi` on the same file.

    python3 bench/mpi_bench.py OUT.json [--size-mib 4096] [--ranks 1,2,4] [--repeats 3]
                               [--device cuda:0] [--dir /dev/shm] [--round-size SIZE]

Issue 12's target: N ranks on one host within 10% of the single-process stream on the same
devices. The file lives in host memory (/dev/shm) so that the disk is not what is measured. The
single process runs the stream engine on --device (default: cuda:0 where there is a GPU, else
the CPU); the N ranks all use that same device (every rank of one host shares its GPU), with
`--bind-to none` so that Open MPI does not pin each rank to one core. For each run the JSON has
the wall clock of the whole command (process start, CUDA and MPI initialisation included) and
the engine's own wall clock (--stats / --stats-json: the time from the first read to the last
write), GB/s on each, the median of --repeats runs and the best, and for the MPI runs every
rank's read / H2D / kernel / D2H / write / communication seconds; the MPI runs are timed with
collective MPI-IO and with independent MPI-IO (GPUCRYPT_MPI_IO). Every output is checked: the
MPI file decrypts with the single-process tool to the input, and the reverse.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import gpucrypt
from bench_files import write_random_file  # noqa: E402 - bench/ is the script's folder

KEY = bytes(range(1, 33))


def log(line):
    print(line, flush=True)




def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as source:
        while block := source.read(64 << 20):
            h.update(block)
    return h.hexdigest()


def env(extra=None):
    variables = dict(os.environ)
    variables.update(extra or {})
    variables["PYTHONPATH"] = os.pathsep.join(
        p for p in (os.path.dirname(os.path.dirname(gpucrypt.__file__)), variables.get("PYTHONPATH")) if p)
    variables.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    variables.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return variables


def run(command, extra_env=None):
    began = time.perf_counter()
    result = subprocess.run(command, capture_output=True, env=env(extra_env))
    wall = time.perf_counter() - began
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr.decode()[-3000:]}")
    return wall, result


def single(op, source, target, key_file, device):
    command = [sys.executable, "-m", "gpucrypt", op, source, "-o", target, "--force", "--key-file", key_file,
               "-q", "--device", device, "--stats"]
    wall, result = run(command)
    stats = json.loads(result.stderr.decode().strip().splitlines()[-1])
    return wall, stats.get("wall_s"), stats


def ranks(op, n, source, target, key_file, device, round_size, stats_path, io_mode):
    command = [shutil.which("mpirun"), "--oversubscribe", "--bind-to", "none", "-n", str(n), sys.executable, "-m",
               "gpucrypt", op, source, "-o", target, "--force", "--key-file", key_file, "--device", device, "--mpi",
               "--stats-json", stats_path] + (["--round-size", round_size] if round_size else [])
    wall, _ = run(command, {"GPUCRYPT_MPI_IO": io_mode})
    with open(stats_path) as stats_file:
        stats = json.load(stats_file)
    assert stats["num_ranks"] == n, stats
    return wall, stats["wall_s"], stats


def measure(repeats, function):
    samples = [function() for _ in range(repeats)]
    walls = [s[0] for s in samples]
    engines = [s[1] for s in samples if s[1] is not None]
    return {"wall_s_median": statistics.median(walls), "wall_s_best": min(walls),
            "engine_s_median": statistics.median(engines) if engines else None,
            "engine_s_best": min(engines) if engines else None, "stats_last": samples[-1][2]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--size-mib", type=int, default=4096)
    parser.add_argument("--ranks", default="1,2,4")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default=None, help="default cuda:0 with a GPU, else cpu")
    parser.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    parser.add_argument("--round-size", default=None,
                        help="pass --round-size to the ranks (default: not passed, as a user types it; positional "
                             "ranks then take the pipeline's own job length, MPI-IO ranks 32M rounds)")
    parser.add_argument("--io", default="collective,independent",
                        help="MPI-IO modes to time (GPUCRYPT_MPI_IO), comma-separated")
    args = parser.parse_args()
    if shutil.which("mpirun") is None:
        sys.exit("mpi_bench: mpirun not found (apt-get install openmpi-bin; pip install mpi4py)")
    gpus = [d["name"] for d in gpucrypt.devices() if d.get("kind") == "cuda"]
    device = args.device or (gpus[0] if gpus else "cpu")
    size = args.size_mib << 20
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "host": platform.node(), "cpus": os.cpu_count(), "gpus": gpucrypt.devices(), "device": device,
              "bytes": size, "round_size": args.round_size, "repeats": args.repeats,
              "mpirun": subprocess.run([shutil.which("mpirun"), "--version"], capture_output=True,
                                       text=True).stdout.splitlines()[0], "results": []}
    work = tempfile.mkdtemp(prefix="gpucrypt-mpi-bench-", dir=args.dir)
    try:
        plain, sealed, opened = (os.path.join(work, name) for name in ("plain", "sealed", "opened"))
        key_file = os.path.join(work, "key")
        with open(key_file, "wb") as out:
            out.write(KEY)
        log(f"mpi_bench: {args.size_mib} MiB in {work}, device {device}")
        write_random_file(plain, size)
        plain_digest = digest(plain)

        def record(op, n, result, io_mode=None):
            engine = result["engine_s_median"]
            row = {"op": op, "ranks": n, "io": io_mode, "device": device, **result,
                   "gb_per_s_wall": size / result["wall_s_median"] / 1e9,
                   "gb_per_s_engine": size / engine / 1e9 if engine else None}
            report["results"].append(row)
            log(f"{op:<8} {'single' if n == 0 else f'{n} ranks':<8} {io_mode or '':<11} wall {result['wall_s_median']:7.3f} s "
                f"({row['gb_per_s_wall']:6.2f} GB/s)  engine "
                + (f"{engine:7.3f} s ({row['gb_per_s_engine']:6.2f} GB/s)" if engine else "n/a"))
            return row

        baseline = {}
        for op in ("encrypt", "decrypt"):
            source, target = (plain, sealed) if op == "encrypt" else (sealed, opened)
            if op == "decrypt":
                single("encrypt", plain, sealed, key_file, device)
            baseline[op] = record(op, 0, measure(args.repeats, lambda: single(op, source, target, key_file, device)))
            for io_mode, n in ((m, int(r)) for m in args.io.split(",") for r in args.ranks.split(",")):
                stats_path = os.path.join(work, "stats.json")
                row = record(op, n, measure(args.repeats, lambda: ranks(op, n, source, target, key_file, device,
                                                                        args.round_size, stats_path, io_mode)),
                             io_mode)
                base = baseline[op]
                row["overhead_wall"] = row["wall_s_median"] / base["wall_s_median"] - 1
                if row["engine_s_median"] and base["engine_s_median"]:
                    row["overhead_engine"] = row["engine_s_median"] / base["engine_s_median"] - 1
                # Same format both ways: what N ranks wrote opens with one process, and the reverse.
                if op == "encrypt":
                    single("decrypt", sealed, opened, key_file, device)
                assert digest(opened) == plain_digest, f"{op} with {n} ranks: wrong output"
        report["targets"] = {"overhead_within": 0.10}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(args.out, "w") as out:
        json.dump(report, out, indent=2)
    log(f"mpi_bench: wrote {args.out}")


if __name__ == "__main__":
    main()
