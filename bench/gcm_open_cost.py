#!/usr/bin/env python3
"""What verifying a GCM tag before writing any plaintext costs (issue 9, item 2).

    python3 bench/gcm_open_cost.py [OUT.json] [--gpu] [--gpu-mib 1024] [--repeats 20]

An open now makes two passes: the tag from a GHASH-only pass over the ciphertext, then the
plaintext once it verified (src/backends/cpu/openssl_gcm.hpp, portable_engine.cpp, host_engine.cu).
Before, it was one fused pass, exactly what a seal does, so for each size this prints:

  CPU  open and seal per variant (median of --repeats, time.perf_counter, one call each), and
       pyca/cryptography's AESGCM.decrypt: one OpenSSL pass, the old aes_openssl open;
  GPU  (--gpu, needs CuPy) a device-resident --gpu-mib array: seal, open in place with a good tag,
       and open with a bad tag (the GHASH pass alone), median of --repeats timed with CUDA events
       on the array's stream, in GB/s; "open/seal" is the cost of verifying first.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import gpucrypt

CPU_SIZES = [64, 1024, 16 << 10, 1 << 20, 64 << 20]


def _median_seconds(run, repeats):
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _inner_loops(size):
    return max(1, (1 << 20) // max(size, 1)) if size < (1 << 20) else 1  # small calls: time a loop


def cpu_rows(repeats):
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key, nonce = os.urandom(32), os.urandom(12)
    variants = [v["name"] for v in gpucrypt.variants() if v["backend"] == "cpu" and v["algorithm"] == "aes"]
    rows = []
    for size in CPU_SIZES:
        data = os.urandom(size)
        loops = _inner_loops(size)
        row = {"bytes": size}
        pyca = AESGCM(key)
        sealed = pyca.encrypt(nonce, data, None)
        row["pyca_decrypt_us"] = 1e6 * _median_seconds(lambda: [pyca.decrypt(nonce, sealed, None)
                                                                  for _ in range(loops)], repeats) / loops
        for variant in variants:
            aead = gpucrypt.AEAD("aes-256-gcm", key, device="cpu", variant=variant)
            if variant != "aes_openssl" and size > (1 << 20):
                continue  # the portable variants at 64 MiB take long on a small machine
            seal = _median_seconds(lambda: [aead.encrypt(nonce, data) for _ in range(loops)], repeats) / loops
            opened = _median_seconds(lambda: [aead.decrypt(nonce, sealed) for _ in range(loops)], repeats) / loops
            row[f"{variant}_seal_us"] = 1e6 * seal
            row[f"{variant}_open_us"] = 1e6 * opened
            row[f"{variant}_open_over_seal"] = opened / seal
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def gpu_rows(mib, repeats):
    import cupy

    key, nonce = os.urandom(32), os.urandom(12)
    size = mib << 20
    data = cupy.random.randint(0, 256, size, dtype=cupy.uint8)
    rows = []
    # The default (table) variant, and the constant-time one GCM picks on this GPU (aes_bitsliced8,
    # sealed as CTR + a GHASH pass, since 2026-11-27) beside the 2-block bitslice it replaced.
    constant_time = gpucrypt.constant_time_variant("aes", "cuda:0", mode="gcm")
    for variant in dict.fromkeys([None, constant_time, "aes_bitsliced"]):
        aead = gpucrypt.AEAD("aes-256-gcm", key, device="cuda", variant=variant)
        ct = cupy.empty_like(data)
        _, tag = aead.encrypt(nonce, data, out=ct)
        bad_tag = bytes([tag[0] ^ 1]) + tag[1:]
        stream = cupy.cuda.get_current_stream()

        def timed(run):
            samples = []
            for _ in range(repeats + 2):
                start, end = cupy.cuda.Event(), cupy.cuda.Event()
                start.record(stream)
                run()
                end.record(stream)
                end.synchronize()
                samples.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
            return statistics.median(samples[2:])  # the first two warm up

        def open_bad():
            try:
                aead.decrypt(nonce, ct, tag=bad_tag, out=ct)
            except gpucrypt.InvalidTag:
                return
            raise AssertionError("a bad tag verified")

        work = cupy.empty_like(data)
        seal_s = timed(lambda: aead.encrypt(nonce, data, out=work))

        def open_good():
            aead.decrypt(nonce, ct, tag=tag, out=work)

        open_s = timed(open_good)
        bad_s = timed(open_bad)
        assert bool((work == data).all())
        row = {"variant": aead.variant, "bytes": size, "seal_GBps": size / seal_s / 1e9,
               "open_GBps": size / open_s / 1e9, "ghash_pass_GBps": size / bad_s / 1e9,
               "open_over_seal": open_s / seal_s, "seal_ms": 1e3 * seal_s, "open_ms": 1e3 * open_s,
               "failed_open_ms": 1e3 * bad_s}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", help="write the results as JSON here")
    parser.add_argument("--gpu", action="store_true", help="also the device-resident GPU figures (CuPy)")
    parser.add_argument("--gpu-mib", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--no-cpu", action="store_true")
    args = parser.parse_args()
    result = {"host": platform.node(), "python": sys.version.split()[0], "gpucrypt_devices": gpucrypt.devices()}
    if not args.no_cpu:
        result["cpu"] = cpu_rows(args.repeats)
    if args.gpu:
        result["gpu"] = gpu_rows(args.gpu_mib, args.repeats)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
