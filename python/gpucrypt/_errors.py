"""Exceptions raised by gpucrypt."""

from gpucrypt._native import DeviceError  # noqa: F401  (a RuntimeError raised by the C++ core)


class InvalidTag(Exception):
    """An authenticated decryption found the tag wrong: the data, AAD, nonce or key differ."""


class SelfTestError(RuntimeError):
    """A known-answer self-test failed; the report lists which variant and vector."""
