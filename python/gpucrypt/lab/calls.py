"""The calls the lab times, built once per case: a cipher, AEAD or hash over host bytes (wall
clock, transfers included on a GPU) or over a GPU-resident CuPy array (CUDA events on the stream:
kernel time, no transfers, the paper's T_enc). Shared by the experiments and the subprocess
worker (worker.py), so a case timed in another process is timed the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Optional

import gpucrypt
from gpucrypt import _native, info
from gpucrypt.hashing import device_hash_variant
from gpucrypt.lab.framework import random_bytes, repeat

WALL_HOST = "wall clock of one Python call on host bytes (on a GPU: staging, copies and kernel)"
OPENCL_EVENTS = "OpenCL profiling events around one kernel on device-resident data: kernel only"
KERNEL_EVENTS = "CUDA events around one call on GPU-resident data (device-pointer API): kernel only"


def cupy_module():
    """CuPy, or None when it is not installed or sees no GPU."""
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception:  # noqa: BLE001 - missing module, missing driver: both mean "no CuPy here"
        return None


def device_index(device: str) -> int:
    """The index of ``device`` as the library parses it: for a GPU that works on its own memory,
    the CUDA runtime's device number that CuPy and NVML take."""
    return _native.parse_device_name(device)[1]


def key_len(name: str) -> int:
    parts = name.split("-")
    bits = int(parts[1])
    return bits // 4 if parts[2] == "xts" else bits // 8


@dataclass
class Case:
    call: Callable[[], object]
    variant: Optional[str]
    device: str
    timed: str
    resident: bool
    num_bytes: int

    def samples(self, reps: int, drop: int = 0, budget_s: Optional[float] = None) -> list:
        if not self.resident:
            return repeat(self.call, reps, drop, budget_s)
        return event_samples(self.call, reps, drop, budget_s, device_index(self.device))


def event_samples(call, reps: int, drop: int, budget_s: Optional[float], index: int) -> list:
    """Seconds between CUDA events recorded around each call on the current stream."""
    import time
    cupy = cupy_module()
    with cupy.cuda.Device(index):
        for _ in range(max(drop, 1)):   # at least one untimed call: lazy set-up stays out
            call()
        cupy.cuda.get_current_stream().synchronize()
        samples, start_wall = [], time.perf_counter()
        for _ in range(reps):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            call()
            end.record()
            end.synchronize()
            samples.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
            if budget_s is not None and len(samples) >= 3 and time.perf_counter() - start_wall > budget_s:
                break
    return samples


# "With transfers", defined once for the whole lab: the stream engine (gpucrypt.stream, the path
# StreamCipher, files and the CLI take) from host memory to host memory. Pageable: ordinary bytes,
# staged through the engine's page-locked buffers; page-locked: stream.page_locked() buffers, which
# the GPU reads and writes by DMA. Other API paths (one Cipher call, a one-request Batch) appear
# only as labelled extra series.
WITH_TRANSFERS = ("with transfers: wall clock of stream.transform_into (the stream engine: host memory "
                  "in, host memory out, copies overlapped with kernels) on {memory} memory")
STREAM_PATHS = ("pageable", "page-locked")


def stream_case(name: str, device: str, num_bytes: int, memory: str = "pageable", variant: Optional[str] = None,
                job_size: Optional[int] = None, depth: Optional[int] = None) -> "StreamCase":
    """``name`` (ECB, CTR, CBC/CFB/OFB) over ``num_bytes`` of host memory through the stream engine
    on ``device``; ``memory`` is "pageable" or "page-locked". ``depth`` caps the jobs in flight
    (1: one job at a time, no overlap between jobs)."""
    from gpucrypt import stream
    key = os.urandom(key_len(name))
    iv = None if name.endswith("-ecb") else os.urandom(16)
    if memory == "page-locked":
        data, out = stream.page_locked(num_bytes), stream.page_locked(num_bytes)
        data[:] = random_bytes(num_bytes)
    else:
        data, out = bytearray(random_bytes(num_bytes)), bytearray(num_bytes)
    case = StreamCase(None, variant, device, WITH_TRANSFERS.format(memory=memory), False, num_bytes)
    case.last = stream.StreamStats()

    def call():
        case.last = stream.StreamStats()
        stream.transform_into(name, key, iv, data, out, device=device, job_size=job_size, variant=variant,
                              stats=case.last, **({"depth": depth} if depth else {}))
        record = case.last.devices.get(device)
        if record is not None and record.variant:
            case.variant = record.variant
    case.call = call
    return case


@dataclass
class StreamCase(Case):
    last: object = None

    def kernel_s(self) -> Optional[float]:
        """The device's kernel seconds in the last call (its compute stage), None when not reported."""
        record = self.last.devices.get(self.device) if self.last else None
        return record.stages.get("compute_s") if record else None


XTS_MAX_DATA_UNIT = 1 << 24   # IEEE 1619: 2^20 blocks (src/modes/xts.hpp kXtsMaxDataUnitLen)


def cipher_case(name: str, device: str, num_bytes: int, variant: Optional[str] = None,
                resident: bool = False) -> Case:
    """Encryption of ``num_bytes`` with ``name`` (a cipher or ``*-gcm``) on ``device``. XTS times
    at most one data unit of 16 MiB, the IEEE 1619 cap the library enforces."""
    key = os.urandom(key_len(name))
    mode = name.split("-")[2]
    if mode == "xts":
        num_bytes = min(num_bytes, XTS_MAX_DATA_UNIT)
    if resident and not info.resident_memory(device):
        raise ValueError(f"GPU-resident timing needs a device that works on its own memory, not {device}")
    if mode == "gcm":
        aead = gpucrypt.AEAD(name, key, device=device, variant=variant)
        nonce = os.urandom(12)
        used_variant = aead.variant
        data = _data(num_bytes, device, resident)
        call = lambda: aead.encrypt(nonce, data)  # noqa: E731 - a CuPy array returns (ct, tag)
    else:
        iv = None if mode == "ecb" else os.urandom(16)
        cipher = gpucrypt.Cipher(name, key, iv=iv, device=device, padding=False, variant=variant)
        used_variant = cipher.variant
        data = _data(num_bytes, device, resident)
        if resident:
            out = _empty_like(data, device)
            call = lambda: cipher.encrypt(data, out=out, iv=iv)  # noqa: E731
        else:
            call = lambda: cipher.encrypt(data, iv=iv)  # noqa: E731
    return Case(call, used_variant, device, KERNEL_EVENTS if resident else WALL_HOST,
                resident, num_bytes)


def hash_case(name: str, device: str, num_bytes: int) -> Case:
    """One message of ``num_bytes`` hashed on ``device`` (a GPU hashes one message per thread)."""
    data = random_bytes(num_bytes)
    length = 32 if name.startswith(("shake", "kt", "parallelhash", "cshake")) else None
    variant = device_hash_variant(name, device)
    return Case(lambda: gpucrypt.hash(name, data, length=length, device=device), variant, device,
                WALL_HOST, False, num_bytes)


def _data(num_bytes: int, device: str, resident: bool):
    if not resident:
        return random_bytes(num_bytes)
    cupy = cupy_module()
    with cupy.cuda.Device(device_index(device)):
        return cupy.random.randint(0, 256, num_bytes, dtype=cupy.uint8)


def _empty_like(array, device: str):
    cupy = cupy_module()
    with cupy.cuda.Device(device_index(device)):
        return cupy.empty_like(array)
