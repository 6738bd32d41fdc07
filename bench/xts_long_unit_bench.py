#!/usr/bin/env python3
"""One long XTS data unit through the public path (Cipher.encrypt/decrypt of a CuPy array on cuda:0,
device_api.cu -> enqueue_xts_bulk) against CTR the same way, per variant: 64 calls of one 16 MiB
unit each (1 GiB) queued on the stream, timed with CUDA events, median of --repeats. Random data.

    python3 bench/xts_long_unit_bench.py OUT.json [--repeats 10]

gpucrypt_gpu_bench's XTS "encrypt" rows time the bulk kernel itself (KeyedCipher::xts); this times
what a user's call runs. Every output is checked once against the CPU backend."""
import argparse, json, os, statistics, sys, time

import cupy
import gpucrypt

UNIT = 16 << 20
CALLS = 64


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_json")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--variants", default="aes_ttable_smem32,aes_bitsliced8,aes_bitsliced,aes_bitsliced32")
    args = parser.parse_args()
    rows = []
    data = cupy.random.randint(0, 256, UNIT, dtype=cupy.uint8)
    out = cupy.empty_like(data)
    stream = cupy.cuda.get_current_stream()
    for variant in args.variants.split(","):
        for mode, key_len in (("ctr", 32), ("xts", 64)):
            name = f"aes-256-{mode}"
            key, iv = os.urandom(key_len), os.urandom(16)
            for decrypt in (False, True):
                if mode == "ctr" and decrypt:
                    continue
                cipher = gpucrypt.Cipher(name, key, iv=iv, device="cuda:0", variant=variant)
                call = cipher.decrypt if decrypt else cipher.encrypt
                # CTR refuses a second message under one IV (the keystream guard): a fresh IV per
                # call, made before the timing; XTS's tweak may repeat (it is a position, not a nonce).
                ivs = [os.urandom(16) for _ in range(CALLS)] if mode == "ctr" else [iv] * CALLS

                def run(array, out, i=0, call=call, ivs=ivs):
                    return call(array, out=out, iv=ivs[i])

                run(data, out=out)
                cpu = gpucrypt.Cipher(name, key, iv=ivs[0], device="cpu")
                expected = (cpu.decrypt if decrypt else cpu.encrypt)(bytes(data.get()))
                assert bytes(out.get()) == expected, (variant, name, decrypt)
                times = []
                for _ in range(args.repeats):
                    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
                    start.record(stream)
                    for i in range(CALLS):
                        run(data, out=out, i=i)
                    stop.record(stream)
                    stop.synchronize()
                    times.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
                median = statistics.median(times)
                row = {"variant": variant, "cipher": name, "direction": "decrypt" if decrypt else "encrypt",
                       "bytes": UNIT * CALLS, "unit_bytes": UNIT, "median_s": median, "gbps": UNIT * CALLS / median / 1e9}
                rows.append(row)
                print(f"{variant:18s} {name} {row['direction']:8s} {row['gbps']:7.1f} GB/s", flush=True)
    for row in rows:
        if row["cipher"].endswith("xts"):
            ctr = next(r for r in rows if r["variant"] == row["variant"] and r["cipher"].endswith("ctr"))
            row["ratio_to_ctr"] = row["gbps"] / ctr["gbps"]
            print(f"{row['variant']:18s} xts {row['direction']:8s} / ctr = {row['ratio_to_ctr']:.2f}")
    with open(args.out_json, "w") as sink:
        json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": rows}, sink, indent=1)


if __name__ == "__main__":
    sys.exit(main())
