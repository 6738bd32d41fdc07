#!/usr/bin/env python3
"""CPU AES-GCM per core: gpucrypt's variants against pyca/cryptography's AESGCM (the newest
OpenSSL on the machine, bundled in its wheel), seal and open of one buffer on one thread.

What is timed: one call (`AEAD.encrypt` / `AEAD.decrypt`, pyca's the same), Python to Python,
output allocation included on both sides; median of --reps calls after one warm-up, random data
and key. GPUCRYPT_CPU_THREADS=1 is set before gpucrypt loads, so gpucrypt uses one core (pyca
always does). Writes JSON (--json) with the CPU model, OpenSSL versions and every sample.

    python3 bench/cpu_gcm_bench.py --json bench/results/cpu-2026-11-23-gcm-per-core.json
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import time

os.environ["GPUCRYPT_CPU_THREADS"] = "1"

import gpucrypt  # noqa: E402
from cryptography.hazmat.backends.openssl import backend as pyca_backend  # noqa: E402
from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def median_gbps(call, num_bytes: int, reps: int) -> tuple:
    call()
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return num_bytes / statistics.median(samples) / 1e9, samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bytes", type=int, default=16 << 20)
    parser.add_argument("--reps", type=int, default=21)
    parser.add_argument("--key-bits", type=int, default=256, choices=(128, 192, 256))
    parser.add_argument("--json", help="write results here")
    args = parser.parse_args()

    key, nonce, aad = os.urandom(args.key_bits // 8), os.urandom(12), os.urandom(16)
    data = os.urandom(args.bytes)
    name = f"aes-{args.key_bits}-gcm"
    pyca = AESGCM(key)
    sealed = pyca.encrypt(nonce, data, aad)
    rows = []

    def measure(label, seal, open_):
        seal_gbps, seal_samples = median_gbps(seal, args.bytes, args.reps)
        open_gbps, open_samples = median_gbps(open_, args.bytes, args.reps)
        rows.append({"implementation": label, "seal_gbytes_s": seal_gbps, "open_gbytes_s": open_gbps,
                     "seal_samples_s": seal_samples, "open_samples_s": open_samples})

    measure("pyca AESGCM (" + pyca_backend.openssl_version_text() + ")",
            lambda: pyca.encrypt(nonce, data, aad), lambda: pyca.decrypt(nonce, sealed, aad))
    for v in gpucrypt.variants("cpu", "aes"):
        if v["name"] not in ("aes_vaes_gcm", "aes_openssl"):
            continue  # the portable variants run at a fraction of a GB/s
        aead = gpucrypt.AEAD(name, key, device="cpu", variant=v["name"])
        assert aead.encrypt(nonce, data, aad) == sealed, v["name"]
        measure(f"gpucrypt {v['name']} ({v['technique']})",
                lambda: aead.encrypt(nonce, data, aad), lambda: aead.decrypt(nonce, sealed, aad))

    reference = rows[0]
    print(f"{name}, {args.bytes} bytes, one thread, median of {args.reps}; CPU: {cpu_model()}")
    print(f"{'implementation':70s} {'seal GB/s':>10s} {'open GB/s':>10s} {'seal/pyca':>9s} {'open/pyca':>9s}")
    for row in rows:
        row["seal_vs_pyca"] = row["seal_gbytes_s"] / reference["seal_gbytes_s"]
        row["open_vs_pyca"] = row["open_gbytes_s"] / reference["open_gbytes_s"]
        print(f"{row['implementation'][:70]:70s} {row['seal_gbytes_s']:10.2f} {row['open_gbytes_s']:10.2f} "
              f"{row['seal_vs_pyca']:9.2f} {row['open_vs_pyca']:9.2f}")
    if args.json:
        import ssl
        result = {"date": datetime.date.today().isoformat(), "cpu": cpu_model(), "cipher": name,
                  "bytes": args.bytes, "reps": args.reps, "threads": 1, "system_openssl": ssl.OPENSSL_VERSION,
                  "timed": "one AEAD.encrypt / AEAD.decrypt call each, Python to Python, output allocation "
                           "included; open verifies the tag before it writes (gpucrypt) or after (pyca)",
                  "rows": rows}
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
