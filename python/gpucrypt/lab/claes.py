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
OPENCL_EVENTS = "OpenCL profiling events around one kernel on device-resident data: kernel only"


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

    def keep(label, device, variant, timed, size, samples):
        entry = lab.record("seconds per call", timed=timed, device=device, variant=variant, samples=samples,
                           algorithm=NAME, bytes=size, series=label)
        series.setdefault(label, {})[size] = entry["value"]

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
    opencl = [d for d in info.devices() if d["kind"] == "opencl"]
    if not opencl:
        lab.skip("OpenCL on the CPU and GPU", f"no OpenCL device ({_native.opencl_unavailable_reason()})")
    for d in opencl:
        where = "OpenCL CPU" if d.get("type") == "cpu" else "OpenCL GPU"
        label = f"{where} ({d['name']})"
        for size in sizes:
            case = calls.cipher_case(NAME, d["name"], size)
            keep(f"{label} with transfers", d["name"], case.variant, case.timed, size, case.samples(200, 1, budget))
            timing = _native.opencl_time_resident(NAME, "", d["name"], size, 20 if lab.quick else 50)
            if timing["mismatched_blocks"]:
                raise RuntimeError(f"OpenCL {d['name']}: {timing['mismatched_blocks']} blocks wrong")
            keep(f"{label} kernel only", d["name"], timing["variant"], OPENCL_EVENTS, size, timing["seconds"])
    if lab.require_gpu("GPU with and without transfers"):
        resident = calls.cupy_module() is not None
        if not resident:
            lab.skip("GPU kernel time", "CuPy is not installed (needed for GPU-resident data)")
        for size in sizes:
            case = calls.cipher_case(NAME, lab.gpu, size)
            keep("GPU with transfers", lab.gpu, case.variant, case.timed, size, case.samples(200, 1, budget))
            if resident:
                case = calls.cipher_case(NAME, lab.gpu, size, resident=True)
                keep("GPU kernel only", lab.gpu, case.variant, case.timed, size, case.samples(200, 1, budget))

    plots.lines(lab.plot_path("throughput"), "AES-192: throughput by size",
                {label: (sizes, [s / values[s] / 1e9 for s in sizes]) for label, values in series.items()},
                "bytes", "GB/s", logy=True)
    serial_portable = series["serial CPU, portable"]
    ratios = {f"serial / {label}": (sizes, [serial_portable[s] / values[s] for s in sizes])
              for label, values in series.items() if label != "serial CPU, portable"}
    plots.lines(lab.plot_path("ratios"), "speed-up over the serial portable CPU (their Fig. 6)", ratios,
                "bytes", "ratio", logy=True, hline=1)
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
        agree = sum((auto[i] != "cpu") == (gpu_host[s] < cpu[s]) for i, s in enumerate(sizes))
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
    lab.changed("AES-192 in ECB over host bytes, wall clock per call (with transfers), and OpenCL "
                "profiling events or CUDA events on device-resident data (kernel only); "
                "the serial CPU is one thread of the portable T-table code (as their serial C), "
                "and all cores run both that code and OpenSSL's AES-NI, which the 2010 CPU lacked. "
                "Their OpenCL CPU runtime (AMD APP on an E8500) is PoCL here, their ATI GPU an NVIDIA one "
                "through CUDA and, where its OpenCL is registered, through OpenCL.")
