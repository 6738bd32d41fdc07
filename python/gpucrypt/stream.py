"""The stream engine's Python facade: host data of any size through the library's bounded pipeline
of device workers (include/gpucrypt/scheduler.hpp, transform.hpp, format.hpp), in input order,
with the GIL released. How jobs, devices, ``cpu_share`` ("auto": measured; a number: the CPU's
fraction of the bytes), back-pressure and ``StreamStats`` work: docs/engine.md, "Stream engine".

Users: ``gpucrypt.fileformat`` and the CLI, ``StreamCipher``/``transform``/``transform_into`` for
data in memory, ``hash_stream``/``hash_file``. Keys are wiped by the library: ``StreamCipher``'s
stream holds the only copy and zeroes it with its staging buffers on close; ``transform_into``
copies its key into a ``bytearray`` zeroed when the work ends.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Optional, Sequence, Union

from gpucrypt import _native
from gpucrypt._buffers import MemorySink, MemorySource
from gpucrypt._buffers import as_bytes_like as _as_bytes_like
from gpucrypt._buffers import check_length as _check_length
from gpucrypt._buffers import optional_bytes as _optional_bytes
from gpucrypt._buffers import parse_cipher_name as _parse_cipher_name
from gpucrypt.info import auto_gpus, constant_time_variant, cuda_available, variants  # noqa: F401
from gpucrypt.info import devices as list_devices  # noqa: F401

__all__ = [
    "Cancelled", "StreamStats", "DeviceStats", "StreamCipher", "transform", "transform_into",
    "hash_stream", "hash_file", "constant_time_variant", "resolve_devices", "plan_devices", "parse_cpu_share",
    "normalise_device", "forget_device_sets", "page_locked", "MemorySource", "MemorySink", "add_native_stats",
]


class Cancelled(Exception):
    """The work was cancelled (the ``cancel`` event was set)."""


# ----------------------------------------------------------------------------- devices and variants

# parse_cpu_share(value) -> None, "auto" or a fraction 0..1 (also from text, as on the command line);
# ValueError for anything else: the library's parser (device.hpp), the one select_devices reads the share with.
parse_cpu_share = _native.parse_cpu_share

# forget_device_sets(): the device sets this process measured and kept for each kind of work
# (cpu_share "auto", docs/engine.md "Devices") are forgotten; the next run of each kind probes again.
forget_device_sets = _native.forget_device_sets


def normalise_device(name: str) -> str:
    """'cpu', 'cuda:N' ('cuda' is 'cuda:0'), 'opencl:N'; ValueError for anything else. The library's one
    device-name parser (gpucrypt.hpp, parse_device_name) decides."""
    return _native.parse_device_name(name.strip())[2]


def resolve_devices(device: str = "auto", devices: Union[str, Sequence[str], None] = None,
                    cpu_share=None) -> tuple[list, Union[str, float]]:
    """``plan_devices`` with each device checked to exist: a ``DeviceError`` saying why one does not,
    before any work. The file functions, the stream engine and the CLI all resolve their devices
    here, so that no share of the work falls silently to the devices that exist."""
    return _native.select_devices(device or "auto", devices, cpu_share, True)


def plan_devices(device: str = "auto", devices: Union[str, Sequence[str], None] = None,
                 cpu_share=None) -> tuple[list, Union[str, float]]:
    """(devices, share) the options ask for, share ``"auto"`` or a float, without checking that the
    devices exist: the library's one device policy (gpucrypt/device.hpp ``select_devices``).

    ``devices`` (a list, or text such as ``"cuda:0,cuda:1"``) replaces ``device``; a ``ValueError``
    when both name devices, or for a ``cpu_share`` beside the CPU named alone. ``auto``: every GPU
    (``info.auto_gpus()``) plus the CPU, ``cpu_share="auto"``, or the CPU alone. Named devices run
    alone unless ``cpu_share`` adds the CPU (``0`` keeps it out); ``cpu`` beside GPUs measures the
    shares (docs/engine.md, "Devices").
    """
    return _native.select_devices(device or "auto", devices, cpu_share, False)


# ----------------------------------------------------------------------------- statistics

@dataclass
class DeviceStats:
    jobs: int = 0
    bytes: int = 0
    busy_s: float = 0.0           # wall time inside the worker's native calls
    rate: float = 0.0             # bytes/s, from the scheduler (include/gpucrypt/scheduler.hpp; 0 until measured)
    stages: dict = field(default_factory=dict)  # seconds per native stage (h2d_s, compute_s, d2h_s, ...)
    variant: str = ""

    @property
    def gb_per_s(self) -> float:
        """Gigabytes (10^9 bytes) per second of busy time; "gbps" would be gigabits (docs/lab.md)."""
        return self.bytes / self.busy_s / 1e9 if self.busy_s else 0.0


@dataclass
class StreamStats:
    """What a stream did: bytes, time per stage (the calling thread's reading, writing and
    waiting; the workers' computing) and, per device, its share of the work."""

    bytes_in: int = 0
    bytes_out: int = 0
    read_s: float = 0.0
    write_s: float = 0.0
    wait_s: float = 0.0            # calling thread blocked on a full pipeline
    wall_s: float = 0.0
    device_choice: str = ""        # what the measured device set found (include/gpucrypt/scheduler.hpp)
    devices: dict = field(default_factory=dict)   # name -> DeviceStats

    def device(self, name: str) -> DeviceStats:
        return self.devices.setdefault(name, DeviceStats())

    @property
    def compute_s(self) -> float:
        return sum(d.busy_s for d in self.devices.values())

    def shares(self) -> dict:
        """Fraction of the bytes each device processed."""
        total = sum(d.bytes for d in self.devices.values())
        return {name: (d.bytes / total if total else 0.0) for name, d in self.devices.items()}

    def as_dict(self) -> dict:
        return {
            "bytes_in": self.bytes_in, "bytes_out": self.bytes_out, "wall_s": self.wall_s,
            "read_s": self.read_s, "compute_s": self.compute_s, "write_s": self.write_s, "wait_s": self.wait_s,
            "device_choice": self.device_choice,
            "gb_per_s": self.bytes_in / self.wall_s / 1e9 if self.wall_s else 0.0,
            "devices": {name: {"jobs": d.jobs, "bytes": d.bytes, "busy_s": d.busy_s, "gb_per_s": d.gb_per_s,
                               "recent_gb_per_s": d.rate / 1e9,
                               "share": self.shares()[name], "variant": d.variant, "stages": dict(d.stages)}
                        for name, d in self.devices.items()},
        }


def add_native_stats(stats: StreamStats, native: dict, bytes_in: int = 0, bytes_out: int = 0) -> None:
    """Adds what a native call reports (``{"devices": {name: {jobs, bytes, busy_s, ...}}, "wait_s",
    "wall_s"}``: the library's own clock; rate, variant, stage seconds and a file's read_s /
    write_s where given) and the caller's bytes to ``stats``."""
    stats.bytes_in += bytes_in
    stats.bytes_out += bytes_out
    stats.wall_s += native["wall_s"]
    stats.wait_s += native["wait_s"]
    stats.read_s += native.get("read_s", 0.0)
    stats.write_s += native.get("write_s", 0.0)
    stats.device_choice = native.get("device_choice") or stats.device_choice
    for name, numbers in native["devices"].items():
        record = stats.device(name)
        record.jobs += numbers["jobs"]
        record.bytes += numbers["bytes"]
        record.busy_s += numbers["busy_s"]
        record.rate = numbers.get("rate", record.rate)
        record.variant = numbers.get("variant") or record.variant
        for stage in ("h2d_s", "compute_s", "d2h_s"):
            if stage in numbers:
                record.stages[stage] = record.stages.get(stage, 0.0) + numbers[stage]


# ----------------------------------------------------------------------------- host buffers

def page_locked(size: int, devices: Sequence[str] = ()):
    """A writable buffer of ``size`` bytes of host memory that a GPU copies with no staging (CUDA's is
    page-locked) from the first of ``devices`` (default: ``auto``'s GPUs) that has such memory (the
    Device's alloc_host): a memoryview, else a bytearray. Zeroed and freed with its last reference."""
    for device in devices or auto_gpus():
        try:
            return memoryview(_native.HostBuffer(device, size))
        except (_native.DeviceError, MemoryError):
            continue
    return bytearray(size)


def holds_host_memory(devices: Sequence[str], buffer) -> bool:
    """Whether ``buffer`` is host memory that one of ``devices`` copies with no staging (what
    ``page_locked`` gives, or a pinned PyTorch tensor)."""
    return any(_native.holds_host_memory(device, buffer) for device in devices)


# ----------------------------------------------------------------------------- in-memory streams

class StreamCipher:
    """Raw-mode encryption or decryption of data of any size, fed in pieces, on several devices.

    ``update(data)`` returns the output ready so far, in order (it lags the input by up to
    ``depth`` chunks); ``finalize()`` returns the rest. Output is byte-identical to
    ``gpucrypt.Cipher(name, key, iv, padding=False)``: no padding, so ECB/CBC need a multiple of 16
    bytes in all. ECB, CTR and CBC/CFB decryption spread over every device; CBC/CFB encryption and
    OFB run on one (the CPU when it is among them). The chunks, IVs, staging buffers and the lock
    that lets threads share one stream are the library's (transform.hpp TransformStream); this class
    keeps the arguments, stats, progress and cancel.
    """

    def __init__(self, name, key, iv=None, *, decrypt=False, device="auto", devices=None, cpu_share=None,
                 chunk_size=None, depth=None, variant=None, progress=None, cancel=None):
        self.name = _parse_cipher_name(name)["canonical"]
        if chunk_size is not None and (_check_length(chunk_size, "chunk_size", minimum=1) % 16):
            raise ValueError(f"chunk_size must be a positive multiple of 16, got {chunk_size}")
        key = _as_bytes_like(key, "key")   # copied by the library's stream, which zeroes it on close
        iv = _optional_bytes(iv, "iv")
        chosen, share = resolve_devices(device, devices, cpu_share)
        self._stream = _native.TransformStream(self.name, not decrypt, key, iv, variant or "", chosen,
                                               share, depth or 0, chunk_size or 0)
        self.devices = self._stream.devices
        self.stats = StreamStats(devices={d: DeviceStats() for d in self.devices})
        self._progress, self._cancelled = progress, (cancel.is_set if cancel is not None else None)
        self._finalized = False
        # The library's stream takes one call at a time too; this lock also covers the stats and
        # the return to the caller, so that a thread that got earlier output resumes first.
        self._lock = threading.RLock()

    def update(self, data) -> bytes:
        """Feeds ``data``; returns the output ready so far, in order."""
        data = _as_bytes_like(data, "data")
        with self._lock:
            try:
                out = self._stream.update(data, self._progress, self._cancelled)
            except BaseException:
                self.close()
                raise
            self.stats.bytes_in += memoryview(data).nbytes
            self.stats.bytes_out += len(out)
            return out

    def finalize(self) -> bytes:
        """Processes what is left and returns the rest of the output; stops the workers."""
        with self._lock:
            try:
                out = self._stream.finalize(self._progress, self._cancelled)
            finally:
                self.close()
            self.stats.bytes_out += len(out)
            return out

    def close(self) -> None:
        """Stops the workers and wipes the key and staging buffers (finalize does this too)."""
        with self._lock:
            self._stream.close()
            if not self._finalized:
                self._finalized = True
                add_native_stats(self.stats, self._stream.stats())   # wall_s: from its start to its last drain

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False


def transform(name, key, iv, pieces: Iterable, **options) -> Iterator[bytes]:
    """``StreamCipher`` as a generator: yields output pieces as they become ready while
    consuming ``pieces`` (any iterable of bytes-like), with memory bounded by the pipeline."""
    stream = StreamCipher(name, key, iv, **options)
    with stream:
        for piece in pieces:
            out = stream.update(piece)
            if out:
                yield out
        out = stream.finalize()
        if out:
            yield out


def transform_into(name, key, iv, data, out=None, *, decrypt=False, device="auto", devices=None, cpu_share=None,
                   job_size=None, variant=None, progress=None, cancel=None,
                   stats: Optional[StreamStats] = None, depth: Optional[int] = None):
    """Encrypt or decrypt a whole in-memory buffer into ``out`` (same length; ``out=data`` works
    in place, an ``out`` that partially overlaps ``data`` as if ``data`` were copied first, ``None``
    allocates a bytearray) on the stream engine's devices; returns ``out``.

    ``StreamCipher``'s bulk form (its modes, no padding; output equals ``Cipher(name, key, iv,
    padding=False)``): each job reads its slice of ``data`` and writes its slice of ``out`` in place,
    so page-locked buffers (``page_locked()``, a pinned PyTorch tensor) go to and from the GPU with
    no host copy, at PCIe speed. ``depth`` caps the jobs in flight (default: the engine's; 1 runs
    one job at a time, so one job's copies never overlap another's kernel).
    """
    source = memoryview(_as_bytes_like(data, "data")).cast("B")
    target = memoryview(bytearray(len(source)) if out is None else out).cast("B")
    if target.readonly:
        raise ValueError("out must be writable")
    if job_size is not None:
        _check_length(job_size, "job_size", minimum=1)
    stats = stats if stats is not None else StreamStats()
    # The jobs, their IVs, the overlap rule and the serial modes' single job are the library's
    # (gpucrypt/transform.hpp transform_range; 0 workers: each GPU's traits), on the scheduler with the GIL released.
    key = bytearray(_as_bytes_like(key, "key"))   # never bytearray(int): zeros
    try:
        _parse_cipher_name(name)                  # an unknown name before the devices are looked at
        chosen, share = resolve_devices(device, devices, cpu_share)
        native = _native.transform_range(name, not decrypt, key, _optional_bytes(iv, "iv"), variant or "", source,
                                         target, chosen, share, 0, depth or 0, job_size or 0, progress,
                                         cancel.is_set if cancel is not None else None)
    finally:
        _native.wipe(key)
    add_native_stats(stats, native, len(source), len(source))
    return target.obj if out is None else out


# ----------------------------------------------------------------------------- hashing

def hash_stream(name, source, length=None, *, read_size: Optional[int] = None, progress=None, cancel=None,
                stats: Optional[StreamStats] = None, device: str = "cpu", **params) -> bytes:
    """Hash everything readable from ``source`` in one native call (format.hpp hash_ends; docs/engine.md,
    "Hashing"): a regular file by the library's positional readers (a tree hash's leaves on
    ``device``), left at its end; a pipe, FIFO, stdin or a source in memory (its readinto or read)
    by its stream hasher on the CPU. A sponge (SHA-3, SHAKE, cSHAKE) is serial: always on the CPU.
    ``read_size``: the bytes of each read (a file's blocks rounded to whole leaves; default the
    library's: 8 MiB, a GPU's job length for a tree on a GPU, a stream's 4 MiB). ``params`` as for
    ``gpucrypt.new``; XOFs need ``length``. A ``variant`` hashes every byte on the CPU in that
    variant, a tree's leaves too."""
    from gpucrypt.hashing import new

    hasher = new(name, **params)   # the name and the parameters checked before any read
    out_len = length if length is not None else hasher.digest_size
    if not out_len:   # an XOF without a length (TypeError), or length=0: before any read
        return hasher.digest(length)
    if read_size is not None:
        _check_length(read_size, "read_size", minimum=1)
    digest, native = _native.format_hash_ends(
        source, name, bytes(params.get("customization", b"")), bytes(params.get("function_name", b"")),
        params.get("block_size", 8192), out_len, normalise_device(device), read_size or 0, params.get("variant") or "",
        progress, cancel.is_set if cancel is not None else None)
    add_native_stats(stats if stats is not None else StreamStats(), native, native["bytes"])
    return digest


def hash_file(name, path, length=None, **options) -> bytes:
    """``hash_stream`` over a file opened for reading."""
    with open(path, "rb") as source:
        return hash_stream(name, source, length, **options)
