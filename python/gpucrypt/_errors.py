"""Exceptions raised by gpucrypt."""

from cryptography.exceptions import AlreadyFinalized as _PycaAlreadyFinalized
from cryptography.exceptions import InvalidTag as _PycaInvalidTag

from gpucrypt._native import DeviceError  # (a RuntimeError raised by the C++ core)

__all__ = ["AlreadyFinalized", "DeviceError", "InvalidTag", "KeystreamReuseError", "SelfTestError"]

DeviceError.__doc__ = ("A device named by device= is absent or failed (no CUDA device, out of GPU memory, "
                       "a CUDA error); the message says which and why. A RuntimeError.")


class InvalidTag(_PycaInvalidTag):
    """An authenticated decryption found the tag wrong: the data, AAD, nonce or key differ.

    A subclass of ``cryptography.exceptions.InvalidTag``, so code written for pyca's AESGCM
    (``except cryptography.exceptions.InvalidTag``) catches gpucrypt's failures too.
    """


class AlreadyFinalized(_PycaAlreadyFinalized, ValueError):
    """A cipher context was used after ``finalize()``. pyca's ``AlreadyFinalized`` for code
    written for pyca's contexts, and a ``ValueError`` as gpucrypt raised before."""


class KeystreamReuseError(ValueError):
    """A second encryption under a stream mode's (CTR, OFB, CFB) IV was refused: two messages
    under one keystream reveal their XOR (ct1 ^ ct2 == pt1 ^ pt2). Give a fresh ``iv=`` per call."""


class SelfTestError(RuntimeError):
    """A known-answer self-test failed; the report lists which variant and vector."""
