#!/usr/bin/env python3
"""What one GPU call of KT128 leaves costs, by the size of the call, and whether readers beside it change that.

    python3 bench/tree_call_probe.py OUT.json FILE     (FILE: a large file, e.g. 16 GiB in /dev/shm)

Issue 30's KT128 file row: `format::hash_file` hands the GPU one block (16 MiB) per synchronous
call. This times, on cuda:0, `device_tree_hash("kt128", ...)` (the library's Device::tree_hash: the
same leaves kernel and copies as tree_leaves, plus the final node's absorb, ~80 us per 16 MiB):
- page-locked memory (the device's HostBuffer, as hash_file's reader allocates): 18 buffers of
  16 MiB and of 64 MiB (the first includes creating the CUDA context);
- one 16 MiB call from page-locked and from pageable memory (median of 200), one 1 GiB call (median of 9);
- hash_file's structure in Python: N reader threads pread 16 MiB blocks of FILE (8 GiB of it) into
  N + 2 page-locked slots, the calling thread hashes each block in order with one call
  (N = 16, 8, 4, 2, 16 again): wall, time in the calls, time waiting for a block, read time summed;
- the same calls on four blocks already read, no readers (256 calls).
Random data (never zeros); wall clocks with time.perf_counter.
"""
import datetime
import json
import os
import platform
import sys
import threading
import time

import numpy as np

from gpucrypt import _native as N

MiB = 1 << 20
BLOCK = 16 * MiB


def median_s(function, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def kt128(buffer):
    return N.device_tree_hash("kt128", buffer, 32, device="cuda:0")


def calls_by_size(result):
    rng = np.random.default_rng(1)
    for size_mib, count in ((16, 18), (64, 18)):
        start = time.perf_counter()
        buffers = [N.HostBuffer("cuda:0", size_mib * MiB) for _ in range(count)]
        result[f"alloc_{count}x{size_mib}MiB_s"] = time.perf_counter() - start
        del buffers
    pinned = N.HostBuffer("cuda:0", BLOCK)
    np.frombuffer(memoryview(pinned), dtype=np.uint8)[:] = rng.integers(0, 256, BLOCK, dtype=np.uint8)
    pageable = bytearray(bytes(memoryview(pinned)))
    assert kt128(pinned) == kt128(pageable)
    for name, buffer in (("pinned16", pinned), ("pageable16", pageable)):
        seconds = median_s(lambda: kt128(buffer), 200)
        result[name + "_call_ms"] = seconds * 1e3
        result[name + "_GBps"] = BLOCK / seconds / 1e9
    big = N.HostBuffer("cuda:0", 1024 * MiB)
    np.frombuffer(memoryview(big), dtype=np.uint8)[:] = rng.integers(0, 256, 1024 * MiB, dtype=np.uint8)
    seconds = median_s(lambda: kt128(big), 9)
    result["pinned1g_ms"] = seconds * 1e3
    result["pinned1g_GBps"] = 1024 * MiB / seconds / 1e9


def with_readers(fd, num_blocks, readers, slots):
    buffers = [N.HostBuffer("cuda:0", BLOCK) for _ in range(slots)]
    views = [memoryview(b) for b in buffers]
    filled = [-1] * slots
    changed = threading.Condition()
    state = {"next": 0, "hashed": 0, "read_s": 0.0}

    def reader():
        while True:
            with changed:
                block = state["next"]
                if block >= num_blocks:
                    return
                state["next"] += 1
                changed.wait_for(lambda: block < state["hashed"] + slots)
            start = time.perf_counter()
            os.preadv(fd, [views[block % slots]], block * BLOCK)
            seconds = time.perf_counter() - start
            with changed:
                state["read_s"] += seconds
                filled[block % slots] = block
                changed.notify_all()

    began = time.perf_counter()
    threads = [threading.Thread(target=reader) for _ in range(readers)]
    for thread in threads:
        thread.start()
    hash_s = wait_s = 0.0
    for block in range(num_blocks):
        start = time.perf_counter()
        with changed:
            changed.wait_for(lambda: filled[block % slots] == block)
        ready = time.perf_counter()
        wait_s += ready - start
        kt128(buffers[block % slots])
        hash_s += time.perf_counter() - ready
        with changed:
            state["hashed"] = block + 1
            changed.notify_all()
    wall = time.perf_counter() - began
    for thread in threads:
        thread.join()
    return {"wall_s": wall, "GBps": num_blocks * BLOCK / wall / 1e9, "hash_s": hash_s,
            "hash_call_ms": hash_s / num_blocks * 1e3, "wait_s": wait_s, "read_s_sum": state["read_s"]}


def main():
    out_path, path = sys.argv[1], sys.argv[2]
    result = {"what": __doc__.split("\n")[0], "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "host": platform.node(), "device": "cuda:0", "file": path}
    calls_by_size(result)
    fd = os.open(path, os.O_RDONLY)
    num_blocks = min(os.path.getsize(path) // BLOCK, 512)
    for name, readers in (("readers16", 16), ("readers8", 8), ("readers4", 4), ("readers2", 2), ("readers16_again", 16)):
        result[name] = with_readers(fd, num_blocks, readers, readers + 2)
        print(name, json.dumps({k: round(v, 4) for k, v in result[name].items()}), flush=True)
    buffers = [N.HostBuffer("cuda:0", BLOCK) for _ in range(4)]
    for i, buffer in enumerate(buffers):
        os.preadv(fd, [memoryview(buffer)], i * BLOCK)
    start = time.perf_counter()
    for i in range(256):
        kt128(buffers[i % 4])
    result["no_readers_call_ms"] = (time.perf_counter() - start) / 256 * 1e3
    print(json.dumps({k: v for k, v in result.items() if not isinstance(v, dict)}, indent=1))
    with open(out_path, "w") as out:
        json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
