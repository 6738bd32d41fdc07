#!/usr/bin/env python3
"""The stream engine's benchmark on a GPU machine (issue 4's targets); JSON to the path given.

    python3 bench/stream_bench.py OUT.json [--sizes-mib 1024,4096,16384] [--big-gib 64] [--repeats 3]

What it measures, each in the same run, because on a shared machine the figures move:

* the ceilings: PCIe copies per GPU with page-locked host memory (H2D, D2H, both at once; CUDA
  events, median of 20) and the host's memcpy (one core; every core through the engine's copy);
* AES-256-CTR host memory -> GPU -> host memory through ``stream.transform_into`` at each size:
  page-locked buffers (the engine's own limit: no host copies) and pageable ones (staging copies
  on the CPU pool), on one GPU, on every GPU, on the CPU alone (every core) and on the CPU with
  the GPUs (``cpu_share="auto"``), with the stream statistics (per device bytes, share, stages);
* the file format (AES-256-GCM chunks) memory -> memory through ``encrypt_stream`` with
  ``MemorySource``/``MemorySink``, the same device sets, with the per-stage split (read, wait,
  write; per device H2D, kernel, D2H);
* device-resident AES-256-CTR on one GPU and on every GPU at once (one host thread per GPU, the
  device-pointer API on CuPy arrays, 4 GiB each, median of 20): the multi-GPU scaling;
* ``openssl speed -evp aes-256-ctr / aes-256-gcm`` on one core and on every core.

Every stream figure is the median of --repeats runs (wall clock around the whole call), with
the best beside it. Input is non-zero random data (a 64 MiB random block repeated).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

import gpucrypt
from gpucrypt import _native, fileformat, stream

KEY = bytes(range(1, 33))
IV = bytes(range(100, 116))


def log(line):
    print(line, flush=True)


def fill_random(buffer):
    """Non-zero random bytes: a 64 MiB random block copied over the buffer (every core)."""
    view = memoryview(buffer).cast("B")
    block = os.urandom(min(len(view), 64 << 20))
    for offset in range(0, len(view), len(block)):
        take = min(len(block), len(view) - offset)
        _native.copy_into(view[offset:offset + take], block[:take])


def timed(repeats, function):
    """(median, best, every run's seconds) of `repeats` calls of `function`."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), times


# ----------------------------------------------------------------------------- ceilings

def link_bandwidth(device_index, size=1 << 30, repeats=20):
    """PCIe with page-locked host memory: H2D, D2H and both directions at once (GB/s)."""
    try:
        import torch
    except ImportError:
        return None
    torch.cuda.set_device(device_index)
    host_in = torch.empty(size, dtype=torch.uint8, pin_memory=True)
    host_out = torch.empty(size, dtype=torch.uint8, pin_memory=True)
    dev_a = torch.empty(size, dtype=torch.uint8, device=f"cuda:{device_index}")
    dev_b = torch.empty(size, dtype=torch.uint8, device=f"cuda:{device_index}")
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()

    def measure(h2d, d2h):
        times = []
        for _ in range(repeats + 2):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            if h2d:
                with torch.cuda.stream(s1):
                    dev_a.copy_(host_in, non_blocking=True)
            if d2h:
                with torch.cuda.stream(s2):
                    host_out.copy_(dev_b, non_blocking=True)
            s1.synchronize(), s2.synchronize()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        return size * (int(h2d) + int(d2h)) / statistics.median(times[2:]) / 1e9

    result = {"h2d_gbps": measure(True, False), "d2h_gbps": measure(False, True), "both_gbps": measure(True, True)}
    del host_in, host_out, dev_a, dev_b
    torch.cuda.empty_cache()
    return result


def host_memcpy(size=1 << 30, repeats=5):
    src, dst = bytearray(size), bytearray(size)
    fill_random(src)
    dst[:] = src  # fault the pages in
    one, _, _ = timed(repeats, lambda: dst.__setitem__(slice(None), src))
    every, _, _ = timed(repeats, lambda: _native.copy_into(dst, src))
    return {"one_core_gbps": size / one / 1e9, "all_cores_gbps": size / every / 1e9, "cores": os.cpu_count()}


def openssl_speed(algorithm, multi=None):
    binary = shutil.which("openssl")
    if not binary:
        return None
    command = [binary, "speed", "-elapsed", "-seconds", "2", "-bytes", "16384", "-evp", algorithm]
    if multi and multi > 1:
        command[2:2] = ["-multi", str(multi)]
    output = subprocess.run(command, capture_output=True, text=True).stdout
    match = re.search(rf"^{re.escape(algorithm.upper())}\s+([\d.]+)k", output, re.MULTILINE | re.IGNORECASE)
    return float(match.group(1)) * 1000 / 1e9 if match else None


# ----------------------------------------------------------------------------- stream cases

def device_sets(gpus):
    sets = [("cpu", dict(devices=["cpu"]))]
    if gpus:
        sets.append(("gpu1", dict(devices=[gpus[0]])))
        if len(gpus) > 1:
            sets.append((f"gpu{len(gpus)}", dict(devices=gpus)))
        sets.append(("cpu+gpus", dict(devices=gpus, cpu_share="auto")))
    return sets


def summarise(stats):
    record = stats.as_dict()
    return {"device_choice": record["device_choice"],
            "devices": {name: {k: d[k] for k in ("jobs", "bytes", "share", "busy_s", "variant", "stages")}
                        for name, d in record["devices"].items()},
            "read_s": record["read_s"], "write_s": record["write_s"], "wait_s": record["wait_s"]}


def ctr_cases(size, gpus, repeats, memory_kinds, job_sizes):
    results = []
    for kind in memory_kinds:
        if kind == "page-locked":
            data, out = stream.page_locked(size), stream.page_locked(size)
            if isinstance(data, bytearray):
                log(f"ctr {size >> 30} GiB: no page-locked memory, skipped")
                continue
        else:
            data, out = bytearray(size), bytearray(size)
        fill_random(data)
        _native.copy_into(out, data)  # fault in
        expected_head = gpucrypt.Cipher("aes-256-ctr", KEY, IV).encryptor().update(bytes(data[:1 << 20]))
        for label, options in device_sets(gpus):
            for job_size in (job_sizes if label.startswith("gpu") else [None]):
                holder = {}

                def run():
                    holder["stats"] = stream.StreamStats()
                    stream.transform_into("aes-256-ctr", KEY, IV, data, out, job_size=job_size,
                                          stats=holder["stats"], **options)
                    holder.setdefault("first_choice", holder["stats"].device_choice)

                # Each case starts unmeasured: its first run probes the device sets (scheduler.hpp),
                # the later ones keep what it found, as a program's repeated calls do.
                stream.forget_device_sets()
                median, best, times = timed(repeats, run)
                correct = bytes(out[:1 << 20]) == expected_head
                row = {"case": "aes-256-ctr transform_into", "memory": kind, "device_set": label, "bytes": size,
                       "job_size": job_size or 0,   # 0: the library's default (transform.hpp transform_range)
                       "median_s": median, "best_s": best, "gbps": size / median / 1e9,
                       "best_gbps": size / best / 1e9, "times_s": times, "first_device_choice": holder["first_choice"],
                       "correct_head": correct, **summarise(holder["stats"])}
                results.append(row)
                log(f"ctr {kind:11s} {label:9s} {size >> 20:6d} MiB job {row['job_size'] >> 20:4d} MiB: "
                    f"{row['gbps']:6.1f} GB/s (best {row['best_gbps']:.1f}) shares "
                    + " ".join(f"{n}={d['share']:.2f}" for n, d in row["devices"].items())
                    + ("" if correct else "  WRONG OUTPUT")
                    + f"\n    runs {' '.join(f'{t:.3f}' for t in times)} s; first run: {row['first_device_choice'] or '-'}"
                    + f"\n    last run: {row['device_choice'] or '-'}")
        del data, out
    return results


def gcm_file_cases(size, gpus, repeats):
    results = []
    plain = bytearray(size)
    fill_random(plain)
    sealed_capacity = size + (size // fileformat.DEFAULT_CHUNK_SIZE + 2) * 16 + 4096
    sealed = bytearray(sealed_capacity)
    for label, options in device_sets(gpus):
        holder = {}

        def run():
            holder["stats"] = stream.StreamStats()
            sink = stream.MemorySink(sealed)
            fileformat.encrypt_stream(stream.MemorySource(plain), sink, KEY, stats=holder["stats"], **options)
            holder["written"] = sink.written
            holder.setdefault("first_choice", holder["stats"].device_choice)

        stream.forget_device_sets()   # as in ctr_cases: the first run probes, the later ones keep its choice
        median, best, times = timed(repeats, run)
        row = {"case": "file format aes-256-gcm encrypt memory->memory", "device_set": label, "bytes": size,
               "chunk_size": fileformat.DEFAULT_CHUNK_SIZE, "median_s": median, "best_s": best,
               "gbps": size / median / 1e9, "best_gbps": size / best / 1e9, "times_s": times,
               "first_device_choice": holder["first_choice"], **summarise(holder["stats"])}
        # decrypt back (on the same devices) and compare: the round trip must hold
        restored = bytearray(size)
        sink = stream.MemorySink(restored)
        fileformat.decrypt_stream(stream.MemorySource(memoryview(sealed)[:holder["written"]]), sink, KEY, **options)
        row["round_trip_ok"] = sink.written == size and restored == plain
        del restored
        results.append(row)
        log(f"gcm file  {label:9s} {size >> 20:6d} MiB: {row['gbps']:6.1f} GB/s (best {row['best_gbps']:.1f}) "
            f"read {row['read_s']:.2f}s write {row['write_s']:.2f}s wait {row['wait_s']:.2f}s "
            f"round trip {'ok' if row['round_trip_ok'] else 'FAILED'}"
            + f"\n    runs {' '.join(f'{t:.3f}' for t in times)} s; first run: {row['first_device_choice'] or '-'}"
            + f"\n    last run: {row['device_choice'] or '-'}")
    return results


# ----------------------------------------------------------------------------- multi-GPU, device-resident

def device_resident_scaling(gpus, per_gpu=4 << 30, repeats=20):
    try:
        import cupy
    except ImportError:
        return None
    arrays, streams = [], []
    for name in gpus:
        index = int(name.split(":")[1])
        with cupy.cuda.Device(index):
            array = cupy.random.randint(1, 255, size=per_gpu, dtype=cupy.uint8)
            arrays.append(array)
            streams.append(cupy.cuda.Stream(non_blocking=True))

    def run_on(count):
        barrier = threading.Barrier(count + 1)
        times = []

        def worker(i):
            index = int(gpus[i].split(":")[1])
            keyed = _native.ResidentCipher(gpus[i], "aes-256-ctr", True, KEY, "")  # keyed once, as Cipher is
            with cupy.cuda.Device(index):
                for _ in range(repeats + 3):
                    barrier.wait()
                    keyed.process(IV, arrays[i].data.ptr, arrays[i].data.ptr, per_gpu, streams[i].ptr)
                    streams[i].synchronize()
                    barrier.wait()

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
        for t in threads:
            t.start()
        for _ in range(repeats + 3):
            barrier.wait()
            start = time.perf_counter()
            barrier.wait()
            times.append(time.perf_counter() - start)
        for t in threads:
            t.join()
        return per_gpu * count / statistics.median(times[3:]) / 1e9

    one = run_on(1)
    every = run_on(len(gpus)) if len(gpus) > 1 else None
    return {"per_gpu_bytes": per_gpu, "one_gpu_gbps": one, "all_gpus_gbps": every, "gpus": len(gpus),
            "scaling": every / one if every else None,
            "timing": "wall clock from a barrier to every GPU's stream synchronised, median of %d" % repeats}


# ----------------------------------------------------------------------------- main

def machine():
    info = {"host": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    try:
        info["gpus"] = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,pcie.link.gen.max,pcie.link.width.max",
                                       "--format=csv,noheader"], capture_output=True, text=True).stdout.strip().splitlines()
    except OSError:
        info["gpus"] = []
    return info


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output")
    parser.add_argument("--sizes-mib", default="1024,4096,16384", help="stream sizes, MiB (comma-separated)")
    parser.add_argument("--big-gib", type=int, default=0, help="one more CTR case this large, pageable only")
    parser.add_argument("--gcm-mib", type=int, default=4096, help="file-format case size, MiB")
    parser.add_argument("--job-sizes-mib", default="32", help="GPU job sizes to try (comma-separated MiB)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip", action="append", default=[], choices=["link", "ctr", "gcm", "resident", "openssl"])
    args = parser.parse_args()
    gpus = [d["name"] for d in gpucrypt.devices() if d["kind"] == "cuda"]
    report = {"machine": machine(), "gpus": gpus, "method": __doc__}
    log(f"devices: {gpus or 'no GPU'}")
    if "link" not in args.skip:
        report["host_memcpy"] = host_memcpy()
        log(f"host memcpy: {report['host_memcpy']}")
        report["link"] = {name: link_bandwidth(int(name.split(':')[1])) for name in gpus}
        log(f"PCIe: {report['link']}")
    if "openssl" not in args.skip:
        cores = os.cpu_count()
        report["openssl_gbps"] = {algo: {"one_core": openssl_speed(algo), f"{cores}_cores": openssl_speed(algo, cores)}
                                  for algo in ("aes-256-ctr", "aes-256-gcm")}
        log(f"openssl: {report['openssl_gbps']}")
    job_sizes = [int(x) << 20 for x in args.job_sizes_mib.split(",")]
    if "ctr" not in args.skip:
        report["ctr"] = []
        for mib in [int(x) for x in args.sizes_mib.split(",") if x]:
            report["ctr"] += ctr_cases(mib << 20, gpus, args.repeats, ["page-locked", "pageable"], job_sizes)
            json.dump(report, open(args.output, "w"), indent=1)
        if args.big_gib:
            report["ctr"] += ctr_cases(args.big_gib << 30, gpus, 1, ["pageable"], job_sizes[:1])
    if "gcm" not in args.skip and args.gcm_mib:
        report["gcm_file"] = gcm_file_cases(args.gcm_mib << 20, gpus, args.repeats)
    if "resident" not in args.skip and gpus:
        report["device_resident"] = device_resident_scaling(gpus)
        log(f"device-resident: {report['device_resident']}")
    json.dump(report, open(args.output, "w"), indent=1)
    log(f"wrote {args.output}")


if __name__ == "__main__":
    sys.exit(main())
