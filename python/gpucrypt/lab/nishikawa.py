"""Nishikawa et al.: ECB throughput per cipher and variant with launch shapes, power efficiency
from energy counters (the micro-benchmark is in microbench.py)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from gpucrypt import _native, info
from gpucrypt.lab import calls, papers, plots
from gpucrypt.lab.framework import KIB, MIB, experiment, rate_spread, spread
from gpucrypt.lab.sensors import Nvml, rapl_delta_joules, rapl_energy_joules, rapl_packages
from gpucrypt.lab.worker import run_timing

CIPHERS = ("aes", "camellia", "sc2000")
KEY_BITS = (128, 192, 256)
GPU_BYTES = 256 * MIB
LAUNCH_POLICIES = ("sm90", "default")   # GPUCRYPT_CUDA_LAUNCH_POLICY values (src/backends/cuda/device.cu)
# What each energy counter covers; the paper measured the whole machine at the wall.
# Keyed by info.is_gpu(device): NVML reads the GPU of lab.gpu, RAPL the host's CPU.
METERS = {True: "GPU board (NVML)", False: "CPU package (RAPL)"}
METER_NOTE = "ours: GPU board (NVML) or CPU package (RAPL); paper: whole machine (every supply line)"


def variant_names(algorithm: str, device: str) -> list:
    # ECB throughput: variants made for one other mode (aes_vaes_gcm) have nothing to time here.
    return [v["name"] for v in info.device_variants(device, algorithm) if v.get("only_mode") in (None, "ecb")]


def _kind(device: str) -> str:
    """The backend of ``device`` as the library names it: the plots' and the verdict's label."""
    return _native.parse_device_name(device)[0]


def shape_sweep_binary():
    """The CUDA launch-shape sweep built by scripts/gpu-check, if this checkout has one."""
    candidates = [os.environ.get("GPUCRYPT_LAB_SHAPE_SWEEP", ""),
                  "build/gpu-check/bench-build/gpucrypt_shape_sweep"]
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def _timed_case(name, device, num_bytes, variant, resident, reps, drop, budget_s):
    case = calls.cipher_case(name, device, num_bytes, variant, resident)
    return case, case.samples(reps, drop, budget_s)


@experiment("nishikawa-throughput", "nishikawa",
            "ECB throughput per cipher, key size and variant (T_enc); launch shapes")
def throughput(lab):
    reps, drop = (12, 2) if lab.quick else (100, 10)
    cpu_bytes = 256 * KIB if lab.quick else 2 * MIB
    measured = {}   # (device kind, variant) -> {cipher-bits: gbps}
    spreads = {}    # (device kind, variant) -> {cipher-bits: (low, high) Gbps}
    rows = []
    for algorithm in CIPHERS:
        for bits in KEY_BITS:
            name = f"{algorithm}-{bits}-ecb"
            targets = [("cpu", v, cpu_bytes, False) for v in variant_names(algorithm, "cpu")]   # the paper's CPU baseline
            if lab.gpu and calls.cupy_module():
                targets += [(lab.gpu, v, GPU_BYTES, True) for v in variant_names(algorithm, lab.gpu)]
            for device, variant, num_bytes, resident in targets:
                timed = lab.attempt(f"{name} {variant} on {device}", _timed_case, name, device, num_bytes, variant,
                                    resident, reps, drop, None if resident else (1.0 if lab.quick else 2.0))
                if timed is None:
                    continue
                case, samples = timed
                entry = lab.record("T_enc", timed=case.timed, device=case.device, variant=case.variant,
                                   samples=samples, statistic="mean", dropped=drop, algorithm=name,
                                   bytes=num_bytes)
                entry["gbps"] = num_bytes * 8 / entry["value"] / 1e9
                measured.setdefault((_kind(case.device), case.variant), {})[f"{algorithm}-{bits}"] = entry["gbps"]
                spreads.setdefault((_kind(case.device), case.variant), {})[f"{algorithm}-{bits}"] = \
                    rate_spread(num_bytes, samples)
                rows.append([name, case.device, case.variant, entry["gbps"], len(samples)])
                lab.log(f"  {name:18s} {case.device:7s} {case.variant:22s} {entry['gbps']:9.2f} Gbps")
    if lab.require_gpu("GPU kernels (T_enc) and launch shapes") and not calls.cupy_module():
        lab.skip("GPU kernels (T_enc) and launch shapes", "CuPy is not installed (needed for GPU-resident data)")
    if lab.kernel_timer:   # the paper's own API: OpenCL, whose devices time their own kernels
        lab.attempt(f"OpenCL kernels on {lab.kernel_timer}", kernel_timer_throughput, lab, measured, spreads, rows)
    lab.table("T_enc, Gbps (mean of the kept runs)", ["cipher", "device", "variant", "Gbps", "runs"], rows)

    # Colours by backend, as the plot's title names them (a backend not listed here: grey).
    colour = {"cpu": "tab:blue", "cuda": "tab:green", "opencl": "tab:purple"}
    bars = [(f"{group} {dev}:{var}", vals[group], colour.get(dev, "tab:grey"), spreads[(dev, var)][group])
            for group in (f"{a}-{b}" for a in CIPHERS for b in KEY_BITS)
            for (dev, var), vals in measured.items() if group in vals]
    plots.bars(lab.plot_path("variants"), "ECB T_enc per cipher, key size and variant (CPU blue, CUDA green, OpenCL purple)",
               [b[0] for b in bars], [b[1] for b in bars], "Gbps (log)", logy=True, colors=[b[2] for b in bars],
               spreads=[b[3] for b in bars])
    ours = sorted(((f"ours {dev}:{var}", vals["aes-128"], spreads[(dev, var)]["aes-128"])
                   for (dev, var), vals in measured.items() if "aes-128" in vals), key=lambda item: -item[1])
    theirs = [(f"paper {label}", value, None) for label, value in papers.AES128_TENC_GBPS]
    labels, values, whiskers = zip(*(ours + theirs))
    plots.bars(lab.plot_path("aes128-vs-paper"), "AES-128 ECB T_enc: this machine and the paper's devices (grey)",
               list(labels), list(values), "Gbps (log)", logy=True,
               colors=["tab:blue"] * len(ours) + ["tab:grey"] * len(theirs), spreads=list(whiskers))
    fastest = max(ours, key=lambda item: item[1]) if ours else None
    lab.verdict(paper="T_enc (kernel only, transfers ignored) of AES-128 ECB: 205 Gbps on an HD 7970, 63.9 on a GTX 680, "
                      "8.3 on a 6-core Phenom II; Camellia and SC2000 alongside",
                here="T_enc of AES, Camellia and SC2000 in ECB, every key size and variant, on "
                     + ", ".join(sorted({d for d, _ in measured})) + " (GPU: device-resident data, events around the "
                     "kernel; CPU: wall clock on host data)",
                same="yes on a GPU (kernel time, 100 runs, first 10 dropped, mean); the CPU figure includes no "
                     "transfers either",
                conclusion=(f"fastest AES-128: {fastest[0][5:]} at {fastest[1]:.4g} Gbps, "
                            f"{fastest[1] / 205.0:.2g}x the HD 7970's 205 Gbps") if fastest else "nothing measured")

    if lab.gpu and calls.cupy_module():
        lab.attempt("launch policies", launch_policies, lab, reps=10 if lab.quick else 20)
        lab.attempt("kernel launch-shape sweep", shape_sweep, lab)
    lab.changed("Device-resident data timed with CUDA events through the device-pointer API "
                "replaces OpenCL kernel profiling; every variant of each cipher is measured, "
                "including constant-time bitsliced AES the paper did not have.")
    lab.changed("The paper tuned (work-groups, work-items) per GPU by hand; here each variant "
                "runs under both launch-policy structs (sm90 and default) and, where the CUDA "
                "benchmarks are built, the shape sweep behind launch_policy.hpp.")


def kernel_timer_throughput(lab, measured: dict, spreads: dict, rows: list) -> None:
    """T_enc of every cipher and key size on the OpenCL device of --device (the paper's own API):
    OpenCL profiling events around the kernel on device-resident data, checked against the CPU."""
    device = lab.kernel_timer
    num_bytes = 1 * MIB if lab.quick else GPU_BYTES
    reps = 12 if lab.quick else 100
    drop = 2 if lab.quick else 10
    for algorithm in CIPHERS:
        for bits in KEY_BITS:
            name = f"{algorithm}-{bits}-ecb"
            timing = _native.time_kernel(name, "", device, num_bytes, reps)
            if timing["mismatched_blocks"]:
                raise RuntimeError(f"{name} on {device}: {timing['mismatched_blocks']} blocks wrong")
            samples = list(timing["seconds"])[drop:] or list(timing["seconds"])
            entry = lab.record("T_enc", timed=calls.OPENCL_EVENTS, device=device, variant=timing["variant"],
                               samples=samples, statistic="mean", dropped=drop, algorithm=name, bytes=num_bytes)
            entry["gbps"] = num_bytes * 8 / entry["value"] / 1e9
            measured.setdefault((_kind(device), timing["variant"]), {})[f"{algorithm}-{bits}"] = entry["gbps"]
            spreads.setdefault((_kind(device), timing["variant"]), {})[f"{algorithm}-{bits}"] = rate_spread(num_bytes, samples)
            rows.append([name, device, timing["variant"], entry["gbps"], len(samples)])
            lab.log(f"  {name:18s} {device:7s} {timing['variant']:22s} {entry['gbps']:9.2f} Gbps")


def launch_policies(lab, reps: int) -> None:
    """Every CUDA variant under each launch policy (a fresh process each: the policy is read once)."""
    cases = [{"name": f"{a}-128-ecb", "variant": v, "device": lab.gpu, "sizes": [GPU_BYTES], "resident": True}
             for a in CIPHERS for v in variant_names(a, lab.gpu)]
    by_policy, policy_spreads = {}, {}
    for policy in LAUNCH_POLICIES:
        for result in run_timing({"cases": cases, "reps": reps, "drop": 2}, {"GPUCRYPT_CUDA_LAUNCH_POLICY": policy}):
            if "error" in result:
                lab.skip(f"{result['variant']} under the {policy} policy", result["error"])
                continue
            entry = lab.record("T_enc under a launch policy", timed=result["timed"], device=result["device"],
                               variant=result["variant"], samples=result["samples"], dropped=2,
                               algorithm=result["name"], bytes=result["bytes"], launch_policy=policy)
            entry["gbps"] = result["bytes"] * 8 / entry["value"] / 1e9
            by_policy.setdefault(policy, {})[result["variant"]] = entry["gbps"]
            policy_spreads.setdefault(policy, {})[result["variant"]] = rate_spread(result["bytes"], result["samples"])
    variants = sorted({v for values in by_policy.values() for v in values})
    plots.grouped_bars(lab.plot_path("launch-policies"), "ECB 128-bit per variant under each launch policy",
                       variants, {p: [by_policy[p].get(v) for v in variants] for p in by_policy}, "Gbps",
                       spreads={p: [policy_spreads[p].get(v) for v in variants] for p in by_policy})
    lab.table("launch policies, Gbps", ["variant", *by_policy],
              [[v, *[by_policy[p].get(v) for p in by_policy]] for v in variants])


def shape_sweep(lab) -> None:
    """bench/shape_sweep.cu (aes_ttable_smem32 kernels under each launch shape), when it is built."""
    binary = shape_sweep_binary()
    if binary is None:
        lab.skip("kernel launch-shape sweep", "bench/shape_sweep.cu is not built here "
                 "(scripts/gpu-check builds it; GPUCRYPT_LAB_SHAPE_SWEEP names another build)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        json_path = Path(tmp) / "sweep.json"
        subprocess.run([binary, "--json", str(json_path), "--reps", "10"], check=True,
                       capture_output=True, timeout=300)
        sweep = json.loads(json_path.read_text())
    ctr = [r for r in sweep["results"] if r["kernel"] == "ctr"]
    for r in sweep["results"]:
        lab.record("kernel under a launch shape", timed=sweep["statistic"], device=lab.gpu,
                   variant="aes_ttable_smem32", samples=[r["median_ms"] / 1e3], statistic="median",
                   algorithm=f"{r['cipher']} {r['kernel']}", bytes=r["bytes"], launch_shape=r["policy"],
                   deployed=r["deployed"], gbps=r["gb_per_s"] * 8, note="median of the sweep's runs")
    plots.bars(lab.plot_path("ctr-shapes"), "AES-128-CTR kernel per launch shape (shape_sweep)",
               [r["policy"].split(";")[0] + (" *" if r["deployed"] else "") for r in ctr],
               [r["gb_per_s"] * 8 for r in ctr], "Gbps",
               note="the sweep's median per shape (bench/shape_sweep.cu reports no spread)")


# ---- power --------------------------------------------------------------------------------------

def _steady(call, seconds: float, warm_s: float, energy, sync) -> dict:
    """Runs ``call`` back to back for ``warm_s`` then ``seconds``, reading ``energy()`` (joules)
    about once a second; returns calls, elapsed seconds, joules and per-second watts."""
    deadline = time.perf_counter() + warm_s
    while time.perf_counter() < deadline:
        call()
    sync()
    t0, e0 = time.perf_counter(), energy()
    last_t, last_e, watts, num_calls = t0, e0, [], 0
    while True:
        call()
        num_calls += 1
        now = time.perf_counter()
        if now - last_t >= 1.0 or now - t0 >= seconds:
            sync()
            now, e = time.perf_counter(), energy()
            watts.append((e - last_e) / (now - last_t))
            last_t, last_e = now, e
            if now - t0 >= seconds:
                return {"calls": num_calls, "seconds": now - t0, "joules": e - e0, "watts": watts}


def _idle(seconds: float, energy) -> dict:
    return _steady(lambda: time.sleep(0.05), seconds, 0.0, energy, lambda: None)


def _power_rows(lab, where: str, cases: dict, energy, sync, seconds: float, warm_s: float) -> list:
    idle = _idle(seconds, energy)
    p_idle = idle["joules"] / idle["seconds"]
    lab.record("P_idle", timed=f"{where} energy counter over an idle window", device=where, variant=None,
               samples=idle["watts"], statistic="mean", unit="W", window_s=idle["seconds"])
    rows = []
    for label, case in cases.items():
        run = _steady(case.call, seconds, warm_s, energy, sync)
        p_enc = run["joules"] / run["seconds"]
        t_enc = case.num_bytes * run["calls"] * 8 / run["seconds"] / 1e9
        p_diff = p_enc - p_idle
        entry = lab.record("P_enc", timed=f"{where} energy counter over {run['seconds']:.1f} s of back-to-back "
                           f"calls after {warm_s:.0f} s of warm-up; " + case.timed, device=case.device,
                           variant=case.variant, samples=run["watts"], statistic="mean", unit="W",
                           algorithm=label, window_s=run["seconds"], calls=run["calls"], bytes=case.num_bytes,
                           t_enc_gbps=t_enc, p_idle_w=p_idle, p_diff_w=p_diff,
                           p_eff_gbps_per_w=t_enc / p_diff if p_diff > 0 else None)
        rows.append([label, METERS[info.is_gpu(where)], case.variant, t_enc, p_idle, p_enc, p_diff,
                     entry["p_eff_gbps_per_w"]])
        entry["p_eff_spread"] = [t_enc / (w - p_idle) if w > p_idle else None for w in run["watts"]]
        lab.log(f"  {label} {where}: {t_enc:.1f} Gbps, P_enc {p_enc:.0f} W, P_diff {p_diff:.0f} W")
    return rows


@experiment("nishikawa-power", "nishikawa", "P_idle, P_enc, P_diff and P_eff (Gbps/W) from energy counters")
def power(lab):
    seconds, warm_s = (2.0, 0.5) if lab.quick else (10.0, 2.0)
    rows = []
    if lab.require_gpu("GPU power (NVML energy counter)"):
        nvml, reason = Nvml.open(calls.device_index(lab.gpu))
        cupy = calls.cupy_module()
        if nvml is None or cupy is None:
            lab.skip("GPU power (NVML energy counter)", reason or "CuPy is not installed")
        else:
            cases = {f"{a}-128-ecb": calls.cipher_case(f"{a}-128-ecb", lab.gpu, GPU_BYTES, resident=True)
                     for a in CIPHERS}
            with cupy.cuda.Device(calls.device_index(lab.gpu)) as device:
                rows += lab.attempt("GPU power", _power_rows, lab, lab.gpu, cases, nvml.energy_joules,
                                    device.synchronize, seconds, warm_s) or []
    zones = rapl_packages()
    if not zones:
        lab.skip("CPU power (RAPL package energy)", "no readable /sys/class/powercap/intel-rapl package "
                 "zone (virtual machines and containers often hide it; reading may need root)")
    else:
        cpu_bytes = 1 * MIB if lab.quick else 16 * MIB
        cases = {f"{a}-128-ecb": calls.cipher_case(f"{a}-128-ecb", "cpu", cpu_bytes) for a in CIPHERS}
        start = rapl_energy_joules(zones)
        rows += _power_rows(lab, "cpu", cases, lambda: rapl_delta_joules(zones, start, rapl_energy_joules(zones)),
                            lambda: None, seconds, warm_s)
    if not rows:
        return
    lab.table("power, this machine", ["cipher", "meter", "variant", "T_enc Gbps", "P_idle W", "P_enc W",
                                      "P_diff W", "P_eff Gbps/W"], rows)
    paper_rows = papers.FIGURES["nishikawa-power"][1]["rows"]
    labels = [f"{r[0]}, {r[1]}" for r in rows] + [f"paper {r[0]} AES-128, whole machine" for r in paper_rows]
    values = [r[7] or 0 for r in rows] + [r[1] for r in paper_rows]
    whiskers = []
    for entry in (m for m in lab.records if m["what"] == "P_enc"):
        per_second = [x for x in entry.get("p_eff_spread", []) if x]
        whiskers.append(spread(per_second) if per_second else None)
    plots.bars(lab.plot_path("p-eff"), "P_eff, Gbps per watt above idle (log): ours board / package only, "
               "the paper's whole machine (grey)", labels, values, "Gbps/W", logy=True,
               colors=["tab:blue"] * len(rows) + ["tab:grey"] * (len(labels) - len(rows)),
               spreads=whiskers + [None] * len(paper_rows),
               note="whiskers: spread of the per-second P_eff over the window; " + METER_NOTE)
    best = max(rows, key=lambda r: r[7] or 0)
    lab.verdict(paper="P_eff = T_enc / (P_enc - P_idle) with whole-machine power from every supply line: AES-128 "
                      "1.3 Gbps/W on an HD 7970, 0.43 on a GTX 680, 0.07 on a Phenom II",
                here="the same ratio with " + " and ".join(sorted({r[1] for r in rows})) + " energy counters over "
                     f"{seconds:.0f} s windows",
                same="no: ours is the GPU board (NVML) or the CPU package (RAPL) alone, theirs the whole machine "
                     "(fans, PSU losses, the host CPU driving the GPU), so ours is higher for the same work",
                conclusion=f"best: {best[0]} on the {best[1]}, {best[7]:.3g} Gbps/W" if best[7] else "no positive P_diff")
    lab.changed("NVML's energy counter for the GPU board (and RAPL for the CPU package) replaces an "
                "oscilloscope on every supply line: P_diff here excludes the rest of the machine "
                "(fans, PSU losses, the host CPU driving the GPU), so it is lower than a wall meter's.")

