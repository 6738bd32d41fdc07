"""StreamCipher before and after a change, in one process: AES-256-CTR on the CPU, 256 MiB fed as
one bytes object, as 4 MiB memoryview pieces and as 64 KiB bytes pieces; the baseline is
python/gpucrypt/stream.py at --base (git show), loaded beside the installed package and run on
the same _native, so only the Python side of the two differs (it must use no _native call the
installed build lacks). Rounds interleave the two, the order reversed every other round; the
outputs are compared.

    python bench/stream_cipher_bench.py --base 435209b --rounds 5 --out bench/results/X.json
"""

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from gpucrypt import stream as current

SIZE = 256 << 20
KEY, IV = bytes(range(32)), bytes(16)


def load_baseline(base: str):
    source = subprocess.run(["git", "show", f"{base}:python/gpucrypt/stream.py"], check=True, capture_output=True).stdout
    path = os.path.join(tempfile.mkdtemp(), "baseline_stream.py")
    with open(path, "wb") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("baseline_stream", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_stream"] = module     # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def pieces_of(data, shape):
    if shape == "one 256 MiB bytes":
        return [data]
    if shape == "4 MiB memoryview pieces":
        view = memoryview(data)
        return [view[i:i + (4 << 20)] for i in range(0, SIZE, 4 << 20)]
    return [data[i:i + (64 << 10)] for i in range(0, SIZE, 64 << 10)]


def run(module, pieces):
    s = module.StreamCipher("aes-256-ctr", KEY, IV, device="cpu")
    start = time.perf_counter()
    out = [s.update(p) for p in pieces]
    out.append(s.finalize())
    return time.perf_counter() - start, out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out")
    args = parser.parse_args()
    versions = {"before": load_baseline(args.base), "after": current}
    data = os.urandom(SIZE)
    results = {"what": "StreamCipher aes-256-ctr, device=cpu, 256 MiB, seconds per stream",
               "base": args.base, "machine": f"{platform.node()} {os.cpu_count()} CPUs", "shapes": {}}
    for shape in ("one 256 MiB bytes", "4 MiB memoryview pieces", "64 KiB bytes pieces"):
        pieces = pieces_of(data, shape)
        times = {name: [] for name in versions}
        outputs = {}
        for r in range(args.rounds):
            order = list(versions) if r % 2 == 0 else list(reversed(versions))
            for name in order:
                seconds, out = run(versions[name], pieces)
                times[name].append(seconds)
                outputs[name] = b"".join(out)
        assert outputs["before"] == outputs["after"], shape
        results["shapes"][shape] = {name: {"median_s": statistics.median(t), "min_s": min(t), "all_s": t}
                                    for name, t in times.items()}
        print(shape, {name: f"median {statistics.median(t) * 1e3:.1f} ms, min {min(t) * 1e3:.1f} ms"
                      for name, t in times.items()})
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
