"""Gervasi et al. (clAES): AES-192 from 128 B up on a serial CPU, all CPU cores, OpenCL on the
CPU (PoCL) and on the GPU, and the GPU through CUDA, with and without transfers; the ratio curves of their Fig. 6 and the crossover that
``device="auto"`` uses, checked against this measurement."""

from __future__ import annotations

import statistics

from gpucrypt import _native, info
from gpucrypt.lab import calls, plots
from gpucrypt.lab.framework import MIB, experiment, human_bytes
from gpucrypt.lab.worker import run_timing

NAME = "aes-192-ecb"
OPENCL_EVENTS = calls.OPENCL_EVENTS


def _sizes(quick: bool) -> list:
    top = 1 * MIB if quick else 64 * MIB
    sizes, size = [], 128
    while size <= top:
        sizes.append(size)
        size *= 2
    return sizes


@experiment("claes-crossover", "claes", "AES-192: serial CPU, all cores, GPU with and without transfers")
def crossover(lab):
    sizes = _sizes(lab.quick)
    budget = 0.04 if lab.quick else 0.12
    series = {}   # label -> {size: median seconds}
    spreads = {}  # label -> {size: (low, high) seconds}

    def keep(label, device, variant, timed, size, samples):
        entry = lab.record("seconds per call", timed=timed, device=device, variant=variant, samples=samples,
                           algorithm=NAME, bytes=size, series=label)
        series.setdefault(label, {})[size] = entry["value"]
        spreads.setdefault(label, {})[size] = tuple(entry["spread"])

    # One CPU thread needs its own process: the thread pool's size is read once (GPUCRYPT_CPU_THREADS).
    serial = run_timing({"cases": [{"name": NAME, "variant": v, "device": "cpu", "sizes": sizes}
                                   for v in ("aes_ttable", "aes_openssl")],
                         "reps": 200, "drop": 1, "budget_s": budget}, {"GPUCRYPT_CPU_THREADS": "1"})
    for r in serial:
        if "error" in r:
            raise RuntimeError(f"serial CPU timing failed: {r['error']}")
        label = "serial CPU, portable" if r["variant"] == "aes_ttable" else "serial CPU, OpenSSL"
        keep(label, "cpu (1 thread)", r["variant"], r["timed"], r["bytes"], r["samples"])
    for variant, label in (("aes_ttable", "all cores, portable"), (None, "all cores, default")):
        for size in sizes:
            case = calls.cipher_case(NAME, "cpu", size, variant)
            keep(label, "cpu", case.variant, case.timed, size, case.samples(200, 1, budget))
    # Their OpenCL series: the same AES-192 through the OpenCL backend, on every OpenCL device
    # (PoCL's CPU device is their "OpenCL on the CPU"; an OpenCL GPU is their GPU), with the
    # copies (host bytes in and out) and kernel only (profiling events on device-resident data).
    # clAES is an OpenCL paper: this series is OpenCL's by subject, so its devices are the ones the
    # library lists of that kind (each times its own kernels: _native.time_kernel below).
    opencl = [d for d in info.devices() if d["kind"] == "opencl"]
    if not opencl:
        lab.skip("OpenCL on the CPU and GPU", f"no OpenCL device ({_native.opencl_unavailable_reason()})")
    if any(d["name"] == lab.device for d in opencl):   # --device named one of them: that one alone
        opencl = [d for d in opencl if d["name"] == lab.device]
    for d in opencl:
        where = "OpenCL CPU" if d.get("type") == "cpu" else "OpenCL GPU"
        label = f"{where} ({d['name']})"
        for size in sizes:
            case = calls.stream_case(NAME, d["name"], size)
            keep(f"{label} with transfers", d["name"], case.variant, case.timed, size, case.samples(200, 1, budget))
            timing = _native.time_kernel(NAME, "", d["name"], size, 20 if lab.quick else 50)
            if timing["mismatched_blocks"]:
                raise RuntimeError(f"OpenCL {d['name']}: {timing['mismatched_blocks']} blocks wrong")
            keep(f"{label} kernel only", d["name"], timing["variant"], OPENCL_EVENTS, size, timing["seconds"])
    if lab.require_gpu("GPU with and without transfers"):
        resident = calls.cupy_module() is not None
        if not resident:
            lab.skip("GPU kernel time", "CuPy is not installed (needed for GPU-resident data)")
        for size in sizes:
            for memory in calls.STREAM_PATHS:
                case = calls.stream_case(NAME, lab.gpu, size, memory)
                label = "GPU with transfers" + ("" if memory == "pageable" else ", page-locked")
                keep(label, lab.gpu, case.variant, case.timed, size, case.samples(200, 1, budget))
            case = calls.cipher_case(NAME, lab.gpu, size)
            keep("extra: GPU, one Cipher call on host bytes", lab.gpu, case.variant, case.timed, size,
                 case.samples(200, 1, budget))
            if resident:
                case = calls.cipher_case(NAME, lab.gpu, size, resident=True)
                keep("GPU kernel only", lab.gpu, case.variant, case.timed, size, case.samples(200, 1, budget))

    plots.lines(lab.plot_path("throughput"), "AES-192: throughput by size",
                {label: (sizes, [s / values[s] / 1e9 for s in sizes],
                         [(s / spreads[label][s][1] / 1e9, s / spreads[label][s][0] / 1e9) for s in sizes])
                 for label, values in series.items()},
                "bytes", "GB/s", logy=True)
    serial_portable = series["serial CPU, portable"]
    ratios = {f"serial / {label}": (sizes, [serial_portable[s] / values[s] for s in sizes],
                                    [(serial_portable[s] / spreads[label][s][1], serial_portable[s] / spreads[label][s][0])
                                     for s in sizes])
              for label, values in series.items() if label != "serial CPU, portable"}
    plots.lines(lab.plot_path("ratios"), "speed-up over the serial portable CPU (their Fig. 6)", ratios,
                "bytes", "ratio", logy=True, hline=1,
                paper={"GPU 11x serial (no copies)": 11.0, "OpenCL CPU 1.85-4x serial": 4.0})
    rows = [[human_bytes(s), *[serial_portable[s] / series[label][s] for label in series if label != "serial CPU, portable"]]
            for s in sizes]
    lab.table("speed-up over serial portable CPU", ["size", *[l for l in series if l != "serial CPU, portable"]], rows)
    summary = [[label, statistics.median(serial_portable[s] / values[s] for s in sizes)]
               for label, values in series.items() if label != "serial CPU, portable"]
    lab.table("median speed-up over all sizes", ["series", "serial / series"], summary)

    if "GPU with transfers" in series:
        cpu, gpu_host = series["all cores, default"], series["GPU with transfers"]
        faster_from = next((s for i, s in enumerate(sizes) if all(gpu_host[t] < cpu[t] for t in sizes[i:])), None)
        auto = [info.resolve_device("auto", s, "aes") for s in sizes]
        agree = sum(info.is_gpu(auto[i]) == (gpu_host[s] < cpu[s]) for i, s in enumerate(sizes))
        lab.record("auto-device check", timed="device=\"auto\" choice vs the faster measured device per size",
                   device=lab.gpu, variant=None, samples=[agree / len(sizes)], unit="fraction agreeing",
                   gpu_faster_from_bytes=faster_from, auto_gpu_min_bytes=info.AUTO_GPU_MIN_BYTES.get("aes"))
        lab.table("device=\"auto\" against this measurement (host data, all cores vs GPU with transfers)",
                  ["GPU faster from", "auto picks the GPU from", "sizes where auto picks the faster"],
                  [[human_bytes(faster_from) if faster_from else "never",
                    human_bytes(info.AUTO_GPU_MIN_BYTES["aes"]) if info.AUTO_GPU_MIN_BYTES.get("aes") else "never",
                    f"{agree} of {len(sizes)}"]])
    else:
        lab.skip("the auto-device crossover check", "needs a GPU to compare against")
    crossings = []
    for label in series:
        if label.startswith(("serial", "all cores")):
            continue
        cpu = series["all cores, default"]
        faster = next((s for i, s in enumerate(sizes) if all(series[label][t] < cpu[t] for t in sizes[i:])), None)
        crossings.append(f"{label} beats all CPU cores from {human_bytes(faster)}" if faster
                         else f"{label} never beats all CPU cores up to {human_bytes(sizes[-1])}")
    lab.verdict(paper="AES-192: the GPU is slower than the CPU at 128 B, fastest from about 1 KB (a little later "
                      "with copies counted); serial/GPU grows to 32 KB then stays; OpenCL CPU 1.85-4x serial, GPU 11x",
                here="AES-192 ECB per call from 128 B up: one CPU thread, all cores, "
                     + ("OpenCL (" + ", ".join(d["name"] for d in opencl) + ") " if opencl else "")
                     + (f"and {lab.gpu} " if lab.gpu else "")
                     + "with transfers (the stream engine) and kernel only (profiling or CUDA events)",
                same="yes: the same ratio curves; today's CPU has AES-NI (their 2010 CPU did not), shown separately",
                conclusion="; ".join(crossings) or "no accelerator here: the CPU series only")
    lab.changed("AES-192 in ECB over host bytes, wall clock per call (with transfers), and OpenCL "
                "profiling events or CUDA events on device-resident data (kernel only); "
                "the serial CPU is one thread of the portable T-table code (as their serial C), "
                "and all cores run both that code and OpenSSL's AES-NI, which the 2010 CPU lacked. "
                "Their OpenCL CPU runtime (AMD APP on an E8500) is PoCL here, their ATI GPU an NVIDIA one "
                "through CUDA and, where its OpenCL is registered, through OpenCL.")
