"""What this build can do: devices and implementation variants."""

from gpucrypt import _native


def devices():
    """Devices usable as ``device=``: always ``cpu``, plus ``cuda:N`` for each working GPU."""
    return _native.devices()


def variants(backend=None, algorithm=None):
    """Implementation variants, fastest first per algorithm, with their constant-time flag."""
    return [
        v
        for v in _native.variants()
        if (backend is None or v["backend"] == backend)
        and (algorithm is None or v["algorithm"] == algorithm)
    ]


def cuda_available():
    return any(d["kind"] == "cuda" for d in devices())


def resolve_device(device, num_bytes=None):
    """Turns ``auto``/``cuda``/``cuda:N``/``cpu`` into a concrete device name.

    ``auto`` takes the GPU only where it is faster for the size at hand; until the CUDA backend
    has measured crossovers, that is data already large enough to amortise a transfer.
    """
    if device is None or device == "auto":
        if num_bytes is not None and num_bytes >= AUTO_GPU_MIN_BYTES and cuda_available():
            return "cuda:0"
        return "cpu"
    if not isinstance(device, str):
        raise TypeError(f"device must be a string such as 'cpu' or 'cuda:0', not {type(device).__name__}")
    return device.lower()


# Below this size the host<->device round trip costs more than the CPU needs for the whole job.
AUTO_GPU_MIN_BYTES = 1 << 62
