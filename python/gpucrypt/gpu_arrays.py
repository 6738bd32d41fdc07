"""GPU-resident arrays (CuPy, PyTorch, Numba, JAX, anything with ``__cuda_array_interface__`` or
a CUDA ``__dlpack__``): encrypted and decrypted where they live, with no host round trip, on the
caller's stream.

The CUDA Array Interface (v3) gives the device pointer, the shape and the stream that the
producer uses; the work is enqueued on that stream, so it is ordered after whatever the caller
queued and the call returns without synchronising. Objects that speak only DLPack are asked for
their tensor on the legacy default stream (``__dlpack__(stream=1)``: the producer orders its
pending work before it) and the work is enqueued there. The output is a new array of the
caller's type (``empty_like``) unless ``out=`` is given; ``out=x`` works in place.

Each keyed Python object (Cipher, AEAD) keeps its native ResidentCipher / ResidentGcm per GPU
(the Device's work on device memory), so the key schedule is expanded once, not on every call.
"""

import functools
import math

from gpucrypt import _native

__all__ = ["is_cuda_array", "empty_like", "cipher", "seal", "open_"]

_DL_CUDA, _DL_CUDA_MANAGED = 2, 13      # DLPack device types
_LEGACY_DEFAULT_STREAM = 1             # DLPack's (and CAI's) name for it; handle 0 in the runtime


def _dlpack_device(obj):
    try:
        return tuple(obj.__dlpack_device__()) if hasattr(obj, "__dlpack__") else None
    except Exception:  # noqa: BLE001 - a producer that cannot say is not a GPU array to us
        return None


# Libraries whose arrays with a CUDA Array Interface always live on a GPU. PyTorch and JAX have one
# class for host and GPU arrays: the interface is on the class, and reading it from a host array
# raises, so for them only the instance can answer.
_GPU_ONLY_ARRAY_MODULES = frozenset({"cupy", "numba"})


def is_cuda_array(obj):
    # Neither answer reads the interface where it can be avoided: CuPy, PyTorch and Numba compute
    # it (a new dict, the current stream) on every access, and a call reads each array's interface
    # once, in _interface.
    is_cuda = getattr(obj, "is_cuda", None)  # PyTorch
    if isinstance(is_cuda, bool):
        return is_cuda
    kind = type(obj)
    if hasattr(kind, "__cuda_array_interface__") and kind.__module__.split(".")[0] in _GPU_ONLY_ARRAY_MODULES:
        return True
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    device = _dlpack_device(obj)
    return device is not None and device[0] in (_DL_CUDA, _DL_CUDA_MANAGED)


def _dlpack_interface(array):
    capsule = array.__dlpack__(stream=_LEGACY_DEFAULT_STREAM)
    pointer, nbytes, _, _, contiguous = _native.dlpack_tensor_info(capsule)
    if not contiguous:
        raise ValueError("GPU array must be C-contiguous")
    # The capsule may go now: the caller's array keeps the memory alive while the work runs.
    return pointer, nbytes, 0


def _interface(array, writable):
    cai = getattr(array, "__cuda_array_interface__", None)
    if cai is None:
        return _dlpack_interface(array)  # DLPack carries no read-only flag: the caller's choice
    pointer, readonly = cai["data"]
    if writable and readonly:
        raise ValueError("output array is read-only")
    itemsize = int(cai["typestr"][2:])
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is not None:
        expected, step = [], itemsize
        for extent in reversed(shape):
            expected.append(step)
            step *= extent
        if tuple(reversed(expected)) != tuple(strides) and math.prod(shape) > 1:
            raise ValueError("GPU array must be C-contiguous")
    # CAI v3: None means "no synchronisation needed"; 1 and 2 name the legacy and per-thread
    # default streams, which the CUDA runtime accepts as handles 0x1 and 0x2 too.
    stream = cai.get("stream") or 0
    return pointer, math.prod(shape) * itemsize, stream


def _array_device(array):
    """The CUDA device an array says it lives on (CuPy's device.id, PyTorch's device.index,
    DLPack's id), or None when it says nothing (a Numba array: the current device)."""
    index = getattr(getattr(array, "device", None), "id", None)  # CuPy
    if index is None:
        index = getattr(getattr(array, "device", None), "index", None)  # PyTorch
    if index is None and not hasattr(array, "__cuda_array_interface__"):
        index = (_dlpack_device(array) or (None, None))[1]  # DLPack
    return None if index is None else int(index)


@functools.lru_cache(maxsize=64)
def _gpu_name(index, device):
    """The device name of the GPU that processes an array on GPU `index` (None: it does not say)
    for an object made for `device`: the array's own. A Cipher or AEAD made for another CUDA
    device ("cuda:1" for an array on cuda:0) is refused: its kernels could not read the array's
    memory (without peer access the launch faults, and the fault would stay with the CUDA
    context). An array that does not say where it lives runs on the device the object names,
    else cuda:0. Cached: a small call would otherwise spend its time parsing names."""
    name = str(device).lower()
    wanted = int(name.split(":", 1)[1]) if name.startswith("cuda:") else None
    if index is not None and wanted is not None and wanted != index:
        raise ValueError(f"the array is on cuda:{index} but this object was made for {device}: GPU arrays "
                         f"are processed on their own GPU (make it with device='cuda:{index}' or 'auto')")
    return f"cuda:{index if index is not None else (wanted or 0)}"


def empty_like(array):
    module = type(array).__module__.split(".")[0]
    if module == "torch":
        import torch

        return torch.empty_like(array)
    if module == "cupy":
        import cupy

        return cupy.empty_like(array)
    if module == "numba":
        from numba import cuda

        return cuda.device_array_like(array)
    raise TypeError(f"pass out= for GPU arrays of type {type(array).__name__}")


def _keyed(cache, key, make):
    """The native object keyed for `key` (the GPU, and for ciphers the direction), made once per
    Python object: the key schedule then stays on the GPU between calls. Two threads that miss
    together each make one; the second replaces the first, both correct."""
    keyed = cache.get(key)
    if keyed is None:
        keyed = cache[key] = make()
    return keyed


def cipher(cache, name, encrypt, key, iv, variant, device, array, out):
    """Encrypts or decrypts `array` with the cipher keyed in `cache` (a dict the caller keeps per
    keyed object) for the array's GPU."""
    in_ptr, nbytes, stream, out, out_ptr, gpu = _operands(array, out, device)
    keyed = _keyed(cache, (gpu, encrypt), lambda: _native.ResidentCipher(gpu, name, encrypt, key, variant or ""))
    keyed.process(iv, in_ptr, out_ptr, nbytes, stream)
    return out


def cipher_units(cache, name, encrypt, key, variant, device, array, out, unit_len, first_unit):
    """XTS over the array's data units (Cipher.encrypt_units' rule), keyed as `cipher`."""
    in_ptr, nbytes, stream, out, out_ptr, gpu = _operands(array, out, device)
    keyed = _keyed(cache, (gpu, encrypt), lambda: _native.ResidentCipher(gpu, name, encrypt, key, variant or ""))
    keyed.process_units(first_unit, unit_len, in_ptr, out_ptr, nbytes, stream)
    return out


def _operands(array, out, device):
    """(input address, length, stream, output array, output address, GPU name) of one call, each
    array's interface read once."""
    in_ptr, nbytes, stream = _interface(array, writable=False)
    index = _array_device(array)
    out, out_ptr = _output(array, index, out, nbytes)
    return in_ptr, nbytes, stream, out, out_ptr, _gpu_name(index, device)


def _output(array, in_device, out, nbytes):
    if out is None:
        out = empty_like(array)
    elif not is_cuda_array(out):
        # A host array's address handed to a kernel would fault on the GPU (or, where the GPU
        # can reach host memory, write behind the caller's back).
        raise TypeError(f"out= must be a GPU array on the input's GPU, not {type(out).__name__}")
    elif out is not array:
        out_device = _array_device(out)
        if None not in (out_device, in_device) and out_device != in_device:
            raise ValueError(f"out= is on cuda:{out_device}, the input on cuda:{in_device}: both must be on one GPU")
    out_ptr, out_nbytes, _ = _interface(out, writable=True)
    if out_nbytes < nbytes:
        raise ValueError(f"out= holds {out_nbytes} bytes, needs {nbytes}")
    return out, out_ptr


def _gcm(cache, name, key, variant, gpu):
    return _keyed(cache, gpu, lambda: _native.ResidentGcm(gpu, name, key, variant or ""))


def seal(cache, name, key, nonce, aad, tag_length, variant, device, array, out):
    in_ptr, nbytes, stream, out, out_ptr, gpu = _operands(array, out, device)
    gcm = _gcm(cache, name, key, variant, gpu)
    tag = gcm.seal(bytes(nonce), bytes(aad), tag_length, in_ptr, out_ptr, nbytes, stream)
    return out, tag


def open_(cache, name, key, nonce, aad, tag, variant, device, array, out):
    """The plaintext array, or None when the tag does not verify (then nothing was written:
    ``out``, even ``out=array``, keeps its bytes)."""
    in_ptr, nbytes, stream, out, out_ptr, gpu = _operands(array, out, device)
    gcm = _gcm(cache, name, key, variant, gpu)
    ok = gcm.open(bytes(nonce), bytes(aad), bytes(tag), in_ptr, out_ptr, nbytes, stream)
    return out if ok else None
