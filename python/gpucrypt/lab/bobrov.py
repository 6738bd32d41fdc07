"""Bobrov et al.: what offloading AES-CTR and Keccak saves the CPU, and how CPU and GPU loads
from other processes slow it down."""

from __future__ import annotations

import contextlib
import os
import statistics
import time

import gpucrypt
from gpucrypt.lab import calls, plots
from gpucrypt.lab.framework import KIB, MIB, experiment, human_bytes, random_bytes
from gpucrypt.lab.sensors import Nvml, Sampler, cpu_busy_fraction, cpu_times
from gpucrypt.lab.worker import Loads

AES_CASES = ("aes-128-ctr", "aes-192-ctr", "aes-256-ctr")
KECCAK_CASES = ("keccak-224", "keccak-256", "keccak-384", "keccak-512")
TIMED_SPLIT = ("gpucrypt.Batch with one request: t_Total = wall clock of run() (staging, copies, "
               "kernel), t_GPU = the executor's compute time (kernel), t_CPU = t_Total - t_GPU")
TIMED_CPU = "wall clock of one call on the CPU backend (all cores): t_NoGPU"


def sizes_for(name: str, quick: bool) -> list:
    if quick:
        return [1 * KIB << (2 * i) for i in range(6)]              # 1 KiB .. 1 MiB
    # One Keccak message is one sponge, hashed by one GPU thread (about a second per 16 MiB):
    # past 4 MiB it only gets slower.
    top = 4 * MIB if name.startswith("keccak") else 1 << 30
    return [s for s in (1 * KIB << (2 * i) for i in range(11)) if s <= top]


def _batch_call(name: str, device: str, data: bytes):
    key, iv = (os.urandom(calls.key_len(name)), os.urandom(16)) if not name.startswith("keccak") else (None, None)

    def run():
        batch = gpucrypt.Batch(device=device)
        if key is None:
            batch.add_hash(name, data)
        else:
            batch.add(name, key, data, iv=iv)
        t0 = time.perf_counter()
        batch.run()
        elapsed = time.perf_counter() - t0
        return elapsed, batch.stats["compute_s"], next(iter(batch.stats["variants"].values()), None)
    return run


def _cpu_call(name: str, data: bytes):
    """(the call, its variant) on the CPU backend."""
    if name.startswith("keccak"):
        return (lambda: gpucrypt.hash(name, data, device="cpu")), gpucrypt.new(name).variant
    iv = os.urandom(16)
    cipher = gpucrypt.Cipher(name, os.urandom(calls.key_len(name)), iv=iv, device="cpu")
    # The same IV every repetition, named explicitly: a benchmark may reuse a keystream.
    return (lambda: cipher.encrypt(data, iv=iv)), cipher.variant


def time_offload(lab, name: str, num_bytes: int, device: str, budget_s: float, condition: str = "none",
                 with_cpu: bool = True) -> dict:
    """Medians of t_Total and t_GPU on ``device`` (and t_NoGPU on the CPU); records raw samples."""
    data = random_bytes(num_bytes)
    run = _batch_call(name, device, data)
    run()   # warm-up: device context, staging buffers
    totals, kernels = [], []
    start = time.perf_counter()
    while len(totals) < 3 or (time.perf_counter() - start < budget_s and len(totals) < 1000):
        total, kernel, variant = run()
        totals.append(total)
        kernels.append(kernel)
    common = dict(algorithm=name, bytes=num_bytes, load=condition)
    lab.record("t_Total", timed=TIMED_SPLIT, device=device, variant=variant, samples=totals, **common)
    lab.record("t_GPU", timed=TIMED_SPLIT, device=device, variant=variant, samples=kernels, **common)
    result = {"t_total": statistics.median(totals), "t_gpu": statistics.median(kernels)}
    if with_cpu:
        cpu, cpu_variant = _cpu_call(name, data)
        cpu()
        entry = lab.measure("t_NoGPU", cpu, timed=TIMED_CPU, device="cpu", variant=cpu_variant, reps=1000,
                            budget_s=budget_s, **common)
        result["t_nogpu"] = entry["value"]
    return result


@experiment("bobrov-offload", "bobrov", "t_Total, t_GPU, t_CPU and t_Saved vs t_NoGPU, AES-CTR and Keccak")
def offload(lab):
    budget = 0.1 if lab.quick else 0.2
    device = lab.gpu
    if not lab.require_gpu("offloaded runs (t_Total, t_GPU, t_CPU, t_Saved)"):
        device = None
    rows, saved, nogpu = [], {}, {}
    for name in AES_CASES + KECCAK_CASES:
        for num_bytes in sizes_for(name, lab.quick):
            if device:
                r = lab.attempt(f"{name} {human_bytes(num_bytes)} offloaded", time_offload, lab, name, num_bytes,
                                device, budget)
                if r is None:
                    continue
                t_cpu = max(0.0, r["t_total"] - r["t_gpu"])
                t_saved = (r["t_nogpu"] - t_cpu) / r["t_nogpu"]
                saved.setdefault(name, ([], []))
                saved[name][0].append(num_bytes)
                saved[name][1].append(100 * t_saved)
                rows.append([name, human_bytes(num_bytes), r["t_nogpu"], r["t_total"], r["t_gpu"], t_cpu,
                             f"{100 * t_saved:.0f}%"])
            else:
                cpu, cpu_variant = _cpu_call(name, random_bytes(num_bytes))
                cpu()
                entry = lab.measure("t_NoGPU", cpu, timed=TIMED_CPU, device="cpu", variant=cpu_variant, reps=1000,
                                    budget_s=budget, algorithm=name, bytes=num_bytes, load="none")
                r = {"t_nogpu": entry["value"]}
                rows.append([name, human_bytes(num_bytes), r["t_nogpu"]])
            nogpu.setdefault(name, ([], []))
            nogpu[name][0].append(num_bytes)
            nogpu[name][1].append(r["t_nogpu"] * 1e3)
        lab.log(f"  {name}: {len(sizes_for(name, lab.quick))} sizes")
    columns = ["algorithm", "dataset", "t_NoGPU", "t_Total", "t_GPU", "t_CPU", "t_Saved"]
    lab.table("seconds (medians)", columns if device else columns[:3], rows)
    if saved:
        plots.lines(lab.plot_path("t-saved"), "CPU time saved by offloading (their Figs. 9 and 10)", saved,
                    "dataset bytes", "t_Saved, %", hline=0)
    plots.lines(lab.plot_path("t-nogpu"), "t_NoGPU: the CPU alone", nogpu, "dataset bytes", "ms", logy=True)
    lab.changed("t_GPU is the batch executor's own kernel time and t_Total the wall clock of the "
                "call, so t_CPU includes staging copies into page-locked memory and Python, the "
                "work a caller's CPU really does; t_NoGPU is OpenSSL on all cores (AES-NI, SHA-3), "
                "where the paper's CPU ran a portable implementation.")
    lab.changed("Keccak hashes one dataset as one sponge, which no GPU can split: one thread hashes "
                "it, so Keccak sizes stop at 4 MiB.")


LOAD_CASES = ("aes-256-ctr", "keccak-512")
CPU_LOADS = (0.2, 0.4, 0.6)
GPU_LOADS = (0.25, 0.5, 0.75)


def _load_sizes(name: str, quick: bool) -> list:
    if quick:
        return [4 * KIB, 64 * KIB, 1 * MIB]
    sizes = [1 * KIB, 32 * KIB, 1 * MIB]
    return sizes + [16 * MIB, 256 * MIB] if name.startswith("aes") else sizes


def _run_condition(lab, label, kind, duty, device, nvml, budget, window) -> tuple:
    """Times the load cases with the load ``kind`` at ``duty`` running (none when kind is None);
    returns ({(name, bytes): medians}, [achieved loads in %])."""
    utilization = nvml.utilization if nvml else (lambda: 0.0)
    with (Loads(kind, duty, calls.cuda_index(lab.gpu or "cuda:0")) if kind else contextlib.nullcontext()):
        time.sleep(0.2 if lab.quick else 0.5)   # the load settles into its duty cycle
        before = cpu_times()
        with Sampler(utilization) as gpu_alone:
            time.sleep(window)
        load_alone = cpu_busy_fraction(before, cpu_times())
        before = cpu_times()
        results = {}
        with Sampler(utilization) as gpu_during:
            for name in LOAD_CASES:
                for num_bytes in _load_sizes(name, lab.quick):
                    r = lab.attempt(f"{name} {human_bytes(num_bytes)} under {label}", time_offload, lab,
                                    name, num_bytes, device, budget, label, with_cpu=False)
                    if r is not None:
                        results[(name, num_bytes)] = r
        during = cpu_busy_fraction(before, cpu_times())
    achieved = [100 * (load_alone or 0), 100 * (during or 0), gpu_alone.mean() if nvml else None,
                gpu_during.mean() if nvml else None]
    lab.record("achieved load", timed=f"/proc/stat busy share over {window:.1f} s with only the load running, "
               "and during the runs; NVML utilisation sampled every 0.2 s", device=device, variant=None,
               samples=[achieved[0]], unit="%", load=label, cpu_busy_during_runs_percent=achieved[1],
               gpu_utilization_percent=achieved[2], gpu_utilization_during_runs_percent=achieved[3])
    return results, ["" if a is None else a for a in achieved]


@experiment("bobrov-load", "bobrov", "degradation under CPU load 20/40/60% and GPU load 25/50/75%")
def load(lab):
    device = lab.gpu or "cpu"
    budget, window = (0.1, 0.5) if lab.quick else (0.3, 1.0)
    nvml = None
    conditions = [("none", None, 0.0)] + [(f"cpu {int(d * 100)}%", "cpu", d) for d in CPU_LOADS]
    if lab.require_gpu("GPU loads 25/50/75%"):
        nvml, reason = Nvml.open(calls.cuda_index(lab.gpu))
        if nvml is None:
            lab.skip("GPU loads (achieved utilisation)", reason)
        if calls.cupy_module() is None:
            lab.skip("GPU loads 25/50/75%", "CuPy is not installed (the load kernel is a CuPy RawKernel)")
        else:
            conditions += [(f"gpu {int(d * 100)}%", "gpu", d) for d in GPU_LOADS]
    if device == "cpu":
        lab.changed("Without a GPU the same runs happen on the CPU backend: the degradation shown is "
                    "the CPU-only implementation's under CPU load.")
    baseline, rows, achieved_rows = {}, [], []
    degradation = {}
    for label, kind, duty in conditions:
        lab.log(f"  load {label}")
        outcome = lab.attempt(f"load {label}", _run_condition, lab, label, kind, duty, device, nvml, budget, window)
        if outcome is None:
            continue
        results, achieved = outcome
        achieved_rows.append([label, *achieved])
        for (name, num_bytes), r in results.items():
            if label == "none":
                baseline[(name, num_bytes)] = r
                continue
            base = baseline.get((name, num_bytes))
            if base is None:
                continue
            total_pct = 100 * (r["t_total"] / base["t_total"] - 1)
            gpu_pct = 100 * (r["t_gpu"] / base["t_gpu"] - 1) if base["t_gpu"] > 0 else 0.0
            rows.append([name, human_bytes(num_bytes), label, f"{total_pct:+.1f}%", f"{gpu_pct:+.1f}%"])
            series = degradation.setdefault(name, {}).setdefault(label, ([], []))
            series[0].append(num_bytes)
            series[1].append(total_pct)
    lab.table("loads achieved, %", ["load", "CPU busy, load alone", "CPU busy during the runs",
                                    "GPU util, load alone", "GPU util during the runs"], achieved_rows)
    lab.table("increase of the median time over no load", ["algorithm", "dataset", "load", "t_Total",
                                                           "t_GPU (kernel)"], rows)
    for name, series in degradation.items():
        plots.lines(lab.plot_path(f"{name}"), f"{name}: t_Total increase under load (their Figs. 11-14)",
                    series, "dataset bytes", "increase, %", hline=0)
    lab.changed("The loads are processes of this lab: one duty-cycled busy loop per core (100 ms "
                "period) and a clock64() spin kernel in another process (50 ms period); the "
                "achieved loads are measured, not assumed, and the table shows both.")
