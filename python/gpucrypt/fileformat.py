"""gpucrypt's authenticated, chunked file format (what `gpucrypt encrypt` / `decrypt` write and read).

docs/file-format.md has the byte-level specification, the design rationale and the failure
semantics; keep the two in step. In short: a header (version 1: 80 bytes, HMAC-authenticated;
version 2 adds recipient stanzas), then the plaintext in fixed-length AES-256-GCM chunks under a
per-file key, the last always shorter than a full one, so truncation, reordering, duplication and
appended data all fail authentication.

Everything but version 2's stanzas is the library's (include/gpucrypt/format.hpp): the headers
(read, parse, build, open; scrypt, HKDF, HMAC), the chunk layout and nonces, and the pipelines over
file objects (seal_ends/open_ends), buffers in memory (seal_body/open_body) and an MPI rank's
chunk range (seal_chunks/open_chunks), a constant-time AES by default. The stanzas are wrapped and
unwrapped by gpucrypt.recipients (pyca/cryptography). The payload key is held in a bytearray
zeroed when the work ends; the intermediate keys are immutable `bytes` Python cannot wipe.
"""

from __future__ import annotations

import contextlib
import io
import os
from typing import TYPE_CHECKING, BinaryIO, Callable, Iterator, NamedTuple, Optional, Union

import gpucrypt
from gpucrypt import _native
from gpucrypt._buffers import as_bytes_like as _as_bytes_like
from gpucrypt._buffers import check_length as _check_length

# `gpucrypt inspect` loads this module to read a header, and its whole start-up is meant to stay
# under 50 ms (bench/cli_startup.py): hashlib, hmac, tempfile and gpucrypt.stream (with its
# threads and dataclasses) are imported where they are used, and the header's records are
# NamedTuples, not dataclasses (whose module loads `inspect`, ~5 ms).
if TYPE_CHECKING:
    from gpucrypt import stream

__all__ = [
    "MAGIC", "VERSION", "HEADER_LEN", "TAG_LEN", "SALT_LEN", "KEY_LEN",
    "DEFAULT_CHUNK_SIZE", "MIN_CHUNK_SIZE", "MAX_CHUNK_SIZE",
    "DEFAULT_SCRYPT_LOG2N", "MAX_SCRYPT_LOG2N", "SCRYPT_R", "SCRYPT_P",
    "FormatError", "DecryptionError", "Passphrase", "Header",
    "encrypt_stream", "decrypt_stream", "encrypt_file", "decrypt_file", "encrypt_buffer", "decrypt_buffer",
    "encrypted_len", "atomic_output", "remove_stale_temps",
    "read_header", "parse_header", "write_all", "scrypt_memory_len", "check_scrypt_memory",
]

MAGIC = b"GPUCRYPT"
VERSION = 1
VERSION_RECIPIENTS = 2          # recipient stanzas (gpucrypt.recipients); written only when asked for
# The sizes are the library's (include/gpucrypt/format.hpp), which runs every chunk.
HEADER_LEN = _native.FORMAT_HEADER_LEN    # 80, fixed for version 1; see the layout in docs/file-format.md
SALT_LEN = 32
KEY_LEN = _native.FORMAT_KEY_LEN          # 32: raw key files and the derived payload key
TAG_LEN = _native.FORMAT_TAG_LEN          # 16

DEFAULT_CHUNK_SIZE = _native.FORMAT_DEFAULT_CHUNK_LEN   # 64 KiB
MIN_CHUNK_SIZE = _native.FORMAT_MIN_CHUNK_LEN           # 16
MAX_CHUNK_SIZE = _native.FORMAT_MAX_CHUNK_LEN           # 16 MiB: bounds what a hostile header makes a decoder allocate

DEFAULT_SCRYPT_LOG2N = _native.FORMAT_DEFAULT_SCRYPT_LOG2N   # 18: about 1 s and 256 MiB (format.hpp says why)
MAX_SCRYPT_LOG2N = _native.FORMAT_MAX_SCRYPT_LOG2N           # 22: the most we spend on an untrusted file
SCRYPT_R = 8
SCRYPT_P = 1


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


class Header(NamedTuple):
    """The parsed, not yet authenticated, header of a gpucrypt file."""

    version: int
    suite_id: int
    kdf: str                    # "scrypt" (passphrase), "key" (32-byte key file), "recipients" (version 2)
    scrypt_log2n: int           # 0 when no passphrase opens the file (version 2: its scrypt stanza's)
    chunk_size: int
    salt: bytes
    mac: bytes
    prefix: bytes               # every header byte the MAC covers (48 in version 1)
    stanzas: tuple = ()         # version 2: the recipients.Stanza of each recipient, in file order

    @property
    def suite_name(self) -> str:
        """As docs/file-format.md writes it ("AES-256-GCM"): the library's suites (format.hpp suite_name)."""
        return _native.format_suite_name(self.suite_id)

    @property
    def length(self) -> int:
        """The header's length in the file: where the chunks start."""
        return len(self.prefix) + len(self.mac)


KeyMaterial = Union[str, bytes, bytearray, memoryview, Passphrase]
KeySource = Union[KeyMaterial, Callable[[Header], KeyMaterial]]
Progress = Optional[Callable[[int], None]]


def _normalise_key_material(material: KeyMaterial) -> Union[Passphrase, bytes]:
    """A Passphrase or 32-byte key (a version 1 file), or a recipients.KeySet for a list or tuple
    of recipients / identities, or one recipient or identity object (version 2)."""
    from gpucrypt import recipients
    if recipients.is_key_set(material):
        return recipients.key_set(material)
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
    raise TypeError("key material is a passphrase (str or Passphrase), a 32-byte key, or recipients / "
                    "identities (gpucrypt.recipients; a list for several)")


# scrypt_memory_len(log2n): bytes of memory scrypt needs at N = 2^log2n (r = 8, p = 1), 128 * r * N for
# its V array (RFC 7914; the rest is a few KiB): 2^18 needs 256 MiB. The library's (format.hpp).
scrypt_memory_len = _native.format_scrypt_memory_len


# Memory this process can still get (MemAvailable, bounded by a cgroup v2 limit; None where unknown):
# the library's (format.hpp available_memory_len); tests replace it.
_available_memory_len = _native.format_available_memory_len


def check_scrypt_memory(log2n: int) -> None:
    """FormatError naming the memory needed when scrypt at 2^log2n cannot fit in the memory
    available now; called before the passphrase is asked for and before anything is allocated
    (the library's rule, format.hpp check_scrypt_memory, which its own scrypt checks too)."""
    _native.format_check_scrypt_memory(log2n, _available_memory_len())


def _scrypt(passphrase: Passphrase, salt: bytes, log2n: int) -> bytes:
    """scrypt(passphrase, salt, N = 2^log2n, r = 8, p = 1), 32 bytes, after the memory check: the
    library's one scrypt (format.hpp, OpenSSL), which version 1's header calls itself; version 2's
    scrypt stanza (gpucrypt.recipients) comes here."""
    check_scrypt_memory(log2n)
    return _native.format_scrypt(passphrase._secret, salt, log2n)   # FormatError where OpenSSL had not the memory


def _secret(material) -> dict:
    """Version 1's key material as the library's header calls take it (a recipients.KeySet gives none:
    version 2's secret is the file key its stanzas wrap)."""
    if isinstance(material, Passphrase):
        return {"passphrase": material._secret}
    return {"key": material} if isinstance(material, bytes) else {}


# write_all(dst, data): every byte of `data` to `dst`, the one place every writer of this module goes
# through; the library's rule for short counts (format.hpp writing_all; its docstring says it).
write_all = _native.format_write_all


# The library's chunk-length rule (format.hpp check_chunk_len): FormatError naming the bounds.
_check_chunk_size = _native.format_check_chunk_len


def _header(fields: dict) -> Header:
    stanzas = ()
    if fields["stanzas"]:
        from gpucrypt import recipients
        stanzas = tuple(recipients.Stanza(kind, body) for kind, body in fields["stanzas"])
    return Header(version=fields["version"], suite_id=fields["suite"], kdf=fields["kdf"],
                  scrypt_log2n=fields["scrypt_log2n"], chunk_size=fields["chunk_len"], salt=fields["salt"],
                  mac=fields["mac"], prefix=fields["prefix"], stanzas=stanzas)


def parse_header(data, max_scrypt_log2n: int = MAX_SCRYPT_LOG2N) -> Header:
    """Parse and bounds-check a header (`data`, any bytes-like, may go on past it) with the library's
    one parser (format.hpp parse_header); FormatError names the first problem found."""
    return _header(_native.format_parse_header(data, max_scrypt_log2n))


def read_header(src: BinaryIO, max_scrypt_log2n: int = MAX_SCRYPT_LOG2N) -> Header:
    """Read and parse the header at the current position of `src` (not authenticated yet),
    reading no byte past it (format.hpp read_header): `src` is left where the chunks start."""
    return _header(_native.format_read_header(src.read, max_scrypt_log2n))


def _build_header(key_material: KeyMaterial, chunk_size: int, scrypt_log2n: int) -> tuple[bytes, bytearray]:
    """A fresh header and the payload key it leads to, in a bytearray the caller wipes: the library's
    (format.hpp build_header): version 1 for a passphrase or a key, version 2 for recipients, whose
    recipients.KeySet wraps the library's fresh file key in its stanzas."""
    material = _normalise_key_material(key_material)
    secret = _secret(material)

    def wrap(file_key: bytes) -> list:   # version 2: the recipients' stanzas, as the library takes them
        return [(stanza.type, stanza.body) for stanza in material.wrap(file_key, scrypt_log2n)]
    payload_key = bytearray(KEY_LEN)
    try:
        header = _native.format_build_header(payload_key, chunk_size, scrypt_log2n, os.urandom(SALT_LEN),
                                             _available_memory_len(), **secret, wrap=None if secret else wrap)
    except BaseException:
        _native.wipe(payload_key)
        raise
    return header, payload_key


def _open_header(header: Header, key_material: KeySource, max_scrypt_log2n: int = MAX_SCRYPT_LOG2N) -> bytearray:
    """Authenticate the header; return the payload key in a bytearray the caller wipes (format.hpp
    open_header). A callable `key_material` is asked with the header, after scrypt's memory check
    (no prompt for a passphrase in vain). Version 2: with the file key from the first stanza the
    material opens (recipients.KeySet.unwrap, pyca)."""
    if header.kdf == "scrypt":
        check_scrypt_memory(header.scrypt_log2n)
    material = _normalise_key_material(key_material(header) if callable(key_material) else key_material)
    secret = _secret(material)
    if header.version == VERSION_RECIPIENTS:
        from gpucrypt import recipients
        secret = {"file_key": recipients.key_set(material).unwrap(header.stanzas)}
    payload_key = bytearray(KEY_LEN)
    try:
        _native.format_open_header(header.prefix + header.mac, payload_key, max_scrypt_log2n, _available_memory_len(),
                                   **secret)
    except BaseException:
        _native.wipe(payload_key)
        raise
    return payload_key


def _run_chunks(operation: str, src: BinaryIO, dst: BinaryIO, header: Optional[bytes], payload_key: bytearray,
                chunk_size: int, pipeline: tuple, stats: Optional[stream.StreamStats],
                direct_io: bool) -> tuple[int, int]:
    """Seals (`header` first) or opens every chunk readable from `src` into `dst` on `pipeline`
    (_pipeline's); returns (bytes read, bytes written).

    One native call (format.hpp seal_ends / open_ends; docs/file-format.md "Files" and "Streams")
    chooses the path: the file pipeline between regular files at known offsets, which both are
    left after; else the streaming path over `src`'s and `dst`'s descriptors, or their
    readinto/read and write (write_all's rule) when they have none (format_bindings.cpp
    PythonInput). Opening writes only authenticated plaintext: a failure raises DecryptionError
    after the chunks before it were written.
    """
    from gpucrypt import stream
    function = _native.format_seal_ends if operation == "seal" else _native.format_open_ends
    try:
        # progress: once per chunk, with the input bytes it consumed (the binding's steps)
        read, written, native, failure, _ = function(src, dst, header, payload_key, chunk_size, *pipeline,
                                                     direct_input=direct_io)
    finally:
        _native.wipe(payload_key)   # its one Python copy (the native stream wipes its own when it goes)
    if stats is not None:
        stream.add_native_stats(stats, native, read, written)
    if failure is not None:
        raise DecryptionError(*failure)
    return read, written


def encrypt_stream(src: BinaryIO, dst: BinaryIO, key_material: KeyMaterial, *,
                   chunk_size: int = DEFAULT_CHUNK_SIZE, device: str = "auto", progress: Progress = None,
                   scrypt_log2n: int = DEFAULT_SCRYPT_LOG2N, suite: str = "aes-256-gcm",
                   devices=None, cpu_share=None, variant: Optional[str] = None, job_size: Optional[int] = None,
                   cancel=None, stats: Optional[stream.StreamStats] = None, direct_io: bool = False) -> int:
    """Encrypt everything readable from `src` to `dst`; return the plaintext length.

    `key_material`: a passphrase (str or Passphrase; scrypt with N = 2^scrypt_log2n, r = 8,
    p = 1), a 32-byte key, or recipients (gpucrypt.recipients). `progress(n)` is called after each
    chunk is written with the input bytes it consumed. Errors from `src`/`dst` (OSError, e.g.
    ENOSPC) propagate unchanged; what was already written to `dst` is the caller's to discard.

    The chunks run on the library's scheduler in bounded memory (a few jobs of a few MiB):
    `device` / `devices` / `cpu_share` choose the workers (stream.plan_devices; default: every GPU
    plus the CPU, or the CPU alone), `job_size` the bytes per job, `cancel` a threading.Event that
    stops the work (stream.Cancelled), `stats` a StreamStats to fill. `variant`: None runs a
    constant-time AES on every device (info.constant_time_variant); naming one (e.g. "aes_ttable")
    is the explicit opt-out. `direct_io`: read `src`, a regular file, with O_DIRECT (no page cache);
    ValueError for a stream, OSError EINVAL where its file system has none (docs/file-format.md).
    """
    _check_chunk_size(chunk_size)
    _native.format_suite_of_aead(suite)
    # a bad device or job size fails before any output (and before scrypt's second)
    pipeline = _pipeline(device, devices, cpu_share, job_size, variant, progress, cancel)
    header, payload_key = _build_header(key_material, chunk_size, scrypt_log2n)
    return _run_chunks("seal", src, dst, header, payload_key, chunk_size, pipeline, stats, direct_io)[0]


def decrypt_stream(src: BinaryIO, dst: BinaryIO, key_material: KeySource, *, device: str = "auto",
                   progress: Progress = None, max_scrypt_log2n: int = MAX_SCRYPT_LOG2N,
                   devices=None, cpu_share=None, variant: Optional[str] = None, job_size: Optional[int] = None,
                   cancel=None, stats: Optional[stream.StreamStats] = None, direct_io: bool = False) -> int:
    """Decrypt a gpucrypt file from `src` to `dst`; return the plaintext length.

    `dst` only ever receives authenticated chunks, but a truncated or extended file fails after
    the chunks before the damage were written: success is the return, not the bytes seen so far
    (decrypt_file, or discarding `dst` on error, keeps a partial result from surviving).

    `key_material` may be a callable taking the parsed Header (e.g. to prompt for a passphrase
    only when the file needs one). Raises FormatError for unreadable/unsupported headers and
    DecryptionError (also a gpucrypt.InvalidTag) for every authentication failure. The stream
    engine options and `direct_io` are encrypt_stream's; `progress(n)` counts input bytes (the
    header first).
    """
    header = read_header(src, max_scrypt_log2n)
    # the devices and job size checked before a prompt for a passphrase
    pipeline = _pipeline(device, devices, cpu_share, job_size, variant, progress, cancel)
    payload_key = _open_header(header, key_material, max_scrypt_log2n)
    if progress is not None:
        progress(header.length)
    return _run_chunks("open", src, dst, None, payload_key, header.chunk_size, pipeline, stats, direct_io)[1]


# ----------------------------------------------------------------------------- chunk ranges

# Where each chunk lies in the plaintext and in the file, from the lengths alone (format.hpp's
# Layout: num_chunks, file_len, plaintext_range(first, count), sealed_range(first, count)). What
# lets several MPI ranks (gpucrypt.mpi) each seal or open their own chunks at their own offsets.
Layout = _native.FormatLayout


def layout_for_file(file_len: int, chunk_size: int, header_len: int = HEADER_LEN) -> Layout:
    """The layout of a file of `file_len` bytes whose header is `header_len` bytes (version 1's 80 by
    default; version 2's stanzas lengthen it), by format.hpp layout_for_file: DecryptionError
    (released_len 0) when no file has that length (a truncated file), FormatError when it is
    shorter than its header."""
    return _native.format_layout_for_file(file_len, chunk_size, header_len)


# Chunks first .. first + count - 1 sealed from exactly their plaintext into `out` as they lie in
# the file at layout.sealed_range(first, count), the file's last chunk as final, or opened back
# (DecryptionError naming the first chunk that failed; the failed chunks' ranges of `out` are left
# untouched): seal_chunks(payload_key, layout, first, count, data, out, device="cpu", variant="")
# -> (variant, engine info), one batch-engine call (format.hpp seal_chunks / open_chunks).
seal_chunks = _native.format_seal_chunks
open_chunks = _native.format_open_chunks


# ----------------------------------------------------------------------------- in memory

def encrypted_len(plaintext_len: int, chunk_size: int = DEFAULT_CHUNK_SIZE, key_material=None) -> int:
    """The length of the file that `plaintext_len` bytes encrypt to in chunks of `chunk_size`;
    with recipients as `key_material` (version 2), their stanzas lengthen the header."""
    from gpucrypt import recipients
    # Version 2's fixed part and MAC take version 1's 80 bytes (48 + 32): its stanzas are the extra.
    stanzas_len = recipients.key_set(key_material).stanza_len() if recipients.is_key_set(key_material) else 0
    return _native.format_file_len(plaintext_len, chunk_size) + stanzas_len


def _pipeline(device, devices, cpu_share, job_size, variant, progress, cancel) -> tuple:
    """The native pipelines' arguments (devices, cpu_share, job_len, variant, progress, cancelled),
    the devices checked by stream.resolve_devices; under device="auto" with no `devices` or
    `cpu_share`, none: the library chooses (format.hpp: for buffers buffer_devices, for files and
    streams PipelineOptions::automatic, which keeps the measured set on this machine and starts no
    GPU where that set leaves them out)."""
    from gpucrypt import stream
    workers = [], None
    if device not in (None, "auto") or devices or cpu_share is not None:
        workers = stream.resolve_devices(device, devices, cpu_share)
    if job_size is not None:
        job_size = _check_length(job_size, "job_size", minimum=1)
    return (*workers, job_size or 0, variant or "", progress, cancel.is_set if cancel is not None else None)


def encrypt_buffer(data, key_material: KeyMaterial, *, out=None, chunk_size: int = DEFAULT_CHUNK_SIZE,
                   device: str = "auto", devices=None, cpu_share=None, variant: Optional[str] = None,
                   job_size: Optional[int] = None, scrypt_log2n: int = DEFAULT_SCRYPT_LOG2N,
                   suite: str = "aes-256-gcm", progress: Progress = None, cancel=None,
                   stats: Optional[stream.StreamStats] = None):
    """Encrypt a whole buffer in memory into a gpucrypt file: the same file encrypt_stream writes.

    Returns the file as bytes, or, with `out` (any writable buffer of at least encrypted_len(len(data),
    chunk_size, key_material) bytes, not overlapping `data`), writes it to the start of `out` and
    returns its length. Each job of the library's scheduler (no Python in the loop, the GIL
    released) reads and writes its part of `data`/`out` in place, so page-locked buffers
    (stream.page_locked) go to and from a GPU with no host copy. device="auto" (no `devices` or
    `cpu_share`) runs on the GPUs alone when both are page-locked, else on the CPU alone
    (docs/file-format.md, "In memory"). Other options as encrypt_stream's; `progress(n)` gets the
    plaintext bytes done since its last call. Ctrl-C stops the work within a job (KeyboardInterrupt).
    """
    from gpucrypt import stream
    _check_chunk_size(chunk_size)
    _native.format_suite_of_aead(suite)
    source = _as_source(data)
    material = _normalise_key_material(key_material)
    file_len = encrypted_len(len(source), chunk_size, material)
    _native.format_check_out(out, file_len, "the encrypted file")   # before any key is derived (scrypt: a second)
    pipeline = _pipeline(device, devices, cpu_share, job_size, variant, progress, cancel)
    header, key = _build_header(material, chunk_size, scrypt_log2n)
    try:
        result, native_stats = _native.format_seal_body(key, header, chunk_size, source, out, *pipeline)
    finally:
        _native.wipe(key)
    if stats is not None:
        stream.add_native_stats(stats, native_stats, len(source), file_len)
    return file_len if out is not None else result


def decrypt_buffer(data, key_material: KeySource, *, out=None, device: str = "auto", devices=None, cpu_share=None,
                   variant: Optional[str] = None, job_size: Optional[int] = None,
                   max_scrypt_log2n: int = MAX_SCRYPT_LOG2N, progress: Progress = None, cancel=None,
                   stats: Optional[stream.StreamStats] = None):
    """Decrypt a whole gpucrypt file held in memory; the inverse of encrypt_buffer.

    Returns the plaintext as bytes, or, with `out` (any writable buffer of at least the plaintext's
    length, not overlapping `data`), writes it to the start of `out` and returns its length. Header
    errors and key material as decrypt_stream's. A length no file can have raises DecryptionError
    before any chunk is opened; a failing chunk raises it naming the first in file order
    (`chunk_index`) once every job in flight has stopped. After any error (Cancelled and
    KeyboardInterrupt too) `out` holds only authenticated plaintext (`released_len` bytes), then
    zeros. Options as encrypt_buffer's.
    """
    from gpucrypt import stream
    source = _as_source(data)
    _native.format_check_out(out, 0, "the plaintext")   # its length once the header is open
    header = parse_header(source, max_scrypt_log2n)
    pipeline = _pipeline(device, devices, cpu_share, job_size, variant, progress, cancel)
    key = _open_header(header, key_material, max_scrypt_log2n)
    try:
        # After the header's check, as in decrypt_stream: a wrong key is named before a bad length.
        plaintext_len = layout_for_file(len(source), header.chunk_size, header.length).plaintext_len
        result, native_stats, failure = _native.format_open_body(key, header.chunk_size, plaintext_len,
                                                                 source[header.length:], out, *pipeline)
    finally:
        _native.wipe(key)
    if failure is not None:
        raise DecryptionError(*failure)
    if stats is not None:
        stream.add_native_stats(stats, native_stats, len(source), plaintext_len)
    return plaintext_len if out is not None else result


def _as_source(data) -> memoryview:
    """`data` as a flat byte view (bytes-like only: a str or an int is a TypeError)."""
    return memoryview(_as_bytes_like(data, "data")).cast("B")


# ----------------------------------------------------------------------------- output files

# Every rule of an output that appears only when complete is the library's (format.hpp AtomicOutput,
# src/format/file_output.cpp; docs/file-format.md "Plaintext release"), its errors among them (a full
# disk names the path the user gave). What stays here is Python's buffer over that writer.

# Whether outputs start as anonymous files (O_TMPFILE); tests replace it to reach the named path.
_anonymous_files_work = _native.format_anonymous_files_work


def remove_stale_temps(directory: Union[str, os.PathLike], final_name: str) -> list:
    """Delete `.NAME.PID.*.gpucrypt-tmp` files in `directory` left by a process that no longer
    exists (killed between naming its output and renaming it, or on a filesystem without
    anonymous files). Files of live processes and of other users are left alone. Returns the
    removed paths; atomic_output calls this before writing NAME."""
    return _native.format_remove_stale_temps(os.fspath(directory), final_name)


def output_exists(dst_path: Union[str, os.PathLike]) -> bool:
    """Whether writing `dst_path` would replace an existing regular file (through symlinks);
    what is written in place (devices, FIFOs, /dev/stdout) is not replaced, so it does not count."""
    return _native.format_output_exists(os.fspath(dst_path))


def _output_file(output) -> BinaryIO:
    """The Python file over the library's writer (_native.AtomicOutput, which the file pipelines
    also write by its descriptor); tests replace this to inject faults."""
    return io.BufferedWriter(output)


@contextlib.contextmanager
def atomic_output(dst_path: Union[str, os.PathLike], *, overwrite: bool = True, mode: Optional[int] = None,
                  _input_fd: int = -1) -> Iterator[BinaryIO]:
    """Yield a file that becomes `dst_path` only if the block completes (format.hpp AtomicOutput;
    docs/file-format.md, "Plaintext release").

    A regular file (new or existing) is written as a temporary file in its directory (unnamed
    where the filesystem allows), fsynced and renamed over it on success; on any exception,
    KeyboardInterrupt included, the target is left as it was, and even SIGKILL leaves no partial
    target. A new file has mode 0600, a replaced one keeps its mode and (where permitted) owner;
    `mode` sets either. A symlink's target is replaced; a device, FIFO, socket or /dev/stdout is
    written in place (not atomic). `overwrite=False` refuses an existing regular file
    (FileExistsError). Errors name `dst_path` as given; a directory is refused.
    """
    output = _native.AtomicOutput(os.fspath(dst_path), overwrite, -1 if mode is None else mode, _input_fd,
                                  _anonymous_files_work())
    try:
        # Closing flushes the last buffered bytes, through the library's writer like every write.
        with _output_file(output) as stream:
            yield stream
        output.commit()
    finally:
        output.discard()


def encrypt_file(src_path: Union[str, os.PathLike], dst_path: Union[str, os.PathLike],
                 key_material: KeyMaterial, **options) -> int:
    """encrypt_stream from `src_path` into `dst_path`, atomically (see atomic_output).

    `options` are encrypt_stream's keywords. The input is only ever opened for reading;
    an output path naming the input file is refused.
    """
    with open(src_path, "rb") as src, atomic_output(dst_path, _input_fd=src.fileno()) as dst:
        return encrypt_stream(src, dst, key_material, **options)


def decrypt_file(src_path: Union[str, os.PathLike], dst_path: Union[str, os.PathLike],
                 key_material: KeySource, **options) -> int:
    """decrypt_stream from `src_path` into `dst_path`, atomically: `dst_path` appears only after
    the final chunk authenticated and end of input was confirmed, so no plaintext of a
    rejected file ever reaches it. An authentication failure names `src_path`."""
    with open(src_path, "rb") as src, atomic_output(dst_path, _input_fd=src.fileno()) as dst, \
            _failures_naming(os.fspath(src_path)):
        return decrypt_stream(src, dst, key_material, **options)


@contextlib.contextmanager
def _failures_naming(src_path: str) -> Iterator[None]:
    """DecryptionError and FormatError naming the input the user gave ("wrong passphrase or key
    for PATH (...)", "PATH: chunk N failed ...", "PATH: not a gpucrypt file (bad magic)"): the
    library's rule (format.hpp naming_input)."""
    try:
        yield
    except DecryptionError as error:
        raise DecryptionError(_native.format_naming_input(str(error), src_path), error.chunk_index,
                              error.released_len) from None
    except FormatError as error:
        raise FormatError(_native.format_naming_input(str(error), src_path)) from None
