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
from gpucrypt import info, stream
from gpucrypt.lab import calls, plots
from gpucrypt.lab.framework import MIB, experiment, human_bytes, random_bytes
from gpucrypt.lab.sensors import meminfo_bytes
from gpucrypt.mpi import STAGES as RANK_STAGES

NAME = "aes-128-ecb"
STAGES = ("h2d_s", "compute_s", "d2h_s")


def _stream_run(device: str, data, out, fragment: int, key: bytes, overlap: bool) -> dict:
    """The stream engine with jobs of one fragment; ``overlap`` False runs one job at a time (depth 1),
    so no fragment's copies overlap another's kernel. The one path of the lab's "with transfers"."""
    stats = stream.StreamStats()
    start = time.perf_counter()
    stream.transform_into(NAME, key, None, data, out, device=device, job_size=fragment, stats=stats,
                          depth=None if overlap else 1)
    record = stats.devices.get(device)
    return {"total_s": time.perf_counter() - start, "variant": record.variant if record else None}


def _batch_stages(device: str, data: memoryview, fragment: int, key: bytes) -> dict:
    """The stage split the stream engine does not report: one fragment after another, each a batch
    of one request, its H2D / kernel / D2H seconds from the batch statistics, summed."""
    sums = dict.fromkeys(STAGES, 0.0)
    start = time.perf_counter()
    for offset in range(0, len(data), fragment):
        batch = gpucrypt.Batch(device=device)
        batch.add(NAME, key, data[offset:offset + fragment], padding=False)
        batch.run()
        for stage in STAGES:
            sums[stage] += batch.stats.get(stage, 0.0)
    sums["total_s"] = time.perf_counter() - start
    return sums


PAPER_TOTALS = {(128 * MIB, 256 * MIB): 0.932, (128 * MIB, 512 * MIB): 1.835, (128 * MIB, 1024 * MIB): 3.65,
                (256 * MIB, 256 * MIB): 0.958, (256 * MIB, 512 * MIB): 1.863, (256 * MIB, 1024 * MIB): 3.67}


@experiment("lidi-fragments", "lidi", "fragments: H2D / kernel / D2H, with and without overlap; beyond GPU memory; MPI ranks")
def fragments(lab):
    device = lab.accelerator or "cpu"
    if lab.quick:
        data_sizes, fragment_sizes = (8 * MIB, 16 * MIB), (1 * MIB, 4 * MIB, 8 * MIB)
    else:
        data_sizes, fragment_sizes = (256 * MIB, 512 * MIB, 1024 * MIB), (128 * MIB, 256 * MIB, 16 * MIB, 32 * MIB)
    if not lab.accelerator:
        lab.changed("Without an accelerator the fragments run on the CPU backend: no copies, so H2D and D2H are 0 "
                    "and the sizes are small.")
    key = os.urandom(16)
    rows, split, stage_rows, stage_split = [], {}, [], {}
    reps = 2 if lab.quick else 3
    for data_len in data_sizes:
        data = stream.page_locked(data_len)
        data[:] = random_bytes(data_len)
        out = stream.page_locked(data_len)
        for fragment in fragment_sizes:
            if fragment > data_len:
                continue
            for overlap in (False, True):
                runs = [_stream_run(device, data, out, fragment, key, overlap) for _ in range(reps + 1)][1:]
                best = min(runs, key=lambda r: r["total_s"])
                label = f"{human_bytes(fragment)} fragments, {'overlapped' if overlap else 'one after another'}"
                entry = lab.record("fragment run", timed="stream.transform_into on page-locked memory, job_size = "
                                   "fragment, " + ("default depth (jobs in flight overlap)" if overlap else
                                                   "depth 1 (one job at a time)") + "; wall; stages summed over jobs",
                                   device=device, variant=best["variant"], samples=[r["total_s"] for r in runs],
                                   statistic="min", algorithm=NAME, bytes=data_len, fragment_bytes=fragment,
                                   overlap=overlap)
                paper = PAPER_TOTALS.get((fragment, data_len)) if not overlap else None
                rows.append([human_bytes(data_len), label, best["total_s"], paper if paper is not None else ""])
                split.setdefault(label, {})[data_len] = dict(best, spread=entry["spread"])
            stages = _batch_stages(device, memoryview(data), fragment, key)
            lab.record("stage split", timed="extra path: one gpucrypt.Batch per fragment, one after another (wall); "
                       "H2D / kernel / D2H from its statistics", device=device, variant=None,
                       samples=[stages["total_s"]], algorithm=NAME, bytes=data_len, fragment_bytes=fragment,
                       h2d_s=stages["h2d_s"], kernel_s=stages["compute_s"], d2h_s=stages["d2h_s"])
            stage_rows.append([human_bytes(data_len), human_bytes(fragment), stages["h2d_s"], stages["compute_s"],
                               stages["d2h_s"], stages["total_s"]])
            stage_split.setdefault(human_bytes(fragment), {})[data_len] = stages
        lab.log(f"  {human_bytes(data_len)} done")
        del data, out
    lab.table("stream engine, seconds (best run), the paper's one-after-another total beside",
              ["data", "fragments", "total", "paper total (560 Ti)"], rows)
    lab.table("extra path for the stage split (the stream engine reports none): one Batch per fragment, seconds",
              ["data", "fragment", "H2D", "kernel", "D2H", "total"], stage_rows)
    labels = list(split)
    plots.grouped_bars(lab.plot_path("totals"), "total seconds per data size and fragment size (stream engine)",
                       labels, {human_bytes(d): [split[l].get(d, {}).get("total_s") for l in labels] for d in data_sizes},
                       "seconds", logy=True,
                       spreads={human_bytes(d): [tuple(split[l][d]["spread"]) if d in split[l] else None for l in labels]
                                for d in data_sizes})
    biggest = data_sizes[-1]
    stage_labels = [f for f in stage_split if biggest in stage_split[f]]
    plots.grouped_bars(lab.plot_path("stages"), f"{human_bytes(biggest)}: time per stage, one Batch per fragment "
                       "(extra path)", stage_labels,
                       {stage: [stage_split[f][biggest][stage] for f in stage_labels] for stage in STAGES},
                       "seconds", note="stage sums of one run (one value per bar; no spread)")
    gains = []
    for fragment in fragment_sizes:
        one = split.get(f"{human_bytes(fragment)} fragments, one after another", {}).get(biggest)
        both = split.get(f"{human_bytes(fragment)} fragments, overlapped", {}).get(biggest)
        if one and both:
            gains.append(f"{human_bytes(fragment)}: {one['total_s'] / both['total_s']:.2f}x")
    lab.verdict(part="fragments and overlap",
                paper="1 GB in 128 MB or 256 MB fragments, each copied in, encrypted and copied out in turn, takes "
                      "3.65 / 3.67 s on a 560 Ti (the kernel 3.26 s of it)",
                here=f"the same sizes through the stream engine on {device} from page-locked memory, one fragment "
                     "per job, one job at a time (depth 1) and with jobs in flight overlapping",
                same="yes for the one-after-another totals (within a fragment the engine still pipelines its 16 MiB "
                     "staging chunks); overlapped is ours; the H2D / kernel / D2H split comes from an extra path "
                     "(one Batch per fragment), since the stream engine does not report stages",
                conclusion=f"overlap gain at {human_bytes(biggest)} on the same path: " + (", ".join(gains) or "not measured"))
    _beyond_gpu_memory(lab, key)
    _cluster(lab, device)
    _scatter_cluster(lab, device)
    lab.changed("Fragments go through the stream engine, the lab's one 'with transfers' path, with the jobs in "
                "flight capped at one (their loop) or left at the engine's default (copies of one fragment "
                "overlap another's kernel); earlier runs compared a Batch per fragment with the stream engine, "
                "two code paths. PCIe 5 and HBM make copies and kernels tens of times faster than on the 560 Ti.")
    lab.changed("Their cluster scattered and gathered every byte through rank 0 over 1 Gbit Ethernet; "
                "`gpucrypt encrypt --mpi` has every rank read and write its own byte ranges of one file "
                "with MPI-IO, so only the header and the key cross the communicator (the first cluster "
                "table). Their design is re-run as such in the second: ranks on network namespaces of "
                "this host, linked at 1 Gbit by tc, rank 0 scattering and gathering every byte.")


MAX_BEYOND_BYTES = 48 << 30


def _beyond_gpu_memory(lab, key: bytes) -> None:
    """More data than the GPU's memory budget, in place through the stream engine. Where the host
    cannot hold 1.25x the GPU's free memory, the budget is capped by holding the rest of the GPU's
    memory in a CuPy allocation (ballast), and the report states the budget."""
    part = "data larger than GPU memory"
    if not lab.gpu:
        lab.skip(part, "needs a CUDA GPU (the budget is capped with a CuPy allocation)")
        return
    cupy = calls.cupy_module()
    if cupy is None:
        lab.skip(part, "CuPy is not installed (it holds the GPU memory outside the budget)")
        return
    if lab.quick:
        lab.skip(part, "not in a quick run")
        return
    with cupy.cuda.Device(calls.device_index(lab.gpu)):
        free, total = cupy.cuda.runtime.memGetInfo()
        host = (meminfo_bytes("MemAvailable") or 0) - 16 * (1 << 30)   # room for everything else
        # The data is 1.25x the budget and at most MAX_BEYOND_BYTES (seconds per run, not minutes).
        budget = min(free, int(min(host, MAX_BEYOND_BYTES) / 1.25)) // MIB * MIB - 512 * MIB
        if budget < 1 << 30:
            lab.skip(part, f"host memory too short even for a 1 GiB budget ({host / 2**30:.0f} GiB available)")
            return
        ballast = cupy.empty(max(0, free - budget), dtype=cupy.uint8) if budget < free else None
        try:
            data_len = int(budget * 1.25) // MIB * MIB
            data = bytearray(data_len)   # cipher speed does not depend on the bytes
            runs = [_stream_run(lab.gpu, data, data, 32 * MIB, key, True) for _ in range(2)]
        finally:
            del ballast
            cupy.get_default_memory_pool().free_all_blocks()   # the pool would keep holding it
    best = min(runs, key=lambda r: r["total_s"])
    capped = budget < free
    note = (f"GPU memory budget capped at {human_bytes(budget)} of {total / 2**30:.0f} GiB (the rest held by a "
            f"CuPy allocation): the host has {host / 2**30:.0f} GiB to spare and a run is kept to "
            f"{human_bytes(MAX_BEYOND_BYTES)}" if capped
            else f"the GPU's whole free memory ({budget / 2**30:.1f} GiB)")
    lab.record(part, timed="stream.transform_into in place, pageable memory, 32 MiB jobs (wall)", device=lab.gpu,
               variant=best["variant"], samples=[r["total_s"] for r in runs], statistic="min", algorithm=NAME,
               bytes=data_len, gpu_budget_bytes=budget, budget_capped=capped)
    lab.table("larger than the GPU memory budget", ["data", "GPU budget", "seconds", "GB/s"],
              [[human_bytes(data_len), note, best["total_s"], data_len / best["total_s"] / 1e9]])
    lab.verdict(part=part, paper="data larger than the GPU's 1 GB is cut into fragments that fit",
                here=f"{human_bytes(data_len)} in place through the stream engine with {note}",
                same="yes: the data does not fit the memory the GPU may use",
                conclusion=f"{data_len / best['total_s'] / 1e9:.1f} GB/s; no size limit but host memory")


CLUSTER_SIZES = {False: (1 << 30, (1, 2, 4)), True: (8 * MIB, (1, 2))}   # by lab.quick: bytes, rank counts


def _mpi_launcher(lab, part: str):
    """(mpirun's path, the environment its ranks need: root allowed, this gpucrypt importable), or
    (None, None) with `part` skipped and why, where mpirun or mpi4py is missing."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        lab.skip(part, "mpirun is not installed (Open MPI: apt-get install openmpi-bin)")
        return None, None
    try:
        import mpi4py  # noqa: F401  (the ranks need it)
    except ImportError:
        lab.skip(part, "mpi4py is not installed (pip install 'gpucrypt[mpi]')")
        return None, None
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               PYTHONPATH=os.pathsep.join(filter(None, (os.path.dirname(os.path.dirname(gpucrypt.__file__)),
                                                        os.environ.get("PYTHONPATH")))))
    return mpirun, env


def _cluster(lab, device: str) -> None:
    """Their cluster table for ours: `mpirun -n N gpucrypt encrypt --mpi` on this machine's
    ranks (every rank reads and writes its own part with MPI-IO; nothing passes through rank 0),
    each stage the slowest rank's seconds. More nodes are measured when lent (docs/mpi.md)."""
    part = "cluster table (read / H2D / encrypt / D2H / write / communication per rank count)"
    mpirun, env = _mpi_launcher(lab, part)
    if mpirun is None:
        return
    data_len, rank_counts = CLUSTER_SIZES[lab.quick]
    rows, per_rank = [], []
    with tempfile.TemporaryDirectory(prefix="gpucrypt-lab-mpi-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as work:
        plain, key = os.path.join(work, "plain"), os.path.join(work, "key")
        with open(plain, "wb") as out:
            out.write(random_bytes(data_len))
        with open(key, "wb") as out:
            out.write(os.urandom(32))
        for num_ranks in rank_counts:
            stats_path = os.path.join(work, f"stats-{num_ranks}.json")
            # --bind-to none: by default Open MPI pins each rank to one core, which would starve the
            # CPU work of every rank (staging copies, the CPU share of the stream engine).
            command = [mpirun, "--oversubscribe", "--bind-to", "none", "-n", str(num_ranks), sys.executable, "-m", "gpucrypt", "encrypt",
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
            for rank in summary["ranks"]:
                io = rank.get("read_s", 0.0) + rank.get("write_s", 0.0)
                compute = rank.get("h2d_s", 0.0) + rank.get("compute_s", 0.0) + rank.get("d2h_s", 0.0)
                per_rank.append([num_ranks, rank.get("rank"), rank.get("comm_s", 0.0), compute, io])
    if rows:
        lab.table("cluster table: mpirun --bind-to none -n N gpucrypt encrypt --mpi on this machine "
                  "(seconds; stages: slowest rank)",
                  ["ranks", "data", "mpirun wall", "job wall"] + [stage[:-2] for stage in RANK_STAGES], rows)
        lab.table("per rank: communication vs compute (H2D + kernel + D2H) vs I/O (read + write), seconds",
                  ["ranks", "rank", "communication", "compute", "I/O"], per_rank)
        dominant = {}
        for r in per_rank:
            dominant[r[0]] = max(zip(("communication", "compute", "I/O"), r[2:]), key=lambda kv: kv[1])[0]
        lab.verdict(part="cluster",
                    paper="4 and 8 GPUs over 1 Gbit Ethernet, rank 0 sending each its share: communication (send + "
                          "receive) takes 94% of the time, so one GPU with fragments beats the cluster",
                    here=f"1..{rank_counts[-1]} ranks of this machine (no network between them: shared memory), each "
                         "reading and writing its own byte range of one file with MPI-IO",
                    same="no: without a network and without scattering the data through rank 0, communication is "
                         "only the header and key; the question it can answer is whether ranks on one host scale",
                    conclusion="the largest share per rank: " + ", ".join(f"{n} rank{'s' if n > 1 else ''}: {d}"
                                                                          for n, d in dominant.items()))


SHAPED_RATE = "1gbit"   # their cluster's Ethernet


def _scatter_cluster(lab, device: str) -> None:
    """Their cluster as they built it: rank 0 reads the data, scatters a share to every rank over
    1 Gbit links, each encrypts its share, rank 0 gathers and writes (scatter_worker.py), with each
    rank on a network namespace of this host whose link tc shapes to their Ethernet's rate
    (shaped_link.py). Every output is checked against the same cipher run in this process."""
    from gpucrypt.lab import shaped_link
    part = "their cluster: rank 0 scatters and gathers over shaped 1 Gbit links"
    mpirun, env = _mpi_launcher(lab, part)
    if mpirun is None:
        return
    data_len, rank_counts = CLUSTER_SIZES[lab.quick]
    # A GPU that "auto" uses: each rank takes its node's (local rank mod auto's GPUs, mpi.py).
    rank_device = "auto" if device in info.auto_gpus() else device
    rows, per_rank, notes = [], [], set()
    with tempfile.TemporaryDirectory(prefix="gpucrypt-lab-scatter-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as work:
        plain, key_path, sealed = (os.path.join(work, name) for name in ("plain", "key", "sealed"))
        data = random_bytes(data_len)
        key = os.urandom(16)
        with open(plain, "wb") as out:
            out.write(data)
        with open(key_path, "wb") as out:
            out.write(key)
        expected = bytearray(data_len)
        stream.transform_into(NAME, key, None, data, expected, device="cpu")
        del data
        for num_ranks in rank_counts:
            stats_path = os.path.join(work, f"stats-{num_ranks}.json")
            try:
                with shaped_link.shaped_cluster(num_ranks, SHAPED_RATE) as link:
                    command = ([mpirun, "--oversubscribe", "--bind-to", "none", "-n", str(num_ranks)] + link["mpirun_args"]
                               + link["wrap"]([sys.executable, "-m", "gpucrypt.lab.scatter_worker", plain, sealed,
                                               key_path, stats_path, rank_device]))
                    start = time.perf_counter()
                    result = subprocess.run(command, capture_output=True, env=dict(env, **link["env"]), timeout=900)
                    wall = time.perf_counter() - start
                    notes.add(link["note"])
            except shaped_link.Unavailable as why:
                lab.skip(part, str(why))
                return
            if result.returncode != 0:
                lab.skip(f"{part}: {num_ranks} ranks", "failed: " + result.stderr.decode(errors="replace").strip()[-300:])
                continue
            with open(sealed, "rb") as got:
                if got.read() != expected:
                    lab.skip(f"{part}: {num_ranks} ranks", "the gathered ciphertext differs from the same cipher "
                             "run in one process: not recorded")
                    continue
            with open(stats_path) as stats_file:
                summary = json.load(stats_file)
            slowest = {stage: max(r[stage] for r in summary["ranks"]) for stage in SCATTER_STAGES}
            comm = slowest["scatter_s"] + slowest["gather_s"]
            share = comm / max(sum(slowest.values()), 1e-12)
            lab.record("scatter cluster", timed="wall clock of mpirun (process start included); stages: the slowest "
                       "rank's seconds between barriers", device=device, variant=NAME, samples=[wall], ranks=num_ranks,
                       bytes=data_len, stages=slowest, link=SHAPED_RATE)
            rows.append([num_ranks, human_bytes(data_len), wall] + [slowest[s] for s in SCATTER_STAGES]
                        + [f"{100 * share:.0f}%"])
            for r in summary["ranks"]:
                per_rank.append([num_ranks, r["rank"], r["device"], r["scatter_s"] + r["gather_s"], r["encrypt_s"],
                                 r["read_s"] + r["write_s"]])
    if not rows:
        return
    note = "; ".join(sorted(notes))
    lab.table(f"their cluster: rank 0 scatters and gathers every byte, {note} (seconds, slowest rank)",
              ["ranks", "data", "mpirun wall", "read", "scatter", "encrypt", "gather", "write", "communication share"],
              rows)
    lab.table("their cluster, per rank: communication (scatter + gather) vs encrypt (with transfers) vs I/O, seconds",
              ["ranks", "rank", "device", "communication", "encrypt", "I/O"], per_rank)
    shares = {row[0]: row[-1] for row in rows}
    lab.verdict(part="their cluster",
                paper="4 and 8 GPUs over 1 Gbit Ethernet, rank 0 sending each its share: communication (send + "
                      "receive) takes 94% of the time, so one GPU with fragments beats the cluster",
                here=f"{', '.join(str(n) for n in rank_counts)} ranks, {note}, rank 0 scattering {human_bytes(data_len)} "
                     "and gathering it back (MPI Scatterv / Gatherv), each rank encrypting its share on "
                     f"{device if device != 'auto' else 'its GPU'} through the stream engine",
                same="yes for the design and the link's rate; the ranks share one host's CPUs and memory, and "
                     "the link is a shaped veth, not a switch",
                conclusion="communication's share of the stages: " + ", ".join(
                    f"{n} rank{'s' if n > 1 else ''}: {s}" for n, s in shares.items()))


SCATTER_STAGES = ("read_s", "scatter_s", "encrypt_s", "gather_s", "write_s")
