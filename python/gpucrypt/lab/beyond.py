"""Beyond the papers: constant-time against table variants, GCM and XTS against CTR, the GPU
against the CPU of the same host for every algorithm, and several GPUs."""

from __future__ import annotations

import os
import threading
import time

import gpucrypt
from gpucrypt import info
from gpucrypt.hashing import device_hash_variant
from gpucrypt.lab import calls, plots
from gpucrypt.lab.framework import KIB, MIB, experiment, rate_spread

GPU_BYTES = 256 * MIB
ALGORITHMS = ("aes-128-ctr", "aes-256-ctr", "aes-256-gcm", "aes-256-xts", "camellia-128-ctr",
              "sc2000-128-ctr", "sha3-256", "shake128")
HASH_MESSAGE = 64 * KIB   # hashes run as many messages (one sponge each) to use every core / thread


def _gbps(entry: dict) -> float:
    return entry["bytes"] * 8 / entry["value"] / 1e9


@experiment("beyond-papers", "beyond", "constant-time vs tables, GCM/XTS vs CTR, GPU vs CPU per algorithm, GPUs")
def beyond(lab):
    host_bytes = 1 * MIB if lab.quick else 16 * MIB
    reps, budget = (10, 0.3) if lab.quick else (20, 1.5)
    resident = bool(lab.gpu) and calls.cupy_module() is not None
    if lab.gpu and not resident:
        lab.skip("GPU-resident runs", "CuPy is not installed")

    def time_case(what, make_case, on_gpu, **params):
        """Builds and times one case; on a GPU a failure skips that case only (lab.attempt)."""
        def run():
            case = make_case()
            entry = lab.record(what, timed=case.timed, device=case.device, variant=case.variant,
                               samples=case.samples(reps, 1, budget), bytes=case.num_bytes, **params)
            entry["gbps"] = _gbps(entry)
            entry["gbps_spread"] = list(rate_spread(entry["bytes"], entry["samples"]))
            return entry
        return lab.attempt(f"{what}: {params.get('algorithm')} {params.get('requested_variant', '')}".strip(), run) if on_gpu else run()

    # ---- constant-time vs table variants (AES-128-CTR) --------------------------------------------
    rows, labels, values, colors, whiskers = [], [], [], [], []
    def ctr_variants(device):  # every variant of its backend that has CTR (aes_vaes_gcm is GCM only)
        return [v for v in info.device_variants(device, "aes") if v.get("only_mode") in (None, "ctr")]
    targets = [("cpu", v["name"], v["constant_time"], host_bytes, False) for v in ctr_variants("cpu")]
    if resident:
        targets += [(lab.gpu, v["name"], v["constant_time"], GPU_BYTES, True) for v in ctr_variants(lab.gpu)]
    for device, variant, constant_time, num_bytes, on_device in targets:
        entry = time_case("AES-128-CTR per variant",
                          lambda: calls.cipher_case("aes-128-ctr", device, num_bytes, variant, on_device),
                          algorithm="aes-128-ctr", constant_time=constant_time, requested_variant=variant, on_gpu=info.is_gpu(device))
        if entry is None:
            continue
        rows.append([device, variant, "yes" if constant_time else "no (tables)", entry["gbps"]])
        labels.append(f"{device.split(':')[0]} {variant}")
        values.append(entry["gbps"])
        whiskers.append(tuple(entry["gbps_spread"]))
        colors.append("tab:green" if constant_time else "tab:red")
    lab.table("AES-128-CTR per variant, Gbps", ["device", "variant", "constant-time", "Gbps"], rows)
    rows_ct = rows
    plots.bars(lab.plot_path("constant-time"), "AES-128-CTR: constant-time (green) vs table (red) variants",
               labels, values, "Gbps (log)", logy=True, colors=colors, spreads=whiskers)
    if not lab.gpu:
        lab.require_gpu("GPU variants")

    # ---- GCM and XTS over CTR ----------------------------------------------------------------------
    rows, series, mode_spreads = [], {}, {}
    devices = [("cpu", host_bytes, False)] + ([(lab.gpu, GPU_BYTES, True)] if resident else [])
    for device, num_bytes, on_device in devices:
        ctr_gbps = None
        for name in ("aes-256-ctr", "aes-256-gcm", "aes-256-xts"):
            entry = time_case("mode cost", lambda: calls.cipher_case(name, device, num_bytes, resident=on_device),
                              algorithm=name, on_gpu=info.is_gpu(device))
            if entry is None:
                series.setdefault(device, []).append(None)
                mode_spreads.setdefault(device, []).append(None)
                continue
            # Time per byte over CTR's, from the rates: the cases need not time the same bytes
            # (an XTS case is one data unit of at most 16 MiB).
            ctr_gbps = ctr_gbps or entry["gbps"]
            rows.append([device, name, entry["variant"], entry["gbps"], ctr_gbps / entry["gbps"]])
            series.setdefault(device, []).append(entry["gbps"])
            mode_spreads.setdefault(device, []).append(tuple(entry["gbps_spread"]))
    lab.table("AES-256 modes, cost relative to CTR", ["device", "mode", "variant", "Gbps", "time / CTR"], rows)
    plots.grouped_bars(lab.plot_path("modes"), "AES-256: CTR, GCM, XTS per device", ["ctr", "gcm", "xts"],
                       series, "Gbps (log)", logy=True, spreads=mode_spreads)

    # ---- the GPU vs the CPU of this host, every algorithm, host data ------------------------------
    rows, per_device, device_spreads = [], {}, {}
    for name in ALGORITHMS:
        row = [name]
        for device in ["cpu"] + ([lab.gpu] if lab.gpu else []):
            num_bytes = GPU_BYTES if info.is_gpu(device) and not lab.quick else host_bytes
            entry = time_case("host data, one call", lambda: _host_case(name, device, num_bytes), algorithm=name,
                              on_gpu=info.is_gpu(device))
            row += [entry["variant"], entry["gbps"]] if entry else ["failed", ""]
            per_device.setdefault(device, []).append(entry["gbps"] if entry else None)
            device_spreads.setdefault(device, []).append(tuple(entry["gbps_spread"]) if entry else None)
        rows.append(row)
    columns = ["algorithm", "CPU variant", "CPU Gbps"] + (["GPU variant", "GPU Gbps (transfers included)"] if lab.gpu else [])
    lab.table("every algorithm on host data (one call; hashes: 64 KiB messages)", columns, rows)
    plots.grouped_bars(lab.plot_path("gpu-vs-cpu"), "host data in, host data out: each device of this machine",
                       list(ALGORITHMS), per_device, "Gbps (log)", logy=True, spreads=device_spreads)
    ct = [r for r in rows_ct if r[2] == "yes"]
    tables = [r for r in rows_ct if r[2] != "yes"]
    lab.verdict(paper="none: the papers did not compare constant-time code, GCM/XTS against CTR, or scaling over GPUs",
                here="AES-128-CTR per variant (constant-time bitsliced vs tables), AES-256 CTR/GCM/XTS, every "
                     "algorithm on host data on each device of this machine",
                same="not applicable: questions of today's hardware",
                conclusion=(f"fastest constant-time {max(ct, key=lambda r: r[3])[1]} "
                            f"{max(r[3] for r in ct):.3g} Gbps vs fastest table {max(tables, key=lambda r: r[3])[1]} "
                            f"{max(r[3] for r in tables):.3g} Gbps") if ct and tables else "see the tables")

    lab.attempt("multi-GPU scaling", _multi_gpu, lab, reps)
    lab.changed("None of the papers compared constant-time code: table lookups indexed by secret "
                "bytes leak through cache and shared-memory timing, and the bitsliced variants "
                "show what avoiding them costs on each device.")


def _host_case(name: str, device: str, num_bytes: int) -> calls.Case:
    if name.startswith(("sha3", "shake")):
        messages = [os.urandom(HASH_MESSAGE)] * (num_bytes // HASH_MESSAGE)
        length = 32 if name.startswith("shake") else None
        variant = device_hash_variant(name, device)
        return calls.Case(lambda: gpucrypt.hash_many(name, messages, length=length, device=device), variant,
                          device, "wall clock of one hash_many call over 64 KiB messages (host data)", False,
                          num_bytes)
    return calls.cipher_case(name, device, num_bytes)


def _multi_gpu(lab, reps: int) -> None:
    # Resident AES-256-CTR on each GPU at once: the GPUs that work on their own memory (CUDA's).
    gpus = [d["name"] for d in gpucrypt.devices() if d["type"] == "gpu" and info.resident_memory(d["name"])]
    if len(gpus) < 2 or calls.cupy_module() is None:
        lab.skip("multi-GPU scaling", f"{len(gpus)} GPU(s) here" if len(gpus) < 2 else "CuPy is not installed")
        return
    cases = {gpu: calls.cipher_case("aes-256-ctr", gpu, GPU_BYTES, resident=True) for gpu in gpus}
    rows = []
    for count in range(1, len(gpus) + 1):
        chosen = gpus[:count]
        barrier = threading.Barrier(count)
        elapsed = {}

        def work(gpu):
            cupy = calls.cupy_module()
            with cupy.cuda.Device(calls.device_index(gpu)) as device:
                cases[gpu].call()
                device.synchronize()
                barrier.wait()
                start = time.perf_counter()
                for _ in range(reps):
                    cases[gpu].call()
                device.synchronize()
                elapsed[gpu] = time.perf_counter() - start

        threads = [threading.Thread(target=work, args=(g,)) for g in chosen]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = max(elapsed.values())
        gbps = count * reps * GPU_BYTES * 8 / seconds / 1e9
        lab.record("device-resident AES-256-CTR on several GPUs", timed="wall clock of reps calls per GPU, "
                   "one host thread per GPU, started together", device=",".join(chosen), variant=None,
                   samples=[seconds], gpus=count, bytes=count * reps * GPU_BYTES, gbps=gbps)
        rows.append([count, gbps])
    lab.table("several GPUs, AES-256-CTR device-resident", ["GPUs", "Gbps"], rows)
    plots.lines(lab.plot_path("gpus"), "scaling over GPUs", {"AES-256-CTR": ([r[0] for r in rows], [r[1] for r in rows])},
                "GPUs", "Gbps", logx=False, note="one timed run per GPU count (reps calls each); no spread")
