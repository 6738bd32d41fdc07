"""gpucrypt: symmetric cryptography on NVIDIA GPUs and CPUs.

AES, Camellia and SC2000 in ECB/CBC/CFB/OFB/CTR/XTS and GCM; Keccak, SHA-3, SHAKE, cSHAKE,
ParallelHash and KangarooTwelve. The API follows pyca/cryptography (``Cipher``, ``AEAD``) and
hashlib (``new``, ``hash``, ``sha3_256()``, ...). See docs/python-api.md.
"""

from gpucrypt._errors import AlreadyFinalized, DeviceError, InvalidTag, KeystreamReuseError, SelfTestError
from gpucrypt.cipher import AEAD, Cipher, CipherContext
from gpucrypt.hashing import (HashObject, hash, hash_many, hash_name, new, sha3_224, sha3_256, sha3_384, sha3_512,
                              shake_128, shake_256)
from gpucrypt.info import constant_time_variant, devices, variants
from gpucrypt.selftest import selftest
from gpucrypt.batch import Batch, decrypt_many, encrypt_many  # noqa: E402  (after the exceptions)
from gpucrypt.fileformat import decrypt_file, encrypt_file  # noqa: E402
from gpucrypt import stream  # noqa: E402,F401

__version__ = "0.1.0"

__all__ = [
    "AEAD",
    "AlreadyFinalized",
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
