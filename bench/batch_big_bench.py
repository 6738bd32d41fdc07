"""A batch's big GCM and XTS messages on a CUDA device (each message its own key; 256 KiB and more
leave the batch kernels for the bulk kernels of the variant the suite names): per variant, the
rate the batch reports for its kernels (its compute_s: CUDA events around the launches, the
per-message key setup included) and Batch.run end to end with the copies; beside them, in the same
run, the ceiling of that route: the same variant's bulk AEAD / Cipher on one device-resident
message of the same size (CuPy arrays, CUDA events), median of several runs on random data.

    python3 bench/batch_big_bench.py OUT.json [--device cuda:0] [--messages 64] [--message-mib 4] [--repeats 5]
"""
import argparse
import json
import os
import statistics
import sys
import time

import gpucrypt
from gpucrypt.batch import Batch
from gpucrypt.lab.calls import event_samples

VARIANTS = ("aes_bitsliced8", "aes_bitsliced", "aes_ttable_smem32")


def bulk_ceiling_s(name, key_len, variant, message_len, repeats, device):
    """Seconds for one device-resident message through the bulk AEAD / Cipher (CUDA events)."""
    import cupy
    key = os.urandom(key_len)
    data = cupy.asarray(bytearray(os.urandom(message_len)))
    index = int(device.split(":")[1]) if ":" in device else 0
    if name.endswith("gcm"):
        aead = gpucrypt.AEAD(name, key, device=device, variant=variant)
        run = lambda: aead.encrypt(os.urandom(12), data)
    else:
        cipher = gpucrypt.Cipher(name, key, iv=os.urandom(16), device=device, variant=variant)
        run = lambda: cipher.encrypt(data)
    times = event_samples(run, repeats, 1, None, index)  # the lab's timing: one warm call, then events
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json_out")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--messages", type=int, default=64)
    parser.add_argument("--message-mib", type=float, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    message_len = int(args.message_mib * (1 << 20)) // 16 * 16
    total = args.messages * message_len
    data = os.urandom(total)
    view = memoryview(data)
    messages = [view[i * message_len:(i + 1) * message_len] for i in range(args.messages)]
    rows = []
    for name in ("aes-256-gcm", "aes-128-gcm", "aes-256-xts"):
        key_len = {"aes-256-gcm": 32, "aes-128-gcm": 16, "aes-256-xts": 64}[name]
        keys = [os.urandom(key_len) for _ in messages]
        ivs = [os.urandom(12 if name.endswith("gcm") else 16) for _ in messages]
        for variant in VARIANTS:
            kernel_s, run_s, reported = [], [], None
            phases = {"build_s": [], "key_setup_s": [], "h2d_s": [], "compute_s": [], "d2h_s": [], "total_s": []}
            outputs = None
            for _ in range(args.repeats):
                b = Batch(args.device)
                for key, iv, m in zip(keys, ivs, messages):
                    b.add(name, key, m, iv=iv, variant=variant)
                start = time.perf_counter()
                outputs = b.run()
                run_s.append(time.perf_counter() - start)
                kernel_s.append(b.stats["compute_s"])
                for phase, values in phases.items():
                    values.append(b.stats[phase])
                reported = b.stats["variants"]
            # Spot check on the CPU: the first and the last message.
            for i in (0, args.messages - 1):
                if name.endswith("gcm"):
                    want = gpucrypt.AEAD(name, keys[i], device="cpu").encrypt(ivs[i], messages[i])
                else:
                    want = gpucrypt.Cipher(name, keys[i], iv=ivs[i], device="cpu").encrypt(messages[i])
                assert outputs[i] == want, (name, variant, i)
            ceiling = bulk_ceiling_s(name, key_len, variant, message_len, args.repeats, args.device)
            row = {"cipher": name, "variant_asked": variant, "variants_reported": reported,
                   "messages": args.messages, "message_bytes": message_len,
                   "kernel_Tbps": 8 * total / statistics.median(kernel_s) / 1e12,
                   "batch_run_Tbps": 8 * total / statistics.median(run_s) / 1e12,
                   "bulk_one_message_Tbps": 8 * message_len / ceiling / 1e12,
                   "phases_median_s": {phase: statistics.median(v) for phase, v in phases.items()},
                   "kernel_s": kernel_s, "batch_run_s": run_s, "bulk_one_message_s": ceiling}
            row["kernel_vs_bulk"] = row["kernel_Tbps"] / row["bulk_one_message_Tbps"]
            rows.append(row)
            print(f"{name} {variant:18s} -> {list(reported.values())[0]:18s} kernels {row['kernel_Tbps']:.3f} Tbps "
                  f"({row['kernel_vs_bulk']:.2f}x one bulk message {row['bulk_one_message_Tbps']:.3f}), "
                  f"Batch.run {row['batch_run_Tbps']:.3f} Tbps", flush=True)
    result = {"date": time.strftime("%Y-%m-%d"), "device": args.device,
              "devices": [d for d in gpucrypt.devices() if d["name"] == args.device],
              "what": "Batch.add x N (own keys, messages >= 256 KiB: the bulk kernels' route) then Batch.run; "
                      "kernel = the batch's compute_s (CUDA events around the launches, per-message key setup "
                      "included); batch_run = Batch.run wall time incl. copies (phases_median_s: the batch's own "
                      "stats, build_s the packing of the messages, total_s the executor's run; the rest of Batch.run "
                      "is the output objects and the wipe); bulk_one_message = the variant's "
                      "bulk AEAD/Cipher on one device-resident message of the same size (CuPy events)",
              "rows": rows}
    with open(args.json_out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
