"""Throughput measurement behind `gpucrypt speed`.

What is timed: the wall clock of repeated one-shot calls from Python (`Cipher.encrypt`,
`AEAD.encrypt`, `gpucrypt.hash`, or their decrypt counterparts) on one random buffer, for about
`seconds`, after one untimed warm-up call. Every call pays the Python binding, argument
conversion and, on a GPU, the host-device transfers and launch, as a caller of the Python API
does; small buffers measure that overhead, not the kernel. A native loop may later replace
`_time_calls` without changing the result dictionary.
"""

from __future__ import annotations

import os
import time
from typing import Callable, Optional

import gpucrypt
from gpucrypt.hashing import hash_name

# Names gpucrypt.hash accepts (docs/python-api.md), hashlib spellings normalised first.
HASH_NAMES = frozenset({
    "sha3-224", "sha3-256", "sha3-384", "sha3-512", "shake128", "shake256",
    "keccak-224", "keccak-256", "keccak-384", "keccak-512", "cshake128", "cshake256",
    "parallelhash128", "parallelhash256", "parallelhash128-xof", "parallelhash256-xof",
    "kt128", "kt256",
})
# Hashes whose output length the caller chooses; speed asks for 32 bytes of output.
VARIABLE_LENGTH_HASHES = frozenset(name for name in HASH_NAMES
                                   if not name.startswith(("sha3-", "keccak-")))
XOF_BENCH_OUTPUT_LEN = 32
BLOCK_MODES_WITHOUT_IV = frozenset({"ecb"})
DEFAULT_ALGORITHMS = ("aes-128-ctr", "aes-256-ctr", "aes-256-cbc", "aes-256-gcm",
                      "camellia-256-ctr", "sc2000-256-ctr", "sha3-256")
BUFFER_LENS = (16, 64, 256, 1024, 8192, 16384)
TIMING_DESCRIPTION = ("wall clock of repeated one-shot calls from Python on the named device and "
                      "variant, one random input buffer per cell, after one untimed warm-up call")


def normalise_hash_name(name: str) -> str:
    """`sha3_256` -> `sha3-256`, `shake_128` -> `shake128` (gpucrypt.hashing.hash_name, the one
    place hash spellings are decided); names that are not hashes come back lower-cased."""
    try:
        return hash_name(name)
    except ValueError:
        return name.lower()


def algorithm_kind(algorithm: str) -> str:
    """'hash', 'aead' or 'cipher' (anything else is left for gpucrypt.Cipher to judge)."""
    if normalise_hash_name(algorithm) in HASH_NAMES:
        return "hash"
    if algorithm.lower().endswith("-gcm"):
        return "aead"
    return "cipher"


def _key_len(algorithm: str) -> int:
    parts = algorithm.lower().split("-")
    if len(parts) != 3 or not parts[1].isdigit():
        raise ValueError(f"unknown algorithm {algorithm!r} (expected e.g. aes-128-ctr, aes-256-gcm, sha3-256)")
    key_len = int(parts[1]) // 8
    return 2 * key_len if parts[2] == "xts" else key_len   # XTS keys hold both halves


def _prepare(algorithm: str, device: str, variant: Optional[str], buffer_len: int,
             decrypt: bool) -> tuple[Callable[[], object], dict]:
    """The call to time and what ran it (kind, device, variant, constant_time)."""
    data = os.urandom(buffer_len)
    kind = algorithm_kind(algorithm)
    if kind == "hash":
        name = normalise_hash_name(algorithm)
        length = XOF_BENCH_OUTPUT_LEN if name in VARIABLE_LENGTH_HASHES else None
        options = {} if variant is None else {"variant": variant}
        on_gpu = device not in ("auto", "cpu")
        info = {"kind": kind, "device": device if on_gpu else "cpu",
                "variant": "keccak_cuda" if on_gpu else gpucrypt.new(name, **options).variant,
                "constant_time": True}
        return (lambda: gpucrypt.hash(name, data, length=length, device=device, **options)), info
    key = os.urandom(_key_len(algorithm))
    if kind == "aead":
        aead = gpucrypt.AEAD(algorithm, key, device=device, **({} if variant is None else {"variant": variant}))
        nonce = os.urandom(12)
        info = {"kind": kind, "device": getattr(aead, "device", device),
                "variant": getattr(aead, "variant", None), "constant_time": getattr(aead, "constant_time", None)}
        if decrypt:
            sealed = aead.encrypt(nonce, data)
            return (lambda: aead.decrypt(nonce, sealed)), info
        return (lambda: aead.encrypt(nonce, data)), info
    mode = algorithm.lower().rsplit("-", 1)[-1]
    iv = None if mode in BLOCK_MODES_WITHOUT_IV else os.urandom(16)
    # openssl speed -evp times ECB/CBC without padding: every byte counted is a byte processed.
    padding = False if mode in ("ecb", "cbc") else None
    cipher = gpucrypt.Cipher(algorithm, key, iv=iv, device=device, padding=padding, variant=variant)
    info = {"kind": kind, "device": cipher.device, "variant": cipher.variant,
            "constant_time": cipher.constant_time}
    if decrypt:
        return (lambda: cipher.decrypt(data)), info
    # The same IV every call, chosen explicitly: a benchmark may reuse a keystream, a user may not.
    return (lambda: cipher.encrypt(data, iv=iv)), info


def _time_calls(call: Callable[[], object], seconds: float) -> tuple[int, float]:
    """(number of calls, elapsed seconds): call repeatedly until `seconds` have passed."""
    call()  # warm-up: lazy initialisation, GPU context and allocations stay out of the timing
    num_calls = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        call()
        num_calls += 1
        now = time.perf_counter()
        if now >= deadline:
            return num_calls, now - start


def speed(algorithm: str, device: str = "auto", variant: Optional[str] = None, buffer_len: int = 16384,
          seconds: float = 0.3, decrypt: bool = False) -> dict:
    """Time one (algorithm, buffer length) cell; return a JSON-ready dict.

    Keys: algorithm, kind, device, variant, constant_time (None where the API does not say),
    buffer_len, decrypt, seconds (measured), num_calls, bytes_per_second, timing (a sentence).
    Raises ValueError for unknown names or impossible parameters, gpucrypt.DeviceError when
    the device is absent.
    """
    if buffer_len < 1:
        raise ValueError("buffer length must be at least 1 byte")
    if seconds <= 0:
        raise ValueError("seconds must be positive")
    call, info = _prepare(algorithm, device, variant, buffer_len, decrypt)
    if info["constant_time"] is None and info["variant"]:
        info["constant_time"] = next((listed.get("constant_time") for listed in gpucrypt.variants()
                                      if listed.get("name") == info["variant"]), None)
    num_calls, elapsed = _time_calls(call, seconds)
    return {
        "algorithm": normalise_hash_name(algorithm) if info["kind"] == "hash" else algorithm.lower(), **info, "buffer_len": buffer_len,
        "decrypt": bool(decrypt) and info["kind"] != "hash",
        "seconds": elapsed, "num_calls": num_calls,
        "bytes_per_second": num_calls * buffer_len / elapsed, "timing": TIMING_DESCRIPTION,
    }
