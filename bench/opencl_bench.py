#!/usr/bin/env python3
"""The OpenCL backend's kernels, device-resident, beside the CUDA kernels or the native CPU backend.

    PYTHONPATH=python python3 bench/opencl_bench.py [--device opencl:0] [--mib 1024] [--repeats 20]
        [--cuda-json OUT/bench.json] [--cpu] [--json OUT] [--only camellia ...]

For each cipher and OpenCL variant: one kernel launch over --mib MiB of random data already in
device memory (CTR encryption), output poisoned first and checked against the host cipher on
sampled blocks (a broken kernel cannot report a figure), then --repeats launches timed with
OpenCL profiling events; the median is reported (min beside it). --cuda-json takes the JSON of
the CUDA kernel benchmark (bench/gpu_bench.cu, gpu-check step `bench`: CUDA events, 1 GiB,
median of 20) from the same machine and run, and prints OpenCL / CUDA for the same cipher and
the matching variant (same technique). --cpu times the native CPU backend on 64 MiB in host
memory (median of --repeats wall-clock calls) for the PoCL comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import gpucrypt
from gpucrypt import _native

# (cipher, OpenCL variant, the CUDA variant of the same technique)
CASES = [
    ("aes-128-ctr", "aes_ttable_local", "aes_ttable_smem32"),
    ("aes-128-ctr", "aes_bitsliced", "aes_bitsliced"),
    ("aes-256-ctr", "aes_ttable_local", "aes_ttable_smem32"),
    ("aes-256-ctr", "aes_bitsliced", "aes_bitsliced"),
    ("aes-192-ctr", "aes_ttable_local", "aes_ttable_smem32"),
    ("camellia-128-ctr", "camellia_sbox_local", "camellia_sbox_smem32"),
    ("sc2000-128-ctr", "sc2000_table_local", "sc2000_table_smem"),
]


def cuda_rows(path):
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        data = json.load(f)
    return {(r["cipher"], r["variant"]): r for r in data.get("results", []) if r.get("direction") == "encrypt"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="opencl:0")
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--cuda-json", default="")
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--json", default="")
    parser.add_argument("--only", action="append", default=[],
                        help="run only the ciphers containing this text (repeatable)")
    args = parser.parse_args()
    device = next((d for d in gpucrypt.devices() if d["name"] == args.device), None)
    if device is None:
        print(f"no {args.device}: {_native.opencl_unavailable_reason()}", file=sys.stderr)
        return 1
    cuda = cuda_rows(args.cuda_json)
    nbytes = args.mib << 20
    rows = []
    print(f"{args.device}: {device['description']}; {args.mib} MiB device-resident, median of {args.repeats}")
    print(f"{'cipher':<18} {'variant':<22} {'GB/s':>9} {'Tbps':>7} {'CUDA GB/s':>10} {'OpenCL/CUDA':>12} {'CPU GB/s':>9}")
    cases = [c for c in CASES if not args.only or any(text in c[0] for text in args.only)]
    # The shape knobs in force (opencl_runtime.cpp's policy_for), recorded with the figures.
    knobs = {k: v for k, v in os.environ.items() if k.startswith("GPUCRYPT_OPENCL_")}
    for cipher, variant, cuda_variant in cases:
        timing = _native.time_kernel(cipher, variant, args.device, nbytes, args.repeats)
        if timing["mismatched_blocks"]:
            print(f"{cipher} {variant}: {timing['mismatched_blocks']} of {timing['checked_blocks']} checked blocks "
                  "wrong", file=sys.stderr)
            return 1
        median = statistics.median(timing["seconds"])
        row = {"cipher": cipher, "variant": variant, "device": args.device, "device_name": timing["device_name"],
               "bytes": nbytes, "median_ms": median * 1e3, "min_ms": min(timing["seconds"]) * 1e3,
               "GBps": nbytes / median / 1e9, "Tbps": nbytes * 8 / median / 1e12,
               "checked_blocks": timing["checked_blocks"]}
        reference = cuda.get((cipher, cuda_variant))
        if reference:
            row["cuda_variant"] = cuda_variant
            row["cuda_GBps"] = reference["GBps"]
            row["opencl_over_cuda"] = row["GBps"] / reference["GBps"]
        if args.cpu:
            key = bytes(range(1, 1 + int(cipher.split("-")[1]) // 8))
            data = os.urandom(64 << 20)
            stream = gpucrypt.Cipher(cipher, key, iv=bytes(16), device="cpu")
            times = []
            for _ in range(max(3, args.repeats // 4)):
                began = time.perf_counter()
                stream.encrypt(data, iv=os.urandom(16))
                times.append(time.perf_counter() - began)
            row["cpu_variant"] = stream.variant
            row["cpu_GBps"] = len(data) / statistics.median(times) / 1e9
        rows.append(row)
        print(f"{cipher:<18} {variant:<22} {row['GBps']:9.2f} {row['Tbps']:7.3f} "
              f"{row.get('cuda_GBps', float('nan')):10.2f} {row.get('opencl_over_cuda', float('nan')):12.3f} "
              f"{row.get('cpu_GBps', float('nan')):9.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d"), "device": args.device, "description": device["description"],
                       "what": "OpenCL CTR kernel, device-resident, profiling events, median", "knobs": knobs,
                       "results": rows}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
