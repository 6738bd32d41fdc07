"""Throughput measurement behind `gpucrypt speed`, the counterpart of `openssl speed -evp`.

Two timings per cell, both wall clock, both after one untimed warm-up call:

* ``native`` (the table's main rows): a C++ loop with the GIL released
  (``_native.speed_run``, include/gpucrypt/speed.hpp). The context is set up once, as openssl speed sets
  up its EVP context once, then one call per buffer until the time is spent: a cipher's
  ``update()`` in place on a stream that carries on from call to call; a GCM seal (or open) of
  the buffer as one message, no AAD, 16-byte tag; a hash's digest of the buffer (XOFs and
  ParallelHash: 32 bytes). With ``resident=True`` the buffers live in GPU memory and the
  device-pointer API runs (out of place); otherwise they are in host memory and a GPU's time
  includes the copies to it and back.
* ``python`` (``--python`` rows): the same work through the Python API, one call per buffer
  (``Cipher(...).encryptor().update``, XTS ``Cipher.encrypt``, ``AEAD.encrypt``/``decrypt``,
  ``gpucrypt.hash``): the difference to the native row is what the binding and the Python
  layer cost per call.

``run_cells`` runs a list of cells in this process with openssl-style progress lines on
stderr; ``run_cells_in_processes`` runs the same list in N processes at once and sums their
rates (openssl speed -multi). ``format_table`` and ``format_machine_readable`` print the
results as openssl speed does (``+H:``/``+F:`` lines for the latter).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Callable, Iterable, Optional, TextIO

import gpucrypt
from gpucrypt import _native
from gpucrypt.info import auto_gpus, is_gpu, resolve_device
from gpucrypt.hashing import device_hash_variant, hash_name

# Names gpucrypt.hash accepts (docs/python-api.md), hashlib spellings normalised first: the native
# hash registry's list (src/hash/hash_registry.cpp), the one list of hash names.
HASH_NAMES = frozenset(_native.hash_names())
# Hashes whose output length the caller chooses (no fixed digest size); speed asks for 32 bytes of
# output (as the native loop does, src/api/speed.cpp).
VARIABLE_LENGTH_HASHES = frozenset(name for name in HASH_NAMES if _native.hash_info(name)["digest_size"] == 0)
XOF_BENCH_OUTPUT_LEN = 32
GCM_NONCE_LEN = 12
DEFAULT_ALGORITHMS = ("aes-128-ctr", "aes-256-ctr", "aes-256-cbc", "aes-256-gcm",
                      "camellia-256-ctr", "sc2000-256-ctr", "sha3-256")
# openssl speed's buffer lengths; a GPU gets large buffers too, where it has work enough.
BUFFER_LENS = (16, 64, 256, 1024, 8192, 16384)
GPU_BUFFER_LENS = BUFFER_LENS + (1 << 20, 16 << 20, 256 << 20)
DEFAULT_SECONDS = 3.0
# openssl speed prints rates above this many bytes per second in thousands with a "k"; smaller
# ones as they are.
OPENSSL_THOUSANDS_ABOVE = 10000
TIMING_DESCRIPTION = ("wall clock of a native loop (C++, no Python inside), as openssl speed -evp times "
                      "EVP: set up once, then one call per buffer, after one untimed warm-up call")
# What one call of the native loop is, per kind (include/gpucrypt/speed.hpp).
CALL_DESCRIPTION = {
    "cipher": "cipher update() in place, one stream carrying on from call to call",
    "aead": "GCM seal (open with --decrypt) of the buffer as one message, 12-byte nonce, no AAD, "
            "16-byte tag (openssl speed -aead; plain -evp times update() on one open message)",
    "hash": "one digest of the buffer from a fresh context (XOFs and ParallelHash: 32 bytes)",
}
PLACEMENT_DESCRIPTION = {
    "host": "buffer in host memory (pageable); on a GPU the time includes the copies to and from it",
    "device": "buffers in GPU memory (device-resident), device-pointer API, out of place, "
              "stream synchronised before each clock read",
}
PYTHON_DESCRIPTION = ("rows marked (python): the same work through the Python API, one call per "
                      "buffer (Cipher.encryptor().update, AEAD.encrypt/decrypt, gpucrypt.hash)")


def normalise_hash_name(name: str) -> str:
    """`sha3_256` -> `sha3-256`, `shake_128` -> `shake128` (gpucrypt.hashing.hash_name, the one
    place hash spellings are decided); names that are not hashes come back lower-cased."""
    try:
        return hash_name(name)
    except ValueError:
        return name.lower()


def algorithm_kind(algorithm: str) -> str:
    """'cipher', 'aead' or 'hash'; ValueError naming the accepted forms for an unknown name."""
    return _native.speed_kind(normalise_hash_name(algorithm))


def canonical_name(algorithm: str) -> str:
    """The name the tables show: hashes as hashlib-style `sha3-256`, ciphers lower-case."""
    algorithm = normalise_hash_name(algorithm)
    if algorithm_kind(algorithm) == "hash":
        return _native.hash_info(algorithm)["name"]
    return _native.parse_cipher_name(algorithm)["canonical"]


def default_buffer_lens(device: str, resident: bool = False) -> tuple[int, ...]:
    """openssl's six lengths; on a GPU (or device-resident) also 1 MiB, 16 MiB and 256 MiB."""
    return GPU_BUFFER_LENS if resident or _names_a_gpu(device) else BUFFER_LENS


def _names_a_gpu(device: str) -> bool:
    """Whether `device` is a GPU (its traits say so), for choosing lengths only: a malformed name
    counts as not, and its cells fail with the parser's message."""
    try:
        return device != "auto" and is_gpu(device)
    except ValueError:
        return False


def _cell_device(algorithm: str, kind: str, device: str, buffer_len: int, resident: bool) -> str:
    """The concrete device of one cell: device="auto" follows the API's policy for that size
    (gpucrypt.info.resolve_device), or takes the first GPU when the data is to be resident."""
    if device == "auto" and resident:
        gpus = [gpu for gpu in auto_gpus() if _native.resident_memory(gpu)]
        if not gpus:
            raise gpucrypt.DeviceError("device-resident timing: a GPU that works on its own memory is not available "
                                       "here (--device names one)")
        return gpus[0]
    family = None if kind == "hash" else algorithm.split("-")[0]
    return resolve_device(device, buffer_len, family)


def _constant_time(variant: Optional[str]) -> Optional[bool]:
    return next((listed["constant_time"] for listed in gpucrypt.variants() if listed["name"] == variant), None)


def measure(algorithm: str, device: str = "cpu", variant: Optional[str] = None, buffer_len: int = 16384,
            seconds: float = DEFAULT_SECONDS, decrypt: bool = False, resident: bool = False) -> dict:
    """Time one (algorithm, buffer length) cell in the native loop; return a JSON-ready dict.

    Keys: algorithm, kind, timing ("native"), placement ("host" or "device"), device, variant,
    constant_time, buffer_len, decrypt, seconds (measured), num_calls, bytes_per_second,
    cpu_threads (the CPU thread pool's size), processes (1). Raises ValueError for unknown
    names or impossible parameters (e.g. 17 bytes of CBC), gpucrypt.DeviceError when the device
    is absent.
    """
    _check_cell(buffer_len, seconds)
    kind = algorithm_kind(algorithm)
    cell_device = _cell_device(algorithm, kind, device, buffer_len, resident)
    ran = _native.speed_run(normalise_hash_name(algorithm), not decrypt, variant or "", cell_device, resident,
                            buffer_len, seconds)
    return _cell(ran["algorithm"], kind, "native", "device" if resident else "host", ran["device"],
                 ran["variant"], buffer_len, decrypt, ran["seconds"], ran["num_calls"], ran["cpu_threads"])


def measure_python(algorithm: str, device: str = "cpu", variant: Optional[str] = None, buffer_len: int = 16384,
                   seconds: float = DEFAULT_SECONDS, decrypt: bool = False) -> dict:
    """Time one cell through the Python API (see the module docstring); the same dict as
    measure() with timing "python"."""
    _check_cell(buffer_len, seconds)
    kind = algorithm_kind(algorithm)
    cell_device = _cell_device(algorithm, kind, device, buffer_len, False)
    call, info = _python_call(normalise_hash_name(algorithm), kind, cell_device, variant, buffer_len, decrypt)
    num_calls, elapsed = _time_calls(call, seconds)
    return _cell(info["algorithm"], kind, "python", "host", info["device"], info["variant"], buffer_len,
                 decrypt, elapsed, num_calls, None)


def _check_cell(buffer_len: int, seconds: float) -> None:
    if buffer_len < 1:
        raise ValueError("buffer length must be at least 1 byte")
    if not seconds > 0:
        raise ValueError("seconds must be positive")


def _cell(algorithm, kind, timing, placement, device, variant, buffer_len, decrypt, seconds, num_calls,
          cpu_threads) -> dict:
    return {
        "algorithm": algorithm, "kind": kind, "timing": timing, "placement": placement, "device": device,
        "variant": variant, "constant_time": _constant_time(variant), "buffer_len": buffer_len,
        "decrypt": bool(decrypt) and kind != "hash", "seconds": seconds, "num_calls": num_calls,
        "bytes_per_second": num_calls * buffer_len / seconds, "cpu_threads": cpu_threads, "processes": 1,
    }


def _python_call(name: str, kind: str, device: str, variant: Optional[str], buffer_len: int,
                 decrypt: bool) -> tuple[Callable[[], object], dict]:
    """The Python API call that does one native-loop call's work, and what ran it."""
    data = os.urandom(buffer_len)
    if kind == "hash":
        length = XOF_BENCH_OUTPUT_LEN if name in VARIABLE_LENGTH_HASHES else None
        options = {} if variant is None else {"variant": variant}
        info = {"algorithm": _native.hash_info(name)["name"], "device": device,
                "variant": device_hash_variant(name, device, variant)}
        return (lambda: gpucrypt.hash(name, data, length=length, device=device, **options)), info
    parsed = _native.parse_cipher_name(name)
    key = os.urandom(parsed["key_len"])
    if kind == "aead":
        aead = gpucrypt.AEAD(name, key, device=device, variant=variant)
        nonce = os.urandom(GCM_NONCE_LEN)
        info = {"algorithm": aead.name, "device": aead.device, "variant": aead.variant}
        if decrypt:
            sealed = aead.encrypt(nonce, data)
            return (lambda: aead.decrypt(nonce, sealed)), info
        return (lambda: aead.encrypt(nonce, data)), info
    iv = None if parsed["mode"] == "ecb" else os.urandom(16)
    # openssl speed -evp times ECB/CBC without padding: every byte counted is a byte processed.
    cipher = gpucrypt.Cipher(name, key, iv=iv, device=device, padding=False if parsed["whole_blocks"] else None,
                             variant=variant)
    info = {"algorithm": cipher.name, "device": cipher.device, "variant": cipher.variant}
    if parsed["mode"] == "xts":   # an XTS context holds the whole data unit until finalize()
        return (lambda: cipher.decrypt(data) if decrypt else cipher.encrypt(data)), info
    context = cipher.decryptor() if decrypt else cipher.encryptor()
    return (lambda: context.update(data)), info


def _time_calls(call: Callable[[], object], seconds: float) -> tuple[int, float]:
    """(number of calls, elapsed seconds): call repeatedly until `seconds` have passed."""
    call()  # warm-up: lazy initialisation, GPU context and allocations stay out of the timing
    num_calls = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        call()
        num_calls += 1
        now = time.perf_counter()
        if now >= deadline:
            return num_calls, now - start


# ----------------------------------------------------------------------------- runs of cells

def plan(algorithms: Iterable[str], buffer_lens: Iterable[int], python: bool = False) -> list[dict]:
    """The cells of a run, in table order: per algorithm, per length, native then python."""
    timings = ("native", "python") if python else ("native",)
    return [{"algorithm": algorithm, "buffer_len": length, "timing": timing}
            for algorithm in algorithms for timing in timings for length in buffer_lens]


def row_name(cell: dict) -> str:
    return cell["algorithm"] + (" (python)" if cell["timing"] == "python" else "")


def run_cells(cells: list[dict], device: str = "cpu", variant: Optional[str] = None,
              seconds: float = DEFAULT_SECONDS, decrypt: bool = False, resident: bool = False,
              machine_readable: bool = False, progress: Optional[TextIO] = None,
              skip_failing: bool = False) -> tuple[list[dict], dict]:
    """Times each cell in this process; (results, skipped algorithm -> reason).

    Progress goes to `progress` (default stderr) before and after each cell, as openssl speed
    prints it: "Doing aes-128-ctr for 3s on 16 size blocks: 47168350 aes-128-ctr's in 2.99s",
    or "+DT:aes-128-ctr:3:16" and "+R:47168350:aes-128-ctr:2.990000" when machine_readable.
    With skip_failing, an algorithm whose cell raises ValueError is skipped (a default
    algorithm this build lacks) instead of ending the run.
    """
    progress = progress or sys.stderr
    results, skipped = [], {}
    for cell in cells:
        if cell["algorithm"] in skipped:
            continue
        name = row_name({**cell, "algorithm": normalise_hash_name(cell["algorithm"])})
        if machine_readable:
            progress.write(f"+DT:{name}:{seconds:g}:{cell['buffer_len']}\n")
        else:
            progress.write(f"Doing {name} for {seconds:g}s on {cell['buffer_len']} size blocks: ")
        progress.flush()
        try:
            if cell["timing"] == "python":
                result = measure_python(cell["algorithm"], device, variant, cell["buffer_len"], seconds, decrypt)
            else:
                result = measure(cell["algorithm"], device, variant, cell["buffer_len"], seconds, decrypt, resident)
        except Exception as exc:
            if not machine_readable:
                progress.write("failed\n")   # ends the progress line before the error is printed
                progress.flush()
            if not (skip_failing and isinstance(exc, ValueError)):
                raise
            skipped[cell["algorithm"]] = str(exc)
            continue
        if machine_readable:
            progress.write(f"+R:{result['num_calls']}:{name}:{result['seconds']:f}\n")
        else:
            progress.write(f"{result['num_calls']} {name}'s in {result['seconds']:.2f}s\n")
        progress.flush()
        results.append(result)
    return results, skipped


def run_cells_in_processes(num_processes: int, cells: list[dict], **options) -> tuple[list[dict], dict]:
    """openssl speed -multi: the same cells in num_processes processes at once (each runs the
    whole list; progress in the machine-readable form so that lines from different processes
    do not mix); per cell, the rates and call counts are summed, the time is the longest."""
    options = {**options, "machine_readable": True}
    # spawn, not fork: a forked child of a process that has touched CUDA cannot use the GPU.
    # A Pool, not a ProcessPoolExecutor: leaving the block early (an error, Ctrl-C, SIGTERM)
    # terminates the workers instead of waiting for their whole run.
    import multiprocessing   # here: its import costs every other command 4 ms of start-up
    with multiprocessing.get_context("spawn").Pool(num_processes) as pool:
        pending = [pool.apply_async(run_cells, (cells,), options) for _ in range(num_processes)]
        outcomes = [result.get() for result in pending]
    summed = [dict(cell) for cell in outcomes[0][0]]
    for results, _ in outcomes[1:]:
        for total, cell in zip(summed, results):
            total["bytes_per_second"] += cell["bytes_per_second"]
            total["num_calls"] += cell["num_calls"]
            total["seconds"] = max(total["seconds"], cell["seconds"])
    for total in summed:
        total["processes"] = num_processes
    return summed, outcomes[0][1]


# ----------------------------------------------------------------------------- output

def _rows(results: list[dict]) -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {}
    for result in results:
        rows.setdefault(row_name(result), []).append(result)
    return rows


def _openssl_value(bytes_per_second: float) -> str:
    if bytes_per_second > OPENSSL_THOUSANDS_ABOVE:
        return f"{bytes_per_second / 1e3:.2f}k"
    return f"{bytes_per_second:.2f} "


def format_table(results: list[dict], buffer_lens: Iterable[int]) -> list[str]:
    """openssl speed's table: "type  16 bytes  64 bytes ..." and one row per algorithm in 1000s
    of bytes per second ("k"), columns widened only where a name or value needs it."""
    buffer_lens = list(buffer_lens)
    rows = _rows(results)
    name_width = max([13] + [len(name) + 1 for name in rows])
    cells = {name: [_openssl_value(cell["bytes_per_second"]) for cell in row] for name, row in rows.items()}
    widths = [max([13, len(f"{length} bytes") + 1] + [len(values[i]) + 1 for values in cells.values()
                                                    if i < len(values)])
              for i, length in enumerate(buffer_lens)]
    lines = ["The 'numbers' are in 1000s of bytes per second processed.",
             "type".ljust(name_width - 1) + "".join(f"{f'{length} bytes':>{width}}"
                                                   for length, width in zip(buffer_lens, widths))]
    for name, values in cells.items():
        lines.append(name.ljust(name_width) + "".join(f"{value:>{width}}" for value, width in zip(values, widths)))
    return lines


def format_machine_readable(results: list[dict], buffer_lens: Iterable[int]) -> list[str]:
    """openssl speed -mr: "+H:16:64:..." then "+F:<row>:<name>:<bytes/s>:<bytes/s>..." per row."""
    lines = ["+H:" + ":".join(str(length) for length in buffer_lens)]
    for index, (name, row) in enumerate(_rows(results).items()):
        lines.append(f"+F:{index}:{name}:" + ":".join(f"{cell['bytes_per_second']:.2f}" for cell in row))
    return lines


def describe_run(results: list[dict], seconds: float, num_processes: int) -> list[str]:
    """What was timed: lines for the run (loop, calls, memory, threads), one per row with its
    device and variant."""
    placements = sorted({cell["placement"] for cell in results})
    lines = [f"timed: {TIMING_DESCRIPTION}; {seconds:g} s per cell; "
             + ("1 process" if num_processes == 1 else f"{num_processes} processes at once, rates summed")]
    kinds = [kind for kind in CALL_DESCRIPTION if any(cell["kind"] == kind for cell in results)]
    lines += [f"one call: {CALL_DESCRIPTION[kind]}" for kind in kinds]
    lines += [f"memory: {PLACEMENT_DESCRIPTION[placement]}" for placement in sorted({cell["placement"] for cell in results})]
    cpu_threads = sorted({cell["cpu_threads"] for cell in results if cell["cpu_threads"]})
    if cpu_threads:
        gpu_from_host = any(_names_a_gpu(cell["device"]) and cell["placement"] == "host" for cell in results)
        lines.append(f"threads: CPU thread pool of {', '.join(map(str, cpu_threads))} per process "
                     "(GPUCRYPT_CPU_THREADS), used by calls large enough to split"
                     + ("; also copies into the GPU's staging buffers" if gpu_from_host else ""))
    if any(cell["timing"] == "python" for cell in results):
        lines.append(f"python: {PYTHON_DESCRIPTION}")
    for name, row in _rows(results).items():
        groups: dict[tuple, list[int]] = {}
        for cell in row:
            groups.setdefault((cell["device"], cell["variant"], cell["constant_time"]), []).append(cell["buffer_len"])
        parts = []
        for (device, variant, constant_time), lengths in groups.items():
            text = f"{variant or 'default'} on {device}"
            text += {True: ", constant-time", False: ", not constant-time"}.get(constant_time, "")
            if len(groups) > 1:
                text += f" ({', '.join(str(length) for length in lengths)} bytes)"
            parts.append(text)
        direction = ", decryption" if row[0]["decrypt"] else ""
        lines.append(f"{name}: {'; '.join(parts)}{direction}")
    return lines
