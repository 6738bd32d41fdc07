"""Files for the file benchmarks (file_bench.py, hash_file_bench.py, mpi_bench.py): random input
(never zeros) and the parallel positional I/O that stands as a ceiling beside gpucrypt."""

from __future__ import annotations

import os
import threading
from typing import Callable


def write_random_file(path: str, size: int) -> None:
    """`size` random bytes (a 64 MiB random block repeated, so that a large file is quick to make)."""
    block = os.urandom(min(size, 64 << 20)) if size else b""
    with open(path, "wb") as out:
        written = 0
        while written < size:
            take = min(len(block), size - written)
            out.write(block[:take])
            written += take


def for_each_block(size: int, threads: int, work: Callable[[int, int], None], block_len: int = 8 << 20) -> None:
    """Calls work(offset, length) for every block_len block of `size` bytes from `threads` threads,
    each taking the next block (the GIL is released in the system calls work makes)."""
    next_block = [0]
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                offset = next_block[0]
                next_block[0] += block_len
            if offset >= size:
                return
            work(offset, min(block_len, size - offset))

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()


def parallel_read(path: str, threads: int) -> None:
    """Reads `path` with `threads` threads of pread: the read ceiling of a file in page cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        for_each_block(os.path.getsize(path), threads, lambda offset, length: os.pread(fd, length, offset))
    finally:
        os.close(fd)


def parallel_copy(source: str, target: str, threads: int) -> None:
    """Copies `source` to `target` with `threads` threads of pread/pwrite into a preallocated,
    fsynced output: the I/O the file pipeline does, without the sealing."""
    size = os.path.getsize(source)
    in_fd = os.open(source, os.O_RDONLY)
    out_fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        if size:
            os.ftruncate(out_fd, size)

        def copy(offset, length):
            view = memoryview(os.pread(in_fd, length, offset))
            while view:
                view = view[os.pwrite(out_fd, view, offset + length - len(view)):]

        for_each_block(size, threads, copy)
        os.fsync(out_fd)
    finally:
        os.close(in_fd)
        os.close(out_fd)


def write_and_print(out_json: str, result: dict, samples: dict, median: dict, size: int) -> None:
    """Writes `result` to out_json and prints each command's median, rate and minimum."""
    import json
    with open(out_json, "w") as sink:
        json.dump(result, sink, indent=1)
    for name, value in median.items():
        print(f"{name:22s} median {value:7.3f} s  {size / value / 1e9:6.2f} GB/s   min {min(samples[name]):7.3f} s")


def time_shell_rounds(commands: dict, rounds: int) -> dict:
    """Seconds of each shell pipeline (bash -o pipefail) per round, the commands interleaved in
    every round so that a noisy machine slows them alike: {name: [seconds, ...]}."""
    import subprocess
    import time
    samples: dict = {name: [] for name in commands}
    for _ in range(rounds):
        for name, line in commands.items():
            start = time.perf_counter()
            subprocess.run(["bash", "-o", "pipefail", "-c", line], check=True)
            samples[name].append(time.perf_counter() - start)
    return samples

