"""Argument checks shared by every module that takes data from the caller."""


def as_bytes_like(value, what):
    """``value`` as something the native core reads as bytes (bytes and bytearray as they are,
    any other buffer as a byte-wise memoryview); a clear TypeError for str and non-buffers."""
    if isinstance(value, (bytes, bytearray)):
        return value
    if isinstance(value, str):
        raise TypeError(f"{what} must be bytes-like, not str")
    try:
        return memoryview(value).cast("B")
    except TypeError:
        raise TypeError(f"{what} must be bytes-like, not {type(value).__name__}") from None
