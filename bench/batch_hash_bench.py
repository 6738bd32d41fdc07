"""Batched hashes on a CUDA device (Batch.add_hash -> keccak_cuda's ragged hash_many kernel on
the batch's uploaded input): the kernel rate the batch reports (its compute_s, CUDA events around
the hash launches) and the end-to-end rate with the copies, for SHA3-256 and SHAKE128 over many
equal messages (8 KiB by default, the bulk Keccak benchmark's row in docs/performance.md), median
of several runs on random data; and the same messages through gpucrypt.hash_many on the device
(the host-memory hash_many path) in the same run.

    python3 bench/batch_hash_bench.py OUT.json [--device cuda:0] [--mib 1024] [--message 8192] [--repeats 5]
"""
import argparse
import json
import os
import statistics
import sys
import time

import gpucrypt
from gpucrypt.batch import Batch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json_out")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--message", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    count = args.mib * (1 << 20) // args.message
    data = os.urandom(count * args.message)
    view = memoryview(data)
    messages = [view[i * args.message:(i + 1) * args.message] for i in range(count)]
    total_bytes = count * args.message
    rows = []
    for name, length in (("sha3-256", None), ("shake128", 32)):
        kernel_s, batch_s = [], []
        digests = None
        for _ in range(args.repeats):
            b = Batch(args.device)
            for m in messages:
                b.add_hash(name, m, length=length)
            start = time.perf_counter()
            digests = b.run()
            batch_s.append(time.perf_counter() - start)
            kernel_s.append(b.stats["compute_s"])
            variant = b.stats["variants"].get(name)
        # Spot check against hashlib: the first, a middle and the last message.
        import hashlib
        ref = (lambda m: hashlib.sha3_256(m).digest()) if name == "sha3-256" else (lambda m: hashlib.shake_128(m).digest(32))
        for i in (0, count // 2, count - 1):
            assert digests[i] == ref(messages[i]), (name, i)
        many_s = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            gpucrypt.hash_many(name, messages, length=length, device=args.device)
            many_s.append(time.perf_counter() - start)
        row = {"hash": name, "message_bytes": args.message, "messages": count, "variant": variant,
               "kernel_GBps": total_bytes / statistics.median(kernel_s) / 1e9,
               "batch_run_GBps": total_bytes / statistics.median(batch_s) / 1e9,
               "hash_many_GBps": total_bytes / statistics.median(many_s) / 1e9,
               "kernel_s": kernel_s, "batch_run_s": batch_s, "hash_many_s": many_s}
        rows.append(row)
        print(f"{name:9s} {args.message} B x {count}: kernel {row['kernel_GBps']:.1f} GB/s, Batch.run "
              f"{row['batch_run_GBps']:.1f} GB/s, hash_many {row['hash_many_GBps']:.1f} GB/s ({variant})", flush=True)
    result = {"date": time.strftime("%Y-%m-%d"), "device": args.device,
              "devices": [d for d in gpucrypt.devices() if d["name"] == args.device],
              "what": "Batch.add_hash x N then Batch.run on the device; kernel = the batch's compute_s (CUDA events "
                      "around the hash launches); batch_run = Batch.run wall time incl. copies; hash_many = "
                      "gpucrypt.hash_many(device=...) wall time", "rows": rows}
    with open(args.json_out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
