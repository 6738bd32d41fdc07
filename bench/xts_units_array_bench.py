#!/usr/bin/env python3
"""XTS over data units through the public path a user with GPU arrays calls:
Cipher.encrypt_units / decrypt_units of a 1 GiB CuPy array on cuda:0 (ResidentCipher::process_units:
the unit numbers, the tweak key's ECB launch, the units kernel), against Cipher.encrypt of the same
array in CTR, same key size and variant, in the same run. CUDA events around each Python call on
the array's stream, median of --repeats after a warm-up; random data; each output checked once
against the CPU backend on sampled units.

    python3 bench/xts_units_array_bench.py OUT.json [--repeats 20] [--variant aes_bitsliced8]

gpucrypt_gpu_bench's "encrypt-units512" rows time DeviceCipher::process_units from C++; this adds
the Python call and the array handling around it."""
import argparse, json, os, statistics, time

import cupy
import gpucrypt

SIZE = 1 << 30


def timed(call, repeats):
    stream = cupy.cuda.get_current_stream()
    call()
    stream.synchronize()
    times = []
    for _ in range(repeats):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record(stream)
        call()
        end.record(stream)
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def sampled_units_match(key, bits, unit_len, data, out, first, decrypt):
    cpu = gpucrypt.Cipher(f"aes-{bits}-xts", key, device="cpu")
    num_units = SIZE // unit_len
    for u in (0, 1, num_units // 2, num_units - 1):
        piece = slice(u * unit_len, (u + 1) * unit_len)
        host = bytes(data[piece].get())
        want = (cpu.decrypt_units if decrypt else cpu.encrypt_units)(host, unit_len, first_unit=first + u)
        if bytes(out[piece].get()) != want:
            return False
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_json")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--variant", default="aes_bitsliced8")
    args = parser.parse_args()
    data = cupy.random.randint(0, 256, SIZE, dtype=cupy.uint8)
    out = cupy.empty_like(data)
    rows = []
    for bits in (128, 256):
        ctr = gpucrypt.Cipher(f"aes-{bits}-ctr", os.urandom(bits // 8), device="cuda:0", variant=args.variant)
        ivs = iter([os.urandom(16) for _ in range(args.repeats + 1)])  # a fresh counter block per message
        ctr_ms = timed(lambda: ctr.encrypt(data, out=out, iv=next(ivs)), args.repeats)
        rows.append({"cipher": f"aes-{bits}-ctr", "call": "encrypt", "median_ms": ctr_ms,
                     "Tbps": SIZE * 8 / ctr_ms / 1e9})
        key = os.urandom(bits // 4)
        xts = gpucrypt.Cipher(f"aes-{bits}-xts", key, device="cuda:0", variant=args.variant)
        for unit_len in (512, 4096):
            for decrypt in (False, True):
                call = xts.decrypt_units if decrypt else xts.encrypt_units
                ms = timed(lambda: call(data, unit_len, first_unit=7, out=out), args.repeats)
                rows.append({"cipher": f"aes-{bits}-xts", "call": ("decrypt" if decrypt else "encrypt") + "_units",
                             "unit_len": unit_len, "median_ms": ms, "Tbps": SIZE * 8 / ms / 1e9,
                             "ratio_to_ctr": ctr_ms / ms,
                             "sampled_units_match_cpu": sampled_units_match(key, bits, unit_len, data, out, 7,
                                                                            decrypt)})
    report = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), "variant": args.variant,
              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "bytes": SIZE, "repeats": args.repeats,
              "what": "one Python call on a 1 GiB CuPy array (out= given), CUDA events on its stream, median",
              "results": rows}
    with open(args.out_json, "w") as f:
        json.dump(report, f, indent=1)
    for r in rows:
        print(f"{r['cipher']:12} {r['call']:16} {r.get('unit_len', ''):>5} {r['median_ms']:8.3f} ms "
              f"{r['Tbps']:6.3f} Tbps  {r.get('ratio_to_ctr', 1):.3f}x CTR  {r.get('sampled_units_match_cpu', '')}")


if __name__ == "__main__":
    main()
