"""Where does the GPU beat the CPU for data in host memory? Times one-shot encryption of host
bytes on the CPU backend (all cores) and on cuda:0 (staging + transfers + kernel) for sizes from
1 KiB to 256 MiB and reports the smallest size from which the GPU stays faster. The result sets
gpucrypt.info's AUTO_GPU_MIN_BYTES (device="auto").

    python3 bench/crossover.py OUT.json
"""

import json
import os
import statistics
import sys
import time

import gpucrypt

CASES = ["aes-256-ctr", "aes-256-gcm", "camellia-128-ctr", "sc2000-128-ctr"]
SIZES = [1 << k for k in range(10, 29, 2)]


def seconds_per_call(fn, data, min_repeats=5, budget_s=0.4):
    fn(data)  # warm-up: staging buffers, module load
    times = []
    start = time.perf_counter()
    while len(times) < min_repeats or time.perf_counter() - start < budget_s:
        t0 = time.perf_counter()
        fn(data)
        times.append(time.perf_counter() - t0)
        if len(times) >= 200:
            break
    return statistics.median(times)


def run_case(name):
    key = os.urandom(32 if "-256-" in name else 16)
    rows = []
    for size in SIZES:
        data = os.urandom(size)
        timings = {}
        for device in ("cpu", "cuda:0"):
            if name.endswith("gcm"):
                aead = gpucrypt.AEAD(name, key, device=device)
                nonce = os.urandom(12)
                timings[device] = seconds_per_call(lambda d: aead.encrypt(nonce, d), data)
            else:
                c, iv = gpucrypt.Cipher(name, key, device=device), os.urandom(16)
                timings[device] = seconds_per_call(lambda d: c.encrypt(d, iv=iv), data)
        rows.append({"bytes": size, "cpu_GBps": size / timings["cpu"] / 1e9,
                     "gpu_GBps": size / timings["cuda:0"] / 1e9})
    crossover = None
    for i, row in enumerate(rows):
        if all(r["gpu_GBps"] > r["cpu_GBps"] for r in rows[i:]):
            crossover = row["bytes"]
            break
    return {"cipher": name, "rows": rows, "gpu_faster_from_bytes": crossover}


def main():
    devices = gpucrypt.devices()
    results = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "devices": devices,
               "what": "wall clock of one-shot encrypt() of host bytes, median, per device",
               "cases": [run_case(name) for name in CASES]}
    with open(sys.argv[1], "w") as f:
        json.dump(results, f, indent=1)
    for case in results["cases"]:
        print(f"{case['cipher']:18s} GPU faster from {case['gpu_faster_from_bytes']} bytes")
        for r in case["rows"]:
            print(f"   {r['bytes']:>10d}  cpu {r['cpu_GBps']:7.2f} GB/s  gpu {r['gpu_GBps']:7.2f} GB/s")


if __name__ == "__main__":
    main()
