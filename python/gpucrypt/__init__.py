"""gpucrypt: symmetric cryptography on NVIDIA GPUs and CPUs.

AES, Camellia and SC2000 in ECB/CBC/CFB/OFB/CTR/XTS and GCM; Keccak, SHA-3, SHAKE, cSHAKE,
ParallelHash and KangarooTwelve. The API follows pyca/cryptography (``Cipher``, ``AEAD``) and
hashlib (``new``, ``hash``, ``sha3_256()``, ...). See docs/python-api.md.
"""

from typing import TYPE_CHECKING

from gpucrypt_entry import VERSION as __version__  # stated there, where `gpucrypt --version` reads it

from gpucrypt._errors import AlreadyFinalized, DeviceError, InvalidTag, KeystreamReuseError, SelfTestError
from gpucrypt.cipher import AEAD, Cipher, CipherContext, aeads, modes
from gpucrypt.hashing import (HashObject, hash, hash_many, hash_name, new, sha3_224, sha3_256, sha3_384, sha3_512,
                              shake_128, shake_256)
from gpucrypt.info import constant_time_variant, devices, variants
# Eager although rarely called: the function shadows its module's name here, and a lazy import
# would leave `gpucrypt.selftest` the module wherever `import gpucrypt.selftest` came first.
from gpucrypt.selftest import selftest


# Imported on first use (PEP 562), not by `import gpucrypt`: the file format, the stream engine
# and batches cost a program (and every `gpucrypt` command's start-up) 10-20 ms of
# imports that most never need. Name -> the module that defines it.
_LAZY = {
    "Batch": "gpucrypt.batch", "decrypt_many": "gpucrypt.batch", "encrypt_many": "gpucrypt.batch",
    "decrypt_file": "gpucrypt.fileformat", "encrypt_file": "gpucrypt.fileformat",
}
_LAZY_MODULES = ("batch", "fileformat", "stream")   # the submodules `import gpucrypt` loaded before

if TYPE_CHECKING:   # what type checkers and IDEs see: the same names, imported eagerly
    from gpucrypt import stream  # noqa: F401
    from gpucrypt.batch import Batch, decrypt_many, encrypt_many  # noqa: F401
    from gpucrypt.fileformat import decrypt_file, encrypt_file  # noqa: F401


def __getattr__(name: str):
    import importlib
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name in _LAZY_MODULES:
        value = importlib.import_module(f"gpucrypt.{name}")
    else:
        raise AttributeError(f"module 'gpucrypt' has no attribute {name!r}")
    globals()[name] = value   # later lookups find it directly
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_MODULES))

__all__ = [
    "AEAD",
    "AlreadyFinalized",
    "aeads",
    "Batch",
    "Cipher",
    "CipherContext",
    "DeviceError",
    "HashObject",
    "InvalidTag",
    "KeystreamReuseError",
    "SelfTestError",
    "constant_time_variant",
    "decrypt_file",
    "decrypt_many",
    "devices",
    "encrypt_file",
    "encrypt_many",
    "hash",
    "hash_many",
    "hash_name",
    "modes",
    "new",
    "selftest",
    "sha3_224",
    "sha3_256",
    "sha3_384",
    "sha3_512",
    "shake_128",
    "shake_256",
    "stream",
    "variants",
]
