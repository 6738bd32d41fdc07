#!/usr/bin/env python3
"""Where a GPU file command's time goes: start-up against the engine, and the engine's shape.

    python3 bench/gpu_file_probe.py OUT.json [--device cuda:0] [--dir /dev/shm] [--encrypt-mib 4096]
                                    [--hash-mib 16384] [--job-sizes-mib 4,8,16,32]
                                    [--workers 3,6] [--hash-blocks-mib 16,32,64,128] [--repeats 2]

A diagnostic for issue 30's GPU rows (docs/performance.md), not a target's benchmark: those are
bench/file_bench.py and bench/hash_file_bench.py, which time the whole command.
1. Start-up, in a fresh process, each step timed from the one before: the interpreter to
   `import gpucrypt`, listing the devices, the first page-locked buffer (the CUDA context), the
   pipeline's job buffers (12 x 16 MiB page-locked), then the first `fileformat.encrypt_file` of
   the file on the device and a second one in the same process (no start-up left).
2. In one process (context warm): `encrypt_file` with each job size, with each number of
   workers per GPU (GPUCRYPT_GPU_WORKERS, in a fresh process each), and with each job size from
   ordinary instead of page-locked job buffers (GPUCRYPT_FILE_PAGE_LOCKED=0), the engine's stats beside.
3. `stream.hash_file("kt128", FILE, device=)` with each block length (read_size), warm.
Random data in files under --dir; every digest equals the CPU's, every encryption decrypts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_files import write_random_file  # noqa: E402 - bench/ is the script's folder

STARTUP = r"""
import json, os, sys, time
t0 = time.perf_counter()
import gpucrypt
from gpucrypt import fileformat, stream
marks = {"import_s": time.perf_counter() - t0}
t = time.perf_counter(); gpucrypt.devices(); marks["devices_s"] = time.perf_counter() - t
t = time.perf_counter(); first = stream.page_locked(1 << 20, [DEVICE]); marks["first_page_locked_s"] = time.perf_counter() - t
t = time.perf_counter(); buffers = [stream.page_locked(16 << 20, [DEVICE]) for _ in range(12)]
marks["job_buffers_s"] = time.perf_counter() - t
del buffers, first
key = os.urandom(32)
for label in ("first_encrypt", "second_encrypt"):
    stats = stream.StreamStats()
    t = time.perf_counter()
    fileformat.encrypt_file(PLAIN, OUT, key, device=DEVICE, stats=stats)
    marks[label + "_s"] = time.perf_counter() - t
    marks[label + "_engine_wall_s"] = stats.wall_s
    os.unlink(OUT)
print(json.dumps(marks))
"""

# The first run in a fresh process, taken apart: a small file first, then the big one twice, each
# with the engine's stats and its per-job trace (GPUCRYPT_FILE_TRACE: when each job had its
# buffers, had read, had sealed, had written), so that one-time costs (the first run whatever
# its size) and per-run ones show apart.
FIRST_RUNS = r"""
import json, os, time
t0 = time.perf_counter()
from gpucrypt import fileformat, stream
runs = []
key = os.urandom(32)
for label, path in (("small_first", SMALL), ("small_second", SMALL), ("big_first", PLAIN), ("big_second", PLAIN)):
    stats = stream.StreamStats()
    t = time.perf_counter()
    fileformat.encrypt_file(path, OUT, key, device=DEVICE, stats=stats)
    seconds = time.perf_counter() - t
    os.unlink(OUT)
    with open(TRACE) as lines:
        trace = json.loads(lines.read().splitlines()[-1])
    runs.append({"run": label, "seconds": seconds, "stats": stats.as_dict(), "trace": trace})
print(json.dumps({"import_s": 0, "runs": runs}))
"""


def summarise_trace(trace: dict) -> dict:
    """The first job's stages and the medians of the rest, from a GPUCRYPT_FILE_TRACE line."""
    jobs = trace["jobs"]
    if not jobs:
        return {}
    stages = ("buffers", "read", "sealed", "written")

    def spans(job):
        marks = job[1:]
        return {stage: marks[i + 1] - marks[i] for i, stage in enumerate(stages)}

    def median(values):
        values = sorted(values)
        return values[len(values) // 2] if values else 0.0

    rest = [spans(job) for job in jobs[1:]]
    return {"wall_s": trace["wall_s"], "jobs": len(jobs), "first_job_begun_s": jobs[0][1],
            "first_job": spans(jobs[0]), "last_written_s": max(job[5] for job in jobs),
            "median_job": {stage: median([r[stage] for r in rest]) for stage in stages}}

ENCRYPT = r"""
import json, os, time
from gpucrypt import fileformat, stream
key = os.urandom(32)
rows = []
for job_size in JOB_SIZES:
    for repeat in range(REPEATS):
        stats = stream.StreamStats()
        t = time.perf_counter()
        fileformat.encrypt_file(PLAIN, OUT, key, device=DEVICE, job_size=job_size, stats=stats)
        seconds = time.perf_counter() - t
        if repeat == 0 and job_size == JOB_SIZES[0]:
            fileformat.decrypt_file(OUT, OUT + ".back", key, device=DEVICE)
            assert open(OUT + ".back", "rb").read(1 << 20) == open(PLAIN, "rb").read(1 << 20)
            os.unlink(OUT + ".back")
        os.unlink(OUT)
        d = stats.as_dict()
        rows.append({"job_size": job_size, "seconds": seconds, "engine_wall_s": d["wall_s"],
                     "read_s": d["read_s"], "write_s": d["write_s"], "compute_s": d["compute_s"]})
print(json.dumps(rows))
"""

HASH = r"""
import json, time
import gpucrypt
from gpucrypt import stream
rows = []
expected = None
for block in BLOCKS:
    for repeat in range(REPEATS):
        stats = stream.StreamStats()
        t = time.perf_counter()
        digest = stream.hash_file("kt128", PATH, 32, device=DEVICE, read_size=block, stats=stats)
        seconds = time.perf_counter() - t
        expected = expected or stream.hash_file("kt128", PATH, 32)
        assert digest == expected, block
        rows.append({"read_size": block, "seconds": seconds, "read_s": stats.read_s,
                     "hash_s": stats.devices[DEVICE].busy_s, "wall_s": stats.wall_s})
print(json.dumps(rows))
"""


def python(code: str, env=None, **names) -> object:
    """Runs `code` in a fresh interpreter with NAME = repr(value) lines first; its last stdout line as JSON."""
    prelude = "".join(f"{name} = {value!r}\n" for name, value in names.items())
    done = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_json")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--dir", default="/dev/shm")
    parser.add_argument("--encrypt-mib", type=int, default=4096)
    parser.add_argument("--hash-mib", type=int, default=16384)
    parser.add_argument("--job-sizes-mib", default="4,8,16,32")
    parser.add_argument("--workers", default="2,3,6,12")
    parser.add_argument("--hash-blocks-mib", default="16,32,64,128")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--first-run-variants", default="default,CUDA_MODULE_LOADING=EAGER",
                        help="environments of the first-run processes: 'default' or NAME=VALUE[+NAME=VALUE]")
    parser.add_argument("--only", default="", help="comma-separated parts to run: startup,first_runs,job_sizes,"
                        "workers,pageable,hash (default: all)")
    args = parser.parse_args()
    report = {"device": args.device, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "cpu_count": os.cpu_count()}
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="gpu-file-probe-") as work:
        plain, out = os.path.join(work, "plain"), os.path.join(work, "out")
        write_random_file(plain, args.encrypt_mib << 20)
        names = {"DEVICE": args.device, "PLAIN": plain, "OUT": out}
        parts = set(args.only.split(",")) if args.only else {"startup", "first_runs", "job_sizes", "workers",
                                                             "pageable", "hash"}
        if "startup" in parts:
            report["startup"] = python(STARTUP, **names)
            print("start-up", report["startup"], flush=True)
        if "first_runs" in parts:
            small = os.path.join(work, "small")
            write_random_file(small, 64 << 20)
            report["first_runs"] = {}
            for variant in args.first_run_variants.split(","):
                env = dict(os.environ)
                if variant != "default":
                    env.update(item.split("=", 1) for item in variant.split("+"))
                trace = os.path.join(work, "trace.jsonl")
                env["GPUCRYPT_FILE_TRACE"] = trace
                result = python(FIRST_RUNS, env=env, SMALL=small, TRACE=trace, **names)
                os.unlink(trace)
                for run in result["runs"]:
                    run["trace_summary"] = summarise_trace(run["trace"])
                    print("first runs", variant, run["run"], round(run["seconds"], 3), run["trace_summary"],
                          flush=True)
                report["first_runs"][variant] = result["runs"]
            os.unlink(small)
        if not parts & {"job_sizes", "workers", "pageable", "hash"}:
            with open(args.out_json, "w") as sink:
                json.dump(report, sink, indent=1)
            return 0
        job_sizes = [int(x) << 20 for x in args.job_sizes_mib.split(",")]
        report["encrypt_job_sizes"] = python(ENCRYPT, JOB_SIZES=job_sizes, REPEATS=args.repeats, **names)
        for row in report["encrypt_job_sizes"]:
            print("encrypt job", row, flush=True)
        report["encrypt_workers"] = {}
        for workers in args.workers.split(","):
            env = dict(os.environ, GPUCRYPT_GPU_WORKERS=workers)
            rows = python(ENCRYPT, env=env, JOB_SIZES=[None], REPEATS=args.repeats, **names)
            report["encrypt_workers"][workers] = rows
            print("encrypt workers", workers, rows, flush=True)
        # Ordinary job buffers instead of the GPU's page-locked ones (GPUCRYPT_FILE_PAGE_LOCKED=0).
        env = dict(os.environ, GPUCRYPT_FILE_PAGE_LOCKED="0")
        report["encrypt_pageable_buffers"] = python(ENCRYPT, env=env, JOB_SIZES=job_sizes, REPEATS=args.repeats,
                                                    **names)
        for row in report["encrypt_pageable_buffers"]:
            print("encrypt pageable job", row, flush=True)
        os.unlink(plain)
        path = os.path.join(work, "hash")
        write_random_file(path, args.hash_mib << 20)
        blocks = [int(x) << 20 for x in args.hash_blocks_mib.split(",")]
        report["hash_blocks"] = python(HASH, BLOCKS=blocks, REPEATS=args.repeats, DEVICE=args.device, PATH=path)
        for row in report["hash_blocks"]:
            print("hash", row, flush=True)
    with open(args.out_json, "w") as sink:
        json.dump(report, sink, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
