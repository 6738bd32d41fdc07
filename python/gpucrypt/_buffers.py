"""Argument checks shared by every module that takes data, keys or lengths from the caller.

Each rule lives here once, so ``Cipher``, ``AEAD``, the hashes, ``encrypt_many`` and the stream
engine refuse the same mistakes with the same words, before anything reaches native code (where
a bad value would surface as ``SystemError``, an "incompatible function arguments" ``TypeError``
or, worse, be taken at face value: ``bytes(5)`` is five zero bytes, not an error). Also the
file objects over buffers in memory that ``gpucrypt.stream`` exports (``MemorySource``, ``MemorySink``).
"""

from __future__ import annotations

import io
import operator
import sys

from gpucrypt import _native

__all__ = ["as_bytes_like", "owned_bytes", "optional_bytes", "check_length", "check_tag_length", "parse_cipher_name",
           "GCM_MIN_TAG_LEN", "GCM_MAX_TAG_LEN", "MemorySource", "MemorySink"]

# SP 800-38D 5.2.1.2 allows tags of 128, 120, 112, 104, 96 bits and, for some uses, 64 and 32;
# every length in between is accepted too, as OpenSSL and pyca do.
GCM_MIN_TAG_LEN, GCM_MAX_TAG_LEN = 4, 16


def _pyca_hint(value) -> str:
    """For a pyca/cryptography object passed where gpucrypt wants bytes: how to say it here."""
    if not type(value).__module__.startswith("cryptography."):
        return ""
    return (f" (a pyca/cryptography {type(value).__name__} object: gpucrypt takes a cipher name and raw "
            "bytes, e.g. gpucrypt.Cipher('aes-256-ctr', key, iv=iv))")


def as_bytes_like(value, what: str):
    """``value`` as something the native core reads as bytes (bytes and bytearray as they are,
    any other buffer as a byte-wise memoryview); a TypeError naming ``what`` for str, int (which
    ``bytes()`` would turn into that many zero bytes) and anything else without the buffer
    protocol."""
    if isinstance(value, (bytes, bytearray)):
        return value
    if isinstance(value, str):
        raise TypeError(f"{what} must be bytes-like, not str (encode it first)")
    try:
        return memoryview(value).cast("B")
    except TypeError:
        raise TypeError(f"{what} must be bytes-like, not {type(value).__name__}{_pyca_hint(value)}") from None


def owned_bytes(value, what: str) -> bytes:
    """A private copy of a key, IV or nonce, checked as ``as_bytes_like``: later changes to the
    caller's buffer cannot change what we encrypt with."""
    value = as_bytes_like(value, what)
    return value if isinstance(value, bytes) else bytes(value)


def optional_bytes(value, what: str):
    """``owned_bytes`` that lets None through (an IV that a mode does not take)."""
    return None if value is None else owned_bytes(value, what)


def check_length(value, what: str, minimum: int = 0) -> int:
    """An integer length of at least ``minimum``: TypeError for non-integers, ValueError below
    the minimum, OverflowError above what a C size can hold (rather than a native error)."""
    try:
        length = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer number of bytes, not {type(value).__name__}") from None
    if length < minimum:
        raise ValueError(f"{what} must be at least {minimum}, got {length}")
    if length > sys.maxsize:
        raise OverflowError(f"{what} of {length} bytes is more than this machine can address")
    return length


def writable_out(out, needed: int):
    """A host ``out=`` (any writable C-contiguous buffer of at least ``needed`` bytes) as a
    byte-wise memoryview; TypeError for what is no writable buffer, ValueError when it is too
    small, checked before anything is computed or any keystream IV is spent."""
    try:
        view = memoryview(out)
    except TypeError:
        raise TypeError(f"out must be a writable buffer, not {type(out).__name__}") from None
    if view.readonly:
        raise TypeError(f"out must be writable (bytearray, memoryview, numpy array), not a read-only "
                        f"{type(out).__name__}")
    if not view.c_contiguous:
        raise ValueError("out must be C-contiguous")
    view = view.cast("B") if view.format != "B" or view.ndim != 1 else view
    if len(view) < needed:
        raise ValueError(f"out holds {len(view)} bytes; the output needs up to {needed}")
    return view


def check_tag_length(tag_length) -> int:
    """A GCM tag length in bytes, 4..16 (``AEAD``, ``encrypt_many``/``decrypt_many`` and the
    packed calls all check it here)."""
    if isinstance(tag_length, bool) or not isinstance(tag_length, int) \
            or not GCM_MIN_TAG_LEN <= tag_length <= GCM_MAX_TAG_LEN:
        raise ValueError(f"tag_length must be {GCM_MIN_TAG_LEN}..{GCM_MAX_TAG_LEN} bytes, got {tag_length!r}")
    return tag_length


def check_xts_units(name: str, unit_len, first_unit) -> tuple:
    """The Python side of the XTS data-unit arguments (Cipher.encrypt_units and Batch.add's
    unit_len/first_unit): ints, a positive unit length, a first number below 2^64 (the native
    calls take a uint64). Lengths against the data are the library's rule (xts_check_units)."""
    for value, what in ((unit_len, "unit_len"), (first_unit, "first_unit")):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if unit_len <= 0:
        raise ValueError(f"{name}: unit_len must be positive, got {unit_len}")
    if not 0 <= first_unit < 2 ** 64:
        raise ValueError(f"first_unit must be in [0, 2**64), got {first_unit}")
    return unit_len, first_unit


def _pyca_form(name, key, aead: bool) -> str:
    """For pyca objects passed as name/key: the gpucrypt call to write instead."""
    algorithm = getattr(name, "name", "?").lower()
    key_bits = getattr(name, "key_size", None)
    if aead:
        return f"gpucrypt.AEAD('{algorithm}-{key_bits or 'KEYBITS'}-gcm', key)"
    mode = getattr(key, "name", None)
    if mode is not None and algorithm != "?":
        if mode.lower() == "xts" and key_bits:
            key_bits //= 2
        return f"gpucrypt.Cipher('{algorithm}-{key_bits}-{mode.lower()}', key, iv=iv)"
    return f"gpucrypt.Cipher('{algorithm}-{key_bits or 'KEYBITS'}-MODE', key, iv=iv)"


def parse_cipher_name(name, key=None, aead: bool = False) -> dict:
    """The native description of a cipher name (canonical, algorithm, key_bits, mode, key_len);
    TypeError for a non-string, naming the string form when given pyca/cryptography objects."""
    if isinstance(name, str):
        return _native.parse_cipher_name(name)
    if type(name).__module__.startswith("cryptography."):
        raise TypeError(f"gpucrypt takes the cipher as a name string and the key and IV as bytes, not "
                        f"pyca/cryptography objects: write {_pyca_form(name, key, aead)}")
    raise TypeError(f"a cipher name is a str such as 'aes-256-ctr', not {type(name).__name__}")


# ----------------------------------------------------------------------------- buffers as files
# Public as gpucrypt.stream.MemorySource / MemorySink; here beside the other buffer helpers.

class MemorySource(io.RawIOBase):
    """A readable binary stream over a buffer already in memory, for the file format and the
    hashes: ``readinto`` copies with every core and the GIL released (``io.BytesIO`` copies on
    one core holding the GIL, a fifth of PCIe speed)."""

    def __init__(self, buffer):
        super().__init__()
        self._view = memoryview(buffer).cast("B")
        self._position = 0

    def readable(self):
        return True

    def readinto(self, target):
        count = min(len(target), len(self._view) - self._position)
        if count <= 0:
            return 0
        _native.copy_into(memoryview(target).cast("B")[:count], self._view[self._position:self._position + count])
        self._position += count
        return count


class MemorySink(io.RawIOBase):
    """A writable binary stream into a caller-allocated buffer (``written`` bytes so far);
    writing past its end raises OSError(ENOSPC), as a full disk would."""

    def __init__(self, buffer):
        super().__init__()
        self._view = memoryview(buffer).cast("B")
        self.written = 0

    def writable(self):
        return True

    def write(self, data):
        data = memoryview(data).cast("B")
        if self.written + len(data) > len(self._view):
            import errno
            raise OSError(errno.ENOSPC, "MemorySink buffer is full")
        _native.copy_into(self._view[self.written:self.written + len(data)], data)
        self.written += len(data)
        return len(data)
