"""gpucrypt's authenticated, chunked file format (what `gpucrypt encrypt` / `decrypt` write and read).

The byte-level specification, the design rationale and the failure semantics are in
docs/file-format.md; keep the two in step. In short: an 80-byte header (magic, version, suite,
KDF, chunk length, random salt, HMAC over all of that), then the plaintext cut into fixed-length
chunks sealed with AES-256-GCM under a per-file key from HKDF-SHA256; each chunk's nonce is its
index and a last-chunk flag, and the last chunk is always shorter than a full one (possibly
empty), so truncation, reordering, duplication and appended data all fail authentication.

Key derivation uses pyca/cryptography (scrypt, HKDF) and the standard library (HMAC-SHA256);
every AES-GCM operation goes through `gpucrypt.AEAD`, so it runs on whichever backend `device`
names. Python cannot wipe immutable `bytes`, so derived keys are dropped, not zeroed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import hmac
import os
import struct
import tempfile
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator, Optional, Union

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

import gpucrypt

__all__ = [
    "MAGIC", "VERSION", "HEADER_LEN", "TAG_LEN", "SALT_LEN", "KEY_LEN",
    "DEFAULT_CHUNK_SIZE", "MIN_CHUNK_SIZE", "MAX_CHUNK_SIZE",
    "DEFAULT_SCRYPT_LOG2N", "MAX_SCRYPT_LOG2N", "SCRYPT_R", "SCRYPT_P",
    "FormatError", "DecryptionError", "Passphrase", "Header",
    "encrypt_stream", "decrypt_stream", "encrypt_file", "decrypt_file", "atomic_output",
    "read_header", "parse_header", "chunk_nonce",
]

MAGIC = b"GPUCRYPT"
VERSION = 1
HEADER_LEN = 80                 # fixed for version 1; see the layout in docs/file-format.md
_HEADER_PREFIX_LEN = 48         # everything the header MAC covers
_FIELDS = struct.Struct(">8sBBBBI")  # magic, version, suite, kdf, kdf parameter, chunk length
SALT_LEN = 32
MAC_LEN = 32
KEY_LEN = 32                    # raw key files and the derived payload key
TAG_LEN = 16
NONCE_LEN = 12
_COUNTER_LEN = NONCE_LEN - 1    # big-endian chunk index; the last nonce byte is the final flag

DEFAULT_CHUNK_SIZE = 64 * 1024
MIN_CHUNK_SIZE = 16
MAX_CHUNK_SIZE = 16 * 1024 * 1024   # bounds what a hostile header can make the decoder allocate

DEFAULT_SCRYPT_LOG2N = 18       # age's choice: about 1 s and 256 MiB on a 2020s CPU
MAX_SCRYPT_LOG2N = 22           # 4 GiB, tens of seconds: the most we spend on an untrusted file
SCRYPT_R = 8
SCRYPT_P = 1

_KDF_SCRYPT = 1
_KDF_RAW_KEY = 2
_KDF_NAMES = {_KDF_SCRYPT: "scrypt", _KDF_RAW_KEY: "key"}

_SCRYPT_SALT_LABEL = b"gpucrypt/v1/scrypt"
_HKDF_INFO_LABEL = b"gpucrypt/v1/keys"


@dataclass(frozen=True)
class _Suite:
    suite_id: int
    name: str           # as written in docs/file-format.md
    aead_name: str      # as gpucrypt.AEAD spells it


# Suite 1 is the only one defined; a new suite is a new row (and a spec paragraph), not a new
# format version, because the suite byte is authenticated and bound into the key derivation.
_SUITES = {1: _Suite(1, "AES-256-GCM", "aes-256-gcm")}
_SUITES_BY_NAME = {suite.aead_name: suite for suite in _SUITES.values()}


class FormatError(ValueError):
    """The input is not a gpucrypt file this version can read, or a parameter is out of bounds.

    Raised before any chunk is decrypted: bad magic, unknown version/suite/KDF, a header cut
    short, a chunk length or scrypt cost outside the accepted bounds, a passphrase given for a
    key-encrypted file (or the reverse).
    """


class DecryptionError(FormatError, gpucrypt.InvalidTag):
    """Authentication failed: wrong passphrase/key, or the file was modified, truncated,
    reordered or extended. `chunk_index` names the chunk (None for the header);
    `released_len` counts the plaintext bytes already written to the destination stream,
    all of them authenticated (decrypt_file never lets them reach the final path)."""

    def __init__(self, message: str, chunk_index: Optional[int] = None, released_len: int = 0):
        super().__init__(message)
        self.chunk_index = chunk_index
        self.released_len = released_len


class Passphrase:
    """A passphrase as key material (UTF-8 encoded if given as str; never normalised)."""

    __slots__ = ("_secret",)

    def __init__(self, secret: Union[str, bytes, bytearray]):
        if isinstance(secret, str):
            secret = secret.encode("utf-8")
        if not isinstance(secret, (bytes, bytearray)):
            raise TypeError("a passphrase is str or bytes")
        if not secret:
            raise ValueError("the passphrase is empty")
        self._secret = bytes(secret)

    def __repr__(self) -> str:
        return "Passphrase(<hidden>)"


@dataclass(frozen=True)
class Header:
    """The parsed, not yet authenticated, header of a gpucrypt file."""

    version: int
    suite_id: int
    kdf: str                    # "scrypt" (passphrase) or "key" (32-byte key file)
    scrypt_log2n: int           # 0 when kdf == "key"
    chunk_size: int
    salt: bytes
    mac: bytes
    prefix: bytes               # the 48 header bytes the MAC covers

    @property
    def suite_name(self) -> str:
        return _SUITES[self.suite_id].name


KeyMaterial = Union[str, bytes, bytearray, memoryview, Passphrase]
KeySource = Union[KeyMaterial, Callable[[Header], KeyMaterial]]
Progress = Optional[Callable[[int], None]]


def chunk_nonce(chunk_index: int, is_final: bool) -> bytes:
    """The 12-byte GCM nonce of a chunk: 11-byte big-endian index, then 0x01 if final else 0x00."""
    if not 0 <= chunk_index < 1 << (8 * _COUNTER_LEN):
        raise FormatError("too many chunks for the 88-bit chunk counter")
    return chunk_index.to_bytes(_COUNTER_LEN, "big") + (b"\x01" if is_final else b"\x00")


def _normalise_key_material(material: KeyMaterial) -> Union[Passphrase, bytes]:
    if isinstance(material, Passphrase):
        return material
    if isinstance(material, str):
        return Passphrase(material)
    if isinstance(material, (bytes, bytearray, memoryview)):
        key = bytes(material)
        if len(key) != KEY_LEN:
            raise ValueError(f"a raw key must be {KEY_LEN} bytes, got {len(key)} "
                             "(pass a passphrase as str or Passphrase)")
        return key
    raise TypeError("key material is a passphrase (str or Passphrase) or a 32-byte key")


def _input_keying_material(material: Union[Passphrase, bytes], header: Header) -> bytes:
    if header.kdf == "scrypt":
        if not isinstance(material, Passphrase):
            raise FormatError("this file was encrypted with a passphrase, but a key was given")
        scrypt = Scrypt(salt=_SCRYPT_SALT_LABEL + header.salt, length=KEY_LEN,
                        n=1 << header.scrypt_log2n, r=SCRYPT_R, p=SCRYPT_P)
        return scrypt.derive(material._secret)
    if isinstance(material, Passphrase):
        raise FormatError("this file was encrypted with a key file, but a passphrase was given")
    return material


def _derive_keys(input_keying_material: bytes, header_prefix: bytes, salt: bytes) -> tuple[bytes, bytes]:
    """(header MAC key, payload key). The header bytes go into HKDF's info, so a decoder that
    forgot the MAC check would still fail on the first chunk of a modified header."""
    hkdf = HKDF(algorithm=hashes.SHA256(), length=2 * KEY_LEN, salt=salt,
                info=_HKDF_INFO_LABEL + header_prefix)
    okm = hkdf.derive(input_keying_material)
    return okm[:KEY_LEN], okm[KEY_LEN:]


def _header_mac(mac_key: bytes, header_prefix: bytes) -> bytes:
    return hmac.new(mac_key, header_prefix, hashlib.sha256).digest()


def _read_full(src: BinaryIO, size: int) -> bytes:
    """Read `size` bytes, or fewer only at end of input (pipes and sockets return short reads)."""
    parts = []
    remaining = size
    while remaining > 0:
        block = src.read(remaining)
        if not block:
            break
        parts.append(block)
        remaining -= len(block)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _check_chunk_size(chunk_size: int) -> None:
    if not MIN_CHUNK_SIZE <= chunk_size <= MAX_CHUNK_SIZE:
        raise FormatError(f"chunk size {chunk_size} is outside {MIN_CHUNK_SIZE}..{MAX_CHUNK_SIZE} bytes")


def parse_header(data: bytes, max_scrypt_log2n: int = MAX_SCRYPT_LOG2N) -> Header:
    """Parse and bounds-check a header; FormatError names the first problem found."""
    if len(data) < len(MAGIC) or data[:len(MAGIC)] != MAGIC:
        if len(data) == 0:
            raise FormatError("not a gpucrypt file: the input is empty")
        if MAGIC.startswith(data):
            raise FormatError(f"file truncated inside the header ({len(data)} of {HEADER_LEN} bytes)")
        raise FormatError("not a gpucrypt file (bad magic)")
    if len(data) > len(MAGIC) and data[len(MAGIC)] != VERSION:
        raise FormatError(f"unsupported file format version {data[len(MAGIC)]} "
                          f"(this gpucrypt reads version {VERSION})")
    if len(data) < HEADER_LEN:
        raise FormatError(f"file truncated inside the header ({len(data)} of {HEADER_LEN} bytes)")
    _, version, suite_id, kdf_id, kdf_param, chunk_size = _FIELDS.unpack_from(data)
    if suite_id not in _SUITES:
        raise FormatError(f"unknown cipher suite {suite_id}")
    if kdf_id not in _KDF_NAMES:
        raise FormatError(f"unknown key derivation {kdf_id}")
    if kdf_id == _KDF_SCRYPT:
        if kdf_param < 1:
            raise FormatError("invalid scrypt work factor 0")
        if kdf_param > max_scrypt_log2n:
            raise FormatError(f"scrypt work factor 2^{kdf_param} exceeds the limit 2^{max_scrypt_log2n}; "
                              "refusing to spend that much time and memory on an untrusted file")
    elif kdf_param != 0:
        raise FormatError("invalid header: key-file encryption takes no KDF parameter")
    _check_chunk_size(chunk_size)
    salt_end = _FIELDS.size + SALT_LEN
    return Header(version=version, suite_id=suite_id, kdf=_KDF_NAMES[kdf_id], scrypt_log2n=kdf_param,
                  chunk_size=chunk_size, salt=bytes(data[_FIELDS.size:salt_end]),
                  mac=bytes(data[salt_end:HEADER_LEN]), prefix=bytes(data[:_HEADER_PREFIX_LEN]))


def read_header(src: BinaryIO, max_scrypt_log2n: int = MAX_SCRYPT_LOG2N) -> Header:
    """Read and parse the header at the current position of `src` (not authenticated yet)."""
    return parse_header(_read_full(src, HEADER_LEN), max_scrypt_log2n)


def _build_header(suite: _Suite, material: Union[Passphrase, bytes], chunk_size: int,
                  scrypt_log2n: int) -> tuple[Header, bytes]:
    """A fresh header (random salt) and the payload key it leads to."""
    if isinstance(material, Passphrase):
        if not 1 <= scrypt_log2n <= MAX_SCRYPT_LOG2N:
            raise FormatError(f"scrypt work factor must be 1..{MAX_SCRYPT_LOG2N} (log2 N), got {scrypt_log2n}")
        kdf_id, kdf_param = _KDF_SCRYPT, scrypt_log2n
    else:
        kdf_id, kdf_param = _KDF_RAW_KEY, 0
    salt = os.urandom(SALT_LEN)
    prefix = _FIELDS.pack(MAGIC, VERSION, suite.suite_id, kdf_id, kdf_param, chunk_size) + salt
    header = Header(version=VERSION, suite_id=suite.suite_id, kdf=_KDF_NAMES[kdf_id],
                    scrypt_log2n=kdf_param, chunk_size=chunk_size, salt=salt, mac=b"", prefix=prefix)
    mac_key, payload_key = _derive_keys(_input_keying_material(material, header), prefix, salt)
    mac = _header_mac(mac_key, prefix)
    return dataclasses.replace(header, mac=mac), payload_key


def _open_header(header: Header, material: Union[Passphrase, bytes]) -> bytes:
    """Authenticate the header; return the payload key."""
    mac_key, payload_key = _derive_keys(_input_keying_material(material, header), header.prefix, header.salt)
    if not hmac.compare_digest(_header_mac(mac_key, header.prefix), header.mac):
        raise DecryptionError("wrong passphrase or key (header authentication failed; "
                              "the header may also have been modified)")
    return payload_key


def encrypt_stream(src: BinaryIO, dst: BinaryIO, key_material: KeyMaterial, *,
                   chunk_size: int = DEFAULT_CHUNK_SIZE, device: str = "auto", progress: Progress = None,
                   scrypt_log2n: int = DEFAULT_SCRYPT_LOG2N, suite: str = "aes-256-gcm") -> int:
    """Encrypt everything readable from `src` to `dst`; return the plaintext length.

    Holds one chunk in memory. `key_material`: a passphrase (str or Passphrase; scrypt with
    N = 2^scrypt_log2n, r = 8, p = 1) or a 32-byte key. `progress(n)` is called after each chunk
    with the number of input bytes consumed since the previous call. Errors from `src`/`dst`
    (OSError, e.g. ENOSPC) propagate unchanged; what was already written to `dst` is the
    caller's to discard (encrypt_file does).
    """
    _check_chunk_size(chunk_size)
    if suite not in _SUITES_BY_NAME:
        raise FormatError(f"unknown cipher suite {suite!r} (known: {', '.join(_SUITES_BY_NAME)})")
    selected_suite = _SUITES_BY_NAME[suite]
    header, payload_key = _build_header(selected_suite, _normalise_key_material(key_material),
                                        chunk_size, scrypt_log2n)
    aead = gpucrypt.AEAD(selected_suite.aead_name, payload_key, device=device)
    del payload_key
    dst.write(header.prefix + header.mac)
    plaintext_len = 0
    chunk_index = 0
    while True:
        plaintext = _read_full(src, chunk_size)
        is_final = len(plaintext) < chunk_size   # a full chunk is never final: see the spec
        dst.write(aead.encrypt(chunk_nonce(chunk_index, is_final), plaintext))
        plaintext_len += len(plaintext)
        if progress is not None and plaintext:
            progress(len(plaintext))
        if is_final:
            return plaintext_len
        chunk_index += 1


def decrypt_stream(src: BinaryIO, dst: BinaryIO, key_material: KeySource, *, device: str = "auto",
                   progress: Progress = None, max_scrypt_log2n: int = MAX_SCRYPT_LOG2N) -> int:
    """Decrypt a gpucrypt file from `src` to `dst`; return the plaintext length.

    Every chunk is authenticated before its plaintext is written, so `dst` only ever receives
    authenticated bytes; but if the file was truncated or extended, the error comes after the
    chunks before it were written: success is the return, not the bytes seen so far. Use
    decrypt_file (or discard `dst` on error) when a partial result must not survive.

    `key_material` may be a callable taking the parsed Header (e.g. to prompt for a passphrase
    only when the file needs one). Raises FormatError for unreadable/unsupported headers and
    DecryptionError (also a gpucrypt.InvalidTag) for every authentication failure.
    """
    header = read_header(src, max_scrypt_log2n)
    material = key_material(header) if callable(key_material) else key_material
    payload_key = _open_header(header, _normalise_key_material(material))
    aead = gpucrypt.AEAD(_SUITES[header.suite_id].aead_name, payload_key, device=device)
    del payload_key
    if progress is not None:
        progress(HEADER_LEN)
    full_len = header.chunk_size + TAG_LEN
    released_len = 0
    chunk_index = 0
    while True:
        sealed = _read_full(src, full_len)
        if len(sealed) == full_len:
            try:
                plaintext = aead.decrypt(chunk_nonce(chunk_index, False), sealed)
            except gpucrypt.InvalidTag:
                raise DecryptionError(f"chunk {chunk_index} failed authentication "
                                      "(modified, reordered or duplicated chunk)",
                                      chunk_index, released_len) from None
            dst.write(plaintext)
        else:
            # End of input: what we hold must be the (short, possibly empty) final chunk.
            if not sealed:
                where = f"after chunk {chunk_index - 1}" if chunk_index else "after the header"
                raise DecryptionError(f"file truncated: the final chunk is missing ({where})",
                                      chunk_index, released_len)
            if len(sealed) < TAG_LEN:
                raise DecryptionError(f"file truncated: chunk {chunk_index} has {len(sealed)} bytes, "
                                      f"fewer than its {TAG_LEN}-byte tag", chunk_index, released_len)
            try:
                plaintext = aead.decrypt(chunk_nonce(chunk_index, True), sealed)
            except gpucrypt.InvalidTag:
                raise DecryptionError(f"chunk {chunk_index} failed authentication as the final chunk "
                                      "(file truncated, modified, or followed by extra data)",
                                      chunk_index, released_len) from None
            # Appended bytes normally land inside the final read and fail above; this catches a
            # source that yields more after reporting end of input (a growing file, a tty).
            if src.read(1):
                raise DecryptionError(f"trailing data after final chunk {chunk_index}",
                                      chunk_index, released_len)
            dst.write(plaintext)
        released_len += len(plaintext)
        if progress is not None:
            progress(len(sealed))
        if len(sealed) < full_len:
            return released_len
        chunk_index += 1


def _open_temp(directory: str, final_name: str) -> tuple[str, BinaryIO]:
    """Create the temporary output file (mode 0600). Tests replace this to inject write faults."""
    fd, temp_path = tempfile.mkstemp(prefix=f".{final_name}.", suffix=".gpucrypt-tmp", dir=directory)
    try:
        return temp_path, os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        os.unlink(temp_path)
        raise


def _fsync_directory(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        # Some filesystems cannot fsync a directory; the rename has happened either way.
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_output(dst_path: Union[str, os.PathLike]) -> Iterator[BinaryIO]:
    """Yield a file that becomes `dst_path` only if the block completes.

    Writes go to a temporary file in the target directory; on success it is flushed, fsynced,
    renamed over `dst_path` and the directory fsynced. On any exception, KeyboardInterrupt
    included, the temporary file is removed and `dst_path` is left as it was (absent, or its old
    contents). Only SIGKILL or a crash can leave a `.NAME.*.gpucrypt-tmp` file behind, never a
    partial `dst_path`. The new file has mode 0600.
    """
    dst_path = os.fspath(dst_path)
    directory = os.path.dirname(os.path.abspath(dst_path))
    temp_path, temp_file = _open_temp(directory, os.path.basename(dst_path))
    try:
        with temp_file:
            yield temp_file
            temp_file.flush()
            os.fsync(temp_file.fileno())
        os.replace(temp_path, dst_path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_path)
        raise
    _fsync_directory(directory)


def _refuse_same_file(src_path: str, dst_path: str) -> None:
    if os.path.exists(dst_path) and os.path.samefile(src_path, dst_path):
        raise ValueError(f"{dst_path}: the output would overwrite the input")


def encrypt_file(src_path: Union[str, os.PathLike], dst_path: Union[str, os.PathLike],
                 key_material: KeyMaterial, **options) -> int:
    """encrypt_stream from `src_path` into `dst_path`, atomically (see atomic_output).

    `options` are encrypt_stream's keywords. The input is only ever opened for reading;
    an output path naming the input file is refused.
    """
    src_path, dst_path = os.fspath(src_path), os.fspath(dst_path)
    with open(src_path, "rb") as src:
        _refuse_same_file(src_path, dst_path)
        with atomic_output(dst_path) as dst:
            return encrypt_stream(src, dst, key_material, **options)


def decrypt_file(src_path: Union[str, os.PathLike], dst_path: Union[str, os.PathLike],
                 key_material: KeySource, **options) -> int:
    """decrypt_stream from `src_path` into `dst_path`, atomically: `dst_path` appears only after
    the final chunk authenticated and end of input was confirmed, so no plaintext of a
    rejected file ever reaches it."""
    src_path, dst_path = os.fspath(src_path), os.fspath(dst_path)
    with open(src_path, "rb") as src:
        _refuse_same_file(src_path, dst_path)
        with atomic_output(dst_path) as dst:
            return decrypt_stream(src, dst, key_material, **options)
