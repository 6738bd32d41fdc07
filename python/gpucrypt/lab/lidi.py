"""LIDI-UNLP: data cut into fragments, each copied in, encrypted and copied out (H2D / kernel /
D2H), with and without overlap; data larger than GPU memory; the MPI cluster table."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import gpucrypt
from gpucrypt import stream
from gpucrypt.lab import plots
from gpucrypt.lab.framework import MIB, experiment, human_bytes, random_bytes
from gpucrypt.lab.sensors import meminfo_bytes
from gpucrypt.mpi import STAGES as RANK_STAGES

NAME = "aes-128-ecb"
STAGES = ("h2d_s", "compute_s", "d2h_s")


def _sequential(device: str, data: memoryview, fragment: int, key: bytes) -> dict:
    """One fragment after another, each a batch of one request: the stage times summed."""
    sums = dict.fromkeys(STAGES, 0.0)
    start = time.perf_counter()
    for offset in range(0, len(data), fragment):
        batch = gpucrypt.Batch(device=device)
        batch.add(NAME, key, data[offset:offset + fragment], padding=False)
        batch.run()
        for stage in STAGES:
            sums[stage] += batch.stats[stage]
        sums["variant"] = next(iter(batch.stats["variants"].values()), None)
    sums["total_s"] = time.perf_counter() - start
    return sums


def _overlapped(device: str, data, out, fragment: int, key: bytes) -> dict:
    """The stream engine with jobs of one fragment: copies of one job overlap another's kernel."""
    stats = stream.StreamStats()
    start = time.perf_counter()
    stream.transform_into(NAME, key, None, data, out, device=device, job_size=fragment, stats=stats)
    record = stats.devices.get(device)
    stages = record.stages if record else {}
    return {"total_s": time.perf_counter() - start, "variant": record.variant if record else None,
            **{s: stages.get(s, 0.0) for s in STAGES}}


@experiment("lidi-fragments", "lidi", "fragments: H2D / kernel / D2H, with and without overlap; beyond GPU memory")
def fragments(lab):
    device = lab.gpu or "cpu"
    if lab.quick:
        data_sizes, fragment_sizes = (8 * MIB, 16 * MIB), (1 * MIB, 4 * MIB, 8 * MIB)
    else:
        data_sizes, fragment_sizes = (256 * MIB, 512 * MIB, 1024 * MIB), (128 * MIB, 256 * MIB, 16 * MIB, 32 * MIB)
    if not lab.gpu:
        lab.changed("Without a GPU the fragments run on the CPU backend: no copies, so H2D and D2H are 0 "
                    "and the sizes are small.")
    key = os.urandom(16)
    rows, split = [], {}
    reps = 1 if lab.quick else 2
    for data_len in data_sizes:
        data = stream.page_locked(data_len)
        data[:] = random_bytes(data_len)
        out = stream.page_locked(data_len)
        for fragment in fragment_sizes:
            if fragment > data_len:
                continue
            for overlap in (False, True):
                runs = [(_overlapped(device, data, out, fragment, key) if overlap
                         else _sequential(device, memoryview(data), fragment, key)) for _ in range(reps + 1)][1:]
                best = min(runs, key=lambda r: r["total_s"])
                label = f"{human_bytes(fragment)} fragments, {'overlapped' if overlap else 'one after another'}"
                lab.record("fragment run", timed=("stream.transform_into with job_size = fragment (wall); "
                                                  "stages summed over the workers" if overlap else
                                                  "one gpucrypt.Batch per fragment (wall); stages from its statistics"),
                           device=device, variant=best["variant"], samples=[r["total_s"] for r in runs], statistic="min",
                           algorithm=NAME, bytes=data_len, fragment_bytes=fragment, overlap=overlap,
                           h2d_s=best["h2d_s"], kernel_s=best["compute_s"], d2h_s=best["d2h_s"])
                rows.append([human_bytes(data_len), label, best["h2d_s"], best["compute_s"], best["d2h_s"],
                             best["total_s"]])
                split.setdefault(label, {})[data_len] = best
        lab.log(f"  {human_bytes(data_len)} done")
        del data, out
    lab.table("seconds: H2D / kernel / D2H / total (best run)", ["data", "fragments", "H2D", "kernel", "D2H", "total"],
              rows)
    labels = list(split)
    plots.grouped_bars(lab.plot_path("totals"), "total seconds per data size and fragment size",
                       labels, {human_bytes(d): [split[l].get(d, {}).get("total_s") for l in labels] for d in data_sizes},
                       "seconds")
    biggest = data_sizes[-1]
    stage_labels = [l for l in labels if biggest in split[l]]
    plots.grouped_bars(lab.plot_path("stages"), f"{human_bytes(biggest)}: time per stage (summed over fragments)",
                       stage_labels, {stage: [split[l][biggest][stage] for l in stage_labels] for stage in STAGES},
                       "seconds")
    _beyond_gpu_memory(lab, key)
    _cluster(lab, device)
    lab.changed("Fragments of one stream overlap their copies with other fragments' kernels in the "
                "stream engine (three jobs in flight per GPU); the sequential column reproduces "
                "their one-after-another loop. PCIe 5 and HBM make copies and kernels tens of times "
                "faster than on the 560 Ti, so the totals are in milliseconds.")
    lab.changed("Their cluster scattered and gathered every byte through rank 0 over 1 Gbit Ethernet; "
                "our ranks read and write their own byte ranges of one file with MPI-IO, so only the "
                "header and the key cross the communicator.")


def _beyond_gpu_memory(lab, key: bytes) -> None:
    if not lab.gpu:
        lab.skip("data larger than GPU memory", "no GPU")
        return
    gpu_bytes = next((d["memory_bytes"] for d in gpucrypt.devices() if d["name"] == lab.gpu), 0)
    available = meminfo_bytes("MemAvailable") or 0
    data_len = int(gpu_bytes * 1.05) // MIB * MIB
    if lab.quick or not gpu_bytes or 2 * data_len + 4 * (1 << 30) > available:
        lab.skip("data larger than GPU memory", f"needs twice {human_bytes(data_len)} of host memory "
                 f"(GPU memory {gpu_bytes / 2**30:.0f} GiB; host has {available / 2**30:.0f} GiB available)"
                 if not lab.quick else "not in a quick run")
        return
    data = bytearray(data_len)
    result = _overlapped(lab.gpu, data, data, 32 * MIB, key)
    lab.record("data larger than GPU memory", timed="stream.transform_into in place, 32 MiB jobs (wall)",
               device=lab.gpu, variant=result["variant"], samples=[result["total_s"]], algorithm=NAME, bytes=data_len)
    lab.table("larger than GPU memory", ["data", "seconds", "GB/s"],
              [[human_bytes(data_len), result["total_s"], data_len / result["total_s"] / 1e9]])


def _cluster(lab, device: str) -> None:
    """Their cluster table for ours: `mpirun -n N gpucrypt encrypt --mpi` on this machine's
    ranks (every rank reads and writes its own part with MPI-IO; nothing passes through rank 0),
    each stage the slowest rank's seconds. More nodes are measured when lent (docs/mpi.md)."""
    part = "cluster table (read / H2D / encrypt / D2H / write / communication per rank count)"
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        lab.skip(part, "mpirun is not installed (Open MPI: apt-get install openmpi-bin)")
        return
    try:
        import mpi4py  # noqa: F401  (the ranks need it)
    except ImportError:
        lab.skip(part, "mpi4py is not installed (pip install 'gpucrypt[mpi]')")
        return
    data_len = 8 * MIB if lab.quick else 1 << 30
    rank_counts = (1, 2) if lab.quick else (1, 2, 4)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               PYTHONPATH=os.pathsep.join(filter(None, (os.path.dirname(os.path.dirname(gpucrypt.__file__)),
                                                        os.environ.get("PYTHONPATH")))))
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpucrypt-lab-mpi-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as work:
        plain, key = os.path.join(work, "plain"), os.path.join(work, "key")
        with open(plain, "wb") as out:
            out.write(random_bytes(data_len))
        with open(key, "wb") as out:
            out.write(os.urandom(32))
        for num_ranks in rank_counts:
            stats_path = os.path.join(work, f"stats-{num_ranks}.json")
            command = [mpirun, "--oversubscribe", "-n", str(num_ranks), sys.executable, "-m", "gpucrypt", "encrypt",
                       plain, "-o", os.path.join(work, "sealed"), "--force", "--key-file", key, "--device", device,
                       "--mpi", "--stats-json", stats_path]
            start = time.perf_counter()
            result = subprocess.run(command, capture_output=True, env=env, timeout=600)
            wall = time.perf_counter() - start
            if result.returncode != 0:
                lab.skip(f"{part}: {num_ranks} ranks", "failed: " + result.stderr.decode(errors="replace").strip()[:300])
                continue
            with open(stats_path) as stats_file:
                summary = json.load(stats_file)
            slowest = {stage: max(record[stage] for record in summary["ranks"]) for stage in RANK_STAGES}
            lab.record("mpirun encrypt --mpi", timed="wall clock of mpirun (process start included); stages: "
                       "the slowest rank's seconds from --stats-json", device=device, variant="aes_gcm (file format)",
                       samples=[wall], ranks=num_ranks, bytes=data_len, stages=slowest,
                       engine_wall_s=summary["wall_s"])
            rows.append([num_ranks, human_bytes(data_len), wall, summary["wall_s"]]
                        + [slowest[stage] for stage in RANK_STAGES])
    if rows:
        lab.table("cluster table: mpirun -n N gpucrypt encrypt --mpi on this machine (seconds; stages: slowest rank)",
                  ["ranks", "data", "mpirun wall", "job wall"] + [stage[:-2] for stage in RANK_STAGES], rows)
