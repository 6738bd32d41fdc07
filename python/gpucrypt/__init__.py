"""gpucrypt: symmetric cryptography on NVIDIA GPUs and CPUs.

AES, Camellia and SC2000 in ECB/CBC/CFB/OFB/CTR/XTS and GCM; Keccak, SHA-3, SHAKE, cSHAKE,
ParallelHash and KangarooTwelve. The API follows pyca/cryptography (``Cipher``, ``AEAD``) and
hashlib (``new``, ``hash``). See docs/python-api.md.
"""

from gpucrypt._errors import DeviceError, InvalidTag, SelfTestError
from gpucrypt.cipher import AEAD, Cipher
from gpucrypt.hashing import hash, hash_many, new
from gpucrypt.info import constant_time_variant, devices, variants
from gpucrypt.selftest import selftest
from gpucrypt.batch import Batch, decrypt_many, encrypt_many  # noqa: E402  (after the exceptions)
from gpucrypt.fileformat import decrypt_file, encrypt_file  # noqa: E402
from gpucrypt import stream  # noqa: E402,F401

__version__ = "0.1.0"

__all__ = [
    "AEAD",
    "Batch",
    "constant_time_variant",
    "decrypt_file",
    "decrypt_many",
    "encrypt_file",
    "encrypt_many",
    "stream",
    "Cipher",
    "DeviceError",
    "InvalidTag",
    "SelfTestError",
    "devices",
    "hash",
    "hash_many",
    "new",
    "selftest",
    "variants",
]
