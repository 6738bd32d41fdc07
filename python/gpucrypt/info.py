"""What this build can do: devices and implementation variants.

Every answer comes from the native device registry (include/gpucrypt/device.hpp): the devices it
lists, the variants each backend offers, and the variant a device selects; this module adds only
the ``auto`` device policy and caching.
"""

from __future__ import annotations

import functools
from typing import Optional

from gpucrypt import _native

__all__ = ["devices", "variants", "cuda_available", "resolve_device", "fixed_device", "constant_time_variant",
           "device_traits", "is_gpu", "resident_memory", "kernel_timing", "device_variants",
           "AUTO_GPU_MIN_BYTES"]


# The variant list and the devices are fixed for the life of a process (the build decides the
# variants; the CUDA runtime enumerates devices once), and device="auto" consults them on every
# call: asking the native core each time cost 4.9 us per call, more than a small AES-GCM seal.
@functools.lru_cache(maxsize=None)
def _native_devices() -> tuple:
    return tuple(_native.devices())


@functools.lru_cache(maxsize=None)
def _native_variants() -> tuple:
    return tuple(_native.variants())


def devices() -> list:
    """Devices usable as ``device=``: always ``cpu``, plus ``cuda:N`` for each working GPU and
    ``opencl:N`` for each OpenCL device (any vendor's GPU, or a CPU through PoCL)."""
    return [dict(d) for d in _native_devices()]


def variants(backend: Optional[str] = None, algorithm: Optional[str] = None) -> list:
    """Implementation variants, fastest first per algorithm, with their constant-time flag."""
    return [
        dict(v)
        for v in _native_variants()
        if (backend is None or v["backend"] == backend)
        and (algorithm is None or v["algorithm"] == algorithm)
    ]


@functools.lru_cache(maxsize=None)
def cuda_available() -> bool:
    """Whether at least one CUDA device works in this process."""
    # Asks the CUDA backend alone: listing every device would also start OpenCL, which loads
    # PoCL and LLVM (~40 ms, 60 MiB) on machines where the answer is the CPU anyway.
    return _native.cuda_unavailable_reason() == ""


@functools.lru_cache(maxsize=None)
def _traits(device: str) -> tuple:
    traits = _native.device_traits(device)
    return traits["is_gpu"], traits["job_len"], traits["workers"]


def device_traits(device: str) -> dict:
    """What a device is to code that spreads work over devices (the library's ``device_traits``):
    ``is_gpu`` (work and data go to a runtime of its own; False for the host's CPU), ``job_len``
    (bytes per job that run near its full speed) and ``workers`` (jobs kept in flight on it).
    Answered from the device's backend without opening it (so also for a GPU this machine lacks);
    ValueError for a malformed name."""
    return dict(zip(("is_gpu", "job_len", "workers"), _traits(device)))


def is_gpu(device: str) -> bool:
    """``device_traits(device)["is_gpu"]``: asked instead of comparing names with ``"cpu"``."""
    return _traits(device)[0]


@functools.lru_cache(maxsize=None)
def resident_memory(device: str) -> bool:
    """Whether ``device`` works on its own memory (Device::resident_memory: GPU arrays, device
    pointers, timing by events on its streams), asked instead of naming a backend. Asks the device
    (every device of a backend answers alike): gpucrypt.DeviceError when its backend cannot run here."""
    return _native.resident_memory(device)


@functools.lru_cache(maxsize=None)
def kernel_timing(device: str) -> bool:
    """Whether ``device`` times its own kernels on data already on it (Device::kernel_timing, the
    lab's ``_native.time_kernel``). Asks the device, as resident_memory does."""
    return _native.kernel_timing(device)


def device_variants(device: str, algorithm: Optional[str] = None) -> list:
    """``variants()`` of the backend that runs ``device`` (the kind its name parses to), e.g. the
    Keccak variant a GPU hashes with (``device_variants("cuda:0", "keccak")``)."""
    return variants(_native.parse_device_name(device)[0], algorithm)


def auto_gpus() -> list:
    """The GPUs ``device="auto"`` uses, in index order: every CUDA device, else every OpenCL GPU
    (the library's one device policy, gpucrypt/device.hpp ``auto_gpus``); [] without a GPU."""
    return _native.auto_gpus()


def resolve_device(device: Optional[str], num_bytes: Optional[int] = None, algorithm: Optional[str] = None) -> str:
    """Turns ``auto``/``cuda[:N]``/``opencl[:N]``/``cpu`` into a concrete device name.

    ``auto`` takes the first of ``auto_gpus()`` only where a GPU measured faster for data in host
    memory at that size (AUTO_GPU_MIN_BYTES below); otherwise, and whenever no GPU is present, the CPU.
    """
    if device is None or device == "auto":
        threshold = _auto_gpu_min_bytes(algorithm)
        if threshold is not None and num_bytes is not None and num_bytes >= threshold:
            gpus = auto_gpus()
            if gpus:
                return gpus[0]
        return "cpu"
    if not isinstance(device, str):
        raise TypeError(f"device must be a string such as 'cpu' or 'cuda:0', not {type(device).__name__}")
    return device.lower()


def fixed_device(device: Optional[str], algorithm: Optional[str] = None) -> Optional[str]:
    """``resolve_device``'s answer when it is the same for every message size (always, except
    ``auto`` with a GPU present for an algorithm the GPU wins at some size), else None. Lets a
    keyed object resolve its device once instead of per call."""
    if device is None or device == "auto":
        return "cpu" if _auto_gpu_min_bytes(algorithm) is None or not auto_gpus() else None
    return resolve_device(device)


# Smallest host-memory message for which device="auto" picks the GPU, per algorithm. Measured by
# bench/crossover.py on the H200 machine (16-core host), 2026-11-22
# (bench/results/h200-2026-11-22-crossover.json): Camellia and SC2000 are faster on the GPU from
# 16 KiB on (0.32 vs 0.15 GB/s there, 4.5 vs 2 GB/s at 1-16 MiB); AES is faster on the CPU at every
# size, because OpenSSL's AES-NI on 16 cores beats one PCIe link - unless this build has no
# OpenSSL, when the portable CPU AES is as slow as Camellia. None: never the GPU.
AUTO_GPU_MIN_BYTES = {"camellia": 16 * 1024, "sc2000": 16 * 1024, "aes": None}


@functools.lru_cache(maxsize=None)
def _cpu_runs_openssl_aes() -> bool:
    # The CPU device's own choice for bulk AES: aes_openssl wherever libcrypto is linked.
    return _native.device_select("cpu", "aes-128-ctr")["name"] == "aes_openssl"


def _auto_gpu_min_bytes(algorithm):
    if algorithm == "aes" and not _cpu_runs_openssl_aes():
        return AUTO_GPU_MIN_BYTES["camellia"]
    return AUTO_GPU_MIN_BYTES.get(algorithm)


def constant_time_variant(algorithm: str, device: str = "cpu", mode: Optional[str] = None) -> str:
    """The fastest constant-time variant of ``algorithm`` on ``device``'s backend.

    ``mode`` (e.g. ``"gcm"``) admits variants made for that mode only (``aes_vaes_gcm``); without
    it the variant must implement every mode. What the file format uses unless told otherwise
    (mode ``"gcm"``): on the CPU ``aes_vaes_gcm`` where the CPU has VAES, else ``aes_openssl``
    (AES-NI) where OpenSSL is linked, else ``aes_bitsliced``; on CUDA the bitsliced kernels. Table-based
    variants index tables with secret bytes (cache-timing leaks, Jiang/Fei/Kaeli HPCA 2016), so
    they are used for files only when named explicitly. Raises ``ValueError`` when the backend
    has no constant-time implementation of the algorithm (Camellia and SC2000 have none).
    """
    return _native.constant_time_variant(algorithm, device, mode or "")
